"""A build that fails or is interrupted writes nothing: Ctrl-C and SIGTERM stop it within seconds,
a failing chapter or a data fault leaves every committed notebook as it was, and no scratch file
or kernel outlives it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from analyses import data
from analyses.chapters import CHAPTERS
from analyses.data import REPO_ROOT
from analyses.site import build, deps


def _copy_repo(tmp_path: Path) -> Path:
    """The repository's inputs (no build outputs, environments or caches) under ``tmp_path``."""
    root = tmp_path / "repo"
    skip = shutil.ignore_patterns("__pycache__", ".*", "*.egg-info", "_build", "runs")
    shutil.copytree(REPO_ROOT, root, ignore=lambda d, names: skip(d, names) | ({".venv"} & set(names)))
    return root


def _stamps(book: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime) of every notebook: a rewrite, even with identical bytes, changes them."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(book.glob("*.ipynb"))}


def _kernels_in(folder: Path) -> list[int]:
    """Running processes whose working directory is ``folder`` (the build's kernels run there)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if Path(os.readlink(proc / "cwd")) == folder:
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def _scratch(root: Path) -> list[Path]:
    return sorted((root / "_build" / "exec").glob("*")) if (root / "_build" / "exec").exists() else []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_build_within_seconds_and_writes_nothing(tmp_path, signum):
    root = _copy_repo(tmp_path)
    before = _stamps(root / "book")
    cmd = [sys.executable, "-m", "analyses", "build", "--force", "--no-html", "--jobs", "2"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and f"Executing {len(CHAPTERS)} chapter(s)" in proc.stdout.readline()
    deadline = time.monotonic() + 60
    while len(_kernels_in(root / "book")) < 2 and time.monotonic() < deadline:  # both workers busy
        time.sleep(0.2)
    time.sleep(1.0)
    sent = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    stopped = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert stopped < 5.0, f"took {stopped:.1f} s to stop"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted:") and "queued cancelled" in lines[0], err
    assert "Traceback" not in err
    assert _stamps(root / "book") == before
    assert _scratch(root) == []
    time.sleep(0.5)
    assert _kernels_in(root / "book") == []


def test_a_failing_chapter_rewrites_no_notebook(tmp_path):
    root = _copy_repo(tmp_path)
    peers = root / "book" / "peers.ipynb"
    nb = nbformat.read(peers, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell('raise RuntimeError("chapter made to fail")'))
    nbformat.write(nb, peers)
    before = _stamps(root / "book")
    cmd = [sys.executable, "-m", "analyses", "build", "--only", "sources", "peers", "--no-html", "--jobs", "2"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "1 of 2 chapter(s) failed, so no notebook was rewritten" in lines[0]
    assert "peers.ipynb" in lines[0] and "chapter made to fail" in lines[0]
    assert "sources  " in proc.stdout and "ok" in proc.stdout  # sources did succeed...
    assert _stamps(root / "book") == before  # ...and was not written
    assert _scratch(root) == []


@pytest.mark.parametrize(
    "fault, needle",
    [
        (lambda d: (d / "prices.csv").write_text(""), "data/prices.csv, row 1: the file is empty"),
        (lambda d: (d / "gpus.csv").write_bytes((d / "gpus.csv").read_bytes() + b"X\xff\n"), "is not UTF-8"),
    ],
    ids=["empty-prices", "non-utf8-gpus"],
)
def test_a_data_fault_fails_the_build_in_one_line_before_any_kernel(tmp_path, fault, needle):
    target = tmp_path / "data"
    shutil.copytree(REPO_ROOT / "data", target)
    fault(target)
    before = _stamps(REPO_ROOT / "book")
    env = os.environ | {"AUDIT_DATA_DIR": str(target)}
    proc = subprocess.run(
        [sys.executable, "-m", "analyses", "build", "--force", "--no-html"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr and "Traceback" not in proc.stderr
    assert _stamps(REPO_ROOT / "book") == before


def test_scratch_files_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"peers.{dead.pid}.abc123.ipynb"
    mine = tmp_path / f"peers.{os.getpid()}.def456.ipynb"
    odd = tmp_path / "leftover.ipynb"
    for p in (stale, mine, odd):
        p.write_text("{}")
    assert sorted(build.clean_scratch(tmp_path)) == sorted([stale, odd])
    assert mine.exists()


def test_execute_leaves_no_scratch_file_when_a_cell_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "SCRATCH_DIR", tmp_path / "scratch")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1/0")])
    nbformat.write(nb, tmp_path / "bad.ipynb")
    with pytest.raises(build.BuildError, match="bad.ipynb: cell 1 failed: ZeroDivisionError"):
        build.execute(tmp_path / "bad.ipynb", tmp_path / "out.ipynb", record=False)
    assert list((tmp_path / "scratch").iterdir()) == [] and not (tmp_path / "out.ipynb").exists()


def test_audit_data_dir_puts_no_machine_path_in_notebook_metadata(tmp_path, monkeypatch, data_copy):
    monkeypatch.setenv("AUDIT_DATA_DIR", str(data_copy))
    monkeypatch.setattr(data, "DATA_DIR", data_copy)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("from analyses import data\nlen(data.gpus())")])
    nbformat.write(nb, tmp_path / "probe.ipynb")
    out = build.execute(tmp_path / "probe.ipynb", tmp_path / "out.ipynb")
    written = out.read_text()
    assert str(data_copy) not in written and str(tmp_path) not in written
    read = nbformat.read(out, as_version=4).metadata["audit"]["deps"]
    assert "data/gpus.csv" in read["files"] and "data/gpus/*.csv" in read["listings"]
    assert all(not Path(p).is_absolute() for p in read["files"] + read["listings"])
    # the digest follows the data folder in use: a change there stales the notebook
    digest = nbformat.read(out, as_version=4).metadata["audit"]["inputs_sha256"]
    assert deps.deps_digest(nb, read, deps.snapshot()) == digest
    (data_copy / "gpus.csv").write_text((data_copy / "gpus.csv").read_text() + "\n")
    assert deps.deps_digest(nb, read, deps.snapshot()) != digest


def test_folders_on_the_kernels_path_are_not_recorded(tmp_path):
    """The repository root and the notebook's folder are listed by the import system only when
    their mtime changed during the run: recording them made two `build --force` runs differ."""
    (tmp_path / "book").mkdir()
    (tmp_path / "data" / "sub").mkdir(parents=True)
    report = {"listed": [str(tmp_path), str(tmp_path / "book"), str(tmp_path / "data" / "sub")]}
    assert deps.recorded_deps(report, tmp_path, tmp_path / "book")["listings"] == ["data/sub"]


@pytest.mark.parametrize(
    "only, written",
    [(["tco", "memory"], "2 re-executed chapter(s) were written (tco, memory)"), (None, "no notebook was rewritten")],
)
def test_an_interrupt_during_the_html_step_says_what_was_written(only, written, tmp_path, monkeypatch, capsys):
    """Ctrl-C while Sphinx runs comes after the chapters replaced the committed notebooks: the
    message says which ones, not 'nothing was written'."""
    from analyses.site import cli

    def interrupted(root=REPO_ROOT):
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "validate_inputs", lambda paths: None)
    monkeypatch.setattr(build, "execute_chapters", lambda todo, jobs=None: None)  # every chapter in todo written
    monkeypatch.setattr(build, "stale", lambda paths: [])
    monkeypatch.setattr(build, "site_is_current", lambda root=REPO_ROOT: False)
    monkeypatch.setattr(build, "SITE_STAMP", tmp_path / "site-inputs.sha256")
    monkeypatch.setattr(build, "jupyter_book", interrupted)
    code = cli.main(["build", *(["--only", *only] if only else [])])
    assert code == 130
    assert capsys.readouterr().err == (
        f"interrupted during the HTML step: {written}; _build/html is incomplete, run the build again\n"
    )


def test_a_data_fault_in_a_kernel_reads_as_the_data_fault():
    """A chapter's kernel that meets a data fault (a claim value its check reads, removed) fails the
    build with the fault's own words (file, row, column), not 'cell 5 failed: DataKeyError: ...'."""
    from types import SimpleNamespace

    fault = SimpleNamespace(
        ename="DataKeyError", evalue="data/claims.csv, row 12, column 'values': claim x states no 'y'", exec_count=6
    )
    assert str(build._papermill_error(Path("tco.ipynb"), fault)) == (
        "tco.ipynb: data/claims.csv, row 12, column 'values': claim x states no 'y'"
    )
    other = SimpleNamespace(ename="ZeroDivisionError", evalue="division by zero", exec_count=6)
    assert (
        str(build._papermill_error(Path("tco.ipynb"), other))
        == "tco.ipynb: cell 5 failed: ZeroDivisionError: division by zero"
    )
