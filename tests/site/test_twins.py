"""Prose twins (analyses/site/twins.py): every committed notebook has its MyST markdown twin in
step, and a writer's edit to a twin reaches the notebook without losing the outputs of the cells
it did not touch."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest

from analyses.data import REPO_ROOT
from analyses.site import twins
from analyses.site.cli import main


def test_committed_twins_are_in_step(capsys: pytest.CaptureFixture[str]) -> None:
    # the same check a writer runs; a notebook re-executed or edited without its twin fails here
    assert twins.out_of_step() == []
    assert main(["twins", "--check"]) == 0
    assert "in step" in capsys.readouterr().out


def test_twin_shows_prose_and_code_without_outputs() -> None:
    nb_path = REPO_ROOT / "book" / "memory.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    text = twins.twin_path(nb_path).read_text(encoding="utf-8")
    title = next(c.source for c in nb.cells if c.cell_type == "markdown").splitlines()[0]
    assert text.startswith(title + "\n")  # no jupytext header: the notebook's first line first
    assert ":tags: [parameters]" in text  # papermill's parameters cell keeps its tag
    shown = [
        str(v)[:120]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        for v in o.get("data", {}).values()
        if len(str(v)) >= 40
    ]
    assert shown and not [s for s in shown if s in text]  # the twin carries no outputs


@pytest.fixture
def pair_root(tmp_path: Path) -> Path:
    shutil.copytree(REPO_ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("*.md"))
    shutil.copytree(REPO_ROOT / "prose", tmp_path / "prose")
    shutil.copy(REPO_ROOT / "jupytext.toml", tmp_path / "jupytext.toml")
    return tmp_path


def _touch_later(path: Path, than: Path) -> None:
    later = than.stat().st_mtime + 10
    os.utime(path, (later, later))


def test_edited_prose_reaches_the_notebook_and_keeps_outputs(pair_root: Path) -> None:
    nb_path = pair_root / "book" / "experiments.ipynb"
    twin = twins.twin_path(nb_path, pair_root)
    before = nbformat.read(nb_path, as_version=4)
    old = "## Serial or side by side?"
    assert old in twin.read_text(encoding="utf-8")
    twin.write_text(twin.read_text(encoding="utf-8").replace(old, "## Serial, or side by side?"), encoding="utf-8")
    _touch_later(twin, nb_path)

    done = twins.sync(pair_root)
    assert done == ["book/experiments.ipynb <- prose/experiments.md"]
    after = nbformat.read(nb_path, as_version=4)
    heading = [c.source for c in after.cells if "side by side?" in c.source][0]
    # the heading, under the section labels the verdict box links to
    assert any(line.startswith("## Serial, or side") for line in heading.splitlines())
    assert len(after.cells) == len(before.cells)
    for a, b in zip(after.cells, before.cells, strict=True):
        if a.cell_type == "code":
            assert a.source == b.source and a.outputs == b.outputs  # untouched cells keep their outputs
    assert after.metadata["audit"] == before.metadata["audit"]  # the build's record is kept
    assert twins.out_of_step(pair_root) == []


def test_edited_code_drops_that_cells_outputs_only(pair_root: Path) -> None:
    nb_path = pair_root / "book" / "experiments.ipynb"
    twin = twins.twin_path(nb_path, pair_root)
    before = nbformat.read(nb_path, as_version=4)
    old = "res = ch.compute(cfg)"
    twin.write_text(twin.read_text(encoding="utf-8").replace(old, "res = ch.compute(cfg)  # the chapter"), "utf-8")
    _touch_later(twin, nb_path)
    twins.sync(pair_root)
    after = nbformat.read(nb_path, as_version=4)
    changed = [i for i, (a, b) in enumerate(zip(after.cells, before.cells, strict=True)) if a.source != b.source]
    assert len(changed) == 1 and "res = ch.compute(cfg)  # the chapter" in after.cells[changed[0]].source.splitlines()


def test_notebook_edits_rewrite_the_twin_and_orphans_go(pair_root: Path) -> None:
    nb_path = pair_root / "book" / "peers.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells[0].source += "\n\nA new closing line."
    nbformat.write(nb, nb_path)
    twin = twins.twin_path(nb_path, pair_root)
    _touch_later(nb_path, twin)
    orphan = pair_root / "prose" / "gone.md"
    orphan.write_text("# Gone\n", encoding="utf-8")
    (pair_root / "prose" / "memory.md").unlink()
    assert len(twins.out_of_step(pair_root)) == 3

    twins.sync(pair_root)
    assert "A new closing line." in twin.read_text(encoding="utf-8")
    assert not orphan.exists() and (pair_root / "prose" / "memory.md").exists()
    assert twins.out_of_step(pair_root) == []


def test_missing_pairing_file_is_a_clear_error(pair_root: Path) -> None:
    (pair_root / "jupytext.toml").unlink()
    with pytest.raises(FileNotFoundError, match="jupytext.toml is missing"):
        twins.out_of_step(pair_root)
