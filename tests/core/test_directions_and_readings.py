"""Direction, the credit rule, readings in holds and flip points, on the whole ledger (issue 22 items 1, 3-6).

Hand-worked cases of each mechanism first (a synthetic claim), then the rules every ledger row keeps.
"""

from __future__ import annotations

import pytest

from analyses import data, scenario, verdicts
from analyses.models.uncertainty import Range
from analyses.scenario import generations
from analyses.verdicts import Credit, Finding, Reading, at_least, between, exactly, robustness


@pytest.fixture(scope="module")
def rows(whole_assessments):
    return {a.claim.id: a for a in whole_assessments}


def _claim(kind: str) -> data.Claim:
    return data.Claim(
        "000-0-synthetic", "000_f164c1abc5db046d.txt", "0", "scaling-gap", kind, "", "", None, "scaling-gap", {}
    )


@pytest.fixture
def synthetic(monkeypatch):
    """A scenario with one lognormal assumption x: median 10, 90% range 5-20."""
    a = scenario.Assumption("x", "x", "x", Range(5.0, 10.0, 20.0), 0.1, 1000.0, "typed", "", "", "test", "2026")
    monkeypatch.setattr(scenario, "assumptions", lambda: {"x": a})
    return a


# --------------------------------------------------------------------------------------------
# Hand-worked cases
# --------------------------------------------------------------------------------------------


def test_direction_follows_the_side_of_the_evidence():
    rule = verdicts.RULES["fact"]
    assert verdicts.direction(Finding(exactly(30), 10.0), rule, "inconsistent") == "overstates"
    assert verdicts.direction(Finding(exactly(3), 10.0), rule, "inconsistent") == "understates"
    assert verdicts.direction(Finding(exactly(10), 10.0), rule, "consistent") == ""
    assert verdicts.direction(Finding(exactly(10), None), rule, "unverifiable") == ""
    # a contradicted claim says which way it errs; a name outside the two is an error
    assert (
        verdicts.direction(Finding(exactly(1), 1.0, contradiction="no", direction="overstates"), rule, "inconsistent")
        == "overstates"
    )
    with pytest.raises(ValueError, match="direction must be"):
        verdicts.direction(Finding(exactly(1), 1.0, contradiction="no", direction="sideways"), rule, "inconsistent")


def test_one_credit_rule():
    """A100 already had MIG: a claim whose comparison says it lacks it is contradicted, whatever its figure;
    a claim that only says B300 has it keeps its verdict, and the reason names the first generation."""
    rule = verdicts.RULES["capability"]
    compared = Finding(exactly(85), 85.0, credits=(Credit("mig", compared=True),))
    assert verdicts.VERDICTS[int(verdicts.verdict_codes(compared, rule, 1)[0])] == "inconsistent"
    assert verdicts.direction(compared, rule, "inconsistent") == "overstates"
    assert "A100 already has Multi-Instance GPU" in verdicts.rule_clause(compared, rule, "inconsistent")
    has = Finding(exactly(85), 85.0, credits=(Credit("mig"),))
    assert verdicts.VERDICTS[int(verdicts.verdict_codes(has, rule, 1)[0])] == "consistent"
    # FP8 came after A100: crediting B300 with it against A100 is no contradiction, even when compared
    assert not Credit("fp8", compared=True).contradicts and "after A100" in Credit("fp8").clause()
    with pytest.raises(KeyError, match="features.csv"):
        _ = Credit("warp drive").row


def test_holds_counts_readings_with_the_draws(synthetic):
    """A fact stated as at least 8 against x (median 10): it stands in every draw above 8/1.1 = 7.27 under
    the reading taken; under a reading where the claim asks at least 30 it stands in almost none. Each
    reading counts as much as the draws: holds is the mean of the two shares."""
    claim = _claim("fact")

    def fn(c, s, cfg):
        return Finding(
            at_least(8), s["x"], unit="x", taken="at least 8", readings=(Reading("at least 30", stated=at_least(30)),)
        )

    a = robustness.assess(verdicts.check(claim.id)(fn), claim, {})
    assert a.verdict == "consistent"
    assert a.readings == (("at least 30", "inconsistent"),)
    assert "reading taken: at least 8" in a.reason and "read as at least 30, it would be inconsistent" in a.reason
    taken_share = 1 - __import__("scipy").stats.norm.cdf(
        -0.4635 * 1.6449 / 1.0
    )  # P(x > 7.27): ln(7.27/10)/(ln 2/1.645)
    assert a.holds == pytest.approx((taken_share + 0.0) / 2, abs=0.05)


def test_a_reading_without_its_name_is_refused(synthetic):
    claim = _claim("fact")
    fn = verdicts.check(claim.id)(
        lambda c, s, cfg: Finding(exactly(10), s["x"], readings=(Reading("other", value=3.0),))
    )
    with pytest.raises(ValueError, match="taken="):
        robustness.assess(fn, claim, {})


def test_the_documents_own_figure_is_said_not_counted(synthetic):
    claim = _claim("capability")
    fn = verdicts.check(claim.id)(
        lambda c, s, cfg: Finding(between(9, 11), s["x"], unit="x", documents=(Reading("2.5×", value=2.5),))
    )
    a = robustness.assess(fn, claim, {})
    assert (
        "at the documents' own 2.5×: implausible" in a.reason
    )  # stated above the recomputed: the capability rule's implausible
    assert a.readings == ()


# --------------------------------------------------------------------------------------------
# The ledger
# --------------------------------------------------------------------------------------------


def test_every_row_that_errs_has_a_direction_and_no_other_does(rows):
    """Inconsistent and implausible rows always; an unverifiable anecdote only where its figure lies beyond
    the tolerance on one side of what the hardware delivers; consistent rows and rows with nothing to
    compare against never."""
    leaning = set()
    for a in rows.values():
        if a.verdict in ("inconsistent", "implausible"):
            assert a.direction in verdicts.DIRECTIONS, a.claim.id
        elif a.verdict == "unverifiable" and a.kind == "anecdote" and a.value is not None and "falls short" in a.reason:
            assert a.direction == "understates", a.claim.id
            leaning.add(a.claim.id)
        else:
            assert a.direction == "", a.claim.id
    # the anecdotes that fall short of the hardware: 13B (2.75x), 7B (1.75x), recommender (3.39x), sweep (4x),
    # Ethernet (2.1x of 3.81x), debugging memory (20% of 50%)
    assert {"000-2.1-13b-anecdote-days", "001-2.1-7b-anecdote-days", "000-4-training-days-28-to-11"} <= leaning


def test_anecdotes_nothing_records_are_unverifiable_and_say_whether_plausible(rows):
    for a in rows.values():
        if a.kind == "anecdote":
            assert a.verdict in ("unverifiable", "implausible"), a.claim.id
            if a.verdict == "unverifiable":
                assert "plausible" in a.reason.lower(), a.claim.id


def test_the_credit_rule_in_the_ledger(rows):
    """The rows whose comparison says A100 lacks a feature A100 had are inconsistent and overstate; the
    audit's example pair (MIG judged inconsistent, GDS unverifiable, the same kind of credit) agrees now."""
    for cid in ("000-3-table-mig", "000-3-table-data-loading", "000-3-table-stability"):
        assert (rows[cid].verdict, rows[cid].direction) == ("inconsistent", "overstates"), cid
        assert "A100 already has" in rows[cid].reason
    assert "not new with B300" in rows["001-2.3-mig-up-to-7-instances"].reason
    assert rows["001-2.2-gds-latency-60-80pct"].verdict == "unverifiable"  # says only what B300 does


def test_readings_that_turn_a_verdict_lower_holds(rows):
    """Rows whose verdict turns with a reading of their words say so, and their holds counts it."""
    turning = {cid: a for cid, a in rows.items() if any(v != a.verdict for _, v in a.readings)}
    assert len(turning) >= 20
    for a in turning.values():
        assert "reading taken:" in a.reason and a.holds < 1, a.claim.id


def test_every_row_that_reads_the_speed_up_names_its_flip_points_on_it(rows):
    """A row judged on the B300/A100 speed-up names where on that speed-up its verdict turns, even
    outside the 90% range (issue 22: 'would flip below 3.4x; the range is ...'), with a margin."""
    label = scenario.assumption(generations.SPEEDUP).label
    for a in rows.values():
        if generations.SPEEDUP in a.inputs and a.verdict != "unverifiable" and a.kind != "arithmetic":
            # a flip point on it with its margin, or the statement that no value a reader may set turns it
            assert label in a.flips_if, a.claim.id
            assert a.margin is not None or f"no {label} from" in a.flips_if, a.claim.id
    assert "90% range" in rows["000-6-months-to-weeks"].flips_if  # its flip, 3.4x, lies outside the range
    payback = rows["000-6-payback-6-12-months"]
    # against document 000's own A100s (the frame's status quo) its nearest flip lies inside a range: shown in doubt
    assert payback.kind == "cost" and payback.flips_if and payback.margin <= 1 and payback.doubt is not None


def test_every_cost_row_names_its_flip(rows):
    """Issue 22's 'Done when': every cost row has flips_if: a flip point, the statement that no value a
    reader may set turns it, or, without a recomputed figure, that nothing does."""
    for a in rows.values():
        if a.kind == "cost":
            assert a.flips_if, a.claim.id
    assert rows["001-2.1-7b-rd-cost-55pct"].flips_if == robustness.NO_FIGURE


def test_a_flip_on_the_speed_up_is_also_stated_on_the_claims_own_workload(rows):
    """The scenario's speed-up is the reference workload's (100B pretraining); a row that reads another
    workload's (issue 22 item 1: each claim's own) states its flip point there too, at the model's ratio."""
    payback = rows["001-6-payback-6-12-months"]
    factor = generations.workload_factor("finetune")
    # an 8-GPU fine-tune in FP8 (the frame's precision, analyses/scenario/frame.py) gains about as much as the
    # reference pretraining; in BF16 it gained 0.6 of it
    assert 0.9 < factor < 1.2
    assert "on the claim's own workload (full fine-tunes" in payback.flips_if
    assert "on the claim's own workload" not in rows["000-6-payback-6-12-months"].flips_if  # the reference itself
