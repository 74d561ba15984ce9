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
import yaml

from analyses import data
from analyses.chapters import CHAPTERS
from analyses.data import REPO_ROOT
from analyses.site import build, deps, html_build, staging, stamps


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
    assert sorted(staging.clean_scratch(tmp_path)) == sorted([stale, odd])
    assert mine.exists()


def test_execute_leaves_no_scratch_file_when_a_cell_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(staging, "SCRATCH_DIR", tmp_path / "scratch")
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
    # the data package names each table's files: a new or removed file changes datapackage.json
    assert {"data/gpus.csv", "data/datapackage.json"} <= set(read["files"])
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

    def interrupted(force=False, root=REPO_ROOT):
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "validate_inputs", lambda paths: None)
    monkeypatch.setattr(build, "execute_chapters", lambda todo, jobs=None: None)  # every chapter in todo written
    monkeypatch.setattr(build, "stale", lambda paths: [])
    monkeypatch.setattr(build, "keep_twins_in_step", lambda: None)
    monkeypatch.setattr(html_build, "html_step", interrupted)
    code = cli.main(["build", *(["--only", *only] if only else [])])
    assert code == 130
    assert capsys.readouterr().err == (
        f"interrupted during the HTML step: {written}; _build/html is the last complete site, run the build again\n"
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


# --------------------------------------------------------------------------------------------
# The HTML step: built aside, put in place whole, finished by the next build (issue 38)
# --------------------------------------------------------------------------------------------


def test_a_work_folder_whose_run_did_not_finish_starts_afresh(tmp_path):
    work = tmp_path / "en"
    with pytest.raises(KeyboardInterrupt), staging.work_folder(work):
        (work / "environment.pickle").write_text("pickled before the HTML was written")
        raise KeyboardInterrupt
    assert (work / staging.UNFINISHED).exists()
    with staging.work_folder(work):
        assert sorted(p.name for p in work.iterdir()) == [staging.UNFINISHED]  # the half-done run is gone
        (work / "environment.pickle").write_text("complete")
    with staging.work_folder(work):  # a finished run's folder is kept (Sphinx's incremental environment)
        assert (work / "environment.pickle").read_text() == "complete"
    assert not (work / staging.UNFINISHED).exists()


def test_install_replaces_the_site_whole_and_keeps_the_chinese_edition(tmp_path):
    site, built = tmp_path / "html", tmp_path / "built"
    for folder, page in ((site, "old"), (built, "new")):
        (folder / "book").mkdir(parents=True)
        (folder / "index.html").write_text(page)
        (folder / "book" / f"{page}.html").write_text(page)
    (site / "zh").mkdir()
    (site / "zh" / "index.html").write_text("zh")
    staging.install(built, site, keep=("zh",))
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) == [
        "book/new.html",
        "index.html",
        "zh/index.html",
    ]
    assert (site / "index.html").read_text() == "new" and (built / "index.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["built", "html"]  # no staged or old folder left


def test_a_failed_sphinx_run_leaves_the_site_and_its_stamp_says_build_again(tmp_path, monkeypatch):
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "_build" / "html" / "index.html").write_text("the last complete site")
    stamps.SITE.record("an older digest", tmp_path)

    def failing(source, work, *options, what="", root=REPO_ROOT):
        with staging.work_folder(work):
            raise build.BuildError("jupyter-book build failed: a warning")

    monkeypatch.setattr(html_build, "jupyter_book", failing)
    with pytest.raises(build.BuildError):
        html_build.build_english(root=tmp_path)
    assert (tmp_path / "_build" / "html" / "index.html").read_text() == "the last complete site"
    assert not stamps.SITE.path(tmp_path).exists() and (tmp_path / "_build" / "en" / staging.UNFINISHED).exists()


def _wait_for(predicate, what: str, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _interrupt(root: Path, args: list[str], when, what: str) -> str:
    """Start ``python -m analyses build ARGS`` in ``root`` in a process group of its own, wait until
    ``when()`` holds, then send SIGINT to the group (as Ctrl-C in a terminal does: the build, its
    kernels and jupyter-book); return its stderr, after checking it stopped with status 130."""
    env = os.environ | {"PYTHONPATH": str(root)}  # jupyter-book's Sphinx extensions: the copy's package
    cmd = [sys.executable, "-m", "analyses", "build", "--jobs", "1", *args]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        _wait_for(lambda: when() or proc.poll() is not None, what)
        assert proc.poll() is None, f"the build ended before {what}: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130 and "Traceback" not in err, (what, out, err)
    return err


def _pages(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.html")) if folder.is_dir() else []


def test_a_build_interrupted_at_three_points_is_finished_by_the_next(tmp_path):
    """Ctrl-C while a chapter executes, while Sphinx writes the English pages and while it reads the
    Chinese edition's, each in a real build of a fresh copy (the first with ``--only`` one chapter, so
    that it executes one); each next build gets past the point where the one before stopped, and the
    last one leaves a complete site. Before the fix the build after an interrupted English write
    failed ("search index couldn't be loaded")."""
    root = _copy_repo(tmp_path)
    before = _stamps(root / "book")
    site, en, zh = root / "_build" / "html", root / "_build" / "en" / "_build" / "html", root / "_build" / "zh"
    slug = "claims-000"  # one of the quickest chapters to execute
    err = _interrupt(root, ["--only", slug], lambda: _kernels_in(root / "book") != [], "a chapter executing")
    assert err.startswith("interrupted:") and "no notebook was rewritten" in err and _stamps(root / "book") == before
    err = _interrupt(
        root,
        [],
        lambda: _pages(en / "book") != [] and not (en / "searchindex.js").exists(),
        "Sphinx writing the English pages",
    )
    assert err.startswith("interrupted during the HTML step: no notebook was rewritten")
    assert not site.exists()  # nothing half-written was published
    doctrees = zh / "_build" / ".doctrees"  # Sphinx has read a first page of the Chinese edition
    err = _interrupt(root, [], lambda: doctrees.is_dir() and any(doctrees.rglob("*.doctree")), "Sphinx reading zh/")
    assert err.startswith("interrupted during the HTML step: no notebook was rewritten")
    assert (site / "searchindex.js").exists() and not (site / "zh").exists()  # the English site, whole
    env = os.environ | {"PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", "analyses", "build"], cwd=root, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All chapters are up to date" in proc.stdout and "Built the Chinese edition" in proc.stdout
    # the site is complete: every page of both tables of contents, the search indexes, the downloads
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    docs = [toc["root"], *(c["file"] for part in toc.get("parts", [toc]) for c in part.get("chapters", []))]
    assert docs and all((site / f"{d}.html").exists() for d in docs), docs
    zh_pages = [p.relative_to(root / "zh").with_suffix(".html") for p in (root / "zh").rglob("*.md")]
    assert zh_pages and all((site / "zh" / p).exists() for p in zh_pages)
    assert (site / "searchindex.js").exists() and (site / "zh" / "searchindex.js").exists()
    assert (site / "downloads" / "ledger.csv").exists() and stamps.SITE.current(root) and stamps.ZH.current(root)
    assert not list((root / "_build").glob("*.staged")) and not list((root / "_build").rglob(staging.UNFINISHED))
