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


def test_plan_json_gives_the_steady_state_and_the_whole_run_with_bands_at_a_pinned_layout():
    """``plan --format json``: one record per recommended option with tokens/s per GPU, MFU, step time,
    steady-state and whole-run GPU-hours and days, each inside its 90% band; a pinned layout and an exact
    GPU count are kept, a named stack's fitted efficiency applied, and nothing else is printed."""
    proc = _run(
        "plan", "--format", "json",
        "-p", "model_shape", "generic", "-p", "n_params", "7e9", "-p", "vocab", "32000", "-p", "n_kv_heads", "8",
        "-p", "gpus", "A100", "-p", "min_gpus", "64", "-p", "max_gpus", "64", "-p", "precision", "fp16",
        "-p", "tp", "2", "-p", "pp", "1", "-p", "recompute", "full", "-p", "stack", "neox", "-p", "tokens", "1e11",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    import json

    (r,) = json.loads(proc.stdout)
    assert (r["gpu"], r["n_gpus"], r["tp"], r["pp"], r["dp"], r["recompute"]) == ("A100", 64, 2, 1, 32, "full")
    assert r["layout_pinned"] and r["attention_kernel"] == "flash" and r["stack"] == "gpt-neox" and r["precision"] == "fp16"
    for name in ("tokens_per_s_per_gpu", "mfu", "step_s", "steady_gpu_hours", "gpu_hours", "days"):
        assert r[f"{name}_lo"] < r[name] < r[f"{name}_hi"], name
    assert r["gpu_hours"] == pytest.approx(r["days"] * 24 * 64)
    assert r["gpu_hours"] > r["steady_gpu_hours"] and 0 < r["goodput"] <= 1
    assert r["steady_gpu_hours"] == pytest.approx(1e11 / r["tokens_per_s_per_gpu"] / 3600, rel=1e-6)


def test_plan_csv_and_a_pin_no_count_allows():
    proc = _run(
        "plan", "--format", "csv", "-p", "model_shape", "llama2-7b", "-p", "gpus", "H100",
        "-p", "min_gpus", "16", "-p", "max_gpus", "16", "-p", "stack", "megatron",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 1 and rows[0]["n_gpus"] == "16" and rows[0]["layout_pinned"] == "False"
    bad = _run(
        "plan", "--no-html", "-p", "model_shape", "llama2-7b", "-p", "min_gpus", "16", "-p", "max_gpus", "16",
        "-p", "dp", "3", "-p", "tp", "2", "-p", "pp", "2",
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no layout of" in bad.stderr
