"""Tests of the TCO models (analyses/models/tco.py) and the price table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analyses import data, scenario
from analyses.models import tco, uncertainty, units
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


# --------------------------------------------------------------------------------------------
# The scenario's wiring
# --------------------------------------------------------------------------------------------


def _s(**over):
    return scenario.values() | over


def test_generations_and_mfu_follow_the_scenario_speedup():
    (new, new_prec), (old, old_prec) = tco.generations()
    assert (new, old) == scenario.speedup_gpus(tco.SPEEDUP)
    s = _s()
    # Closed form of the guide: MFU_new = speed-up x peak_old x MFU_old / peak_new.
    want = s[tco.SPEEDUP] * data.gpu(old).peak_flops(old_prec) * s[tco.OLD_MFU] / data.gpu(new).peak_flops(new_prec)
    assert float(tco.mfu(s, new)) == pytest.approx(want)
    assert float(tco.mfu(s, old)) == pytest.approx(s[tco.OLD_MFU])
    # B300 FP8 (4.5 PFLOP/s dense) at 10.2x an A100 BF16 (312 TFLOP/s) at 51% MFU runs at 36% MFU.
    assert float(tco.mfu(_s(**{tco.SPEEDUP: 10.2, tco.OLD_MFU: 0.51}), new)) == pytest.approx(10.2 * 312 * 0.51 / 4500)
    with pytest.raises(KeyError, match="H100"):
        tco.achieved_flop_per_s(s, "H100")
    with pytest.raises(KeyError, match="H100"):
        tco.peak_flops("H100")


def test_owned_and_rented_wiring_read_the_scenario():
    s = _s()
    for gpu in ("A100", "H100", "B200", "B300"):
        direct = tco.owned_cost_per_gpu_hour(
            s[f"server_{gpu.lower()}_usd_per_gpu"],
            s["network_storage_fraction"],
            s["depreciation_years"],
            s["cost_of_capital"],
            data.gpu(gpu).tdp_w,
            s["server_power_overhead"],
            s["pue"],
            s["electricity_usd_per_kwh"],
            s["hosting_usd_per_kw_month"],
            s["staff_usd_per_gpu_year"],
        )
        assert float(tco.owned(s, gpu).total) == pytest.approx(float(direct.total))
        assert float(tco.opex(s, gpu).total) == pytest.approx(float(direct.opex))
        assert float(tco.rented(s, gpu)) == pytest.approx(
            s[f"rent_{gpu.lower()}_usd_per_gpu_hour"] * (1 + s["rental_overhead_fraction"])
        )
    # A case's own terms replace the scenario's: 3 years straight line is price x 1.15 / 3 a year.
    three = tco.owned(s, "B300", years=3, rate=0.0)
    assert float(three.capital) * units.HOURS_PER_YEAR == pytest.approx(s["server_b300_usd_per_gpu"] * 1.15 / 3)
    with pytest.raises(ValueError, match="mode"):
        tco.hourly(s, "A100", "leased")
    # Vectorised: arrays of draws in, arrays out.
    draws = scenario.sample(["server_b300_usd_per_gpu", "pue"], 50, 1)
    assert tco.owned(draws, "B300").total.shape == (50,)


def test_cost_per_useful_pflop_day_and_same_task_ratio():
    s = _s()
    new, old = "B300", "A100"
    # Same utilisation and goodput on both sides: the ratio of useful-compute costs is the price ratio
    # over the speed-up, whatever the utilisation.
    ratio = tco.pflop_day_cost(s, new, "owned") / tco.pflop_day_cost(s, old, "owned")
    assert float(ratio) == pytest.approx(float(tco.same_task_ratio(s, "owned")))
    assert float(tco.same_task_ratio(s, "owned")) == pytest.approx(float(tco.price_ratio(s)) / s[tco.SPEEDUP])
    assert float(tco.same_task_ratio(s, "rented", 2.5)) == pytest.approx(float(tco.price_ratio(s, "rented")) / 2.5)
    # Hand check of the PFLOP-day: 24 h x cost x 1e15 / (312e12 x 0.51 x 0.7 x 0.9) FLOP/s.
    one = _s(
        rent_a100_usd_per_gpu_hour=1.0, rental_overhead_fraction=0.0, mfu_a100_bf16=0.5, utilisation=0.8, goodput=1.0
    )
    assert float(tco.pflop_day_cost(one, old, "rented")) == pytest.approx(24 * 1e15 / (312e12 * 0.5 * 0.8))
    # GPUs for a workload: one PFLOP-day a day of useful compute needs 1e15 / useful FLOP/s GPUs.
    gpus = tco.workload_gpus(one, old, units.DAYS_PER_MONTH)
    assert float(gpus) == pytest.approx(1e15 / (312e12 * 0.5 * 0.8))


def test_payback_against_each_baseline_by_hand():
    s = _s(
        server_b300_usd_per_gpu=50_000.0,
        network_storage_fraction=0.2,
        rent_a100_usd_per_gpu_hour=1.0,
        rental_overhead_fraction=0.25,
        speedup_b300_a100=10.0,
    )
    opex_new = float(tco.opex(s, "B300").total)
    # Rent: 60,000 USD / (730.5 h x (10 x 1.25 - opex)).
    want = 60_000 / (units.HOURS_PER_MONTH * (10 * 1.25 - opex_new))
    assert float(tco.payback(s, "rent")) == pytest.approx(want)
    china = 60_000 / (
        units.HOURS_PER_MONTH * (10 * s["rent_a100_china_cny_per_gpu_hour"] * 1.25 / s["usd_cny"] - opex_new)
    )
    assert float(tco.payback(s, "rent in China")) == pytest.approx(china)
    keep = 60_000 / (units.HOURS_PER_MONTH * (10 * float(tco.opex(s, "A100").total) - opex_new))
    assert float(tco.payback(s, "keep owned")) == pytest.approx(keep)
    # At the documents' own 2.5x the same purchase takes far longer; slower than the opex, never.
    assert float(tco.payback(s, "rent", 2.5)) > 4 * want
    assert np.isinf(tco.payback(s, "rent", 0.01))
    with pytest.raises(ValueError, match="baseline"):
        tco.payback(s, "lease")


def test_training_cost_and_waste_shares():
    s = _s(tokens_per_param=20.0, goodput=1.0)
    # Chinchilla-optimal 7B: 6 x 7e9 x 1.4e11 FLOP at 312 TFLOP/s x MFU.
    hours = 6 * 7e9 * 1.4e11 / (312e12 * s[tco.OLD_MFU] * units.SECONDS_PER_HOUR)
    assert float(tco.training_cost(s, 7e9, "A100")) == pytest.approx(hours * float(tco.owned(s, "A100").total))
    assert float(tco.training_cost(s, 14e9, "A100")) == pytest.approx(4 * float(tco.training_cost(s, 7e9, "A100")))
    assert float(tco.wasted_share(_s(utilisation=0.5, goodput=0.8, mfu_a100_bf16=0.5))) == pytest.approx(0.8)
    assert float(tco.idle_share(_s(utilisation=0.5, goodput=0.8))) == pytest.approx(0.6)
