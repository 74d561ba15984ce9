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


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_edited_prose_reaches_the_notebook_and_keeps_outputs(pair_root: Path) -> None:
    assert twins.sync(pair_root) == []  # in step: records the baseline, writes nothing
    nb_path = pair_root / "book" / "experiments.ipynb"
    twin = twins.twin_path(nb_path, pair_root)
    before = nbformat.read(nb_path, as_version=4)
    old = before.cells[0].source.splitlines()[0]  # the title
    _edit(twin, old, old + ", revisited")
    _edit(twin, "res = ch.compute(cfg)", "res = ch.compute(cfg)  # the chapter")
    os.utime(nb_path)  # a newer notebook must not win: modification times decide nothing

    done = twins.sync(pair_root)
    assert done == ["book/experiments.ipynb <- prose/experiments.md"]
    after = nbformat.read(nb_path, as_version=4)
    assert after.cells[0].source.splitlines()[0] == old + ", revisited"
    assert len(after.cells) == len(before.cells)
    changed = [i for i, (a, b) in enumerate(zip(after.cells, before.cells, strict=True)) if a.source != b.source]
    # the compute cell (which also glues the chapter's verdict box) carries the edited line
    assert len(changed) == 2 and "res = ch.compute(cfg)  # the chapter" in after.cells[changed[1]].source.splitlines()
    for i, (a, b) in enumerate(zip(after.cells, before.cells, strict=True)):
        if a.cell_type == "code" and i not in changed:
            assert a.outputs == b.outputs  # untouched cells keep their outputs
    assert after.metadata == before.metadata  # kernel, language (and an older notebook's audit record) kept
    assert twins.out_of_step(pair_root) == []


def test_notebook_edits_rewrite_the_twin_and_orphans_go(pair_root: Path) -> None:
    twins.sync(pair_root)
    nb_path = pair_root / "book" / "peers.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells[0].source += "\n\nA new closing line."
    nbformat.write(nb, nb_path)
    twin = twins.twin_path(nb_path, pair_root)
    os.utime(twin)  # a newer twin must not win either
    orphan = pair_root / "prose" / "gone.md"
    orphan.write_text("# Gone\n", encoding="utf-8")
    (pair_root / "prose" / "memory.md").unlink()
    assert len(twins.out_of_step(pair_root)) == 3

    twins.sync(pair_root)
    assert "A new closing line." in twin.read_text(encoding="utf-8")
    assert not orphan.exists() and (pair_root / "prose" / "memory.md").exists()
    assert twins.out_of_step(pair_root) == []


def test_both_sides_changed_stops_until_one_is_kept(pair_root: Path) -> None:
    twins.sync(pair_root)
    nb_path = pair_root / "book" / "peers.ipynb"
    twin = twins.twin_path(nb_path, pair_root)
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells[0].source += "\n\nThe notebook's line."
    nbformat.write(nb, nb_path)
    title = nb.cells[0].source.splitlines()[0]
    _edit(twin, title, title + " (prose)")
    with pytest.raises(twins.TwinConflict, match="book/peers.ipynb and prose/peers.md"):
        twins.sync(pair_root)
    assert "(prose)" in twin.read_text(encoding="utf-8")  # nothing was overwritten

    twins.sync(pair_root, keep="prose", only=["peers"])
    kept = nbformat.read(nb_path, as_version=4).cells[0].source
    assert kept.startswith(title + " (prose)") and "The notebook's line." not in kept
    assert twins.out_of_step(pair_root) == []
    with pytest.raises(ValueError, match="unknown chapter"):
        twins.sync(pair_root, keep="notebook", only=["nope"])


def test_without_a_baseline_the_notebook_wins(pair_root: Path) -> None:
    # no record of a last sync and no git history: the executed notebook is the truth
    nb_path = pair_root / "book" / "peers.ipynb"
    twin = twins.twin_path(nb_path, pair_root)
    _edit(twin, "\n", "\nStray text.\n")
    twins.sync(pair_root)
    assert "Stray text." not in twin.read_text(encoding="utf-8")


def test_missing_pairing_file_is_a_clear_error(pair_root: Path) -> None:
    (pair_root / "jupytext.toml").unlink()
    with pytest.raises(FileNotFoundError, match="jupytext.toml is missing"):
        twins.out_of_step(pair_root)
