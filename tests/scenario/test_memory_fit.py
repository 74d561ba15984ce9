"""Published peak memory per GPU against the model, out of sample (issue 21, memory)."""

import pytest

from analyses import data, scenario
from analyses.scenario import memory_fit


@pytest.fixture(scope="module")
def v():
    return memory_fit.validation(scenario.values()["framework_memory_gb"]).set_index("id")


def test_enough_published_runs_from_more_than_one_framework(v):
    assert len(v) >= 4 and v["framework"].nunique() >= 2 and (v["role"] == "calibrate").sum() >= 2
    # every calibration run's error is the fit without it (leave-one-out), so none is exactly the fit
    cal = v[v["role"] == "calibrate"]
    assert (cal["predicted_gib"] != cal["fitted_gib"]).all()


def test_band_covers_and_errors_are_small_out_of_sample(v):
    val = v[v["role"] == "validate"]
    assert val["inside"].astype(bool).mean() >= 0.8  # issue 21: a 90% band that covers >= 80%
    assert val["error"].abs().median() <= 0.15
    assert val["error"].abs().max() <= 0.40
    # and better than the accounting before on the same runs
    assert val["error"].abs().median() < val["before_error"].abs().median() / 3


def test_bloom_176b_as_trained_no_longer_under_predicted(v):
    # issue 21: a published 176B run's per-GPU memory was under-predicted by ~40% (here: the planner's
    # accounting, 26 GiB of the 59 GiB nvidia-smi read); now within 10%
    r = v.loc["bloom-176b-final-tp4-pp12-mbs2"]
    assert r["measured_gib"] == 59 and r["role"] == "validate"
    assert r["before_error"] < -0.4
    assert abs(r["error"]) < 0.05 and r["inside"]
    # the gradients alone: bf16 (2 B) + the unsharded fp32 buffer (4 B) of the first stage's 3.98e9 parameters
    assert r["gradients_gib"] * 2**30 == pytest.approx(6 * 3.982e9, rel=1e-3)


def test_what_the_chapter_says_about_the_misfits(v):
    # torchtitan's unpipelined 8B runs sit high (+5% to +25%), the pipelined ones and BLOOM's trials
    # within 10% at the median; the one run outside the band is an 8B run on 128 GPUs, too high
    val = v[v["role"] == "validate"]
    tt8 = val[val["model"] == "Llama 3.1 8B"]
    assert (tt8["error"] > 0.04).all() and tt8["error"].median() > 0.15
    rest = val[val["model"] != "Llama 3.1 8B"]
    assert rest["error"].abs().median() < 0.05
    out = val[~val["inside"].astype(bool)]
    assert list(out["model"]) == ["Llama 3.1 8B"] and (out["error"] > 0).all()


def test_scenario_reserve_factor_is_the_fit():
    f = memory_fit.fit()
    a = scenario.assumption(memory_fit.RESERVE)
    lo, hi = f.band()
    assert a.derivation == "memory_fit"
    assert a.central == float(f"{1 + f.fraction:.3g}")
    assert (a.range.low, a.range.high) == (float(f"{(1 + f.fraction) * lo:.3g}"), float(f"{(1 + f.fraction) * hi:.3g}"))
    assert set(data.memory_measured().query("role == 'calibrate'")["source"]) <= set(a.source.split(";"))
