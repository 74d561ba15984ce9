"""The command line: verdicts, params, run, and one-line errors that write nothing."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys

import pytest

from analyses import data
from analyses.chapters import ledger
from analyses.data import REPO_ROOT
from analyses.site import cli


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analyses", *args], cwd=REPO_ROOT, capture_output=True, text=True)


def test_verdicts_csv_lists_every_claim():
    proc = _run("verdicts", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [r["id"] for r in rows] == [c.id for c in data.claims()]
    assert list(rows[0]) == ledger.LEDGER_COLUMNS


def test_params_lists_units_and_ranges():
    proc = _run("params", "scaling-gap")
    assert proc.returncode == 0
    assert "window_start" in proc.stdout and "an integer from 2010 to 2024" in proc.stdout


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "scaling-gap", "-p", "window_start", "abc"], "parameter 'window_start'"),
        (["run", "scaling-gap", "-p", "confidence", "1.5"], "parameter 'confidence'"),
        (["run", "scaling-gap", "-p", "server", "toaster"], "one of cpu-2s-epyc-7763"),
        (["run", "scaling-gap", "-p", "nope", "1"], "parameter 'nope'"),
        (["run", "no-such-chapter"], "unknown chapter"),
        (["params", "no-such-chapter"], "unknown chapter"),
    ],
)
def test_bad_input_one_line_no_traceback_no_file(args, needle, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "RUNS_DIR", tmp_path)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert cli.main(args) == 2
    message = err.getvalue()
    assert needle in message and message.count("\n") == 1 and "Traceback" not in message
    assert list(tmp_path.iterdir()) == []


def test_run_writes_notebook_and_html_reflecting_the_value(tmp_path):
    cfg = cli._validated("scaling-gap", [["window_start", "2019"], ["cpu_sustained_share", "0.25"]])
    notebook, page = cli.run_chapter("scaling-gap", cfg, runs_dir=tmp_path)
    text = page.read_text()
    assert notebook.exists() and "2019" in notebook.read_text()
    assert "25%" in text  # the glued utilisation in the prose
    assert re.search(r"<td[^>]*>2019\.\d-2025\.\d</td>", text)  # the fitted window in the rates table
    assert "cdn.jsdelivr" not in text.split("</head>")[0] and "vegaEmbed" in text
