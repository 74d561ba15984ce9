"""Tests of analyses.models.pipeline: overlap limits, the prefetch simulation against closed forms, shares."""

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
    # 100B model, 2.25e15 FLOP/s dense BF16, 40% MFU: 0.4*2.25e15/(6e11) = 1500 tokens/s per GPU,
    # 6 kB/s at 4 bytes per token id.
    tok = float(pl.llm_tokens_per_s_per_gpu(1e11, 2.25e15, 0.4))
    assert tok == pytest.approx(1500.0)
    assert float(pl.required_input_bytes_per_s(tok)) == pytest.approx(6000.0)
