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
rewrites no notebook and leaves no scratch file; the error is one line. The HTML step
(:mod:`analyses.site.html_build`) then builds the site aside and puts it in place whole, skipping
each part whose inputs did not change; an interruption there leaves the last complete site, and
the next build finishes the job.
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat

from analyses import chapters, plausibility
from analyses.data import REPO_ROOT
from analyses.scenario.params import parameters_source
from analyses.site import html_build, stamps
from analyses.site.deps import (
    KERNEL,
    PROBE_MARK,
    PROBE_TAG,
    deps_digest,
    normalise,
    notebooks,
    probe_cells,
    promote,
    recorded_deps,
    snapshot,
    stale,
)
from analyses.site.staging import (
    BuildError,
    BuildInterrupted,
    clean_scratch,
    scratch_file,
    signals_deferred,
    sigterm_as_interrupt,
)


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
# Executing one chapter
# --------------------------------------------------------------------------------------------


def _kernels() -> ModuleType:
    """:mod:`analyses.site.kernels` (papermill and the tracked kernels), loaded by the first execution."""
    from analyses.site import kernels  # heavy (papermill, jupyter_client: a second): a no-op build skips it

    return kernels


def _chapter_spec(path: Path) -> Any:
    """The spec of the chapter ``path`` is the notebook of (None for other notebooks)."""
    return chapters.spec(path.stem) if path.stem in chapters.CHAPTERS else None


def sync_parameters(nb: nbformat.NotebookNode, spec: Any) -> bool:
    """Make ``nb``'s ``parameters`` cell the rendering of ``spec`` (see
    :func:`analyses.scenario.params.parameters_source`); True if it changed."""
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
    kernels = _kernels()
    root = REPO_ROOT
    source = nbformat.read(path, as_version=4)
    spec = _chapter_spec(path)
    if spec is not None:
        spec.validate(parameters or {})  # ParamError before any kernel starts
        sync_parameters(source, spec)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    clean_scratch()  # files a killed (SIGKILL) run left behind
    tmp = scratch_file(out_path.stem)
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
            kernels.execute_notebook(tmp, parameters or {}, KERNEL, path.parent)
        except KeyboardInterrupt:
            raise
        except Exception as err:  # papermill raises PapermillExecutionError with the cell's error
            if kernels.KERNELS.stopping:
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


def validate_inputs(paths: Iterable[Path]) -> None:
    """Before any kernel starts: every data table valid, every chapter's parameters and rules
    satisfied (DataError or ParamError, one line). Nothing to execute, nothing to check."""
    paths = list(paths)
    if not paths:
        return
    from analyses.site import preflight  # heavy (the ledger, every check): only a build that executes validates

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
    tracked = _kernels().KERNELS
    tracked.reset()
    staged: dict[Path, Path] = {}
    failures: list[str] = []
    start = time.perf_counter()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    futures: dict[concurrent.futures.Future, Path] = {}
    try:
        with sigterm_as_interrupt():
            for p in paths:
                staged[p] = scratch_file(f"{p.stem}-staged")
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
        with signals_deferred():
            promote(staged)
    except KeyboardInterrupt:
        running = tracked.stop()
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
        tracked.reset()


def build(force: bool = False, only: list[str] | None = None, jobs: int | None = None, html: bool = True) -> Path:
    """Execute stale (or all with ``force``, or ``only`` these slugs) chapters, then build the HTML
    (:func:`analyses.site.html_build.html_step`; each part skipped when its inputs did not change and
    ``force`` is off). Returns the site's front page."""
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
    if not html:
        return html_build.SITE_DIR / "index.html"
    try:
        return html_build.html_step(force)
    except KeyboardInterrupt:
        # execute_chapters returned, so every chapter in `todo` was re-executed and written
        done = (
            f"{len(todo)} re-executed chapter(s) were written ({', '.join(p.stem for p in todo)})"
            if todo
            else "no notebook was rewritten"
        )
        raise BuildInterrupted(
            f"interrupted during the HTML step: {done}; _build/html is the last complete site, run the build again"
        ) from None


def keep_twins_in_step() -> None:
    """Sync each notebook with its prose twin (:func:`analyses.site.twins.sync`), skipped when no
    notebook, twin or pairing rule changed since the last sync (:data:`analyses.site.stamps.TWINS`:
    file digests, no jupytext import)."""
    if stamps.TWINS.current():
        return
    from analyses.site import twins  # heavy (jupytext): only when a notebook or its twin changed

    try:
        lines = twins.sync()
    except twins.TwinConflict as err:
        raise BuildError(str(err)) from None
    for line in lines:
        print(f"prose: {line}", flush=True)
    stamps.TWINS.record(stamps.TWINS.digest())
