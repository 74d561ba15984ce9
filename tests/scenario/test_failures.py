"""Interruption rates by operations mode fed from the logs: the scenario's rows, the validation
against published logs (issue 21's done criteria), goodput and time to recover."""

import numpy as np
import pytest

from analyses import data, scenario
from analyses.models import interruptions as intr
from analyses.scenario import failures

YEAR_DAYS = 365.25


def _rate(n, days, gpus):
    return n * YEAR_DAYS / (gpus * days)


def test_shares_are_llama3_table5_counts():
    # 419 unexpected of 466 interruptions; hardware = GPU (268) + host (21) + network (35) +
    # unplanned host maintenance (32) = 356 of 466
    s = failures.shares()
    assert s["unexpected"] == pytest.approx(419 / 466) and s["hardware"] == pytest.approx(356 / 466)
    r = scenario.assumption(failures.HARDWARE_SHARE).range
    assert (r.low, r.central, r.high) == (round(289 / 466, 3), round(356 / 466, 3), round(356 / 419, 3))


def test_automated_and_manual_rates_worked_by_hand_from_the_logs():
    hw = 356 / 466
    automated = [
        _rate(466, 54, 16384),  # Llama 3, all causes
        np.sqrt(_rate(15, 105, 384) * _rate(30, 105, 384)) / hw,  # BLOOM, 1-2 hardware crashes a week
        0.0065 * YEAR_DAYS / 8 / hw,  # RSC-1 node failures
        0.00234 * YEAR_DAYS / 8 / hw,  # RSC-2
    ]
    manual = [_rate(40, 16, 992), _rate(105, 60, 992) / hw]  # OPT-175B chronicles; paper's hardware restarts
    f = failures.fit()
    assert f.rates["automated"] == pytest.approx(np.exp(np.mean(np.log(automated))), rel=1e-12)
    assert f.rates["manual"] == pytest.approx(np.exp(np.mean(np.log(manual))), rel=1e-12)
    assert f.counts == {"automated": 4, "manual": 2} and f.dof == 4
    for mode in intr.OPERATIONS:  # the scenario's rows are the fit, rounded to 3 figures
        r = scenario.assumption(failures.RATE[mode]).range
        assert r.central == float(f"{f.rates[mode]:.3g}")
        lo, hi = f.band(mode)
        assert (r.low, r.high) == (float(f"{f.rates[mode] * lo:.3g}"), float(f"{f.rates[mode] * hi:.3g}"))
    # a cluster operated by hand is interrupted about four times as often
    assert 3 < f.rates["manual"] / f.rates["automated"] < 5


def test_opt_bloom_and_llama3_within_30_percent_of_their_mode_in_and_out_of_sample():
    # issue 21: the OPT-175B, BLOOM and Llama 3 interruption figures each within 30% of the model
    # for their operations mode; here both against the fit and leaving the log out of it
    v = failures.rate_validation().set_index("ids")
    for ids in (
        "llama3-405b-all",
        "bloom-176b-gpu-failures-low, bloom-176b-gpu-failures-high",
        "opt-175b-chronicle-27pct",
        "opt-175b-hardware-all",
    ):
        row = v.loc[ids]
        assert row["role"] == "calibrate"
        assert abs(row["fit_error"]) <= 0.30, ids
        assert abs(row["error"]) <= 0.30, ids  # leave-one-out
        assert row["inside"], ids
    assert v.loc["opt-175b-chronicle-27pct", "mode"] == "manual"
    assert v.loc["opt-175b-hardware-all", "operations"] == "mixed"  # counted with the manual mode
    assert v.loc["llama3-405b-all", "mode"] == "automated"


def test_out_of_sample_coverage_and_the_misses_the_chapter_explains():
    v = failures.rate_validation()
    scored = v[v["role"].isin(["calibrate", "validate"]) & v["predicted"].notna()]
    assert len(scored) >= 8
    misses = set(scored.loc[~scored["inside"].astype(bool), "ids"])
    # RSC-1's node failures lie above the band fitted without them; RSC's 1,024-GPU research jobs
    # fail for per-job reasons the per-GPU model does not carry
    assert misses <= {"rsc1-node-failures", "rsc-mttf-1024"}
    assert scored["inside"].astype(bool).mean() >= 0.75
    # a partial count has no prediction
    assert np.isnan(v.set_index("ids").loc["opt-175b-hardware", "predicted"])


def test_every_published_goodput_is_validated_and_the_scenario_goodput_is_the_model():
    ranges = scenario.ranges()
    g = failures.goodput_validation(ranges).set_index("run")
    published = set(data.failure_logs().dropna(subset=["effective_time_min"])["run"]) | set(
        data.goodput_published()["run"]
    )
    assert set(g.index) == published and len(g) >= 3
    assert (g["band_low"] < g["predicted"]).all() and (g["predicted"] < g["band_high"]).all()
    # Llama 3 and MegaScale: "more than 90%", within reach of the band
    assert g.loc[g["bound"] == "lower", "inside"].all()
    # the scenario's goodput is the model for its own job, not a typed 90%
    c = scenario.values()
    want = float(
        intr.job_goodput(c["job_gpus"], c["interruptions_per_gpu_year"], c["checkpoint_write_s"], c["restart_s"])
    )
    a = scenario.assumption(failures.GOODPUT)
    assert a.derivation == "goodput" and a.central == float(f"{want:.3g}")
    assert a.range.low < a.central < a.range.high < 1


def test_goodput_follows_a_reader_moving_its_inputs():
    base = scenario.ranges()[failures.GOODPUT]
    slow = scenario.ranges({"restart_s": 1500.0})[failures.GOODPUT]
    assert slow.central < base.central
    big = scenario.values({"job_gpus": 16384.0})[failures.GOODPUT]
    assert big < base.central
    # a goodput the reader sets is kept
    assert scenario.values({"goodput": 0.8, "restart_s": 1500.0})[failures.GOODPUT] == 0.8


def test_recovery_bounds_against_the_model():
    r = failures.recovery_validation(scenario.ranges()).set_index("run")
    assert len(r) >= 2 and r["inside"].all()
    assert (r["bound"] == "upper").all()
    llama = r[r["what"] == "from its effective time"].iloc[0]
    assert llama["published_min"] == pytest.approx(0.1 * 54 * 1440 / 466)


def test_for_operations_reads_only_what_it_is_asked():
    s = scenario.values()
    assert failures.for_operations(s, "automated") is s
    view = failures.for_operations(s, "manual")
    assert view["interruptions_per_gpu_year"] == s["interruptions_per_gpu_year_manual"]
    assert view["restart_s"] == s["restart_s_manual"] and view["job_gpus"] == s["job_gpus"]
    assert len(view) == len(s) and set(view) == set(s)
    with pytest.raises(ValueError, match="parameter 'operations'"):
        failures.for_operations(s, "hybrid")
