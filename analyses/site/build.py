"""Build the book: execute stale chapters with papermill, normalise them, run Jupyter Book.

A chapter is re-executed only when something that can change its output changed. When a chapter
runs, two probe cells (removed before the notebook is written) record in its kernel, through a
Python audit hook (PEP 578), every repository file it opened and every folder it listed, plus the
source of every repository module it imported and ``analyses.data.READS`` (the data files and
glob patterns data.py read or probed, including files that did not exist). The build's
record ``book/inputs.json`` stores, per chapter, those dependencies (``deps``: ``files`` by content,
``listings`` by names) and ``inputs_sha256``, the digest of its code cells and tags, its parameters,
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
one of them succeeded do the normalised results replace the committed notebooks that changed. A failed chapter,
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
import shutil
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
from analyses.site.deps import (
    KERNEL,
    PROBE_MARK,
    PROBE_TAG,
    deps_digest,
    glob_regex,
    normalise,
    notebooks,
    probe_cells,
    promote,
    recorded_deps,
    snapshot,
    stale,
)
from analyses.site.kernels import KERNELS, kernel_options

BUILD_DIR = REPO_ROOT / "_build"


class BuildError(RuntimeError):
    """A chapter failed to execute or the book failed to build."""


class BuildInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped a build; nothing was written. The message is one line."""


def _papermill_error(path: Path, err: Exception, probed: bool = True) -> BuildError:
    ename = getattr(err, "ename", type(err).__name__)
    evalue = " ".join(str(getattr(err, "evalue", err)).split())  # one line
    cell = getattr(err, "exec_count", None)
    if ename in ("DataError", "DataKeyError", "ParamError"):  # says itself where and what (file, row, column)
        return BuildError(f"{path.name}: {evalue}")
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
    :func:`analyses.scenario.params.parameters_source`); True if it changed."""
    from analyses.scenario.params import parameters_source

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
            first, last = probe_cells(root)
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
    satisfied (DataError or ParamError, one line). Nothing to execute, nothing to check."""
    paths = list(paths)
    if not paths:
        return
    from analyses import plausibility
    from analyses.site import preflight

    preflight.validate()  # the data, every claim row against its check, the Chinese words
    for warning in plausibility.warnings():  # a figure far off its neighbours: worth a second look
        print(f"warning: {warning}", flush=True)
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
            promote(staged)
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
    "analyses/pages/__init__.py",
    "analyses/pages/charts.py",  # the chart script's version comment the extension reads
    "analyses/pages/encodings.py",  # the category colours charts.chart_html gives every chart
    "analyses/site/sphinx_hooks.py",
    "analyses/site/theme_assets.py",
    "analyses/site/figure_search.*",
    "analyses/site/templates/**/*",
    "analyses/site/zh_site.py",  # the link to the Chinese edition on every page
    "data/claims.csv",  # which chapters have a Chinese page to link to
)
SITE_STAMP = BUILD_DIR / "site-inputs.sha256"


def files_digest(patterns: Iterable[str], root: Path = REPO_ROOT) -> str:
    """Digest of the names and contents of the files under ``root`` matching ``patterns`` (from the
    repository snapshot: nothing is imported or executed)."""
    snap = snapshot(root)
    h = hashlib.sha256()
    for pattern in patterns:
        rx = glob_regex(pattern)
        for rel in sorted(k for k in snap if rx.match(k)):
            h.update(f"\0{rel}\0{snap[rel]}".encode())
    return h.hexdigest()


def site_inputs_digest(root: Path = REPO_ROOT) -> str:
    """Digest of everything ``jupyter-book build`` reads: the pages, the book's config and TOC,
    the pinned dependencies and the local Sphinx extension."""
    return files_digest(SITE_INPUTS, root)


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
    keep_twins_in_step()  # a writer's edits to prose/<slug>.md reach the notebook first
    paths = notebooks()
    if only:
        known = {p.stem: p for p in paths}
        unknown = [s for s in only if s not in known]
        if unknown:
            raise BuildError(f"unknown chapter(s) {unknown}; chapters: {', '.join(known)}")
        todo = [known[s] for s in only]
    else:
        todo = paths if force else stale(paths)
    validate_inputs(todo)  # only what will execute: a no-op build imports no chapter
    execute_chapters(todo, jobs)
    keep_twins_in_step()
    if html:
        try:
            sphinx = force or not site_is_current()
            downloads_digest = downloads_inputs_digest()
            if not sphinx:
                print("The HTML is current; skipping jupyter-book.", flush=True)
            else:
                SITE_STAMP.unlink(missing_ok=True)
                DOWNLOADS_STAMP.unlink(missing_ok=True)
                digest = site_inputs_digest()
                jupyter_book()  # the Sphinx hook writes the downloads (sphinx_hooks.write_downloads)
                SITE_STAMP.write_text(digest + "\n")
            build_zh(force=force)
            if not sphinx and (downloads_digest is None or not downloads_are_current(downloads_digest)):
                # the ledger and data can change without any page changing
                DOWNLOADS_STAMP.unlink(missing_ok=True)
                publish_downloads()
            if downloads_digest is not None:
                DOWNLOADS_STAMP.write_text(downloads_digest + "\n")
        except KeyboardInterrupt:
            # execute_chapters returned, so every chapter in `todo` was re-executed and written
            done = (
                f"{len(todo)} re-executed chapter(s) were written ({', '.join(p.stem for p in todo)})"
                if todo
                else "no notebook was rewritten"
            )
            raise BuildInterrupted(
                f"interrupted during the HTML step: {done}; _build/html is incomplete, run the build again"
            ) from None
    return BUILD_DIR / "html" / "index.html"


# The Chinese edition (zh/): its pages are computed from the ledger at build time, so everything the
# ledger reads is an input, with its own sources, the shared static files and the dependencies.
ZH_INPUTS = ("zh/**/*", "_static/**/*", "pyproject.toml", "analyses/**/*", "data/**/*")
ZH_STAMP = BUILD_DIR / "zh-inputs.sha256"
ZH_OUT = BUILD_DIR / "zh"  # jupyter-book's own output folder (_build/zh/_build/html)


def zh_is_current(root: Path = REPO_ROOT) -> bool:
    """True when ``_build/html/zh/`` was built (without errors) from exactly the current inputs."""
    stamp = root / "_build" / ZH_STAMP.name
    index = root / "_build" / "html" / "zh" / "index.html"
    return index.exists() and stamp.exists() and stamp.read_text().strip() == files_digest(ZH_INPUTS, root)


def build_zh(force: bool = False, root: Path = REPO_ROOT) -> bool:
    """Build the Chinese edition (``zh/``, ``jupyter-book build -W``, every page re-read since its
    content comes from the ledger) and put it at ``_build/html/zh/``; skipped when its inputs'
    digest is the one recorded at its last build. True when it built."""
    if not force and zh_is_current(root):
        print("The Chinese edition is current; skipping it.", flush=True)
        return False
    stamp = root / "_build" / ZH_STAMP.name
    stamp.unlink(missing_ok=True)
    digest = files_digest(ZH_INPUTS, root)
    out = root / "_build" / ZH_OUT.name
    cmd = [
        str(Path(sys.executable).parent / "jupyter-book"),
        "build",
        str(root / "zh"),
        "--path-output",
        str(out),
        "--all",
        "-W",
        "-n",
        "--keep-going",
        "-q",
    ]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise BuildError(f"jupyter-book build of the Chinese edition failed:\n{tail}")
    target = root / "_build" / "html" / "zh"
    staged = target.with_name("zh.staged")
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(out / "_build" / "html", staged)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staged, target)
    stamp.write_text(digest + "\n")
    print("Built the Chinese edition (_build/html/zh/).", flush=True)
    return True


TWINS_INPUTS = ("book/*.ipynb", "prose/*.md", "jupytext.toml")
TWINS_STAMP = BUILD_DIR / "twins-inputs.sha256"


def keep_twins_in_step() -> None:
    """Sync each notebook with its prose twin (:func:`analyses.site.twins.sync`), skipped when no
    notebook, twin or pairing rule changed since the last sync (file digests: no jupytext import)."""
    if TWINS_STAMP.exists() and TWINS_STAMP.read_text().strip() == files_digest(TWINS_INPUTS):
        return
    from analyses.site import twins

    try:
        lines = twins.sync()
    except twins.TwinConflict as err:
        raise BuildError(str(err)) from None
    for line in lines:
        print(f"prose: {line}", flush=True)
    TWINS_STAMP.parent.mkdir(parents=True, exist_ok=True)
    TWINS_STAMP.write_text(files_digest(TWINS_INPUTS) + "\n")


# What the downloads are made of: the ledger (every module and data file) and the data files.
DOWNLOADS_INPUTS = ("analyses/**/*", "data/**/*", "pyproject.toml")
DOWNLOADS_STAMP = BUILD_DIR / "downloads-inputs.sha256"


def downloads_inputs_digest(root: Path = REPO_ROOT) -> str | None:
    """Digest of everything the downloads are made of (:data:`DOWNLOADS_INPUTS`, from file digests:
    nothing is imported), or None while ``AUDIT_DATA_DIR`` points outside the repository (then they
    are always rewritten)."""
    if Path(os.path.abspath(data.DATA_DIR)) != root / "data":
        return None
    return files_digest(DOWNLOADS_INPUTS, root)


def downloads_are_current(digest: str, root: Path = REPO_ROOT) -> bool:
    """True when the site's downloads were written from inputs with ``digest`` and are still there."""
    from analyses.pages.links import DOWNLOADS, PRINTABLE

    stamp = root / "_build" / DOWNLOADS_STAMP.name
    written = root / "_build" / "html" / DOWNLOADS / PRINTABLE
    return written.exists() and stamp.exists() and stamp.read_text().strip() == digest


def publish_downloads(html_dir: Path | None = None) -> None:
    """Write the site's downloads (ledger CSV/JSON, data files, printable ledger) into the HTML.

    Run after every HTML step, skipped Sphinx run included: the ledger and data can change without
    any page changing. Files whose content is unchanged are left alone."""
    from analyses.chapters import ledger
    from analyses.chapters.claims import figures as claims_page
    from analyses.site import downloads

    frame = ledger.ledger()
    written = downloads.write_downloads(html_dir or BUILD_DIR / "html", frame, claims_page.printable_page(frame))
    if written:
        print(f"Wrote {len(written)} download(s) under {downloads.DOWNLOADS}/.", flush=True)
