"""Issue 33, third round: the 90% bands a plan carries, conditional on what the plan is (dense or MoE, size,
GPU architecture; layout pinned or picked, stack named or not), each class sized by grouped cross-validation
over the published runs of that class and pooled into its parent where too few sources hold it."""

from __future__ import annotations

import numpy as np
import pytest

from analyses.models.uncertainty import error_band
from analyses.scenario import bands


def test_a_class_with_too_few_sources_takes_its_parents_runs():
    """Hand-worked, MIN_GROUPS = 6: six groups of dense Hopper runs under 100B give that class a band of
    its own; two MoE groups do not, so an MoE plan takes every run's; a leaf whose own groups fall short
    climbs one level at a time."""
    paths = (
        [("dense", "under 100B", "Hopper")] * 6
        + [("dense", "under 100B", "Ampere")] * 2
        + [("moe", "100B and over", "Hopper")] * 2
    )
    groups = np.array([f"g{i}" for i in range(6)] + ["a1", "a2", "m1", "m2"])
    assert bands.MIN_GROUPS == 6
    assert bands.resolve(("dense", "under 100B", "Hopper"), paths, groups) == ("dense", "under 100B", "Hopper")
    assert bands.resolve(("dense", "under 100B", "Ampere"), paths, groups) == ("dense", "under 100B")
    assert bands.resolve(("moe", "100B and over", "Hopper"), paths, groups) == ()
    # leaving one Hopper group out leaves five: the class pools into its parent
    usable = groups != "g0"
    assert bands.resolve(("dense", "under 100B", "Hopper"), paths, groups, usable) == ("dense", "under 100B")
    assert bands.label(()) == "all runs" and bands.label(("dense", "under 100B")) == "dense, under 100B"


def test_a_pooled_class_is_stretched_to_hold_its_own_runs():
    """Hand-worked: a parent's errors -0.1..0.1 (band ±0.1) and a pooled class's own two runs at 0.3 and -0.05:
    the positive side is scaled by 3 (its band reaches 0.3), the negative side kept. Twenty own runs may leave
    out two (10%): those whose omission narrows the band most (here both high ones)."""
    parent = np.linspace(-0.1, 0.1, 21)
    out = bands.stretch(parent, np.array([0.3, -0.05]))
    assert error_band(out) == pytest.approx((-0.1, 0.3))
    own = np.r_[np.linspace(-0.05, 0.2, 18), 0.9, 0.8]
    assert error_band(bands.stretch(parent, own)) == pytest.approx((-0.1, 0.2))


def test_a_plans_class_comes_from_what_its_reader_knows():
    """Dense or MoE, size against 100B parameters, the GPU's architecture from data/gpus.csv (a variant has
    its die's)."""
    assert bands.path(False, 7e9, "A100-40GB") == ("dense", "under 100B", "Ampere")
    assert bands.path(True, 671e9, "H800") == ("moe", "100B and over", "Hopper")
    assert bands.path(False, 405e9, "GB300") == ("dense", "100B and over", "Blackwell")
    assert bands.architecture("B300") == "Blackwell" and bands.architecture("nope") == ""


def test_grouped_cv_coverage_per_class_and_overall():
    """Every published step-time run scored against the band of its class, resolved and sized without its own
    group: at least 85% inside overall for every kind of plan (measured 89-91%), and at least 80% in every
    class (measured 83-95%). Two cells sit under 85%: the MoE runs (10 of 12 inside: three sources, one of
    which holds nine of them, so leaving it out leaves little to size on) and the dense runs of 100B or more
    at the planner's pick (38 of 45: torchtitan's four 405B demonstrations run 2-3 times slower than the
    pick, and no other source shows such a gap)."""
    for pinned in (True, False):
        for known in (True, False):
            frame = bands.steady_bands(pinned, known)
            frame = frame[np.isfinite(frame["error"])]
            assert frame["inside"].mean() >= 0.85, (pinned, known)
            by_class = frame.groupby("class")["inside"].mean()
            assert (by_class >= 0.80).all(), by_class
    table = bands.class_table().set_index(["plan", "layout", "stack"])
    assert set(table["band from"]) == {"dense, under 100B", "dense, 100B and over", bands.ALL}
    # by the plan's own class: a dense model under 100B on Ampere or Hopper held at least 85% (89-100%); the
    # thin ones show their misses (dense 100B+ on Hopper at the pick: 10 of 17, the torchtitan 405B runs)
    for fam in ("Ampere", "Hopper"):
        for layout in ("pinned", "picked"):
            assert table.loc[(f"dense, under 100B, {fam}", layout, "named"), "coverage"] >= 0.85
    assert table.loc[("dense, 100B and over, Hopper", "picked", "named"), "coverage"] < 0.7


def test_a_whole_run_figure_that_is_tokens_over_throughput_is_a_steady_state():
    """DeepSeek's GPU-hours per trillion tokens (V2, 67B) and V3's 2.664M (14.8T tokens x 180K) are tokens over
    measured throughput: compared with the plan's steady state, no campaign overhead, and banded as a steady
    state. Phi-1.5's and phi-2's cards are listed, never scored (their figures disagree with their report, or
    ask 70% MFU of an A100)."""
    frame = bands.whole_runs().set_index("id")
    assert set(frame.loc[["dsv3-h800-2048", "deepseek-v2-1t", "deepseek-67b-1t"], "hours_counted"]) == {"throughput"}
    assert set(frame.loc[["phi-1.5-run", "phi-2-run"], "hours_counted"]) == {"unclear"}
    own, _ = bands.campaign_errors(("dense", "under 100B", "Ampere"))
    assert len(own) >= 10
