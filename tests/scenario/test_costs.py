"""The cost models fed from the scenario (analyses.scenario.costs) and the generation ladder
(analyses.scenario.generations): every input read from the one scenario, the closed forms kept."""

from __future__ import annotations

import numpy as np
import pytest

from analyses import data, scenario, units
from analyses.models import tco, throughput
from analyses.scenario import costs, derivations, generations, operations


def _s(**over):
    return scenario.values() | over


def test_generations_and_mfu_follow_the_scenario_speedup():
    generations.check_pair()  # the scenario's speed-up compares the ladder's pair
    (new, new_prec), (old, old_prec) = generations.PAIR
    assert (new, old) == scenario.speedup_gpus(generations.SPEEDUP)
    s = _s()
    # Closed form of the guide: MFU_new = speed-up x peak_old x MFU_old / peak_new.
    want = (
        s[generations.SPEEDUP]
        * data.gpu(old).peak_flops(old_prec)
        * s[generations.OLD_MFU]
        / data.gpu(new).peak_flops(new_prec)
    )
    assert float(generations.mfu(s, new)) == pytest.approx(want)
    assert float(generations.mfu(s, old)) == pytest.approx(s[generations.OLD_MFU])
    # B300 FP8 (4.5 PFLOP/s dense) at 10.2x an A100 BF16 (312 TFLOP/s) at 51% MFU runs at 36% MFU.
    assert float(generations.mfu(_s(**{generations.SPEEDUP: 10.2, generations.OLD_MFU: 0.51}), new)) == pytest.approx(
        10.2 * 312 * 0.51 / 4500
    )
    with pytest.raises(KeyError, match="H100"):
        generations.achieved_flop_per_s(s, "H100")
    with pytest.raises(KeyError, match="H100"):
        generations.peak_flops("H100")


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
        assert float(costs.owned(s, gpu).total) == pytest.approx(float(direct.total))
        assert float(costs.opex(s, gpu).total) == pytest.approx(float(direct.opex))
        assert float(costs.rented(s, gpu)) == pytest.approx(
            s[f"rent_{gpu.lower()}_usd_per_gpu_hour"] * (1 + s["rental_overhead_fraction"])
        )
    # A case's own terms replace the scenario's: 3 years straight line is price x 1.15 / 3 a year.
    three = costs.owned(s, "B300", years=3, rate=0.0)
    assert float(three.capital) * units.HOURS_PER_YEAR == pytest.approx(s["server_b300_usd_per_gpu"] * 1.15 / 3)
    with pytest.raises(ValueError, match="basis must be one of"):
        costs.hourly(s, "A100", "leased")
    with pytest.raises(ValueError, match="mode"):
        costs.hourly(s, "B300", "leased")
    # Vectorised: arrays of draws in, arrays out.
    draws = scenario.sample(["server_b300_usd_per_gpu", "pue"], 50, 1)
    assert costs.owned(draws, "B300").total.shape == (50,)


def test_cost_per_useful_pflop_day_and_same_task_ratio():
    s = _s()
    new, old = "B300", "A100"
    # Same utilisation and goodput on both sides: the ratio of useful-compute costs is the price ratio
    # over the speed-up, whatever the utilisation.
    ratio = costs.pflop_day_cost(s, new, "owned") / costs.pflop_day_cost(s, old, "owned")
    assert float(ratio) == pytest.approx(float(costs.same_task_ratio(s, "owned")))
    assert float(costs.same_task_ratio(s, "owned")) == pytest.approx(
        float(costs.price_ratio(s)) / s[generations.SPEEDUP]
    )
    assert float(costs.same_task_ratio(s, "rented", 2.5)) == pytest.approx(float(costs.price_ratio(s, "rented")) / 2.5)
    # Hand check of the PFLOP-day: 24 h x cost x 1e15 / (312e12 x MFU x utilisation x goodput) FLOP/s, with
    # goodput the reliability model's (the one definition, operations.goodput).
    one = _s(rent_a100_usd_per_gpu_hour=1.0, rental_overhead_fraction=0.0, mfu_a100_bf16=0.5, utilisation=0.8)
    g = float(operations.goodput(one))
    assert 0.9 < g < 1
    assert float(costs.pflop_day_cost(one, old, "rented")) == pytest.approx(24 * 1e15 / (312e12 * 0.5 * 0.8 * g))
    # GPUs for a workload: one PFLOP-day a day of useful compute needs 1e15 / useful FLOP/s GPUs.
    gpus = costs.workload_gpus(one, old, units.DAYS_PER_MONTH)
    assert float(gpus) == pytest.approx(1e15 / (312e12 * 0.5 * 0.8 * g))


def test_payback_against_each_baseline_by_hand():
    s = _s(
        server_b300_usd_per_gpu=50_000.0,
        network_storage_fraction=0.2,
        rent_a100_usd_per_gpu_hour=1.0,
        rental_overhead_fraction=0.25,
        speedup_b300_a100=10.0,
    )
    opex_new = float(costs.opex(s, "B300").total)
    # Rent: 60,000 USD / (730.5 h x (10 x 1.25 - opex)).
    want = 60_000 / (units.HOURS_PER_MONTH * (10 * 1.25 - opex_new))
    assert float(costs.payback(s, "rent")) == pytest.approx(want)
    china = 60_000 / (
        units.HOURS_PER_MONTH * (10 * s["rent_a100_china_cny_per_gpu_hour"] * 1.25 / s["usd_cny"] - opex_new)
    )
    assert float(costs.payback(s, "rent in China")) == pytest.approx(china)
    keep = 60_000 / (units.HOURS_PER_MONTH * (10 * float(costs.opex(s, "A100").total) - opex_new))
    assert float(costs.payback(s, "keep owned")) == pytest.approx(keep)
    # At the documents' own 2.5x the same purchase takes far longer; slower than the opex, never.
    assert float(costs.payback(s, "rent", 2.5)) > 4 * want
    assert np.isinf(costs.payback(s, "rent", 0.01))
    with pytest.raises(ValueError, match="basis must be one of"):
        costs.payback(s, "lease")
    # The firm's own A100s at book value: a year before write-off (at 0% interest) their hour carries the
    # straight-line charge of the list price, list / life a year; once written off only the running cost.
    flat = s | {"a100_fleet_age_years": 4.0, "cost_of_capital": 0.0, "depreciation_years": 5.0}
    charge = flat["server_a100_list_usd_per_gpu"] * (1 + flat["network_storage_fraction"]) / 5.0 / units.HOURS_PER_YEAR
    keep = float(costs.old_hour_cost(flat, "keep owned"))
    assert float(costs.old_hour_cost(flat, "owned at book")) == pytest.approx(keep + charge)
    done = flat | {"a100_fleet_age_years": 5.5}
    assert float(costs.old_hour_cost(done, "owned at book")) == pytest.approx(keep)
    assert costs.fleet_basis("book") == "owned at book" and costs.avoidable_basis("book") == "keep owned"
    assert costs.fleet_basis("market") == costs.avoidable_basis("market") == "owned"


def test_training_cost_and_waste_shares():
    s = _s(tokens_per_param=20.0)
    g = float(operations.goodput(s))
    # Chinchilla-optimal 7B: 6 x 7e9 x 1.4e11 FLOP at 312 TFLOP/s x MFU x goodput.
    hours = 6 * 7e9 * 1.4e11 / (312e12 * s[generations.OLD_MFU] * g * units.SECONDS_PER_HOUR)
    assert float(costs.training_cost(s, 7e9, "A100")) == pytest.approx(hours * float(costs.owned(s, "A100").total))
    assert float(costs.training_cost(s, 14e9, "A100")) == pytest.approx(4 * float(costs.training_cost(s, 7e9, "A100")))
    half = _s(utilisation=0.5, mfu_a100_bf16=0.5)
    g = float(operations.goodput(half))
    assert float(costs.wasted_share(half)) == pytest.approx(1 - 0.5 * g * 0.5)
    assert float(costs.idle_share(half)) == pytest.approx(1 - 0.5 * g)


def test_the_ladders_achieved_flops_invert_to_the_speedup():
    s = _s(**{generations.SPEEDUP: 10.2, generations.OLD_MFU: 0.51})
    new, old = generations.NEW, generations.OLD
    ratio = throughput.achieved_ratio(
        generations.peak_flops(new), generations.mfu(s, new), generations.peak_flops(old), generations.mfu(s, old)
    )
    assert float(ratio) == pytest.approx(10.2)
    assert float(generations.achieved_flop_per_s(s, old)) == pytest.approx(312e12 * 0.51)


def test_the_scenario_speedup_implies_a_blackwell_mfu_published_runs_reach():
    """The scenario's B300 FP8 MFU is the published A100 MFU times the step-time model's speed-up (two
    independent sources): it lands within the published dense Blackwell FP8 runs (NVIDIA's tuned
    Megatron-Bridge recipes on B200/GB200/GB300, model-FLOP basis), at most 10% below the lowest."""
    runs = derivations.published_mfu()
    arch = data.published_runs().set_index("id").loc[runs["id"], "arch"].to_numpy()
    blackwell = runs[
        runs["gpu"].isin(["B200", "B300", "GB200", "GB300"]) & (runs["precision"] == "fp8") & (arch == "dense")
    ]
    assert len(blackwell) >= 5
    mfu = float(generations.mfu(_s(), generations.NEW))
    assert 0.9 * blackwell["mfu"].min() <= mfu <= blackwell["mfu"].max()


def test_the_ladder_lists_follow_the_data():
    """The chapters' GPU lists are rules over data/gpus.csv, not lists of names (a GPU added to the
    data appears in them; tests/scenario/test_new_gpu.py adds one)."""
    ladder = generations.names()
    assert ladder == data.gpu_names()
    launched = [data.gpu(g).launch_year for g in ladder]
    assert launched == sorted(launched)  # launch order
    assert generations.since(generations.FIRST_TENSOR_CORES) == ladder[ladder.index("V100") :]
    span = generations.documents_span()  # 8-GPU nodes, A100 to B300
    assert span[0] == generations.OLD and span[-1] == generations.NEW
    assert {"H100", "H200", "B200"} <= set(span) and not {"GB200", "GB300"} & set(span)
    variants = data.gpus().set_index("name")["variant_of"].fillna("")
    assert set(span) == {
        g
        for g in ladder[ladder.index("A100") : ladder.index("B300") + 1]
        if data.gpu(g).nvlink_domain_gpus == 8 and variants[g] not in ("A100", "B300")  # A100 40GB: the A100
    }
    priced = costs.priced()  # a system price and a neocloud rent each
    assert {"A100", "H100", "B200", "B300"} <= set(priced) and priced == [g for g in ladder if g in priced]
