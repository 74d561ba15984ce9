"""Every bad argument, params file, parameter combination and data fault is one line on stderr,
exit status 2, no traceback and no file written: in-process where possible, a few subprocesses."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analyses import chapters, data
from analyses.data import REPO_ROOT
from analyses.site import cli


def _main(args: list[str], monkeypatch, tmp_path: Path) -> tuple[int, str, str]:
    """``python -m analyses ARGS`` in-process: exit status, stdout, stderr. Nothing may run."""
    monkeypatch.setattr(cli, "RUNS_DIR", tmp_path / "runs")

    def no_execution(*a, **k):
        raise AssertionError("a kernel would have started")

    monkeypatch.setattr(cli, "run_chapter", no_execution)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    try:
        code = cli.main(args)
    except SystemExit as exit_:  # argparse
        code = exit_.code
    return code, out.getvalue(), err.getvalue()


def _one_line(code: int, err: str) -> str:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


@pytest.fixture
def params_file(tmp_path):
    def write(content: str | bytes) -> str:
        path = tmp_path / "my.yaml"
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return str(path)

    return write


LAUGHS = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{x}: &{x} [{', '.join(['*' + p] * 9)}]" for p, x in zip("abcdefg", "bcdefgh", strict=True)]
    + ["gpus: [*h, *h, *h, *h, *h, *h, *h, *h, *h]"]
)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["build", "--jobs", "-1"], "--jobs: expected a whole number of workers, 1 or more; got '-1'"),
        (["build", "--jobs", "0"], "1 or more"),
        (["plan", "--no-html", "-p", "n_params", "-3e10"], "'n_params' of chapter 'plan': expected a number from"),
        (["plan", "--no-html", "--params-file", ""], "--params-file: expected the path of a YAML file"),
        (["plan", "--no-html", "-p", "gpus", "[" * 5000 + "]" * 5000], "nested deeper than 8 levels"),
        (["plan", "--no-html", "-p", "gpus", "[A100, A100]"], "'gpus' of chapter 'plan': expected a list of 1 to"),
        (
            ["run", "scaling-gap", "-p", "window_start", "2024", "-p", "window_end", "2013"],
            "window_start 2024, window_end 2013: window_end must not be before",
        ),
        (
            ["run", "memory", "-p", "tp", "7", "-p", "n_gpus", "28"],
            "tp must divide illustrative-100b's 80 heads: tp one of 1, 2, 4, 5, 8",
        ),
        (["run", "memory", "-p", "tp", "16", "-p", "pp", "1", "-p", "n_gpus", "64"], "tp at most 8 on B300"),
        (
            ["run", "memory", "-p", "models", "[" + ", ".join(["llama2-7b"] * 10_000) + "]"],
            "expected a list of 1 to 16 different items",
        ),
        (["run", "plan", "-p", "min_gpus", "64", "-p", "max_gpus", "8"], "min_gpus 64, max_gpus 8"),
        (["run", "scaling-efficiency", "-p", "gpu", "A100"], "A100 has no dense fp8"),
        (["run", "plan", "-p", "active_params", "1e10"], "set model_shape generic"),  # a mixture of experts is generic
        (["run", "no-such-chapter"], "unknown chapter 'no-such-chapter'"),
        (["run", "tco", "-p", "seed", "1", "-p", "seed", "2"], "-p seed given twice ('1', then '2'); give each"),
        (["run", "reliability", "-p", "job_gpus", "2.5"], "'job_gpus' of chapter 'reliability': expected an integer"),
        (
            ["run", "memory", "-p", "gpu", "P100", "-p", "precision", "fp8", "-p", "tp", "1"],
            "gpu 'P100', precision 'fp8': P100 has no dense fp8 tensor throughput in data/gpus.csv; it offers fp32, fp16",
        ),
        (
            ["plan", "--no-html", "-p", "n_params", "1e12"],
            "model_shape 'illustrative-100b', n_params 1000000000000.0: n_params sizes only a generic shape",
        ),
        (
            ["plan", "--no-html", "-p", "preset", "llama3-405b", "-p", "n_params", "1e12"],
            "preset 'llama3-405b', n_params 1000000000000.0: n_params sizes only a generic shape; the preset's "
            "model_shape llama31-405b has its own parameter count",
        ),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        # issue 38: integers bounded before parsing, numbers as typed (no YAML 1.1 sexagesimal), options once
        (["run", "memory", "-p", "n_gpus", "9" * 5000], "-p n_gpus at line 1, column 1: an integer of 5,000 digits"),
        (["plan", "--no-html", "-p", "max_gpus", "9" * 4400], "an integer of 4,400 digits; at most 30"),
        (["plan", "--no-html", "-p", "deadline_days", "1:30"], "expected a number from 0.01 to 3,650, got '1:30'"),
        (["run", "tco", "-p", "usd_cny", "7:06"], "'usd_cny' of chapter 'tco': expected a number from 5 to 9, got '7:06'"),
        (["run", "scaling-gap", "-p", "window_start", "0x7E3"], "expected an integer from 2010 to 2024, got '0x7E3'"),
        (["verdicts", "--format", "csv", "--format", "json"], "--format given 2 times; give it once"),
        (["build", "--only", "tco", "--only", "memory"], "--only given 2 times; give it once"),
        (["plan", "--no-html", "--params-file=a.yaml", "--params-file", "b.yaml"], "--params-file given 2 times"),
    ],
)
def test_bad_arguments_and_combinations(args, needle, monkeypatch, tmp_path):
    code, out, err = _main(args, monkeypatch, tmp_path)
    assert needle in _one_line(code, err)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"n_params: 3.0e10\n\xff\xfe: 1\n", "line 2: byte 0xff is not UTF-8 text"),
        ("n_params: [1, 2\ntokens: 3\n", "not valid YAML at line 2, column 7: expected ',' or ']'"),
        ("n_params: 3.0e10\nn_params: 4.0e10\n", "line 2, column 1: a key given twice"),
        (LAUGHS, "aliases (*name) are not allowed in parameters"),
        ("gpus: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 8 levels"),
        ("- a\n- b\n", "expected a mapping of parameter names to values"),
        ("n_parms: 3.0e10\n", "field 1 is not a parameter (did you mean n_params?)"),
        ("deadline_days: 1:30\n", "expected a number from 0.01 to 3,650, got '1:30'"),
        ("max_gpus: " + "9" * 5000 + "\n", "at line 1, column 11: an integer of 5,000 digits; at most 30"),
        ("PasswordAuthentication: yes\nPermitRootLogin: no\n", "field 1 is not a parameter; fields:"),
        ("n_params: -3e10\n", "'n_params' of chapter 'plan'"),
        ("model_shape: llama2-7b\nn_params: 3.0e10\n", "model_shape 'llama2-7b', n_params 30000000000.0: n_params"),
        ("x: " + "y" * 70_000, "bytes; a params file holds at most 65,536"),
    ],
    ids=[
        "non-utf8",
        "malformed",
        "duplicate-key",
        "billion-laughs",
        "deep",
        "not-mapping",
        "misspelt",
        "sexagesimal",
        "long-integer",
        "system-file",
        "range",
        "n-params-with-a-named-shape",
        "huge",
    ],
)
def test_bad_params_files(content, needle, params_file, monkeypatch, tmp_path):
    code, out, err = _main(["plan", "--no-html", "--params-file", params_file(content)], monkeypatch, tmp_path)
    assert needle in _one_line(code, err)


@pytest.mark.parametrize("path", ["/etc/passwd", "/etc/os-release", "/etc/ssh/sshd_config", "/proc/cpuinfo"])
def test_a_params_file_that_is_no_params_file_is_refused_without_echoing_it(path, monkeypatch, tmp_path):
    """Issue 38: a system file given as --params-file gets one line that quotes nothing of it."""
    if not Path(path).is_file():
        pytest.skip(f"{path} is not on this machine")
    code, out, err = _main(["plan", "--no-html", "--params-file", path], monkeypatch, tmp_path)
    line = _one_line(code, err)
    text = Path(path).read_text(errors="replace")
    words = {w for w in text.replace(":", " ").replace("=", " ").split() if len(w) >= 4}
    assert line.startswith(f"error: --params-file {path}") and not {w for w in words if w in line.split(f"{path}", 1)[1]}


def test_integer_ranges_print_in_full():
    text = {r["name"]: r["allowed"] for r in cli.params_table("tco")}
    assert text["seed"] == "an integer from 0 to 2,147,483,647"
    assert text["mc_samples"] == "an integer from 1,000 to 200,000"
    assert {r["name"]: r["allowed"] for r in cli.params_table("scaling-gap")}["window_start"] == (
        "an integer from 2010 to 2024"  # years without separators
    )


def test_every_default_configuration_satisfies_its_rules():
    for slug in chapters.chapter_slugs():
        chapters.spec(slug).defaults()


def _faulty(tmp_path: Path, edit) -> Path:
    target = tmp_path / "data"
    shutil.copytree(REPO_ROOT / "data", target)
    edit(target)
    return target


def _edit_line(path: Path, index: int, edit) -> None:
    lines = path.read_text().split("\n")
    lines[index] = edit(lines[index])
    path.write_text("\n".join(lines))


FAULTS = {
    "empty": (lambda d: (d / "prices.csv").write_text(""), "data/prices.csv, row 1: the file is empty"),
    "extra-field": (
        lambda d: _edit_line(d / "prices.csv", 1, lambda line: line + ",surplus"),
        "data/prices.csv, row 2, column 'notes': 13 fields but the header names 12 columns",
    ),
    "header-only": (
        lambda d: (d / "failure_logs.csv").write_text((d / "failure_logs.csv").read_text().split("\n")[0] + "\n"),
        "data/failure_logs.csv, row 2: 0 data rows below the header",
    ),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_verdicts_names_a_data_fault_and_exits_2(name, tmp_path, monkeypatch):
    edit, needle = FAULTS[name]
    target = _faulty(tmp_path, edit)
    monkeypatch.setattr(data, "DATA_DIR", target)
    data.clear_cache()
    try:
        code, out, err = _main(["verdicts", "--format", "csv"], monkeypatch, tmp_path)
    finally:
        data.clear_cache()
    assert needle in _one_line(code, err) and out == ""


def test_verdicts_subprocess_with_a_zero_peak(tmp_path):
    def zero(d: Path) -> None:
        text = (d / "gpus.csv").read_text().split("\n")
        header = text[0].split(",")
        cells = text[4].split(",")
        cells[header.index("peak_tflops_dense_fp32")] = "0"
        text[4] = ",".join(cells)
        (d / "gpus.csv").write_text("\n".join(text))

    target = _faulty(tmp_path, zero)
    env = {"AUDIT_DATA_DIR": str(target), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-m", "analyses", "verdicts"], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "error: data/gpus.csv, row 5, column 'peak_tflops_dense_fp32': 0.0 must be above 0 TFLOP/s\n"
