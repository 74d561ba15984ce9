"""Build the book: execute stale chapters with papermill, normalise them, run Jupyter Book.

A chapter is re-executed only when an input that can change its output changed: its notebook's
cells, any module of ``analyses/``, any file in ``data/`` or the pinned dependencies
(``pyproject.toml``). The digest of those inputs is stored in the notebook's metadata
(``audit.inputs_sha256``); a notebook whose digest matches is reused as committed. We cannot tell
cheaply which data files or modules a chapter reads, so any change there re-executes every chapter.

Execution is atomic per chapter: papermill writes to a temporary file, and only a successful,
normalised result replaces the committed notebook. A failure prints the failing cell's error.
"""

from __future__ import annotations

import concurrent.futures
import copy
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import nbformat

from analyses.data import REPO_ROOT

BOOK_DIR = REPO_ROOT / "book"
BUILD_DIR = REPO_ROOT / "_build"
INPUT_GLOBS = ("analyses/**/*.py", "data/**/*", "pyproject.toml")
KERNEL = "python3"


class BuildError(RuntimeError):
    """A chapter failed to execute or the book failed to build."""


def notebooks(book_dir: Path = BOOK_DIR) -> list[Path]:
    """Every chapter notebook in ``book/``."""
    return sorted(p for p in book_dir.glob("*.ipynb") if not p.name.startswith("."))


def shared_inputs_digest(root: Path = REPO_ROOT) -> str:
    """Digest of every input shared by all chapters (analyses/, data/, pyproject.toml)."""
    h = hashlib.sha256()
    for pattern in INPUT_GLOBS:
        for path in sorted(root.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def cells_digest(nb: nbformat.NotebookNode) -> str:
    """Digest of a notebook's code: cell types, sources and tags (not outputs or prose)."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        h.update(cell.source.encode())
        h.update(",".join(cell.metadata.get("tags", [])).encode())
    return h.hexdigest()


def inputs_digest(nb: nbformat.NotebookNode, shared: str, parameters: Mapping[str, Any] | None = None) -> str:
    """The digest a chapter's committed outputs were computed from."""
    h = hashlib.sha256((shared + cells_digest(nb)).encode())
    if parameters:
        h.update(repr(sorted(parameters.items())).encode())
    return h.hexdigest()


def stale(paths: Iterable[Path] | None = None, root: Path = REPO_ROOT) -> list[Path]:
    """Chapters whose stored input digest differs from their current inputs."""
    shared = shared_inputs_digest(root)
    out = []
    for path in notebooks(root / "book") if paths is None else paths:
        nb = nbformat.read(path, as_version=4)
        stored = nb.metadata.get("audit", {}).get("inputs_sha256")
        if stored != inputs_digest(nb, shared):
            out.append(path)
    return out


def normalise(nb: nbformat.NotebookNode, digest: str | None = None) -> nbformat.NotebookNode:
    """Strip what changes between identical runs: timestamps, durations, machine details."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("papermill", None)
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": KERNEL}
    nb.metadata["language_info"] = {"name": "python"}
    if digest is not None:
        nb.metadata["audit"] = {"inputs_sha256": digest}
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
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


def _papermill_error(path: Path, err: Exception) -> BuildError:
    ename = getattr(err, "ename", type(err).__name__)
    evalue = getattr(err, "evalue", str(err))
    cell = getattr(err, "exec_count", None)
    where = f"cell {cell}" if cell is not None else "a cell"
    return BuildError(f"{path.name}: {where} failed: {ename}: {evalue}")


def execute(path: Path, out_path: Path, parameters: Mapping[str, Any] | None = None, digest: str | None = None) -> Path:
    """Execute ``path`` with papermill into ``out_path`` atomically; normalise; return ``out_path``.

    On failure ``out_path`` is left as it was and :class:`BuildError` carries the cell's error.
    """
    import papermill

    out_path.parent.mkdir(parents=True, exist_ok=True)
    scratch = BUILD_DIR / "exec"  # same file system as the target, outside book/ (never rendered)
    scratch.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(suffix=".ipynb", dir=scratch, prefix=f"{out_path.stem}.")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            papermill.execute_notebook(
                str(path),
                str(tmp),
                parameters=dict(parameters or {}),
                kernel_name=KERNEL,
                cwd=str(path.parent),
                progress_bar=False,
                log_output=False,
            )
        except Exception as err:  # papermill raises PapermillExecutionError with the cell's error
            raise _papermill_error(path, err) from None
        nb = nbformat.read(tmp, as_version=4)
        if parameters:
            # keep the injected values visible in a reader's run
            for cell in nb.cells:
                if "injected-parameters" in cell.metadata.get("tags", []):
                    cell.metadata["tags"] = [t for t in cell.metadata["tags"] if t != "injected-parameters"] + [
                        "run-parameters"
                    ]
        nb = normalise(nb, digest)
        nbformat.write(nb, tmp)
        os.replace(tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return out_path


def _progress(done: int, total: int, name: str, status: str, seconds: float) -> None:
    print(f"[{done}/{total}] {name:<22} {status} ({seconds:.1f} s)", flush=True)


def execute_chapters(paths: list[Path], jobs: int | None = None) -> None:
    """Execute chapters in parallel (one kernel per core), each written back only on success."""
    if not paths:
        print("All chapters are up to date; reusing committed outputs.", flush=True)
        return
    shared = shared_inputs_digest()
    jobs = jobs or min(len(paths), os.cpu_count() or 1)
    print(f"Executing {len(paths)} chapter(s) on {jobs} worker(s)...", flush=True)
    failures: list[str] = []
    start = {p: time.perf_counter() for p in paths}

    def run(path: Path) -> Path:
        nb = nbformat.read(path, as_version=4)
        return execute(path, path, digest=inputs_digest(nb, shared))

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run, p): p for p in paths}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            path = futures[fut]
            try:
                fut.result()
                _progress(i, len(paths), path.stem, "ok", time.perf_counter() - start[path])
            except BuildError as err:
                _progress(i, len(paths), path.stem, "FAILED", time.perf_counter() - start[path])
                failures.append(str(err))
    if failures:
        raise BuildError("\n".join(failures) + "\nThe committed notebooks of failed chapters were left untouched.")


def jupyter_book(root: Path = REPO_ROOT) -> None:
    """Run ``jupyter-book build`` (its own execution off) with warnings as errors."""
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(root), "-W", "-n", "--keep-going", "-q"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise BuildError(f"jupyter-book build failed:\n{tail}")


def build(force: bool = False, only: list[str] | None = None, jobs: int | None = None, html: bool = True) -> Path:
    """Execute stale (or all with ``force``, or ``only`` these slugs) chapters, then build the HTML."""
    paths = notebooks()
    if only:
        known = {p.stem: p for p in paths}
        unknown = [s for s in only if s not in known]
        if unknown:
            raise BuildError(f"unknown chapter(s) {unknown}; chapters: {', '.join(known)}")
        todo = [known[s] for s in only]
    else:
        todo = paths if force else stale(paths)
    execute_chapters(todo, jobs)
    if html:
        jupyter_book()
    return BUILD_DIR / "html" / "index.html"
