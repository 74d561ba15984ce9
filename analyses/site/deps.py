"""What a chapter depends on, and a notebook as the build writes it.

:func:`stale` decides which chapters must re-execute: the build's record ``book/inputs.json``
(:data:`RECORD`) holds, for each chapter, ``inputs_sha256``, the digest of its code cells and tags,
its parameters, ``pyproject.toml`` and the files and folder listings it read when it last ran
(``deps``). The record is one file beside the notebooks rather than each notebook's metadata, so a
data edit rewrites only the notebooks whose outputs change (and this one file); a notebook that still
carries a ``metadata.audit`` (an older one, or a freshly executed one before the build files it) is
read from there. The probe
cells (:func:`probe_cells`) record those reads inside the kernel with a Python audit hook (PEP 578)
plus ``analyses.data.READS``; :func:`recorded_deps` turns the probe's report into ``deps``.
:func:`normalise` strips what differs between identical runs and folds the code cells. See
:mod:`analyses.site.build` for why this never misses a change.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import nbformat

from analyses import data
from analyses.data import REPO_ROOT

BOOK_DIR = REPO_ROOT / "book"
KERNEL = "python3"
INPUT_GLOBS = ("analyses/**/*.py", "data/**/*", "pyproject.toml")


RECORD = "book/inputs.json"  # the build's record of what each chapter read and its digest


def record(root: Path = REPO_ROOT) -> dict[str, dict[str, Any]]:
    """The build's record: chapter slug -> ``{"inputs_sha256": ..., "deps": {...}}`` (empty if none)."""
    path = root / RECORD
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def record_text(entries: Mapping[str, Mapping[str, Any]]) -> str:
    """The record as written: sorted keys, one entry per chapter, so a diff names the chapters that moved."""
    return json.dumps(dict(sorted(entries.items())), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def audit_of(nb: nbformat.NotebookNode, path: Path, root: Path = REPO_ROOT) -> dict[str, Any]:
    """What ``nb`` (at ``path``) was computed from: its own ``metadata.audit`` where it has one, else
    its entry in the build's record (empty when neither)."""
    return dict(nb.metadata.get("audit") or record(root).get(path.stem, {}))


def notebooks(book_dir: Path = BOOK_DIR) -> list[Path]:
    """Every chapter notebook in ``book/``."""
    return sorted(p for p in book_dir.glob("*.ipynb") if not p.name.startswith("."))


# --------------------------------------------------------------------------------------------
# What a chapter depends on
# --------------------------------------------------------------------------------------------

# Never part of a chapter's inputs: the environment (pinned by pyproject.toml), build outputs,
# caches and tool state. Any name starting with "." is skipped as well.
IGNORED_TOP = frozenset({".venv", "_build", "runs", ".git"})
IGNORED_ANYWHERE = frozenset({"__pycache__"})
ALWAYS = ("pyproject.toml",)  # pinned dependencies: every chapter depends on them
MISSING = "missing"
DIRECTORY = "directory"


def _ignored(rel: str) -> bool:
    parts = rel.split("/")
    return parts[0] in IGNORED_TOP or any(
        p in IGNORED_ANYWHERE or p.startswith(".") or p.endswith(".egg-info") for p in parts
    )


def snapshot(root: Path = REPO_ROOT) -> dict[str, str]:
    """Every file (content digest) and folder (``"directory"``) under ``root`` that can be an input.

    Paths are relative POSIX paths; virtual environments, build outputs, caches and dot-files are
    left out (see :data:`IGNORED_TOP`). Taken before a chapter runs, so that a file edited while the
    kernel runs makes the chapter stale rather than silently fresh.
    """
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        rel_dir = Path(folder).relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        dirs[:] = sorted(d for d in dirs if not _ignored(prefix + d))
        for d in dirs:
            out[prefix + d] = DIRECTORY
        for f in files:
            rel = prefix + f
            if not _ignored(rel):
                try:
                    out[rel] = hashlib.sha256((Path(folder) / f).read_bytes()).hexdigest()
                except OSError:  # vanished or unreadable while walking: counts as missing
                    continue
    return out


def glob_regex(pattern: str) -> re.Pattern[str]:
    """``pathlib``-style glob (``*``, ``?``, ``**/``) over relative POSIX paths as a regex."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:[^/]+/)*", i + 3
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def _is_glob(entry: str) -> bool:
    return any(c in entry for c in "*?[")


def _external(rel: str, root: Path) -> Path | None:
    """Where ``rel`` lives when it is not in the repository snapshot: an absolute path, or a
    ``data/...`` path while ``AUDIT_DATA_DIR`` points the data module at another folder (the
    recorded dependencies say ``data/...`` either way, so no machine path enters a notebook)."""
    if Path(rel).is_absolute():
        return Path(rel)
    data_dir = Path(os.path.abspath(data.DATA_DIR))
    if root == REPO_ROOT and data_dir != REPO_ROOT / "data" and (rel == "data" or rel.startswith("data/")):
        return data_dir / rel[len("data/") :] if rel != "data" else data_dir
    return None


def _file_state(rel: str, snap: Mapping[str, str], root: Path) -> str:
    path = _external(rel, root)
    if path is None:
        return snap.get(rel, MISSING)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else MISSING


def _listing_state(entry: str, snap: Mapping[str, str], root: Path = REPO_ROOT) -> str:
    """The names a listing saw: a folder's children, or the matches of a glob pattern."""
    external = _external(entry, root)
    if external is not None:  # outside the repository (AUDIT_DATA_DIR): list it now
        path = external
        if not Path(entry).is_absolute():  # names relative to the data folder, as in the snapshot
            base = Path(os.path.abspath(data.DATA_DIR))
            if _is_glob(entry):
                found = base.glob(entry[len("data/") :])
                return "\n".join(sorted("data/" + p.relative_to(base).as_posix() for p in found))
            if not path.is_dir():
                return MISSING
            prefix = entry.rstrip("/") + "/"
            return "\n".join(sorted(prefix + n for n in os.listdir(path) if not _ignored(prefix + n)))
        if _is_glob(entry):
            found = Path(path.anchor).glob(str(path.relative_to(path.anchor)))
            return "\n".join(sorted(str(p) for p in found))
        return "\n".join(sorted(os.listdir(path))) if path.is_dir() else MISSING
    if _is_glob(entry):
        rx = glob_regex(entry)
        names = [k for k in snap if rx.match(k)]
    else:
        prefix = "" if entry in ("", ".") else entry.rstrip("/") + "/"
        names = [k for k in snap if k.startswith(prefix) and "/" not in k[len(prefix) :]]
    return "\n".join(sorted(names))


def cells_digest(nb: nbformat.NotebookNode) -> str:
    """Digest of a notebook's code: cell types, sources and tags (not outputs or prose).

    The fold tags (``hide-input``, and ``remove-input`` on cells that only glue) are left out:
    :func:`fold_code_cells` adds them when the chapter is written, and folding a cell changes the page,
    not what the cell computes."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        h.update(cell.source.encode())
        h.update(",".join(t for t in cell.metadata.get("tags", []) if t not in (FOLD_TAG, GLUE_TAG)).encode())
    return h.hexdigest()


def deps_digest(
    nb: nbformat.NotebookNode,
    deps: Mapping[str, Iterable[str]],
    snap: Mapping[str, str],
    parameters: Mapping[str, Any] | None = None,
    root: Path = REPO_ROOT,
) -> str:
    """The digest of everything a chapter's outputs depend on.

    Its code cells and tags, the parameters it ran with, pyproject.toml (pinned dependencies),
    the content of every file in ``deps["files"]`` (modules it imported, data it read; a file
    that did not exist counts as missing) and the names in every listing of ``deps["listings"]``
    (folders it listed, glob patterns it expanded).
    """
    h = hashlib.sha256(cells_digest(nb).encode())
    if parameters:
        h.update(repr(sorted(parameters.items())).encode())
    for rel in sorted(set(ALWAYS) | set(deps.get("files", ()))):
        h.update(f"\0file {rel}\0{_file_state(rel, snap, root)}".encode())
    for entry in sorted(set(deps.get("listings", ()))):
        h.update(f"\0list {entry}\0{_listing_state(entry, snap, root)}".encode())
    return h.hexdigest()


def shared_inputs_digest(root: Path = REPO_ROOT) -> str:
    """Legacy: digest of every input shared by all chapters (analyses/, data/, pyproject.toml).

    Used only for a notebook whose metadata predates recorded dependencies: such a chapter is
    treated as depending on everything.
    """
    h = hashlib.sha256()
    for pattern in INPUT_GLOBS:
        for path in sorted(root.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def inputs_digest(nb: nbformat.NotebookNode, shared: str, parameters: Mapping[str, Any] | None = None) -> str:
    """Legacy digest (see :func:`shared_inputs_digest`)."""
    h = hashlib.sha256((shared + cells_digest(nb)).encode())
    if parameters:
        h.update(repr(sorted(parameters.items())).encode())
    return h.hexdigest()


def stale(paths: Iterable[Path] | None = None, root: Path = REPO_ROOT) -> list[Path]:
    """Chapters whose stored digest differs from the digest of their recorded inputs now.

    A notebook without recorded dependencies (older metadata) is compared against the digest of
    every module, data file and pyproject.toml: it depends on everything.
    """
    snap = snapshot(root)
    filed = record(root)
    shared: str | None = None
    out = []
    for path in notebooks(root / "book") if paths is None else paths:
        nb = nbformat.read(path, as_version=4)
        audit = dict(nb.metadata.get("audit") or filed.get(path.stem, {}))
        stored = audit.get("inputs_sha256")
        if "deps" in audit:
            current = deps_digest(nb, audit["deps"], snap, root=root)
        else:
            shared = shared or shared_inputs_digest(root)
            current = inputs_digest(nb, shared)
        if stored != current:
            out.append(path)
    return out


# --------------------------------------------------------------------------------------------
# Recording what a chapter reads, inside its kernel
# --------------------------------------------------------------------------------------------

PROBE_TAG = "audit-probe"
PROBE_MARK = "AUDIT-DEPS "

# First cell: a Python audit hook (PEP 578) notes every file opened for reading and every folder
# listed under the repository, whoever does it (the import system, data.py, pandas, pkgutil).
_PROLOGUE = """\
import os as _audit_os, sys as _audit_sys
_audit_seen = {{"opened": set(), "listed": set()}}
def _audit_hook(event, args, _root={root!r}, _skip={skip!r}, _seen=_audit_seen, _os=_audit_os):
    if event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    target = args[0]
    if isinstance(target, int) or target is None:
        return
    if event == "open" and isinstance(args[1], str) and any(c in args[1] for c in "wax+"):
        return
    path = _os.path.abspath(_os.fsdecode(target))
    if not (path == _root or path.startswith(_root + _os.sep)) or path.startswith(_skip):
        return
    _seen["opened" if event == "open" else "listed"].add(path)
_audit_sys.addaudithook(_audit_hook)
del _audit_hook
"""

# Last cell: report what was opened and listed, the modules imported and data.py's own record.
_EPILOGUE = """\
import json as _audit_json
print({mark!r} + _audit_json.dumps({{
    "opened": sorted(_audit_seen["opened"]),
    "listed": sorted(_audit_seen["listed"]),
    "modules": sorted({{_f for _m in list(_audit_sys.modules.values())
                        if isinstance(_f := getattr(_m, "__file__", None), str) and _f.startswith({root!r})}}),
    "reads": sorted(getattr(_audit_sys.modules.get("analyses.data"), "READS", ())),
}}))
"""


def probe_cells(root: Path) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    skip = tuple(str(root / d) + os.sep for d in sorted(IGNORED_TOP))
    first = nbformat.v4.new_code_cell(_PROLOGUE.format(root=str(root), skip=skip))
    last = nbformat.v4.new_code_cell(_EPILOGUE.format(mark=PROBE_MARK, root=str(root) + os.sep))
    for cell in (first, last):
        cell.metadata["tags"] = [PROBE_TAG]
    return first, last


def _relative(path: str, root: Path) -> str | None:
    """Repository-relative POSIX path of ``path``; ``None`` outside the repository or when ignored."""
    p = Path(os.path.abspath(path))
    if p.name.endswith("__path_hook__"):  # an editable install's import hook on sys.path: no file, and
        return None  # its relative name resolved against whichever folder the kernel was in
    if p.parent.name == "__pycache__" and p.suffix == ".pyc":  # compiled module: depend on its source
        p = p.parent.parent / (p.name.split(".")[0] + ".py")
    try:
        rel = p.relative_to(root).as_posix()
    except ValueError:
        return None
    return rel if rel == "." or not _ignored(rel) else None


def recorded_deps(
    report: Mapping[str, list[str]], root: Path = REPO_ROOT, cwd: Path | None = None
) -> dict[str, list[str]]:
    """Files (content) and listings (names) from a kernel's probe report, repository-relative.

    Listings of the repository root and of the kernel's working folder ``cwd`` are left out: both
    are on the kernel's ``sys.path``, and the import system lists them again only when their
    modification time changed since the kernel started, so whether they appear depends on what
    else touched them during the run (a second ``build --force`` recorded different folders).
    Neither holds modules or data a chapter reads by listing.
    """
    files: set[str] = set()
    listings: set[str] = set()
    skip = {".", _relative(str(cwd), root) if cwd is not None else "."}
    for path in [*report.get("opened", ()), *report.get("modules", ())]:
        rel = _relative(path, root)
        if rel is not None and rel != "." and not (root / rel).is_dir():
            files.add(rel)
    for path in report.get("listed", ()):
        rel = _relative(path, root)
        if rel is not None and rel not in skip:
            listings.add(rel)
    for entry in report.get("reads", ()):  # data.py's record: relative to the repository already
        (listings if _is_glob(entry) else files).add(entry)
    return {"files": sorted(files), "listings": sorted(listings)}


# Code cells a reader sees unfolded: the parameters (a reader's run shows its own values too). Every
# other code cell is folded behind the theme's show/hide toggle, unless it is removed already or
# carries "show-input" (an author's explicit choice to keep it open).
VISIBLE_INPUT_TAGS = frozenset({"parameters", "run-parameters", "injected-parameters", "show-input"})
FOLD_TAG = "hide-input"
GLUE_TAG = "remove-input"  # a cell that only glues values shows nothing: its code is left off the page
HIDDEN_TAGS = frozenset({FOLD_TAG, "hide-cell", "remove-cell", GLUE_TAG})
GLUE_MIME = "application/papermill.record/"
# Folded code is shown as plain text: the highlighting markup of a chapter's hidden cells weighed up to
# 22 KB of a page (issue 24: pages under 150 KB on a phone), for code one click away.
SOURCE_LEXER = "text"


def glue_only(cell: nbformat.NotebookNode) -> bool:
    """A code cell whose outputs are all glued values (myst-nb records), nothing a reader sees."""
    outs = cell.get("outputs", [])
    return bool(outs) and all(
        o.get("output_type") == "display_data" and o.get("data") and all(k.startswith(GLUE_MIME) for k in o["data"])
        for o in outs
    )


def fold_code_cells(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Tag every code cell ``hide-input`` except the parameters cell (and cells removed or shown on
    purpose, see :data:`VISIBLE_INPUT_TAGS`): pages read as prose, numbers and figures, with the
    code one click away; a cell that only glues values (:func:`glue_only`) is tagged ``remove-input``
    (its code is in the notebook and its prose twin). Deterministic and idempotent, applied by :func:`normalise` to every chapter
    the build writes; :func:`cells_digest` ignores the tag, so folding never re-executes a chapter.
    Returns ``nb``."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = list(cell.metadata.get("tags", []))
        if VISIBLE_INPUT_TAGS & set(tags) or HIDDEN_TAGS & set(tags):
            continue
        cell.metadata["tags"] = [*tags, GLUE_TAG if glue_only(cell) else FOLD_TAG]
    return nb


def normalise(
    nb: nbformat.NotebookNode, digest: str | None = None, deps: Mapping[str, list[str]] | None = None
) -> nbformat.NotebookNode:
    """Strip what changes between identical runs: timestamps, durations, machine details, probes.

    With ``digest`` the notebook's ``metadata.audit`` records it (``inputs_sha256``) and, with
    ``deps``, the files and listings it was computed from.
    """
    nb = copy.deepcopy(nb)
    nb.metadata.pop("papermill", None)
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": KERNEL}
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": SOURCE_LEXER}
    if digest is not None:
        nb.metadata["audit"] = {"inputs_sha256": digest} | ({"deps": dict(deps)} if deps is not None else {})
    drop = {"injected-parameters", PROBE_TAG}
    nb.cells = [c for c in nb.cells if not drop & set(c.metadata.get("tags", []))]
    fold_code_cells(nb)
    count = 0
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        cell.pop("id", None)
        if cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for out in cell.outputs:
                if "execution_count" in out:
                    out["execution_count"] = count
                out.get("metadata", {}).pop("papermill", None)
    nb.nbformat, nb.nbformat_minor = 4, 4
    return nb


def promote(staged: Mapping[Path, Path], root: Path = REPO_ROOT) -> None:
    """Replace each notebook by its staged run, and file what each run read in the build's record
    (``book/inputs.json``, :func:`analyses.site.deps.record`) instead of the notebook: a notebook
    whose outputs did not change is left as it is (its twin too), so a data edit rewrites only the
    notebooks it changes, and the record."""
    entries = record(root)
    for path, tmp in staged.items():
        nb = nbformat.read(tmp, as_version=4)
        audit = nb.metadata.pop("audit", None)
        if audit is not None:
            entries[path.stem] = audit
        text = nbformat.writes(nb)
        text += "" if text.endswith("\n") else "\n"  # as nbformat.write ends a file
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            tmp.unlink()
            continue
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    target = root / RECORD
    scratch = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    scratch.write_text(record_text(entries), encoding="utf-8")
    os.replace(scratch, target)
