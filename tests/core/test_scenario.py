"""One scenario: every assumption defined once, read by every chapter and check from there."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from analyses import chapters, data, scenario
from analyses.chapters import ledger
from analyses.data import REPO_ROOT
from analyses.scenario import cases
from analyses.units import formats

CHAPTER_DIR = REPO_ROOT / "analyses" / "chapters"
# the formatters (analyses.units.formats) and the verdict words: their numeric arguments are display settings
DISPLAY = {n for n, f in vars(formats).items() if callable(f)} | {"rounded", "show", "show_interval"}


def test_every_assumption_has_a_range_a_unit_and_a_source():
    for name, a in scenario.assumptions().items():
        a.range.check()
        assert a.min <= a.range.low and a.range.high <= a.max, name
        assert a.unit and a.label and a.source, name


def test_chapter_parameters_that_name_an_assumption_come_from_the_scenario():
    table = scenario.assumptions()
    for slug in chapters.CHAPTERS:
        for p in chapters.spec(slug).params:
            if p.name in table:
                a = table[p.name]
                assert (p.default, p.unit, p.min, p.max) == (a.central, a.unit, a.min, a.max), (slug, p.name)


@pytest.mark.parametrize("slug", [s for s in chapters.CHAPTERS if ledger.checks(s)])
def test_no_chapter_with_claims_keeps_a_private_threshold(slug):
    names = [p.name for p in chapters.spec(slug).params]
    assert not [n for n in names if "tolerance" in n or "threshold" in n], slug


def _literal(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal(node.operand)
        return None if inner is None else -inner
    return None


def _check_modules() -> list[Path]:
    return sorted([*CHAPTER_DIR.glob("*/checks.py"), *CHAPTER_DIR.glob("*/checks/*.py")])


@pytest.mark.parametrize("path", _check_modules(), ids=lambda p: p.relative_to(CHAPTER_DIR).with_suffix("").as_posix())
def test_checks_compare_nothing_with_a_private_threshold(path):
    """A check returns a finding and the rule of its kind decides: no comparison with a typed number
    (``x > 10``, ``ratio <= 1.1``) and no literal equal to a typed assumption of the scenario."""
    typed = {a.central for a in scenario.assumptions().values() if a.derivation == "typed"}
    tree = ast.parse(path.read_text())
    # keyword arguments (sig=3, eta=3) and the arguments of display and rounding helpers
    # (fmt(x, "days", 3), rounded(x, 0.1): the stated figure's rounding step) are not quantities
    settings = {id(n) for k in ast.walk(tree) if isinstance(k, ast.keyword) for n in ast.walk(k.value)}
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) in DISPLAY:
            settings |= {id(n) for a in call.args[1:] for n in ast.walk(a)}
    settings |= {id(n.operand) for n in ast.walk(tree) if isinstance(n, ast.UnaryOp)}  # -x counted once
    bad = []
    for node in ast.walk(tree):
        if id(node) in settings:
            continue
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                value = _literal(operand)
                if value is not None and value != 0:
                    bad.append(f"line {node.lineno}: comparison with {value:g}")
        value = _literal(node)
        if value is not None and value not in (0, 1, 2, 100) and any(math.isclose(value, t) for t in typed):
            bad.append(f"line {node.lineno}: literal {value:g} equals a scenario assumption")
    assert bad == [], bad


def test_prices_reach_chapters_only_through_the_scenario():
    offenders = []
    for path in CHAPTER_DIR.rglob("*.py"):
        text = path.read_text()
        for needle in ("data.price(", "data.prices(", "published_mfu("):
            if needle in text:
                offenders.append(f"{path.relative_to(REPO_ROOT)}: {needle}")
    assert offenders == []


def test_every_claim_that_needs_the_speed_up_reads_the_one_entry(whole_assessments):
    """The B300/A100 per-GPU speed-up has one scenario entry; every check that depends on it reads
    it there, and moving it moves all of them together."""
    rows = whole_assessments
    readers = {a.claim.id for a in rows if "speedup_b300_a100" in a.inputs}
    # every stated per-GPU speed-up, the GPU-day anecdotes it judges, and the cost rows that hang on it
    stated = {c.id for c in data.claims() if "speedup_low_x" in c.values}
    gpu_days = {
        a.claim
        for a in cases.anecdotes()
        if (a.gpus_before is not None or a.params is not None) and data.claim(a.claim).kind == "anecdote"
    }
    assert (
        stated
        and stated | gpu_days | {"000-3-table-tco", "000-6-payback-6-12-months", "000-6-months-to-weeks"} <= readers
    )
    for a in rows:
        assert not any(i.startswith("mfu_b300") for i in a.inputs), a.claim.id
