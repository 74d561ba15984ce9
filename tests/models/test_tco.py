"""Tests of the TCO models (analyses/models/tco.py) and the price table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analyses import data, units
from analyses.models import tco, uncertainty
from analyses.models.uncertainty import Range


def test_capital_recovery_factor_closed_forms():
    # r = 0 is straight-line depreciation: 1/n per year.
    assert float(tco.capital_recovery_factor(0.0, 3)) == pytest.approx(1 / 3)
    # Textbook annuity: 10% over 3 years = 0.1 / (1 - 1.1**-3) = 0.402115 (table value 0.40211).
    assert float(tco.capital_recovery_factor(0.10, 3)) == pytest.approx(0.402115, abs=1e-6)
    # Vectorised: mixed zero and non-zero rates in one call.
    # a rate the scenario allows but too small for 1 - (1 + r)^-n in floats: the limit 1/n, not 0/0
    # (tests/site/test_param_properties.py found cost_of_capital 1e-99 turning every TCO figure NaN)
    assert float(tco.capital_recovery_factor(1e-99, 5)) == pytest.approx(0.2, rel=1e-12)
    assert float(tco.capital_recovery_factor(1e-9, 5)) == pytest.approx(0.2 * (1 + 3e-9), rel=1e-12)
    out = tco.capital_recovery_factor(np.array([0.0, 0.10]), np.array([4.0, 3.0]))
    np.testing.assert_allclose(out, [0.25, 0.402115], atol=1e-6)


def test_owned_cost_hand_checked_case():
    # Hand check, one B300 owned for one calendar hour (a year is 365.25 days = 8,766 hours):
    #   price 50,000 USD, +15% network/storage, 4 years at 8%: CRF = 0.08 / (1 - 1.08^-4) = 0.301921
    #   server  = 50,000 x 0.301921 / 8766             = 1.72211 USD/h
    #   network = 0.15 x 1.72211                        = 0.25832
    #   node    = 1.1 kW TDP x 1.8 overhead             = 1.98 kW
    #   energy  = 1.98 x PUE 1.56 x 0.088 USD/kWh       = 0.27181
    #   hosting = 1.98 kW x 150 USD/kW/month x 12 / 8766 = 0.40657
    #   staff   = 1,500 / 8766                          = 0.17112
    #   total                                           = 2.82993 USD per GPU-hour
    # Useful PFLOP-day at 2.25 PFLOP/s BF16 x MFU 0.4 x utilisation 0.7 x goodput 0.9 = 0.567 PFLOP/s:
    #   2.82993 x 24 / 0.567 = 119.785 USD per effective PFLOP-day.
    c = tco.owned_cost_per_gpu_hour(50_000, 0.15, 4, 0.08, 1100, 1.8, 1.56, 0.088, 150, 1500)
    hand = {"server": 1.72211, "network_storage": 0.25832, "energy": 0.27181, "hosting": 0.40657, "staff": 0.17112}
    for name, value in hand.items():
        assert float(getattr(c, name)) == pytest.approx(value, rel=1e-4), name
    assert float(c.total) == pytest.approx(2.82993, rel=1e-4)
    assert float(c.opex) == pytest.approx(0.27181 + 0.40657 + 0.17112, rel=1e-4)
    per_pflop_day = tco.cost_per_effective_pflop_day(c.total, 2.25e15, 0.4, 0.7, 0.9)
    assert float(per_pflop_day) == pytest.approx(119.785, rel=1e-4)


def test_rented_and_workload_arithmetic():
    assert float(tco.rented_cost_per_gpu_hour(6.0, 0.3)) == pytest.approx(7.8)
    # 1 PFLOP/s useful per GPU delivers a month's days in PFLOP-days, so that many PFLOP-days need 1 GPU.
    assert float(tco.gpus_for_workload(units.DAYS_PER_MONTH, 2.5e15, 0.4, 1.0, 1.0)) == pytest.approx(1.0)
    # Llama 2 7B (Touvron et al. 2023, Table 2: 7e9 params, 2.0e12 tokens; model card: 184,320 A100-hours).
    # 6ND / (312 TFLOP/s x 184,320 h x 3600) = 0.406: at MFU 0.406 the model must return those hours
    # within 1% (the card's hours are rounded to the 1,000s of GPU-hours it reports in other rows).
    hours = tco.training_gpu_hours(6 * 7e9 * 2e12, 312e12, 0.4057, 1.0)
    assert float(hours) == pytest.approx(184_320, rel=0.01)


def test_payback_and_implied_inputs():
    assert float(tco.payback_months(1200.0, 300.0, 100.0)) == pytest.approx(6.0)
    assert math.isinf(float(tco.payback_months(1200.0, 100.0, 150.0)))
    # Document 000's case: 128 A100 x 28 days vs 96 B300 x 11 days; -47% needs price ratio 0.53 x 3584/1056.
    ratio = tco.implied_price_ratio(0.53, 128 * 28, 96 * 11)
    assert float(ratio) == pytest.approx(0.53 * 3584 / 1056)
    # Inverting the owned-cost model recovers the price it was built from.
    c = tco.owned_cost_per_gpu_hour(50_000, 0.15, 3, 0.08, 1100, 1.8, 1.56, 0.088, 150, 1500)
    monthly = float(c.total) * units.HOURS_PER_MONTH
    opex = float(c.opex) * units.HOURS_PER_MONTH
    assert float(tco.implied_server_price_per_gpu(monthly, opex, 0.15, 3, 0.08)) == pytest.approx(50_000)
    # R&D cost: labour (share w) scales with calendar time, compute with its own ratio; the solver
    # inverts the mix. Time halves, compute doubles: a 0.75 total needs w = (0.75 - 2) / (0.5 - 2) = 5/6.
    w = tco.labour_share_for_ratio(0.75, 0.5, 2.0)
    assert float(w) == pytest.approx(5 / 6)
    assert float(tco.rd_cost_ratio(w, 0.5, 2.0)) == pytest.approx(0.75)
    # The implied price ratio and the usage cost ratio are inverses of each other.
    assert float(tco.usage_cost_ratio(tco.implied_price_ratio(0.53, 3584, 1056), 3584, 1056)) == pytest.approx(0.53)


def test_sample_range_percentiles():
    rng = np.random.default_rng(1)
    x = uncertainty.sample_range(Range(2.0, 5.0, 20.0), 400_000, rng)
    lo, med, hi = uncertainty.interval(x)
    # Sampling error of a quantile at n = 400k is well under 1%.
    assert lo == pytest.approx(2.0, rel=0.01)
    assert med == pytest.approx(5.0, rel=0.01)
    assert hi == pytest.approx(20.0, rel=0.01)
    assert np.all(uncertainty.sample_range(Range(3.0, 3.0, 3.0), 10, rng) == 3.0)
    with pytest.raises(ValueError):
        uncertainty.sample_range(Range(5.0, 3.0, 6.0), 10, rng)


def _product(a, b):
    return a * b


def test_monte_carlo_converges_and_is_deterministic():
    ranges = {"a": Range(1.0, 2.0, 4.0), "b": Range(3.0, 6.0, 12.0)}
    # Log-symmetric inputs: ln(a b) is normal with median ln 12 and sd sqrt(2) x ln2/1.645,
    # so the exact 90% interval of a x b is 12 x 2^(+-sqrt 2) = (4.50, 12, 32.0).
    exact = (12 * 2 ** -math.sqrt(2), 12.0, 12 * 2 ** math.sqrt(2))
    small = uncertainty.interval(uncertainty.monte_carlo(_product, ranges, n=20_000, seed=3))
    large = uncertainty.interval(uncertainty.monte_carlo(_product, ranges, n=400_000, seed=4))
    for got_small, got_large, want in zip(small, large, exact, strict=True):
        assert got_large == pytest.approx(want, rel=0.01)  # converged
        assert got_small == pytest.approx(want, rel=0.04)  # 20k draws: within a few percent
    again = uncertainty.monte_carlo(_product, ranges, n=1000, seed=3)
    np.testing.assert_array_equal(again, uncertainty.monte_carlo(_product, ranges, n=1000, seed=3))
    assert uncertainty.central_value(_product, ranges) == pytest.approx(12.0)


def test_tornado_orders_by_swing():
    ranges = {"a": Range(1.9, 2.0, 2.1), "b": Range(3.0, 6.0, 12.0)}
    frame = uncertainty.tornado(_product, ranges)
    assert list(frame["input"]) == ["b", "a"]
    assert frame.loc[0, "at_low"] == pytest.approx(6.0)
    assert frame.loc[0, "at_high"] == pytest.approx(24.0)


def test_range_scaled_keeps_relative_spread():
    assert Range(1.0, 2.0, 4.0).scaled(3.0)[:3] == (1.5, 3.0, 6.0)


def test_price_table_rows_are_ordered_ranges():
    frame = data.prices()
    assert (frame["low"] <= frame["central"]).all() and (frame["central"] <= frame["high"]).all()
    # Every GPU-specific row names a GPU of the GPU table.
    named = set(frame["gpu"].dropna()) - {""}
    assert named <= set(data.gpu_names())
    # The B300 neocloud rent range is the published 5.00-7.25 USD per GPU-hour.
    b300 = data.price("b300-rent-neocloud")
    assert (b300.low, b300.high, b300.currency) == (5.0, 7.25, "USD")
