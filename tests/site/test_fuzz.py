"""Fuzzing the inputs a reader controls: parameter combinations of every chapter, params files and
data files. Bad input must give exit status 2 and exactly one line on stderr, never a traceback,
never a hang, never a file written; input that passes validation must run.

Most cases run in-process (``cli.main`` with the kernel stubbed, ``data.validate``); a handful run
as subprocesses. Counts land in ``conftest.FUZZ`` and are printed at the end of the run.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from analyses import chapters, data
from analyses.data import REPO_ROOT, DataError
from analyses.site import build, cli, deps, execute, staging

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0"))  # 0: the small derandomised set of make test
HANG_S = 60  # the worst allowed run finishes in under a minute; validation in far less


def fuzz_settings(default: int, **kwargs: Any) -> settings:
    return settings(
        max_examples=EXAMPLES or default,
        derandomize=not EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        **kwargs,
    )


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise TimeoutError (counted as a hang) if the block runs longer than ``seconds``."""

    def expire(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def _watched() -> dict[str, tuple[int, int]]:
    """What a failed command must not touch: the notebooks, the data and the scratch folder.

    The scratch folder is shared: scratch files of processes still running (other tests of a
    parallel run executing notebooks) are not the command's and are left out; a file a finished
    command left behind names a process that no longer runs (``<stem>.<pid>.<random>.ipynb``)."""
    out = _tree(REPO_ROOT / "book") | _tree(REPO_ROOT / "data")
    if not staging.SCRATCH_DIR.exists():
        return out
    return out | {k: v for k, v in _tree(staging.SCRATCH_DIR).items() if not _running(Path(k))}


def _running(scratch: Path) -> bool:
    """Whether the process that named a scratch file still runs (and is not this test's own)."""
    parts = scratch.name.split(".")
    pid = int(parts[-3]) if len(parts) >= 4 and parts[-3].isdigit() else None
    return pid is not None and pid != os.getpid() and build._pid_alive(pid)


def classify(figures, kind: str, code: int | None, err: str, written: bool, hang: bool) -> str:
    """Count one fuzzed input and return its class; the caller asserts on it."""
    figures["inputs"] += 1
    figures[f"inputs {kind}"] += 1
    if hang:
        figures["hangs"] += 1
        return "hang"
    if "Traceback" in err or code not in (0, 2):
        figures["tracebacks"] += 1
        return "traceback"
    if code == 2:
        if written:
            figures["files written on failure"] += 1
            return "written"
        if err.count("\n") == 1 and err.startswith("error: "):
            figures["clean one-line errors"] += 1
            return "clean"
        figures["tracebacks"] += 1  # several lines of error: as bad as a traceback for a reader
        return "traceback"
    figures["accepted"] += 1
    return "accepted"


def run_cli(figures, kind: str, args: list[str], monkeypatch, tmp_path: Path) -> tuple[str, str]:
    """``python -m analyses ARGS`` in-process with the kernel and the planner stubbed out."""
    runs = tmp_path / "runs"
    monkeypatch.setattr(cli, "RUNS_DIR", runs)
    monkeypatch.setattr(cli, "run_chapter", lambda chapter, cfg, runs_dir=runs: (Path("nb"), Path("html")))
    from analyses.chapters import plan as plan_chapter
    from analyses.chapters.plan import text as plan_text

    monkeypatch.setattr(plan_chapter, "run", lambda cfg: None)
    monkeypatch.setattr(plan_text, "summary", lambda run: "planned")
    before = _watched()
    err, out = io.StringIO(), io.StringIO()
    code, hang = None, False
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            with time_limit(HANG_S):
                code = cli.main(args)
        except SystemExit as exit_:
            code = exit_.code
        except TimeoutError:
            hang = True
        except Exception:  # an escaped exception is what a reader would see as a traceback
            import traceback

            err.write(traceback.format_exc())
    written = code == 2 and (_watched() != before or runs.exists())
    return classify(figures, kind, code, err.getvalue(), written, hang), err.getvalue()


# --------------------------------------------------------------------------------------------
# Parameter combinations of every chapter
# --------------------------------------------------------------------------------------------


def _value(p: chapters.Param) -> st.SearchStrategy:
    """A parameter's value as text for ``-p``: mostly inside its range, sometimes at or past an end."""
    choices = p.allowed_choices()
    if p.kind == "bool":
        return st.sampled_from(["true", "false", "maybe", "1"])
    if p.kind == "str_list":
        items = st.sampled_from(list(choices)) if choices else st.text(min_size=1, max_size=8)
        lists = st.lists(items, min_size=0, max_size=len(choices or ()) + 2)
        return lists.map(lambda v: "[" + ", ".join(v) + "]")
    if choices is not None:
        return st.one_of(st.sampled_from([str(c) for c in choices]), st.text(max_size=10))
    lo = p.min if p.min is not None else -1e6
    hi = p.max if p.max is not None else 1e6
    inside = st.integers(int(lo), int(hi)).map(str) if p.kind == "int" else st.floats(lo, hi, allow_nan=False).map(repr)
    edges = st.sampled_from([repr(lo), repr(hi), repr(lo - 1), repr(hi * 10 + 1), "-3e10", "nan", "inf", "1e400", ""])
    return st.one_of(inside, inside, inside, edges, st.text(max_size=6))


@st.composite
def chapter_args(draw) -> list[str]:
    slug = draw(st.sampled_from([s for s in chapters.chapter_slugs() if chapters.spec(s).params]))
    spec = chapters.spec(slug)
    chosen = draw(st.lists(st.sampled_from(spec.params), max_size=4, unique_by=lambda p: p.name))
    args = ["run", slug]
    for p in chosen:
        args += ["-p", p.name, draw(_value(p))]
    if draw(st.integers(0, 9)) == 0:
        args += ["-p", draw(st.sampled_from(["nope", "window_strat", "-x"])), "1"]
    return args


@fuzz_settings(80)
@given(args=chapter_args())
def test_parameter_combinations(args, monkeypatch, tmp_path, fuzz_figures):
    outcome, err = run_cli(fuzz_figures, "parameters", args, monkeypatch, tmp_path)
    assert outcome in ("clean", "accepted"), (args, err)


# --------------------------------------------------------------------------------------------
# Params files (YAML text)
# --------------------------------------------------------------------------------------------

PLAN_NAMES = [p.name for p in chapters.spec("plan").params]
SCALARS = st.one_of(
    st.integers(-(10**16), 10**16),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.booleans(),
    st.none(),
    st.sampled_from(["3.0e10", "1e400", "A100", "H100", "bf16", "fp8", "llama3-405b"]),
)


@st.composite
def yaml_texts(draw) -> bytes:
    kind = draw(st.integers(0, 5))
    if kind == 0:  # any text
        return draw(st.text(max_size=200)).encode("utf-8", "surrogatepass")
    if kind == 1:  # any bytes
        return draw(st.binary(max_size=200))
    names = st.one_of(st.sampled_from(PLAN_NAMES), st.text(min_size=1, max_size=10))
    values = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4), max_leaves=8)
    mapping = draw(st.dictionaries(names, values, max_size=6))
    text = yaml.safe_dump(mapping, allow_unicode=True)
    if kind == 3:  # a duplicated key
        text += text.split("\n", 1)[0] + "\n" if text.strip() and text[0] not in "{[" else ""
    if kind == 4:  # aliases
        text = "base: &b [A100, H100]\n" + text + "gpus: *b\n"
    if kind == 5:  # deep nesting
        depth = draw(st.integers(5, 3000))
        text += "gpus: " + "[" * depth + "]" * depth + "\n"
    return text.encode()


@fuzz_settings(60)
@given(content=yaml_texts())
def test_params_files(content, monkeypatch, tmp_path, fuzz_figures):
    path = tmp_path / "params.yaml"
    path.write_bytes(content)
    args = ["plan", "--no-html", "--params-file", str(path)]
    outcome, err = run_cli(fuzz_figures, "params files", args, monkeypatch, tmp_path)
    assert outcome in ("clean", "accepted"), (content[:200], err)


# --------------------------------------------------------------------------------------------
# Data faults: mutated cells, rows and files
# --------------------------------------------------------------------------------------------

CSV_FILES = sorted(p.relative_to(REPO_ROOT / "data").as_posix() for p in (REPO_ROOT / "data").rglob("*.csv"))
CELLS = st.one_of(
    st.sampled_from(["", "abc", "-1", "0", "0.0", "nan", "inf", "-inf", "1e400", "1e-400", "2026-13", "TRUE", " "]),
    st.sampled_from(["no-such-source", "a;b", '"', 'x"y', "a,b", "line\nbreak", "\x00"]),
    st.text(max_size=12),
    st.floats(allow_nan=True).map(repr),
    st.integers(-(10**20), 10**20).map(str),
)


@st.composite
def mutations(draw) -> tuple[str, str, Any]:
    rel = draw(st.sampled_from(CSV_FILES))
    kind = draw(st.sampled_from(["cell", "cell", "cell", "row", "bytes", "file"]))
    if kind == "cell":
        return rel, kind, (draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6)), draw(CELLS))
    if kind == "row":
        return rel, kind, draw(st.sampled_from(["duplicate", "drop-field", "add-field", "blank-fields", "header-only"]))
    if kind == "bytes":
        return rel, kind, (draw(st.integers(0, 10**6)), draw(st.binary(min_size=1, max_size=4)))
    return rel, kind, draw(st.sampled_from(["empty", "truncate", "bom", "crlf", "missing"]))


def mutate(root: Path, rel: str, kind: str, how: Any) -> None:
    path = root / rel
    raw = path.read_bytes()
    if kind == "bytes":
        at, blob = how
        at %= len(raw) + 1
        path.write_bytes(raw[:at] + blob + raw[at:])
        return
    if kind == "file":
        if how == "empty":
            path.write_bytes(b"")
        elif how == "truncate":
            path.write_bytes(raw[: len(raw) // 2])
        elif how == "bom":
            path.write_bytes(b"\xef\xbb\xbf" + raw)
        elif how == "crlf":
            path.write_bytes(raw.replace(b"\n", b"\r\n"))
        else:
            path.unlink()
        return
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    if kind == "cell":
        r, c, value = how
        row = rows[r % len(rows)]
        row[c % len(row)] = value
    elif how == "duplicate":
        rows.append(list(rows[-1]))
    elif how == "drop-field":
        rows[-1].pop()
    elif how == "add-field":
        rows[-1].append("surplus")
    elif how == "blank-fields":
        rows[-1] = [""] * len(rows[-1])
    else:
        rows = rows[:1]
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


@pytest.fixture(scope="module")
def data_for_faults(tmp_path_factory) -> Path:
    """One copy of data/ for the data-fault examples: each mutates one file and puts it back."""
    root = tmp_path_factory.mktemp("faults") / "data"
    shutil.copytree(REPO_ROOT / "data", root)
    return root


@fuzz_settings(120)
@given(mutation=mutations())
def test_data_faults(mutation, data_for_faults, fuzz_figures):
    """Validation answers every mutated file with the data or one DataError line naming the file."""
    root = data_for_faults
    rel, kind, how = mutation
    original = (root / rel).read_bytes()
    mutate(root, rel, kind, how)
    data.clear_cache()
    code, err, hang = 0, "", False
    try:
        with time_limit(HANG_S):
            data.validate(root)
    except DataError as fault:
        code, err = 2, f"error: {cli._one_line(fault)}\n"
        assert fault.file.startswith("data/"), err
    except TimeoutError:
        hang = True
    except Exception:
        import traceback

        code, err = 1, traceback.format_exc()
    finally:
        data.clear_cache()
        (root / rel).write_bytes(original)  # the one file mutated: the copy is whole again for the next example
    outcome = classify(fuzz_figures, "data files", code, err, False, hang)
    assert outcome in ("clean", "accepted"), (mutation, err)


def _subprocess(figures, kind: str, args: list[str], env: dict[str, str] | None = None) -> tuple[str, str]:
    before = _watched()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "analyses", *args],
            cwd=REPO_ROOT,
            env=os.environ | (env or {}),
            capture_output=True,
            text=True,
            timeout=HANG_S * 2,
        )
    except subprocess.TimeoutExpired:
        return classify(figures, kind, None, "", False, True), ""
    written = proc.returncode == 2 and _watched() != before
    return classify(figures, kind, proc.returncode, proc.stderr, written, False), proc.stderr


@pytest.mark.parametrize(
    "rel, kind, how",
    [
        ("prices.csv", "file", "empty"),
        ("gpus.csv", "cell", (3, 6, "0")),
        ("failure_logs.csv", "row", "header-only"),
        ("models.csv", "bytes", (400, b"\xff")),
    ],
)
def test_data_faults_in_subprocesses(rel, kind, how, tmp_path, fuzz_figures):
    """The same faults as a reader meets them: `verdicts` and `build` exit 2 with one line."""
    root = tmp_path / "data"
    shutil.copytree(REPO_ROOT / "data", root)
    mutate(root, rel, kind, how)
    for args in (["verdicts"], ["build", "--no-html"]):
        outcome, err = _subprocess(fuzz_figures, "data files (subprocess)", args, {"AUDIT_DATA_DIR": str(root)})
        assert outcome == "clean" and rel in err, (args, err)


@pytest.mark.parametrize(
    "args",
    [
        ["run", "memory", "-p", "tp", "7"],
        ["plan", "--no-html", "-p", "n_params", "-3e10"],
        ["run", "reliability", "-p", "gpus", "200000", "-p", "checkpoint_s", "0.1"],
        ["build", "--jobs", "-1"],
    ],
)
def test_bad_input_in_subprocesses(args, fuzz_figures):
    outcome, err = _subprocess(fuzz_figures, "parameters (subprocess)", args)
    assert outcome == "clean", err


# --------------------------------------------------------------------------------------------
# A combination that passes validation runs to the end
# --------------------------------------------------------------------------------------------


def run_notebook(slug: str, params: dict[str, Any]) -> None:
    """Execute ``book/<slug>.ipynb`` with ``params`` as a reader's run does (in this process when it
    can, :func:`analyses.site.execute.execute_path`: every displayed object rendered through the book's
    renderer, a failing cell raised); the process is left as it was for the worker's next tests (a
    notebook's cells run here directly left IPython's shell behind, and the next in-process run
    could not make its own)."""
    execute.execute_path(deps.BOOK_DIR / f"{slug}.ipynb", params)


@st.composite
def valid_configs(draw) -> tuple[str, dict[str, Any]]:
    slug = draw(st.sampled_from([s for s in chapters.chapter_slugs() if chapters.spec(s).params]))
    spec = chapters.spec(slug)
    values: dict[str, Any] = {}
    for p in spec.params:
        if draw(st.integers(0, 2)):
            continue  # most parameters at their defaults
        choices = p.allowed_choices()
        if p.kind == "bool":
            values[p.name] = draw(st.booleans())
        elif p.kind == "str_list":
            values[p.name] = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3, unique=True))
        elif choices is not None:
            values[p.name] = draw(st.sampled_from(choices))
        elif p.kind == "int":
            values[p.name] = draw(st.integers(int(p.min), int(p.max)))
        else:
            values[p.name] = draw(st.floats(p.min, p.max, allow_nan=False))
    try:
        cfg = spec.validate(values)
    except chapters.ParamError:
        assume(False)
    return slug, {k: cfg[k] for k in values}


@fuzz_settings(6)
@given(case=valid_configs())
def test_a_valid_combination_runs(case, fuzz_figures):
    figures = fuzz_figures
    slug, params = case
    figures["inputs"] += 1
    figures["inputs valid combinations run in-process"] += 1
    try:
        with time_limit(HANG_S):
            run_notebook(slug, {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()})
    except TimeoutError:
        figures["hangs"] += 1
        raise
    except Exception:
        figures["tracebacks"] += 1
        raise
    figures["accepted"] += 1


# --------------------------------------------------------------------------------------------
# Values the schema accepts: the ledger still answers
# --------------------------------------------------------------------------------------------

NUMERIC = [
    (name, c)
    for name in data.table_names()
    for c in data.schema(name).columns
    if c.type in ("int", "float") and name not in ("claims",)
]


@st.composite
def accepted_values(draw) -> tuple[str, str, int, str]:
    name, col = draw(st.sampled_from(NUMERIC))
    lo = col.min if col.min is not None else (1e-6 if col.positive else -1e6)
    hi = col.max if col.max is not None else max(lo * 1e6, 1e6)
    lo = max(lo, 1e-6) if col.positive else lo
    value = draw(st.floats(lo, hi, allow_nan=False))
    text = str(int(value)) if col.type == "int" else repr(value)
    return name, col.name, draw(st.integers(0, 10**6)), text


@fuzz_settings(1)
@given(case=accepted_values())
def test_values_the_schema_accepts_leave_the_ledger_working(case, tmp_path_factory, monkeypatch, fuzz_figures):
    """A value inside its column's declared range may change verdicts, never crash `verdicts`."""
    name, column, row, text = case
    root = tmp_path_factory.mktemp("data") / "data"
    shutil.copytree(REPO_ROOT / "data", root)
    path = root / f"{name}.csv" if (root / f"{name}.csv").exists() else sorted((root / name).glob("*.csv"))[0]
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))
    i = rows[0].index(column)
    rows[1 + row % (len(rows) - 1)][i] = text
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    monkeypatch.setattr(data, "DATA_DIR", root)
    data.clear_cache()
    try:
        outcome, err = run_cli(
            fuzz_figures,
            "accepted data values",
            ["verdicts", "--format", "csv"],
            monkeypatch,
            tmp_path_factory.mktemp("runs"),
        )
    finally:
        data.clear_cache()
        shutil.rmtree(root.parent, ignore_errors=True)
    assert outcome in ("clean", "accepted"), (case, err)
