"""The planner fed from the data and the scenario (analyses.scenario.planning) and its parts: layouts,
kernel efficiency, GPU-hour cost, evaluation, intervals, sensitivity.

Its chain must equal the book's models fed with the scenario, and it must reproduce a published run
(Llama 3.1 405B on 16,384 H100s) that its calibration has not seen.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses import data, scenario
from analyses.models import gpu_hour_cost, layouts, memory, pipeline, reliability, scaling, tco, uncertainty
from analyses.models import plan as pl
from analyses.scenario import calibration, planning
from analyses.units import GB, SECONDS_PER_DAY


@pytest.fixture(scope="module")
def s() -> dict[str, float]:
    return scenario.values()


@pytest.fixture(scope="module")
def req(s) -> pl.Request:
    return planning.request(shape=planning.shape("illustrative-100b"), tokens=2e12, deadline_days=30, s=s)


@pytest.fixture(scope="module")
def b300(req: pl.Request) -> pd.DataFrame:
    return planning.evaluate(req, "B300")


def _one(frame: pd.DataFrame, **layout) -> pd.Series:
    hit = frame
    for k, v in layout.items():
        hit = hit[hit[k] == v]
    assert len(hit) == 1, layout
    return hit.iloc[0]


LAYOUT = {"tp": 4, "pp": 8, "dp": 16, "zero_stage": 1, "micro_batch": 2, "virtual_stages": 2, "recompute": "full"}


# --------------------------------------------------------------------------------------------
# The request reads the scenario
# --------------------------------------------------------------------------------------------


def test_the_request_defaults_to_the_scenario(req, s):
    assert req.global_batch_tokens == s["batch_million_tokens"] * 1e6
    assert planning.request(shape=req.shape, tokens=1e12, deadline_days=1).s == s
    moved = req.with_(s={"restart_s": 60.0})
    assert moved.s["restart_s"] == 60.0 and moved.s["dp_overlap"] == s["dp_overlap"]


def test_supported_generations_have_a_cluster_and_prices_in_the_scenario(s):
    gpus = planning.supported_gpus()
    assert {"A100", "H100", "B200", "B300"} <= set(gpus)
    assert "GB300" not in gpus  # an InfiniBand configuration but no price in the scenario
    for g in gpus:
        assert gpu_hour_cost.server_name(g) in s and gpu_hour_cost.rent_name(g) in s


# --------------------------------------------------------------------------------------------
# Layouts
# --------------------------------------------------------------------------------------------


def test_recomputation_closed_forms():
    # full recomputation: one more forward pass, 8ND hardware FLOPs for 6ND model FLOPs
    assert layouts.recompute_factor(np.array(["full"]), 2048, 12288)[0] == pytest.approx(4 / 3)
    # selective: 4bs²h extra against 72bsh² + 12bs²h; GPT-3 175B shape (s = 2048, h = 12288)
    assert layouts.selective_recompute_overhead(2048, 12288) == pytest.approx(2048 / (18 * 12288 + 3 * 2048))
    assert layouts.selective_recompute_overhead(2048, 12288) < 0.01


def test_data_parallel_sizes_are_powers_of_two_and_three_times_them():
    assert layouts.data_parallel_sizes(16) == [1, 2, 3, 4, 6, 8, 12, 16]
    assert layouts.data_parallel_sizes(1) == [1]


def test_every_fitting_layout_respects_the_search_rules(req, b300):
    assert (b300["n_gpus"] == b300["tp"] * b300["pp"] * b300["dp"]).all()
    assert (b300["tp"] <= 8).all() and (req.shape.heads % b300["tp"] == 0).all()
    assert ((b300["zero_stage"] == 0) | (b300["dp"] > 1)).all()
    assert b300["n_gpus"].between(req.min_gpus, req.max_gpus).all()
    assert ((b300["virtual_stages"] == 1) | (b300["pp"] * b300["virtual_stages"] <= req.shape.layers)).all()
    assert (b300["dp"] * b300["micro_batch"] <= req.global_batch_tokens / req.shape.seq_len).all()


def test_layout_labels():
    row = dict(LAYOUT, gpu="B300", n_gpus=512)
    assert layouts.label(row) == "TP4 PP8 DP16 ZeRO-1 mb2 v2 full"
    assert layouts.short_label(row) == "4·8·16 Z1"


# --------------------------------------------------------------------------------------------
# The chain equals the book's models fed with the scenario
# --------------------------------------------------------------------------------------------


def test_memory_of_a_layout_equals_the_memory_model(req, b300, s):
    row = _one(b300, **LAYOUT)
    sh = req.shape
    direct = memory.total_bytes_per_gpu(
        sh.n_params,
        sh.layers,
        sh.seq_len,
        2,
        sh.hidden,
        sh.heads,
        precision="bf16-mixed",
        zero_stage=1,
        dp=16,
        tp=4,
        pp=8,
        sequence_parallel=True,
        recompute="full",
        flash=True,
        overhead_bytes=s["framework_memory_gb"] * GB,  # the scenario's framework memory, in GB (not GiB)
    )["total"]
    assert row["mem_bytes"] == pytest.approx(float(direct), rel=1e-12)
    assert row["fits"] == (float(direct) <= data.gpu("B300").hbm_usable_bytes)


def test_step_time_goodput_and_cost_of_a_layout_equal_the_models(req, b300, s):
    row = _one(b300, **LAYOUT)
    sh = req.shape
    cfg = planning.cluster_config("B300")
    peak = data.gpu("B300").peak_flops("bf16")
    eff, _ = calibration.kernel_efficiency("B300", "bf16", overlap=s["dp_overlap"])
    st = scaling.step_time(
        params=sh.n_params,
        tokens_per_step=req.global_batch_tokens,
        n_gpus=512,
        compute_efficiency=eff * 3 / 4,
        tp=4,
        pp=8,
        virtual_stages=2,
        microbatch_tokens=2 * sh.seq_len,
        n_layers=sh.layers,
        d_model=sh.hidden,
        overlap=s["dp_overlap"],
        **scaling.cluster_kwargs(cfg, peak, nic_share=s["rdma_nic_share"], latency_us=s["rdma_latency_us"]),
    )
    nodes = 512 / 8
    load = req.global_batch_tokens * s["input_bytes_per_token"] / (1e9 * nodes)
    step = float(pipeline.step_time_s(st.step_s, load))
    assert row["step_s"] == pytest.approx(step, rel=1e-12)
    # checkpoint = bf16 weights + fp32 master and Adam moments (2 + 12 bytes per parameter, ZeRO Sec. 3.1)
    ckpt = 14.0 * sh.n_params / (1e9 * nodes)
    mtbf = float(reliability.per_gpu_mtbf_from_rate_s(s["interruptions_per_gpu_year"])) / 512
    tau = float(reliability.checkpoint_interval(ckpt, mtbf, method="daly"))
    good = float(reliability.goodput(tau, ckpt, mtbf, s["restart_s"]))
    assert row["goodput"] == pytest.approx(good, rel=1e-12)
    days = req.tokens / req.global_batch_tokens * step / good / SECONDS_PER_DAY
    assert row["days"] == pytest.approx(days, rel=1e-12)
    rent = s["rent_b300_usd_per_gpu_hour"] * (1 + s["rental_overhead_fraction"])
    assert row["cost_rented"] == pytest.approx(512 * days * 24 * rent, rel=1e-12)
    owned = tco.owned_cost_per_gpu_hour(
        s["server_b300_usd_per_gpu"],
        s["network_storage_fraction"],
        s["depreciation_years"],
        s["cost_of_capital"],
        data.gpu("B300").tdp_w,
        s["server_power_overhead"],
        s["pue"],
        s["electricity_us_usd_per_kwh"],
        s["hosting_usd_per_kw_month"],
        s["staff_usd_per_gpu_year"],
    ).total
    assert row["cost_owned"] == pytest.approx(512 * days * 24 * float(owned), rel=1e-12)


def test_the_parts_of_a_step_add_up(b300):
    parts = b300[list(pl.STEP_PARTS)].sum(axis=1)
    np.testing.assert_allclose(parts, b300["step_s"], rtol=1e-12)


def test_zero3_moves_one_and_a_half_times_the_data_of_an_all_reduce():
    # Rajbhandari et al. 2020, Sec. 7.2.2: 3Ψ for stage 3 against 2Ψ for a gradient all-reduce
    kw = dict(
        params=7e10,
        tokens_per_step=4e6,
        n_gpus=64,
        peak_flops=1e15,
        compute_efficiency=0.5,
        nvlink_bytes_per_s=4e11,
        nic_bytes_per_s=4e10,
    )
    z3 = scaling.step_time(dp_volume=1.5, latency_s=0.0, **kw).data_parallel_s
    plain = scaling.step_time(latency_s=0.0, **kw).data_parallel_s
    assert float(z3) == pytest.approx(1.5 * float(plain), rel=1e-12)


def test_scenario_assumptions_move_the_plan_the_way_they_should(req, b300):
    layout = pd.DataFrame([_one(b300, **LAYOUT)[list(layouts.COLUMNS)]])

    def days(**s):
        return float(planning.evaluate(req.with_(s=s), "B300", layout)["days"].iloc[0])

    base = days()
    assert days(restart_s=3600.0) > base > days(restart_s=60.0)
    assert days(interruptions_per_gpu_year=1.0) > base
    assert days(rdma_nic_share=0.5) > base
    assert days(dp_overlap=0.0) > base > days(dp_overlap=1.0)
    more_memory = planning.evaluate(req.with_(s={"framework_memory_gb": 20.0}), "B300", layout)["mem_bytes"].iloc[0]
    assert more_memory - _one(b300, **LAYOUT)["mem_bytes"] == pytest.approx(15e9)


# --------------------------------------------------------------------------------------------
# Cost per GPU-hour from the scenario
# --------------------------------------------------------------------------------------------


def test_gpu_hour_cost_names_and_missing_rents(s):
    assert gpu_hour_cost.rent_name("H100", "hyperscaler") == "rent_h100_hyperscaler_usd_per_gpu_hour"
    cost = gpu_hour_cost.per_gpu_hour(s, "B300", 1100.0, "hyperscaler", "china")
    assert np.isnan(cost["rented"]) and np.isfinite(cost["owned"])  # no B300 hyperscaler rent in the scenario
    with pytest.raises(ValueError, match="rent_class"):
        gpu_hour_cost.rent_name("B300", "spot")
    with pytest.raises(ValueError, match="region"):
        gpu_hour_cost.per_gpu_hour(s, "B300", 1100.0, "neocloud", "mars")


def test_price_draws_are_the_scenarios_so_the_tco_chapter_sees_the_same(req, s):
    """Each assumption has its own stream: the planner's draws of a price equal the draws any chapter
    makes with the same seed and count, whatever else it draws."""
    china = req.with_(electricity_region="china", mc_samples=2000)
    draws = planning.hourly_cost_draws(china, "B300")
    names = gpu_hour_cost.inputs("B300", "neocloud", "china", s)
    sample = scenario.sample([*names, "speedup_b300_a100", "utilisation"], 2000, china.seed)
    expected = gpu_hour_cost.per_gpu_hour(sample, "B300", data.gpu("B300").tdp_w, "neocloud", "china")
    np.testing.assert_array_equal(draws["owned"], expected["owned"])
    np.testing.assert_array_equal(draws["rented"], expected["rented"])
    assert {"depreciation_years", "cost_of_capital", "server_b300_usd_per_gpu"} <= set(names)


# --------------------------------------------------------------------------------------------
# Front, recommendation, intervals, breakdown, sensitivity
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def h100(req) -> pl.Plan:
    return planning.plan(req.with_(gpus=("H100",)))


def test_pareto_front_is_not_dominated(h100):
    lay = h100.layouts
    for _, f in h100.front.iterrows():
        dominated = (
            (lay["days"] <= f["days"])
            & (lay["cost"] <= f["cost"])
            & ((lay["days"] < f["days"]) | (lay["cost"] < f["cost"]))
        )
        assert not dominated.any()
    # and the recommendation is the cheapest layout that meets the deadline
    ok = lay[lay["meets_deadline"]]
    assert h100.recommended.iloc[0]["cost"] == pytest.approx(ok["cost"].min())
    assert h100.best["gpu"] == "H100" and h100.n_candidates >= len(lay)


def test_recommend_falls_back_to_the_fastest(h100):
    late = h100.layouts.assign(meets_deadline=False)
    assert pl.recommend(late)["days"] == late["days"].min()


def test_intervals_scale_one_sample_per_generation(req, h100):
    rows = planning.intervals(h100.request, h100.front)
    rec = rows.iloc[0]
    assert rec["days_lo"] < rec["days"] < rec["days_hi"]
    assert rec["cost_lo"] < rec["cost"] < rec["cost_hi"]
    # every layout of a generation scales the same draws: the ratios are the same on every row
    np.testing.assert_allclose(rows["days_hi"] / rows["days"], rows["days_hi"].iloc[0] / rows["days"].iloc[0])
    # and the interval is the validation errors' own: planned / (1 + error) at the quantiles
    errors = planning.validation_errors(req)
    factor = 1 / (1 + np.random.default_rng(req.seed + 1).choice(errors, size=req.mc_samples))
    lo, _, hi = uncertainty.interval(factor)
    assert rec["days_lo"] == pytest.approx(rec["days"] * lo) and rec["days_hi"] == pytest.approx(rec["days"] * hi)


def test_breakdown_adds_up_to_the_days(req, h100):
    row = h100.recommended.iloc[0]
    parts = pl.breakdown(row, req)
    assert list(parts["part"]) == list(pl.TIME_PARTS)
    assert parts["days"].sum() == pytest.approx(row["days"])
    assert (parts["days"] >= -1e-9).all()


def test_sensitivity_moves_each_assumption_across_its_scenario_range(req, h100):
    frame = planning.sensitivity(req, h100.best)
    assert frame["cost_swing"].is_monotonic_decreasing
    ranges = scenario.ranges(req.s)
    layout = pd.DataFrame([h100.best[list(layouts.COLUMNS)]])
    restart = frame.set_index("input").loc[f"{scenario.assumption('restart_s').label} (90% range)"]
    slow = planning.evaluate(req.with_(s={"restart_s": ranges["restart_s"].high}), "H100", layout).iloc[0]
    assert restart["days_b"] == pytest.approx(slow["days"])
    assert len(frame) == len(pl.SENSITIVITY_ASSUMPTIONS) + 3  # + kernel efficiency, checkpoint bandwidth, price


# --------------------------------------------------------------------------------------------
# Kernel efficiency and the published run it has not seen
# --------------------------------------------------------------------------------------------


def test_holdout_removes_the_run_from_the_calibration():
    cal = calibration.calibrations(("dubey2024-llama3",))
    assert not cal["source"].eq("dubey2024-llama3").any()
    eff, basis = calibration.kernel_efficiency("H100", "bf16", ("dubey2024-llama3",))
    assert basis.startswith("borrowed")
    a100 = calibration.calibrations()
    assert eff == pytest.approx(
        float(a100.loc[(a100["gpu"] == "A100") & (a100["precision"] == "bf16"), "compute_efficiency"].mean())
    )
    assert calibration.kernel_efficiency("H100", "bf16")[1].startswith("calibrated on")


def test_llama31_405b_planned_within_a_quarter_of_its_published_gpu_hours(s):
    """Llama 3.1 405B on 16,384 H100 (model card: 30.84M GPU-hours, data/models.csv), its 16M-token
    batch (Table 4), its own throughput held out of the calibration. The tolerance, 25%, is the
    step-time model's worst validation error rounded up; the planner must also find the paper's own
    tensor x pipeline split (TP8 PP16) by itself."""
    run = data.model("Llama 3.1 405B")
    bench = data.table("scaling_benchmarks").set_index("id").loc["llama3-405b-16384"]
    n = int(run["gpu_count"])
    req = planning.request(
        shape=planning.shape("llama31-405b"),
        tokens=float(run["training_tokens"]),
        deadline_days=365,
        gpus=("H100",),
        min_gpus=n,
        max_gpus=n,
        global_batch_tokens=float(bench["global_batch_seqs"] * bench["seq_len"]),
        holdout_sources=("dubey2024-llama3",),
        s=s,
    )
    best = planning.plan(req).best
    assert best["gpu_hours"] / run["gpu_hours"] - 1 == pytest.approx(0.0, abs=0.25)
    assert (best["tp"], best["pp"]) == (bench["tp"], bench["pp"]) == (8, 16)
    assert abs(planning.validation_errors(req)).max() <= 0.25


# --------------------------------------------------------------------------------------------
# Errors name the field
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"precision": "fp4"}, "precision"),
        ({"gpus": ("GB300",)}, "gpus"),
        ({"gpus": ()}, "gpus"),
        ({"gpus": ("A100",), "precision": "fp8"}, "precision"),
        ({"min_gpus": 64, "max_gpus": 8}, "max_gpus"),
        ({"max_gpus": 2**18}, "max_gpus"),
        ({"tokens": -1.0}, "tokens"),
        ({"deadline_days": 0}, "deadline_days"),
        ({"checkpoint_method": "weekly"}, "checkpoint_method"),
        ({"cost_basis": "leased"}, "cost_basis"),
        ({"compute_efficiency": 2.0}, "compute_efficiency"),
        ({"s": {"dp_overlap": 2.0}}, "dp_overlap"),
        ({"s": {"restart_s": -1.0}}, "restart_s"),
        ({"global_batch_tokens": 10.0}, "global_batch_tokens"),
        ({"mc_samples": 10}, "mc_samples"),
    ],
)
def test_bad_requests_name_the_field(req, changes, field):
    with pytest.raises(pl.PlanError) as err:
        req.with_(**changes)
    assert err.value.field == field
    assert f"'{field}'" in str(err.value)


def test_bad_shapes_name_the_field():
    with pytest.raises(pl.PlanError, match="'model_shape'"):
        planning.shape("gpt-9")
    with pytest.raises(pl.PlanError, match="'n_params'"):
        pl.Shape.from_params(0.0)
    generic = pl.Shape.from_params(3e10)
    assert generic.n_params == 3e10 and generic.hidden == generic.heads * 128
    with pytest.raises(pl.PlanError, match="'gpus'"):
        planning.cluster_config("V100")
