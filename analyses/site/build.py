"""Build the book: execute stale chapters with papermill, normalise them, run Jupyter Book.

A chapter is re-executed only when something that can change its output changed. When a chapter
runs, two probe cells (removed before the notebook is written) record in its kernel, through a
Python audit hook (PEP 578), every repository file it opened and every folder it listed, plus the
source of every repository module it imported and ``analyses.data.READS`` (the data files and
glob patterns data.py read or probed, including files that did not exist). The notebook's
``metadata.audit`` stores those dependencies (``deps``: ``files`` by content, ``listings`` by
names) and ``inputs_sha256``, the digest of its code cells and tags, its parameters,
``pyproject.toml`` (the pinned dependencies) and the recorded files and listings, taken from a
snapshot of the repository made before the kernel started.

Why this never misses a change: a chapter's execution is a function of its code, parameters,
the installed environment and the bytes it reads. Everything it reads under the repository is
recorded (files by content, folders by the names in them, so a new module or data file in a
folder it looked in counts too). If none of that changed, a re-run takes the same path and
reads the same bytes; if any of it changed, the digest changes and the chapter re-runs, which
records its new dependencies. A notebook without recorded dependencies (older metadata) is
treated as depending on every module, data file and pyproject.toml.

A build is all-or-nothing. The data are validated and every chapter's parameters checked before
any kernel starts; chapters execute into scratch files under ``_build/exec/``, and only when every
one of them succeeded do the normalised results replace the committed notebooks. A failed chapter,
a data fault or Ctrl-C (SIGINT or SIGTERM: running kernels are killed, queued chapters cancelled)
rewrites no notebook and leaves no scratch file; the error is one line. If no chapter was
re-executed and the HTML is newer than every input of the site, the Sphinx run is skipped as well.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import nbformat

from analyses import data
from analyses.data import REPO_ROOT

BOOK_DIR = REPO_ROOT / "book"
BUILD_DIR = REPO_ROOT / "_build"
INPUT_GLOBS = ("analyses/**/*.py", "data/**/*", "pyproject.toml")
KERNEL = "python3"


class BuildError(RuntimeError):
    """A chapter failed to execute or the book failed to build."""


class BuildInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped a build; nothing was written. The message is one line."""


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


def _glob_regex(pattern: str) -> re.Pattern[str]:
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
        rx = _glob_regex(entry)
        names = [k for k in snap if rx.match(k)]
    else:
        prefix = "" if entry in ("", ".") else entry.rstrip("/") + "/"
        names = [k for k in snap if k.startswith(prefix) and "/" not in k[len(prefix) :]]
    return "\n".join(sorted(names))


def cells_digest(nb: nbformat.NotebookNode) -> str:
    """Digest of a notebook's code: cell types, sources and tags (not outputs or prose).

    The fold tag (``hide-input``) is left out: :func:`fold_code_cells` adds it when the chapter is
    written, and folding a cell changes the page, not what the cell computes."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        h.update(cell.source.encode())
        h.update(",".join(t for t in cell.metadata.get("tags", []) if t != FOLD_TAG).encode())
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
    shared: str | None = None
    out = []
    for path in notebooks(root / "book") if paths is None else paths:
        nb = nbformat.read(path, as_version=4)
        audit = nb.metadata.get("audit", {})
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


def _probe_cells(root: Path) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    skip = tuple(str(root / d) + os.sep for d in sorted(IGNORED_TOP))
    first = nbformat.v4.new_code_cell(_PROLOGUE.format(root=str(root), skip=skip))
    last = nbformat.v4.new_code_cell(_EPILOGUE.format(mark=PROBE_MARK, root=str(root) + os.sep))
    for cell in (first, last):
        cell.metadata["tags"] = [PROBE_TAG]
    return first, last


def _relative(path: str, root: Path) -> str | None:
    """Repository-relative POSIX path of ``path``; ``None`` outside the repository or when ignored."""
    p = Path(os.path.abspath(path))
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
HIDDEN_TAGS = frozenset({FOLD_TAG, "hide-cell", "remove-cell", "remove-input"})


def fold_code_cells(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Tag every code cell ``hide-input`` except the parameters cell (and cells removed or shown on
    purpose, see :data:`VISIBLE_INPUT_TAGS`): pages read as prose, numbers and figures, with the
    code one click away. Deterministic and idempotent, applied by :func:`normalise` to every chapter
    the build writes; :func:`cells_digest` ignores the tag, so folding never re-executes a chapter.
    Returns ``nb``."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = list(cell.metadata.get("tags", []))
        if VISIBLE_INPUT_TAGS & set(tags) or HIDDEN_TAGS & set(tags):
            continue
        cell.metadata["tags"] = [*tags, FOLD_TAG]
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
    nb.metadata["language_info"] = {"name": "python"}
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


def _papermill_error(path: Path, err: Exception, probed: bool = True) -> BuildError:
    ename = getattr(err, "ename", type(err).__name__)
    evalue = " ".join(str(getattr(err, "evalue", err)).split())  # one line
    cell = getattr(err, "exec_count", None)
    where = f"cell {cell - probed}" if isinstance(cell, int) else "a cell"  # minus the probe cell in front
    return BuildError(f"{path.name}: {where} failed: {ename}: {evalue}")


def _probe_report(nb: nbformat.NotebookNode) -> dict[str, list[str]] | None:
    for cell in nb.cells:
        if PROBE_TAG in cell.metadata.get("tags", []):
            for out in cell.get("outputs", []):
                for line in "".join(out.get("text", "")).splitlines():
                    if line.startswith(PROBE_MARK):
                        return json.loads(line[len(PROBE_MARK) :])
    return None


# --------------------------------------------------------------------------------------------
# Kernels: encrypted, tracked, killable
# --------------------------------------------------------------------------------------------


class _Kernels:
    """The kernels this process started, so that Ctrl-C can kill them from the main thread.

    Kernels run in their own session (jupyter_client starts them with ``start_new_session``), so
    a terminal's Ctrl-C never reaches them: :meth:`stop` kills each kernel's process group, and
    a kernel that starts after :meth:`stop` kills itself at once.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.groups: set[int] = set()
        self.stopping = False

    def add(self, pgid: int) -> bool:
        with self.lock:
            if not self.stopping:
                self.groups.add(pgid)
        if self.stopping:
            _kill_group(pgid)
            return False
        return True

    def discard(self, pgid: int) -> None:
        with self.lock:
            self.groups.discard(pgid)

    def stop(self) -> int:
        with self.lock:
            self.stopping = True
            groups = list(self.groups)
        for pgid in groups:
            _kill_group(pgid)
        return len(groups)

    def reset(self) -> None:
        with self.lock:
            self.stopping = False
            self.groups.clear()


KERNELS = _Kernels()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kernel_manager_class() -> type:
    from jupyter_client.manager import AsyncKernelManager

    class TrackedKernelManager(AsyncKernelManager):
        """nbclient's kernel manager, registering each kernel's process group in :data:`KERNELS`."""

        async def _async_start_kernel(self, **kw: Any) -> None:
            await super()._async_start_kernel(**kw)
            pgid = getattr(self.provisioner, "pgid", None) or getattr(self.provisioner, "pid", None)
            if pgid and not KERNELS.add(pgid):
                raise KeyboardInterrupt("build interrupted")
            self._audit_pgid = pgid

        async def _async_shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            try:
                await super()._async_shutdown_kernel(now=now, restart=restart)
            finally:
                if getattr(self, "_audit_pgid", None):
                    KERNELS.discard(self._audit_pgid)

        start_kernel = _async_start_kernel  # the public names nbclient awaits
        shutdown_kernel = _async_shutdown_kernel

    return TrackedKernelManager


def kernel_options() -> dict[str, Any]:
    """papermill/nbclient options for every kernel the project starts.

    The kernel manager provisions CurveZMQ keys (``KernelManager.transport_encryption = "auto"``;
    the ipykernel kernelspec declares curve support), so the kernel's messages are encrypted and
    it no longer warns "Kernel is running over TCP without encryption"; and each kernel is
    registered in :data:`KERNELS` so that an interrupted build can kill it.
    """
    import zmq
    from traitlets.config import Config

    options: dict[str, Any] = {"kernel_manager_class": _kernel_manager_class()}
    if zmq.has("curve"):
        options["config"] = Config({"KernelManager": {"transport_encryption": "auto"}})
    return options


# --------------------------------------------------------------------------------------------
# Scratch files
# --------------------------------------------------------------------------------------------

SCRATCH_DIR = BUILD_DIR / "exec"  # same file system as book/, outside it (never rendered)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_scratch(scratch: Path | None = None) -> list[Path]:
    """Remove scratch files left by processes that no longer run (a build killed with SIGKILL).

    Scratch names carry their process id (``<stem>.<pid>.<random>.ipynb``).
    """
    scratch = scratch or SCRATCH_DIR
    removed = []
    for path in scratch.glob("*.ipynb") if scratch.is_dir() else ():
        parts = path.name.split(".")
        pid = int(parts[-3]) if len(parts) >= 4 and parts[-3].isdigit() else None
        if pid is None or (pid != os.getpid() and not _pid_alive(pid)):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _scratch_file(stem: str, scratch: Path | None = None) -> Path:
    scratch = scratch or SCRATCH_DIR
    scratch.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(suffix=".ipynb", dir=scratch, prefix=f"{stem}.{os.getpid()}.")
    os.close(fd)
    return Path(name)


# --------------------------------------------------------------------------------------------
# Executing one chapter
# --------------------------------------------------------------------------------------------


def _chapter_spec(path: Path) -> Any:
    """The spec of the chapter ``path`` is the notebook of (None for other notebooks)."""
    from analyses import chapters

    return chapters.spec(path.stem) if path.stem in chapters.CHAPTERS else None


def sync_parameters(nb: nbformat.NotebookNode, spec: Any) -> bool:
    """Make ``nb``'s ``parameters`` cell the rendering of ``spec`` (see
    :func:`analyses.chapters.params.parameters_source`); True if it changed."""
    from analyses.chapters.params import parameters_source

    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            rendered = parameters_source(spec)
            if cell.source != rendered:
                cell.source = rendered
                return True
    return False


def execute(path: Path, out_path: Path, parameters: Mapping[str, Any] | None = None, record: bool = True) -> Path:
    """Execute ``path`` with papermill into ``out_path`` atomically; normalise; return ``out_path``.

    For a chapter of the book the parameters are validated against its spec (rules included)
    before the kernel starts, and its ``parameters`` cell is rendered from the spec. With
    ``record`` (the default) the kernel records what it opened, listed and imported, and the
    written notebook's ``metadata.audit`` holds those dependencies and their digest, taken from a
    snapshot of the repository made *before* the kernel started. On failure or interruption
    ``out_path`` is left as it was, no scratch file remains, and :class:`BuildError` carries the
    cell's error.
    """
    import papermill

    root = REPO_ROOT
    source = nbformat.read(path, as_version=4)
    spec = _chapter_spec(path)
    if spec is not None:
        spec.validate(parameters or {})  # ParamError before any kernel starts
        sync_parameters(source, spec)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    clean_scratch()  # files a killed (SIGKILL) run left behind
    tmp = _scratch_file(out_path.stem)
    try:
        snap = snapshot(root) if record else {}
        if record:
            first, last = _probe_cells(root)
            probed = copy.deepcopy(source)
            probed.cells = [first, *probed.cells, last]
            nbformat.write(probed, tmp)
        else:
            nbformat.write(source, tmp)
        try:
            papermill.execute_notebook(
                str(tmp),
                str(tmp),
                parameters=dict(parameters or {}),
                kernel_name=KERNEL,
                cwd=str(path.parent),
                progress_bar=False,
                log_output=False,
                **kernel_options(),
            )
        except KeyboardInterrupt:
            raise
        except Exception as err:  # papermill raises PapermillExecutionError with the cell's error
            if KERNELS.stopping:
                raise BuildInterrupted("interrupted") from None
            raise _papermill_error(path, err, record) from None
        nb = nbformat.read(tmp, as_version=4)
        digest = deps = None
        if record:
            report = _probe_report(nb)
            if report is None:
                raise BuildError(f"{path.name}: the dependency probe reported nothing")
            deps = recorded_deps(report, root, path.parent)
            digest = deps_digest(source, deps, snap, parameters, root)
        if parameters:
            # keep the injected values visible in a reader's run
            for cell in nb.cells:
                if "injected-parameters" in cell.metadata.get("tags", []):
                    cell.metadata["tags"] = [t for t in cell.metadata["tags"] if t != "injected-parameters"] + [
                        "run-parameters"
                    ]
        nb = normalise(nb, digest, deps)
        nbformat.write(nb, tmp)
        os.replace(tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return out_path


# --------------------------------------------------------------------------------------------
# Executing the book: all or nothing
# --------------------------------------------------------------------------------------------


def _progress(done: int, total: int, name: str, status: str, seconds: float) -> None:
    print(f"[{done}/{total}] {name:<22} {status} ({seconds:.1f} s)", flush=True)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """In the main thread, SIGTERM (``timeout``, ``kill``) stops a build as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt("terminated")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the staged notebooks replace the committed ones (milliseconds)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def validate_inputs(paths: Iterable[Path]) -> None:
    """Before any kernel starts: every data table valid, every chapter's parameters and rules
    satisfied (DataError or ParamError, one line)."""
    data.validate()
    for path in paths:
        spec = _chapter_spec(path)
        if spec is not None:
            spec.defaults()


def execute_chapters(paths: list[Path], jobs: int | None = None) -> None:
    """Execute chapters in parallel (one kernel per core); write them back only if all succeed.

    Each chapter executes into a scratch file; when every chapter succeeded the scratch files
    replace the committed notebooks (with SIGINT and SIGTERM held for those few renames). A
    failure raises :class:`BuildError` (one line, every failed chapter) and Ctrl-C
    :class:`BuildInterrupted`, both after removing every scratch file: no notebook is rewritten.
    """
    if not paths:
        print("All chapters are up to date; reusing committed outputs.", flush=True)
        return
    if jobs is not None and jobs < 1:
        raise BuildError(f"--jobs must be a whole number of workers, 1 or more; got {jobs}")
    jobs = min(jobs or os.cpu_count() or 1, len(paths))
    print(f"Executing {len(paths)} chapter(s) on {jobs} worker(s)...", flush=True)
    clean_scratch()
    KERNELS.reset()
    staged: dict[Path, Path] = {}
    failures: list[str] = []
    start = time.perf_counter()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    futures: dict[concurrent.futures.Future, Path] = {}
    try:
        with _sigterm_as_interrupt():
            for p in paths:
                staged[p] = _scratch_file(f"{p.stem}-staged")
                futures[pool.submit(execute, p, staged[p])] = p
            pending, finished = set(futures), 0
            while pending:
                # a short timeout: a signal delivered to a worker thread runs its Python handler
                # only when the main thread wakes, so never block on the futures indefinitely
                done, pending = concurrent.futures.wait(pending, timeout=0.2, return_when="FIRST_COMPLETED")
                for fut in sorted(done, key=lambda f: futures[f].name):
                    path, finished = futures[fut], finished + 1
                    try:
                        fut.result()
                        _progress(finished, len(paths), path.stem, "ok", time.perf_counter() - start)
                    except Exception as err:  # BuildError, or anything else a chapter raised
                        _progress(finished, len(paths), path.stem, "FAILED", time.perf_counter() - start)
                        failures.append(str(err) if isinstance(err, BuildError) else f"{path.name}: {err}")
        if failures:
            raise BuildError(
                f"{len(failures)} of {len(paths)} chapter(s) failed, so no notebook was rewritten: "
                + "; ".join(failures)
            )
        with _signals_deferred():
            for path, tmp in staged.items():
                os.replace(tmp, path)
    except KeyboardInterrupt:
        running = KERNELS.stop()
        cancelled = sum(f.cancel() for f in futures)
        pool.shutdown(wait=True, cancel_futures=True)
        raise BuildInterrupted(
            f"interrupted: {running} running chapter(s) stopped, {cancelled} queued cancelled; "
            "no notebook was rewritten"
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        KERNELS.reset()


def jupyter_book(root: Path = REPO_ROOT) -> None:
    """Run ``jupyter-book build`` (its own execution off) with warnings as errors."""
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(root), "-W", "-n", "--keep-going", "-q"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise BuildError(f"jupyter-book build failed:\n{tail}")


SITE_INPUTS = (
    "book/**/*",
    "_static/**/*",
    "_config.yml",
    "_toc.yml",
    "pyproject.toml",
    "analyses/__init__.py",
    "analyses/site/__init__.py",
    "analyses/site/vega_offline.py",
)
SITE_STAMP = BUILD_DIR / "site-inputs.sha256"


def site_inputs_digest(root: Path = REPO_ROOT) -> str:
    """Digest of everything ``jupyter-book build`` reads: the pages, the book's config and TOC,
    the pinned dependencies and the local Sphinx extension."""
    snap = snapshot(root)
    h = hashlib.sha256()
    for pattern in SITE_INPUTS:
        rx = _glob_regex(pattern)
        for rel in sorted(k for k in snap if rx.match(k)):
            h.update(f"\0{rel}\0{snap[rel]}".encode())
    return h.hexdigest()


def site_is_current(root: Path = REPO_ROOT) -> bool:
    """True when the HTML was built (without errors) from exactly the current site inputs."""
    stamp = root / "_build" / SITE_STAMP.name
    index = root / "_build" / "html" / "index.html"
    return index.exists() and stamp.exists() and stamp.read_text().strip() == site_inputs_digest(root)


def build(force: bool = False, only: list[str] | None = None, jobs: int | None = None, html: bool = True) -> Path:
    """Execute stale (or all with ``force``, or ``only`` these slugs) chapters, then build the HTML.

    The Sphinx run is skipped when the HTML was built from exactly the current pages, config,
    TOC, dependencies and extension (and ``force`` is off).
    """
    paths = notebooks()
    if only:
        known = {p.stem: p for p in paths}
        unknown = [s for s in only if s not in known]
        if unknown:
            raise BuildError(f"unknown chapter(s) {unknown}; chapters: {', '.join(known)}")
        todo = [known[s] for s in only]
    else:
        todo = paths if force else stale(paths)
    validate_inputs(paths)
    execute_chapters(todo, jobs)
    if html:
        if not force and site_is_current():
            print("The HTML is current; skipping jupyter-book.", flush=True)
        else:
            SITE_STAMP.unlink(missing_ok=True)
            digest = site_inputs_digest()
            jupyter_book()
            SITE_STAMP.write_text(digest + "\n")
        publish_downloads()
    return BUILD_DIR / "html" / "index.html"


def publish_downloads(html_dir: Path | None = None) -> None:
    """Write the site's downloads (ledger CSV/JSON, data files, printable ledger) into the HTML.

    Run after every HTML step, skipped Sphinx run included: the ledger and data can change without
    any page changing. Files whose content is unchanged are left alone."""
    from analyses.site import downloads

    written = downloads.write_downloads(html_dir or BUILD_DIR / "html")
    if written:
        print(f"Wrote {len(written)} download(s) under {downloads.DOWNLOADS}/.", flush=True)
