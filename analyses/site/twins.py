"""Each chapter's prose twin: ``prose/<slug>.md``, the MyST markdown form of ``book/<slug>.ipynb``.

The executed notebook is what papermill runs, nbval compares and Jupyter Book renders; its JSON
makes a poor review diff. The twin holds the same cells as text (markdown as written, code cells
as ``{code-cell}`` blocks with their tags, no outputs), written by jupytext with the pairing and
filters of ``jupytext.toml`` at the repository root, so a reviewer reads a chapter's change as
prose and a writer edits the prose where prose lives.

The pair is kept in step by :func:`sync` (run by every ``python -m analyses build``):

* a twin edited after its notebook (newer file, different text) is taken into the notebook: its
  cells replace the notebook's inputs, and jupytext keeps the outputs of every cell whose source
  is unchanged; a changed code cell makes the chapter stale, so the build re-executes it;
* otherwise a twin that differs from its notebook is rewritten from the notebook (the notebook was
  edited or re-executed), and a notebook without a twin gets one; a twin whose notebook is gone
  is removed.

``python -m analyses twins --check`` lists the twins that are out of step and fails if any is: the
test suite runs it on the committed files, so a stale twin fails CI (the suite never rewrites).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import nbformat

from analyses.data import REPO_ROOT

PROSE_DIR = "prose"
CONFIG_FILE = "jupytext.toml"
FORMAT = "md:myst"


def twin_path(notebook: Path, root: Path = REPO_ROOT) -> Path:
    """``prose/<slug>.md`` for ``book/<slug>.ipynb``."""
    return root / PROSE_DIR / f"{notebook.stem}.md"


def _config(root: Path) -> Any:
    from jupytext.config import load_jupytext_configuration_file

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
    import jupytext

    config = config or _config(root)
    return jupytext.writes(_clean(nbformat.read(notebook, as_version=4)), fmt=FORMAT, config=config)


def out_of_step(root: Path = REPO_ROOT) -> list[str]:
    """Twins that differ from their notebook's rendering, missing twins and orphan twins (as
    repository-relative paths with the reason), without writing anything."""
    from analyses.site.deps import notebooks

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
    import jupytext
    from jupytext.combine import combine_inputs_with_outputs

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


def sync(root: Path = REPO_ROOT) -> list[str]:
    """Bring every pair into step (see the module docstring); return what was done, one line each."""
    from analyses.site.deps import notebooks

    config, done = _config(root), []
    (root / PROSE_DIR).mkdir(exist_ok=True)
    books = notebooks(root / "book")
    for nb in books:
        twin = twin_path(nb, root)
        if twin.exists():
            text = twin.read_text(encoding="utf-8")
            if text == render(nb, root, config):
                continue
            if twin.stat().st_mtime > nb.stat().st_mtime:
                take_prose(nb, root, config)
                done.append(f"{nb.relative_to(root)} <- {twin.relative_to(root)}")
                if text == render(nb, root, config):
                    continue
        twin.write_text(render(nb, root, config), encoding="utf-8")
        done.append(f"{twin.relative_to(root)} <- {nb.relative_to(root)}")
    stems = {nb.stem for nb in books}
    for twin in sorted((root / PROSE_DIR).glob("*.md")):
        if twin.stem not in stems:
            twin.unlink()
            done.append(f"{twin.relative_to(root)} removed (no notebook)")
    return done
