"""Shared fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analyses import data, scenario

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
