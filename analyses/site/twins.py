"""Each chapter's prose twin: ``prose/<slug>.md``, the MyST markdown form of ``book/<slug>.ipynb``.

The executed notebook is what papermill runs, nbval compares and Jupyter Book renders; its JSON
makes a poor review diff. The twin holds the same cells as text (markdown as written, code cells
as ``{code-cell}`` blocks with their tags, no outputs), written by jupytext with the pairing and
filters of ``jupytext.toml`` at the repository root, so a reviewer reads a chapter's change as
prose and a writer edits the prose where prose lives.

The pair is kept in step by :func:`sync` (run by every ``python -m analyses build``), which tells
which side a writer changed by comparing both files with a baseline: what the pair held after the
last sync (``_build/twins-state.json``, while the commit is unchanged), else what is committed:

* only the twin changed: its cells replace the notebook's inputs, and jupytext keeps the outputs of
  every cell whose source is unchanged; a changed code cell makes the chapter stale, so the build
  re-executes it, and the twin is then rewritten from the executed notebook;
* only the notebook changed (edited in Jupyter, or re-executed), or neither (a pair committed out of
  step): the twin is rewritten from the notebook; a notebook without a twin gets one, and a twin
  whose notebook is gone is removed;
* both changed: nothing is taken and the build stops, naming the pair;
  ``python -m analyses twins --keep notebook|prose [slug ...]`` says which side to keep.

Modification times are never used: a checkout or a merge sets them arbitrarily.

``python -m analyses twins --check`` lists the twins that are out of step and fails if any is: the
test suite runs it on the committed files, so a stale twin fails CI (the suite never rewrites).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from jupytext.combine import combine_inputs_with_outputs
from jupytext.config import load_jupytext_configuration_file

from analyses.data import REPO_ROOT
from analyses.site.deps import notebooks

PROSE_DIR = "prose"
CONFIG_FILE = "jupytext.toml"
FORMAT = "md:myst"


def twin_path(notebook: Path, root: Path = REPO_ROOT) -> Path:
    """``prose/<slug>.md`` for ``book/<slug>.ipynb``."""
    return root / PROSE_DIR / f"{notebook.stem}.md"


def _config(root: Path) -> Any:
    path = root / CONFIG_FILE
    if not path.exists():
        raise FileNotFoundError(f"{CONFIG_FILE} is missing at {root}: it pairs book/*.ipynb with prose/*.md")
    return load_jupytext_configuration_file(str(path))


def _clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop empty tag lists (a markdown cell's ``tags: []`` would print as a metadata line)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if not cell.metadata.get("tags", True):
            del cell.metadata["tags"]
    return nb


def render(notebook: Path, root: Path = REPO_ROOT, config: Any = None) -> str:
    """The twin's text for ``notebook``: jupytext's MyST markdown with the repository's filters."""
    config = config or _config(root)
    return jupytext.writes(_clean(nbformat.read(notebook, as_version=4)), fmt=FORMAT, config=config)


def out_of_step(root: Path = REPO_ROOT) -> list[str]:
    """Twins that differ from their notebook's rendering, missing twins and orphan twins (as
    repository-relative paths with the reason), without writing anything."""
    config, problems = _config(root), []
    books = notebooks(root / "book")
    for nb in books:
        twin = twin_path(nb, root)
        if not twin.exists():
            problems.append(f"{twin.relative_to(root)}: missing (the twin of {nb.relative_to(root)})")
        elif twin.read_text(encoding="utf-8") != render(nb, root, config):
            problems.append(f"{twin.relative_to(root)}: differs from {nb.relative_to(root)}")
    stems = {nb.stem for nb in books}
    for twin in sorted((root / PROSE_DIR).glob("*.md")):
        if twin.stem not in stems:
            problems.append(f"{twin.relative_to(root)}: no notebook book/{twin.stem}.ipynb")
    return problems


def take_prose(notebook: Path, root: Path = REPO_ROOT, config: Any = None) -> None:
    """Replace ``notebook``'s cells by its twin's, keeping the outputs of unchanged cells (atomic)."""
    config = config or _config(root)
    twin = twin_path(notebook, root)
    inputs = jupytext.read(twin, fmt=FORMAT, config=config)
    outputs = nbformat.read(notebook, as_version=4)
    combined = combine_inputs_with_outputs(inputs, outputs, fmt=FORMAT)
    combined.metadata = outputs.metadata  # kernel, language and the build's audit record stay
    tmp = notebook.with_name(f".{notebook.name}.{os.getpid()}.tmp")
    try:
        nbformat.write(combined, tmp)
        os.replace(tmp, notebook)
    finally:
        tmp.unlink(missing_ok=True)


STATE_FILE = "_build/twins-state.json"  # what each pair held after the last sync, and at which commit


class TwinConflict(RuntimeError):
    """Both files of a pair changed since the last sync, or it cannot be told which one did."""


def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _head(root: Path) -> str | None:
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _committed_sha(root: Path, path: Path) -> str | None:
    rel = path.relative_to(root).as_posix()
    proc = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=root, capture_output=True)
    return hashlib.sha256(proc.stdout).hexdigest() if proc.returncode == 0 else None


def _baseline(root: Path, head: str | None) -> dict[str, dict[str, str | None]] | None:
    """The pair digests to compare against: the last sync's record while the commit is the same,
    else the committed files (``None`` per file when git has none), else ``None``."""
    state = root / STATE_FILE
    if state.exists():
        record = json.loads(state.read_text())
        if record.get("head") == head:
            return record["pairs"]
    return None if head is None else {}


def sync(root: Path = REPO_ROOT, keep: str | None = None, only: list[str] | None = None) -> list[str]:
    """Bring every pair into step; return what was done, one line each.

    Which side wins when a pair differs is decided against a baseline: what the pair held after the
    last sync (``_build/twins-state.json``, while the commit is the same), else what is committed.
    Only the twin changed: its cells go into the notebook (outputs of unchanged cells kept). Only
    the notebook changed, or neither (a pair committed out of step): the twin is rewritten from the
    notebook. Both changed: :class:`TwinConflict`, naming the files, unless ``keep`` says which side
    to keep (``"notebook"`` or ``"prose"``), for all pairs or the slugs in ``only``. Never by
    modification time: a checkout or merge sets those arbitrarily.
    """
    if keep not in (None, "notebook", "prose"):
        raise ValueError(f"keep must be 'notebook' or 'prose'; got {keep!r}")
    config, done = _config(root), []
    (root / PROSE_DIR).mkdir(exist_ok=True)
    books = notebooks(root / "book")
    if only:
        unknown = sorted(set(only) - {nb.stem for nb in books})
        if unknown:
            raise ValueError(f"unknown chapter(s) {unknown}; chapters: {', '.join(nb.stem for nb in books)}")
    head = _head(root)
    base = _baseline(root, head)
    conflicts = []
    for nb in books:
        twin = twin_path(nb, root)
        rel_nb, rel_twin = nb.relative_to(root).as_posix(), twin.relative_to(root).as_posix()
        if twin.exists() and twin.read_text(encoding="utf-8") == render(nb, root, config):
            continue
        side = keep if (keep and (not only or nb.stem in only)) else None
        if side is None and twin.exists():
            if base is None:
                side = "notebook"
            else:
                was = base.get(nb.stem) or {
                    "notebook": _committed_sha(root, nb),
                    "prose": _committed_sha(root, twin),
                }
                nb_changed, twin_changed = _sha(nb) != was["notebook"], _sha(twin) != was["prose"]
                if twin_changed and nb_changed:
                    conflicts.append(f"{rel_nb} and {rel_twin}")
                    continue
                side = "prose" if twin_changed else "notebook"
        if side == "prose" and twin.exists():
            take_prose(nb, root, config)
            done.append(f"{rel_nb} <- {rel_twin}")
            if twin.read_text(encoding="utf-8") == render(nb, root, config):
                continue
        twin.write_text(render(nb, root, config), encoding="utf-8")
        done.append(f"{rel_twin} <- {rel_nb}")
    if conflicts:
        raise TwinConflict(
            "both the notebook and its prose twin changed since the last sync, so neither is taken: "
            + "; ".join(conflicts)
            + ". Keep one side with `python -m analyses twins --keep notebook` (or `--keep prose`), "
            "optionally followed by the chapter slugs"
        )
    stems = {nb.stem for nb in books}
    for twin in sorted((root / PROSE_DIR).glob("*.md")):
        if twin.stem not in stems:
            twin.unlink()
            done.append(f"{twin.relative_to(root).as_posix()} removed (no notebook)")
    pairs = {nb.stem: {"notebook": _sha(nb), "prose": _sha(twin_path(nb, root))} for nb in books}
    state = root / STATE_FILE
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"head": head, "pairs": pairs}, indent=1) + "\n")
    return done
