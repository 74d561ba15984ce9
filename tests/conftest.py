"""Shared fixtures."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analyses import data, scenario
from analyses.chapters import ledger

REPO = data.REPO_ROOT


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    """A private copy of data/ that a test may break."""
    target = tmp_path / "data"
    shutil.copytree(REPO / "data", target)
    data.clear_cache()
    scenario.clear_cache()
    yield target
    data.clear_cache()
    scenario.clear_cache()


# --------------------------------------------------------------------------------------------
# The whole ledger at every chapter's defaults, assessed once per worker
# --------------------------------------------------------------------------------------------
# Assessing every claim (every check with its holds and flips_if) takes about 0.7 s; some twenty
# tests read the whole ledger and none changes it, so each worker assesses it once per data folder.
# Tests that assess under a changed configuration or data call ledger.assessments themselves.


@functools.cache
def _whole_assessments(data_dir: str) -> tuple:
    assert data_dir == str(data.DATA_DIR)
    return tuple(ledger.assessments())


@pytest.fixture(scope="session")
def whole_assessments() -> tuple:
    """``ledger.assessments()``: every claim at its chapter's defaults, in ledger order (shared)."""
    return _whole_assessments(str(data.DATA_DIR))


@pytest.fixture
def whole_ledger(whole_assessments: tuple) -> pd.DataFrame:
    """``ledger.ledger()``: the ledger table of every claim at its chapter's defaults (a fresh frame)."""
    return ledger.frame(whole_assessments)


# --------------------------------------------------------------------------------------------
# A JavaScript engine for generated code (analyses.models.formula): node, or the one playwright ships
# --------------------------------------------------------------------------------------------

_JS_RUNNER = """
const calc = %s;
const special = {"__NaN__": NaN, "__Inf__": Infinity, "__-Inf__": -Infinity};
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", d => { buf += d; });
process.stdin.on("end", () => {
  const cases = JSON.parse(buf, (k, v) => (typeof v === "string" && v in special) ? special[v] : v);
  const out = cases.map(c => calc.compute(c));
  process.stdout.write(JSON.stringify(out, (k, v) =>
    (typeof v === "number" && !Number.isFinite(v)) ? "__" + String(v) + "__" : v));
});
"""
_SPECIAL = {"__NaN__": float("nan"), "__Infinity__": float("inf"), "__-Infinity__": float("-inf")}


def _node_binary() -> str:
    found = shutil.which("node")
    if found:
        return found
    import playwright

    bundled = Path(playwright.__file__).parent / "driver" / "node"
    assert bundled.exists(), "no JavaScript engine: install node, or playwright (the test extra) ships one"
    return str(bundled)


@pytest.fixture(scope="session")
def run_js(tmp_path_factory):
    """``run_js(expression, cases)``: ``expression.compute(case)`` for each case in a real JavaScript
    engine (non-finite inputs and outputs travel as ``"__NaN__"``, ``"__Inf__"``)."""
    import json
    import math
    import subprocess

    node = _node_binary()
    folder = tmp_path_factory.mktemp("js")

    def encode(v):
        if isinstance(v, float) and not math.isfinite(v):
            return "__NaN__" if math.isnan(v) else ("__Inf__" if v > 0 else "__-Inf__")
        return v

    def run(expression: str, cases: list[dict]) -> list[dict]:
        script = folder / f"calc_{abs(hash(expression))}.js"
        script.write_text(_JS_RUNNER % expression)
        payload = json.dumps([{k: encode(v) for k, v in c.items()} for c in cases])
        proc = subprocess.run([node, str(script)], input=payload, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return json.loads(
            proc.stdout,
            parse_int=float,  # JSON has one kind of number: 1e20 prints as 100000000000000000000
            object_hook=lambda d: {k: _SPECIAL.get(v, v) if isinstance(v, str) else v for k, v in d.items()},
        )

    return run
