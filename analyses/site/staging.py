"""How the build writes without leaving anything half-written, and its two ways to stop.

- **Chapters** execute into scratch files under ``_build/exec/`` (:func:`scratch_file`), named with
  the process id, so a later build removes what a killed one left (:func:`clean_scratch`); they
  replace the committed notebooks only when every chapter succeeded (:mod:`analyses.site.build`).
- **Sphinx** runs in a work folder of its own (:func:`work_folder`), kept between builds for its
  incremental environment. The folder is marked unfinished while a run is in it: a run that failed,
  was interrupted or was killed leaves the mark, and the next run starts the folder afresh (an
  environment pickled before the HTML was written made the next incremental run fail with "search
  index couldn't be loaded", issue 38).
- **The site**: a finished run's HTML replaces the published folder by renames (:func:`install`), with
  SIGINT and SIGTERM held, so ``_build/html`` is the last complete build, never a mix.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from analyses.data import REPO_ROOT

BUILD_DIR = REPO_ROOT / "_build"
SCRATCH_DIR = BUILD_DIR / "exec"  # same file system as book/, outside it (never rendered)
UNFINISHED = ".unfinished"  # a work folder's mark while a run is in it


class BuildError(RuntimeError):
    """A chapter failed to execute or the book failed to build."""


class BuildInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped a build; the message (one line) says what was written."""


# --------------------------------------------------------------------------------------------
# Signals
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
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
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while staged files replace published ones (renames: milliseconds)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


# --------------------------------------------------------------------------------------------
# Scratch files of executing chapters
# --------------------------------------------------------------------------------------------


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


def scratch_file(stem: str, scratch: Path | None = None) -> Path:
    """A new empty scratch notebook for ``stem``, named with this process's id."""
    scratch = scratch or SCRATCH_DIR
    scratch.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(suffix=".ipynb", dir=scratch, prefix=f"{stem}.{os.getpid()}.")
    os.close(fd)
    return Path(name)


# --------------------------------------------------------------------------------------------
# Work folders and the published site
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def work_folder(work: Path) -> Iterator[Path]:
    """A tool's work folder kept between runs, started afresh when the run before did not finish.

    The mark (:data:`UNFINISHED`) is written before the body runs and removed only when it returns:
    after an exception, Ctrl-C or SIGKILL it stays, and the next entry removes the whole folder."""
    mark = work / UNFINISHED
    if mark.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    mark.touch()
    yield work
    mark.unlink()


def install(built: Path, target: Path, keep: Iterable[str] = ()) -> None:
    """Make ``target`` a copy of the folder ``built`` without ever leaving it half-written.

    The copy is made beside ``target`` first (``<target>.staged``; an interruption there leaves
    ``target`` as it was). Then, with SIGINT and SIGTERM held, the entries ``keep`` of the old
    ``target`` (another step's output: the Chinese edition) move into the copy, the old folder is
    renamed away and the copy takes its name. Only SIGKILL between those renames can leave no
    ``target``, which the next build treats as never built."""
    staged = target.with_name(target.name + ".staged")
    old = target.with_name(target.name + ".old")
    for leftover in (staged, old):
        shutil.rmtree(leftover, ignore_errors=True)
    shutil.copytree(built, staged)
    with signals_deferred():
        for name in keep:
            if (target / name).exists():
                shutil.rmtree(staged / name, ignore_errors=True)
                os.replace(target / name, staged / name)
        if target.exists():
            os.replace(target, old)
        os.replace(staged, target)
    shutil.rmtree(old, ignore_errors=True)
