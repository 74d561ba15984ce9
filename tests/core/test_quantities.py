"""One definition per quantity: the registry of named quantities, and no check or chapter that computes
one of them another way (issue 22 item 2).

The contradicting pairs the audit found (notes/audit-22.md, C1-C12) came from rows that computed one
quantity in two ways. Each such quantity is now one named function; these tests fail when a chapter
module reads an input a quantity owns or calls the model function it wraps (so it could compute the
quantity its own way), and check that the rows of every pair the audit listed use the same named
quantity.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analyses import data, scenario
from analyses.scenario import generations, quantities

CHAPTERS_DIR = Path(__file__).resolve().parents[2] / "analyses" / "chapters"


@pytest.fixture(scope="module")
def registry():
    return quantities.registry()


@pytest.fixture(scope="module")
def rows(whole_assessments):
    return {a.claim.id: a for a in whole_assessments}


def test_every_named_quantity_is_defined_once_with_its_words(registry):
    assert {"speedup", "restart_time", "lost_per_interruption", "goodput", "busy_share", "old_hour_cost"} <= set(
        registry
    )
    owners: dict[str, str] = {}
    for q in registry.values():
        assert q.definition and q.unit and q.label and q.audit.startswith("R"), q.name
        assert q.module in quantities.DEFINED_IN, q.name
        for name in q.owns:
            assert name in scenario.assumptions(), f"{q.name} owns {name}, which the scenario does not have"
            assert owners.setdefault(name, q.name) == q.name, f"{name} is owned by {owners[name]} and {q.name}"
    # the speed-up every check reads is the scenario's per-GPU speed-up, by workload
    assert registry["speedup"].owns == (generations.SPEEDUP,)
    with pytest.raises(KeyError, match="workloads are"):
        generations.speedup(scenario.values(), "a workload nobody defined")


def _model_aliases(tree: ast.AST) -> set[str]:
    """Names a module binds to modules of analyses.models (``from analyses.models import reliability as rel``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "analyses.models":
            out |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.asname for a in node.names if a.name.startswith("analyses.models.") and a.asname}
    return out


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every value subscript by a string constant or the SPEEDUP name (a range read,
    ``scenario.ranges(cfg)[name]``, only states the range and is left out), and every call of a function
    of an ``analyses.models`` module, in a module."""
    models = _model_aliases(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            value, key = node.value, node.slice
            if isinstance(value, ast.Call) and getattr(value.func, "attr", getattr(value.func, "id", "")) == "ranges":
                continue
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                out.append((node.lineno, f"[{key.value}]"))
            elif (isinstance(key, ast.Name) and key.id == "SPEEDUP") or (
                isinstance(key, ast.Attribute) and key.attr == "SPEEDUP"
            ):
                out.append((node.lineno, f"[{generations.SPEEDUP}]"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if isinstance(node.func.value, ast.Name) and node.func.value.id in models:
                out.append((node.lineno, f"{node.func.attr}("))
    return out


def test_no_chapter_reads_what_a_named_quantity_owns(registry):
    """No chapter module (checks, wiring, compute, figures, sentences) reads a scenario input that a named
    quantity owns, or calls the model function it wraps: it calls the quantity instead."""
    owned = {f"[{name}]": q.name for q in registry.values() for name in q.owns}
    wrapped = {f"{fn}(": q.name for q in registry.values() for fn in q.wraps}
    found = []
    for path in sorted(CHAPTERS_DIR.rglob("*.py")):
        for line, what in _reads(ast.parse(path.read_text(), str(path))):
            hit = owned.get(what) or wrapped.get(what)
            if hit:
                found.append(f"{path.relative_to(CHAPTERS_DIR)}:{line}: {what} (use the named quantity '{hit}')")
    assert not found, "\n".join(found)


# The audit's contradicting pairs (notes/audit-22.md §1.1) and the named quantity that now defines, for
# every row of the pair, what they disagreed on.
PAIRS = {
    "C1": (("001-2.4-loss-hours-to-minutes", "001-2.4-weeks-long-runs-hours-lost"), "checkpoint_interval"),
    "C2": (("000-2.4-weeks-long-runs-hours-to-recover", "000-2.4-recovery-hours-to-minutes"), "restart_time"),
    "C3": (("000-2.4-weeks-long-runs-hours-to-recover", "001-2.4-loss-hours-to-minutes"), "restart_time"),
    "C4": (("001-2.2-utilisation-below-50pct", "001-1-inefficiency-over-half-of-cost"), "busy_share"),
    "C5": (
        ("001-1-inefficiency-over-half-of-cost", "001-4-utilisation-55-to-89", "001-2.4-checkpoint-15min-then-hourly"),
        "goodput",
    ),
    "C6": (("000-6-payback-6-12-months", "001-6-effective-compute-cost-formula"), "old_hour_cost"),
    "C7": (
        (
            "000-3-table-tco",
            "000-4-monthly-cost-47pct-3m-rmb",
            "000-6-payback-6-12-months",
            "001-4-rental-80k-rmb-month",
        ),
        "old_hour_cost",
    ),
    "C8": (("000-3-table-tco", "000-6-months-to-weeks", "000-4-training-days-28-to-11"), "speedup"),
    "C10": (("000-4-experiments-1-to-3", "000-2.1-13b-experiments-1-to-4"), "runs_per_month"),
    "C12": (("000-2.4-fintech-crash-every-5-days", "001-2.4-fintech-crash-every-5-days"), "fintech_job"),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_each_contradicting_pair_now_reads_one_named_quantity(pair, rows):
    ids, name = PAIRS[pair]
    for cid in ids:
        used = {q for q, _ in rows[cid].quantities}
        assert name in used, f"{pair}: {cid} does not use the named quantity '{name}' (it uses {sorted(used)})"


def test_rows_that_share_a_quantity_state_one_value(rows):
    """Rows that call a named quantity with the same arguments state it alike: every row whose reason or
    recomputed text gives a goodput, a restart or a loss per crash prints the registry's value of it."""
    from analyses.scenario import operations
    from analyses.units.formats import fmt

    s = scenario.values()
    seen: dict[tuple, set[str]] = {}
    for a in rows.values():
        for name, args in a.quantities:
            seen.setdefault((name, args), set()).add(a.claim.id)
    assert any(len(ids) > 1 for ids in seen.values()), "no named quantity is shared by two rows"
    # the best-interval goodput, in every row that uses it, is the reliability model's value
    best = fmt(float(operations.goodput(s)), pct=True, sig=3)
    users = {cid for (name, args), ids in seen.items() if name == "goodput" and args == () for cid in ids}
    assert users, "no row reads the best-interval goodput"
    for cid in users:
        text = rows[cid].recomputed + rows[cid].reason
        assert "goodput" not in text or best in text or fmt(float(operations.goodput(s)), pct=True, sig=4) in text, (
            cid,
            best,
        )
    # the automated and the manual restart (R1) are stated alike by the rows that state them: both 000 §2.4
    # rows give both modes, and 001's loss per crash counts the same automated restart
    shown = {m: fmt(float(operations.minutes(operations.restart_s(s, m))), "min", 3) for m in ("automated", "manual")}
    for cid in ("000-2.4-weeks-long-runs-hours-to-recover", "000-2.4-recovery-hours-to-minutes"):
        assert all(v in rows[cid].recomputed for v in shown.values()), (cid, shown)
    assert f"an automated restart of {shown['automated']}" in rows["001-2.4-loss-hours-to-minutes"].recomputed


def test_the_speed_up_rows_name_their_workload(rows):
    """Every row whose verdict reads the B300/A100 speed-up reads it through the named quantity, and each
    workload is one of generations.WORKLOADS."""
    for a in rows.values():
        if generations.SPEEDUP in a.inputs:
            workloads = [args[0] for name, args in a.quantities if name == "speedup"]
            assert workloads, f"{a.claim.id} reads the speed-up but not through generations.speedup"
            assert set(workloads) <= set(generations.WORKLOADS), a.claim.id


def test_claims_data_names_each_new_row_once():
    ids = [c.id for c in data.claims()]
    assert len(ids) == len(set(ids))


# -------------------------------------------------------------------------- the buyer's frame (issue 34)


def _frames(rows):
    """{(dimension, key): {value: [claim ids]}} over every row's noted frame choices."""
    seen: dict[tuple[str, str], dict[str, list[str]]] = {}
    for a in rows.values():
        for c in a.frame:
            seen.setdefault((c.dimension, c.key), {}).setdefault(c.value, []).append(a.claim.id)
    return seen


def test_no_two_rows_judge_one_quantity_under_different_frames(rows):
    """Every frame question (how a fleet is valued, a document's status quo, the precision, what a
    utilisation word means, the case's hardware) has one answer across the ledger; every cost row names
    its frame in its reason and its frame column."""
    from analyses.scenario import frame

    seen = _frames(rows)
    split = {k: v for k, v in seen.items() if len(v) > 1}
    assert not split, f"rows judge one question under different frames: {split}"
    # the questions the issue found answered two ways are each answered once, by these rows together
    assert seen[("fleet value", "existing fleet")].keys() == {frame.FLEET_VALUE}
    assert {"000-3-table-tco", "000-4-monthly-cost-47pct-3m-rmb", "000-6-payback-6-12-months"} <= set(
        seen[("fleet value", "existing fleet")][frame.FLEET_VALUE]
    )
    assert seen[("status quo", "000")].keys() == {"owned"} and seen[("status quo", "001")].keys() == {"rent in China"}
    assert {"001-2.2-utilisation-below-50pct", "000-6-half-idle-to-near-full"} <= set(
        seen[("utilisation", "利用率")]["busy share"]
    )
    assert "001-1-hidden-costs-far-above-hardware" in seen[("utilisation", "有效计算")]["useful compute"]
    assert {"001-4-two-4-gpu-b300-servers", "001-4-own-42k-vs-rent-80k"} <= set(seen[("hardware", "001 §4")]["8 GPUs"])
    for a in rows.values():
        if a.kind == "cost" and a.value is not None:
            assert a.frame, f"{a.claim.id} is a cost row that names no frame"
            assert frame.words(a.frame) in a.reason, a.claim.id


def test_the_frame_notes_follow_a_readers_choice():
    """A reader who values the fleet at market price moves every row that values it, together; a frame
    choice noted twice with two answers would fail the test above (checked here on a made-up pair)."""
    from analyses.chapters import config, ledger
    from analyses.scenario import frame

    cfg = config("tco", {frame.PARAM: "market"})
    rows = {a.claim.id: a for a in ledger.assessments("tco", cfg)}
    values = _frames(rows)[("fleet value", "existing fleet")]
    assert values.keys() == {"market"}
    assert rows["000-3-table-tco"].verdict == "consistent"  # 32% of A100's cost at today's second-hand price
    fake = {"a": type("A", (), {"frame": (frame.status_quo("000"),), "claim": data.claim("000-3-table-tco")})()}
    fake["b"] = type(
        "A",
        (),
        {
            "frame": (frame.Choice("status quo", "000", "rent in China", ""),),
            "claim": data.claim("000-6-payback-6-12-months"),
        },
    )()
    assert len(_frames(fake)[("status quo", "000")]) == 2
