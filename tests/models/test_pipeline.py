"""Tests of analyses.models.pipeline: overlap limits, the prefetch simulation against closed forms, shares."""

import numpy as np
import pytest

from analyses.models import pipeline as pl


def test_overlap_limits():
    assert float(pl.step_time_s(1.0, 0.8, 0.0)) == pytest.approx(1.8)  # synchronous loader
    assert float(pl.step_time_s(1.0, 0.8, 1.0)) == pytest.approx(1.0)  # fully hidden
    assert float(pl.step_time_s(1.0, 1.5, 1.0)) == pytest.approx(1.5)  # loader-bound


@pytest.mark.parametrize(("depth", "expected"), [(0, 1 / 1.8), (1, 1.0), (4, 1.0)])
def test_prefetch_simulation_matches_closed_form_without_jitter(depth, expected):
    # With constant load times the producer-consumer recurrence must reproduce the closed form
    # (depth 0 = compute + load; depth >= 1 = max(compute, load)); the only gap is the first
    # batch's load, 0.8 s in 4000 s, hence rel=1e-3.
    u = pl.simulate_prefetch(1.0, 0.8, depth, cv=0.0, steps=4000)
    assert u == pytest.approx(expected, rel=1e-3)


def test_deeper_queues_absorb_jitter():
    # With variable load times (cv 0.5, mean 80% of compute) a deeper queue must help, and with
    # depth 8 the GPU is almost never starved.
    us = [pl.simulate_prefetch(1.0, 0.8, d, cv=0.5, seed=3) for d in (1, 2, 8)]
    assert us[0] < us[1] < us[2]
    assert us[2] > 0.99


def test_document_001_loading_pairs():
    # 35% -> 12% exposed loading: time ratio (1-0.35)/(1-0.12) = 0.739 (26.1% less time);
    # 62% -> 88% utilisation: 0.705 (29.5% less). Closed-form arithmetic, exact to 1e-3.
    assert float(pl.time_ratio_from_shares(0.35, 0.12)) == pytest.approx(0.7386, abs=1e-3)
    assert float(pl.time_ratio_from_utilisation(0.62, 0.88)) == pytest.approx(0.7045, abs=1e-3)


def test_energy_ratio_limits():
    # idle GPUs drawing full power: energy scales with wall time; drawing nothing: no change.
    assert pl.energy_ratio(0.65, 0.88, 1.0) == pytest.approx(0.65 / 0.88)
    assert pl.energy_ratio(0.65, 0.88, 0.0) == pytest.approx(1.0)


def test_llm_input_bandwidth_is_tiny():
    # 100B model at 0.9e15 model FLOP/s per GPU: 0.9e15/(6e11) = 1500 tokens/s per GPU,
    # 6 kB/s at 4 bytes per token id (int32), 3 kB/s at 2 (uint16).
    tok = float(pl.llm_tokens_per_s_per_gpu(1e11, 0.9e15))
    assert tok == pytest.approx(1500.0)
    assert float(pl.required_input_bytes_per_s(tok, 4)) == pytest.approx(6000.0)
    assert float(pl.required_input_bytes_per_s(tok, 2)) == pytest.approx(3000.0)


def test_tokens_per_second_of_a_published_run():
    # Llama 3 405B on H100: about 400 TFLOP/s per GPU (Dubey et al. 2024, Table 4) and
    # 15.6T tokens on 16,384 GPUs; 6ND gives 400e12 / (6 × 405e9) = 165 tokens/s per GPU.
    assert float(pl.llm_tokens_per_s_per_gpu(405e9, 400e12)) == pytest.approx(164.6, abs=0.1)


def test_energy_ratio_is_vectorised_and_monotonic():
    # more power drawn while waiting: a larger electricity saving from less waiting
    f = np.linspace(0.0, 1.0, 11)
    saving = 1 - pl.energy_ratio(0.65, 0.88, f)
    assert saving.shape == (11,) and (np.diff(saving) > 0).all()
    # document 001's run at 40% power while waiting: 1 - (1 + 0.4·(1/0.88 − 1)) / (1 + 0.4·(1/0.65 − 1)) = 13.2%
    assert saving[4] == pytest.approx(0.1324, abs=1e-4)


def test_mix_share_for_saving():
    # labour falls 26.1% (time), electricity 13.2%: a 25% cut of the two needs labour at 91.5% of them
    w = float(pl.mix_share_for_saving(0.25, 0.1324, 0.2614))
    assert w == pytest.approx((0.25 - 0.1324) / (0.2614 - 0.1324))
    assert w * 0.2614 + (1 - w) * 0.1324 == pytest.approx(0.25)


def test_loading_fix_of_document_001():
    # 35% -> 12% loading, 62% -> 88% utilisation over 10 days: 2.61 days from the shares, 2.95 from
    # the utilisations (closed forms above), and 1 − share = 65% -> 88%.
    t = pl.loading_fix(0.35, 0.12, 0.62, 0.88, 10.0)
    assert (t["busy_before"], t["busy_after"]) == pytest.approx((0.65, 0.88))
    assert t["days_saved_shares"] == pytest.approx(10 * (1 - 0.65 / 0.88))
    assert t["days_saved_util"] == pytest.approx(10 * (1 - 0.62 / 0.88))
    assert t["time_cut"] == pytest.approx(1 - t["time_ratio_shares"])
