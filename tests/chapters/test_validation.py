"""The validation page: the step-time model against every published run, out of sample, with its 90% band."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses import data, scenario
from analyses.chapters import validation as ch
from analyses.chapters.validation import figures, text
from analyses.models.uncertainty import error_band
from analyses.scenario import bands, calibration, clusters, generations
from analyses.scenario import validation as val

# --------------------------------------------------------------------------------------------
# One FLOP definition: every published figure converted, against the sources' own formulas
# --------------------------------------------------------------------------------------------


def test_megatron_eq3_rows_convert_by_the_papers_formula(default):
    """Megatron-LM (Narayanan et al. 2021) prints TFLOP/s on Eq. 3: 96 l h^2 (1 + s/6h + V/16lh) per
    token, recomputation included. On the book's basis (6N + 12 l h s) the same run's TFLOP/s is the
    printed figure times the ratio of the two counts (N from the row, not 12 l h^2)."""
    conv = default.conversion.set_index("id")
    runs = data.published_runs().set_index("id")
    eq3 = runs[runs["flop_basis"] == "megatron-eq3"]
    assert len(eq3) >= 20
    for rid, r in eq3.iterrows():
        n, h, s, v = r["n_layers"], r["d_model"], r["seq_len"], r["vocab"]
        per_token_eq3 = 96 * n * h**2 * (1 + s / (6 * h) + v / (16 * n * h))
        book = 6 * r["params_active"] + 12 * n * h * s
        expected = r["reported_tflops_per_gpu"] * book / per_token_eq3
        assert conv.loc[rid, "model TFLOP/s"] == pytest.approx(expected, rel=0.01), rid
        # full recomputation is hardware work: HFU above MFU by the recomputed forward pass
        assert conv.loc[rid, "HFU"] > conv.loc[rid, "MFU"]


def test_mosaicml_mfu_is_already_on_the_books_basis(default):
    """MosaicML's benchmark tables print MFU as (6N + 12 L d s) x tokens/s / peak: the book's own
    definition, so its MFU comes back as printed (the peaks are the same datasheet values)."""
    conv = default.conversion.set_index("id")
    mosaic = [i for i in conv.index if i.startswith("mosaic-")]
    assert len(mosaic) >= 10
    for rid in mosaic:
        assert conv.loc[rid, "MFU"] == pytest.approx(conv.loc[rid, "printed MFU"], rel=0.02), rid


# --------------------------------------------------------------------------------------------
# Out of sample: declared calibration rows, leave-one-out, leave-one-source-out bands
# --------------------------------------------------------------------------------------------


def test_calibration_rows_are_declared_in_the_data_and_everything_else_validates(default):
    runs = calibration.step_time_rows()
    assert set(runs["role"]) == {"calibrate", "validate"}
    assert set(default.calibration_rows["id"]) == set(runs.loc[runs["role"] == "calibrate", "id"])
    assert len(default.calibration_rows) == (default.step["role"] == "calibrate").sum() < len(default.step) / 4


@pytest.mark.parametrize("group", ["mosaicml-llm-foundry-benchmarks", "megatron-bridge-perf-2602"])
def test_every_row_is_predicted_by_the_fit_that_left_its_group_out(default, group):
    """Grouped cross-validation: a row's error is that of the fit without every row sharing a source with
    it (core and stack efficiencies), never its in-sample residual. The one-step approximation agrees
    with a full refit without the group within 3% (measured: 1.1% and 2.7%)."""
    step = default.step.set_index("id")
    rows = calibration.step_time_rows()
    ids = rows.loc[rows["cv_group"] == group, "id"]
    refit = calibration.group_refit(group)
    assert np.allclose(step.loc[ids, "predicted"], refit, rtol=0.03)
    assert not np.allclose(step.loc[ids, "predicted"], step.loc[ids, "predicted_in_sample"], rtol=1e-3)


def test_a_rows_band_is_built_without_its_own_publication():
    """Hand-worked: sources a (errors 0, 0), b (1), c (2, 2). With three or fewer other errors the
    split-conformal 90% band is their range (rank k = ceil((n + 1) * 0.95) = n): row a's band is
    [1, 2] (b and c), b's [0, 2], c's [0, 1]."""
    frame = pd.DataFrame({"source": ["a", "a", "b", "c", "c"], "log_error": [0.0, 0.0, 1.0, 2.0, 2.0]})
    out = val.source_bands(frame)
    assert out[["band_lo", "band_hi"]].to_numpy().tolist() == [[1, 2], [1, 2], [0, 2], [0, 1], [0, 1]]


def test_the_conformal_band_takes_the_ranks_that_cover_the_level():
    """Split conformal (Lei et al. 2018): with n errors the 90% band runs from the (n + 1 − k)-th to the
    k-th smallest, k = ceil(0.95 (n + 1)): 100 errors 1..100 give 5 and 96 (plain quantiles: 5.95 and
    95.05); 19 or fewer give the extremes."""
    assert error_band(np.arange(1.0, 101.0)) == (5.0, 96.0)
    assert error_band(np.arange(1.0, 20.0)) == (1.0, 19.0)
    assert error_band(np.array([3.0])) == (3.0, 3.0)
    with pytest.raises(ValueError, match="at least one error"):
        error_band(np.array([]))


def test_issue_33_targets_by_grouped_cross_validation(default):
    """Every published row predicted by a fit that never saw its source (grouped cross-validation),
    steady state and whole runs apart (103 and 25 scored rows; phi-1.5's and phi-2's cards are listed,
    not scored: their figures disagree with their own report or ask 70% MFU of an A100). Steady state:
    median absolute error at most 15% at the printed layout (met: 12%) and at the planner's pick (met:
    12%), the 90% band of each run's class covering at least 80% (met: 91%). Whole runs: median at most
    15% (met: 14.3%, with DeepSeek's tokens-over-throughput figures compared with the steady state and the
    campaign overhead the median of the campaigns'), the band (steady state and campaign together) covers
    at least 90% of them (met: 92%). The worst error is over 40% (missed: Llama 3.1 8B's 1.46M GPU-hours,
    some 2.2 times its plan), and every row past it is named in the headline with its reason. The figures
    in sample are smaller, as they must be, and the previous model's larger."""
    h = default.headline
    assert h["rows"] == len(val.scored(pd.concat([default.step, default.whole])))
    assert h["steady_median"] <= ch.TARGET_MEDIAN and h["pick_median"] <= ch.TARGET_MEDIAN
    assert h["whole_median"] <= ch.TARGET_MEDIAN and h["whole_rows"] == 25
    assert 0.40 < h["whole_worst"] < 0.6  # the whole-run worst-error target is missed (see the docstring)
    assert h["steady_inside"] >= ch.TARGET_INSIDE and h["whole_inside"] >= 0.9
    assert h["steady_median_in_sample"] < h["steady_median"] and h["whole_median_in_sample"] < h["whole_median"]
    assert h["median"] <= ch.TARGET_MEDIAN < h["median_before"] and h["worst"] < h["worst_before"]
    assert default.met == {"median": True, "worst": h["worst"] <= ch.TARGET_WORST, "inside": True}
    assert not default.outliers.empty and (default.outliers["note"] != "").all()
    sentence = text.headline(default)
    assert all(i in sentence for i in default.outliers["id"])
    assert "grouped cross-validation" in sentence


def test_each_row_is_scored_at_the_planners_pick_too(default):
    """The validation scores the model twice: at each row's printed layout and at the layout the
    planner would pick for it (the layout its stack's recipes and its attention kernel allow, no factor
    fitted on the gap: round 1 multiplied every unpinned plan by 0.82). The median at the pick is about
    the median at the printed layouts (12% and 12%), but its tail is longer: a reader who pins no layout
    gets the wider band."""
    step = default.step
    assert step["predicted_pick"].notna().mean() > 0.95 and (step["pick_layout"] != "").mean() > 0.95
    h = default.headline
    assert abs(h["pick_median"] - h["steady_median"]) < 0.03 and h["pick_rows"] >= 90
    assert h["pick_worst"] > h["steady_worst"]


def test_every_miss_is_explained(default):
    """Every validation row outside its 90% band (step time, whole run or speed-up) says why."""
    assert not default.misses.empty
    assert (default.misses["note"].str.len() > 20).all(), default.misses.loc[default.misses["note"].str.len() <= 20, "id"]
    assert f"{len(default.misses)} of them carry their reason" in text.misses_sentence(default)
    # a speed-up's reason is the one of the run of its pair that misses
    r = default.ratios[~default.ratios["inside"] & (default.ratios["role"] == "validate")].iloc[0]
    new, old = r["id"].split(" / ")
    notes = default.step.set_index("id")["note"]
    assert any(notes[x] and notes[x] in r["note"] for x in (new, old))


def test_the_band_covers_about_what_it_claims(default):
    """The leave-one-source-out 90% band of the step-time rows covers 80-97% of them (a band that covered
    every row would be too wide, one under 80% too narrow)."""
    share = default.step["inside"].mean()
    assert 0.80 <= share <= 0.97
    lo, hi = default.band
    assert lo < 1 < hi


# --------------------------------------------------------------------------------------------
# The rows past the worst-error target, and what was checked before leaving them there
# --------------------------------------------------------------------------------------------


def _rows(*ids: str) -> tuple[pd.DataFrame, object]:
    rows = calibration.step_time_rows().set_index("id", drop=False).loc[list(ids)].reset_index(drop=True)
    return rows, calibration.predict(rows)


def test_a_published_run_is_split_into_the_same_micro_batches_for_its_time_and_its_memory():
    """A run that data/memory_measured.csv also measures is split into the same micro-batches by the
    step-time model: torchtitan's pipelined Llama 3.1 405B runs (Table 5) split the local batch of 32
    into as many micro-batches as pipeline stages (8 of 4), torchtitan's default; BLOOM's 2 sequences
    in 128 micro-batches; unpipelined torchtitan runs one micro-batch of the local batch."""
    from analyses.models import peak_memory as pm

    frameworks = data.memory_frameworks().set_index("framework")
    runs = calibration.runs().set_index("id")
    seen = {}
    for r in data.memory_measured().to_dict("records"):
        if not isinstance(r["run_id"], str) or r["run_id"] not in runs.index:
            continue
        k = pm.run_kwargs(r, frameworks.loc[r["framework"]])
        p = runs.loc[r["run_id"]]
        microbatches = p["global_batch_seqs"] / (p["model_dp"] * p["model_micro_batch"])
        assert (p["model_micro_batch"], microbatches) == (k["micro_batch"], k["microbatches"]), r["run_id"]
        seen[r["run_id"]] = (k["micro_batch"], k["microbatches"])
    assert seen["torchtitan-t5-3d-1f1b-512"] == seen["torchtitan-t5-3d-interleaved-512"] == (4, 8)
    assert seen["bloom-176b-384-steady"] == (2, 128) and seen["torchtitan-t3-fsdp-128"] == (2, 1)


def test_torchtitans_1f1b_run_pays_the_bubble_of_eight_micro_batches(default):
    """Narayanan et al. 2021 sec. 2.2: the 1F1B bubble is (p - 1)/m of the compute; with p = 8 stages and
    m = 8 micro-batches it is 7/8 (times the fitted multiplier), and the run is then predicted within
    30% (100 tokens/s per GPU published); at 32 micro-batches of one sequence it was 48% fast."""
    rows, step = _rows("torchtitan-t5-3d-1f1b-512")
    coef = calibration.coefficients()
    assert float(step.bubble_s[0]) == pytest.approx(coef.bubble * float(step.compute_s[0]) * 7 / 8)
    err = default.step.set_index("id").loc["torchtitan-t5-3d-1f1b-512", "error"]
    assert -0.30 < err < -0.15


def test_deepspeeds_2021_gathers_take_24_gb_per_s_from_its_own_measurement():
    """DeepSpeed issue #1174 (0.3.16, 8 A100 on NVLink): a 5.1B model's forward pass took 480 ms under
    ZeRO-3 and 60 ms under ZeRO-2; its 10.2 GB of fp16 weights were gathered in the 0.42 s between, about
    24 GB/s per GPU, a tenth of what NCCL moves over NVLink. Runs that name no implementation keep NCCL's."""
    assert calibration.zero3_gather_rate("deepspeed-zero3-2021") == pytest.approx(2 * 5.1e9 / 0.42)
    assert calibration.zero3_gather_rate("") == calibration.zero3_gather_rate(float("nan")) == np.inf
    named = calibration.runs().set_index("id")["zero3_gathers"].dropna()
    assert set(named) == {"deepspeed-zero3-2021"}
    assert all(i.startswith("meg21-t2-zero3-") for i in named.index) and len(named) == 6


def test_zero3_at_a_fixed_batch_loses_most_of_its_throughput_as_table_2_does(default):
    """Narayanan et al. 2021, Table 2: DeepSpeed ZeRO-3 at a fixed global batch takes the same step on 768
    and 1,536 A100s (66.7 s), so its per-GPU throughput halves (61.37 -> 30.68 tokens/s). With DeepSpeed's
    gathers at their measured 24 GB/s, synchronous (ZeRO sec. 7.2.2: the weights are gathered forward and
    backward whatever the GPU count), the model's step keeps 2 x 2 bytes x 174.6B / 24 GB/s = 28.7 s of
    gathering while its compute halves: it predicts a fall of 1.5x-1.7x for both models (published 2.0x),
    and every Table 2 ZeRO-3 row within 30%, five of six inside the band of their class (dense, 100B and
    over): the 175B one on 1,536 GPUs, 28% off, lies outside and its note says why."""
    rows, step = _rows(
        "meg21-t2-zero3-175b-768", "meg21-t2-zero3-175b-1536", "meg21-t2-zero3-530b-1120", "meg21-t2-zero3-530b-2240"
    )
    published = rows["tokens_per_s_per_gpu"].to_numpy()
    predicted = np.asarray(step.tokens_per_s_per_gpu)
    assert published[0] / published[1] == pytest.approx(2.0, rel=0.01)
    assert published[2] / published[3] == pytest.approx(2.04, rel=0.01)
    for fall in (predicted[0] / predicted[1], predicted[2] / predicted[3]):
        assert 1.5 < fall < 1.7
    rate = calibration.zero3_gather_rate("deepspeed-zero3-2021")
    gathers = 2 * 2 * rows["params_total"].to_numpy() / rate
    assert gathers[0] == pytest.approx(28.7, abs=0.1)
    # none of the gathering hidden; the reduce-scatter, an NCCL collective overlapped as fitted, adds little
    rest = np.asarray(step.dp_exposed_s) - gathers
    assert (rest > 0).all() and (rest < 0.1 * gathers).all()
    t = default.step.set_index("id")
    zero3 = t[t.index.str.startswith("meg21-t2-zero3-")]
    assert len(zero3) == 6 and (zero3["error"].abs() < 0.30).all() and zero3["inside"].sum() == 5
    assert zero3.loc[~zero3["inside"], "note"].str.contains("ZeRO-3").all()


def test_fsdp_moves_the_zero3_exchange_faster_than_one_nic_per_gpu():
    """Why the model keeps NCCL's two-level collectives rather than one NIC per GPU for ZeRO-3: MosaicML's
    MPT-13B on 64 H100 (PyTorch FSDP full shard) gathers and reduce-scatters 3 x 2 bytes x 12.85B = 77 GB
    per GPU in a published step of 0.85 s, 90 GB/s, above one 400 Gb/s NIC (47.5 GB/s at its achievable
    share): over one NIC per GPU the exchange alone would take 1.6 s. That flat reading would also fit Table 2's
    ZeRO-3 rows but makes this row 87% slow: DeepSpeed's ZeRO-3 of 2021 was slow by its own gathers
    (data/zero3_gathers.csv), not by the network."""
    rows, _ = _rows("mosaic-mpt13b-h100-80gb-bf16-s2048-64")
    r = rows.iloc[0]
    exchange = 3 * 2 * r["params_total"]
    published_step = r["global_batch_seqs"] * r["seq_len"] / r["n_gpus"] / r["tokens_per_s_per_gpu"]
    assert exchange == pytest.approx(77.1e9, rel=0.01) and published_step == pytest.approx(0.853, rel=0.01)
    nic = clusters.hardware("H100", "bf16")["nic_bytes_per_s"]
    assert exchange / published_step > 1.8 * nic


# --------------------------------------------------------------------------------------------
# The speed-up each claim reads
# --------------------------------------------------------------------------------------------


def test_the_scenarios_speedup_is_the_models_on_the_reference_workload(default):
    s = scenario.values()
    first = default.workloads.iloc[0]
    assert first["workload"] == default.reference
    assert first["speed-up"] == pytest.approx(s[generations.SPEEDUP], rel=1e-6)
    lo, hi, n = default.speedup_band
    assert n >= 10 and lo < 1 < hi
    assert (default.workloads["low (5%)"] < default.workloads["speed-up"]).all()
    assert (default.workloads["speed-up"] < default.workloads["high (95%)"]).all()
    # a smaller workload on fewer GPUs is a different speed-up, from the same model
    assert default.workloads["speed-up"].nunique() == len(default.workloads)


# --------------------------------------------------------------------------------------------
# The page: every parameter value, every figure and sentence
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", ["all", "validate", "calibrate"])
def test_every_figure_and_sentence_renders(rows, result):
    res = result(rows=rows)
    assert set(res.step_shown["role"]) == ({"calibrate", "validate"} if rows == "all" else {rows})
    for fn in (
        figures.conversion_table,
        figures.coefficient_table,
        figures.step_table,
        figures.whole_table,
        figures.ratio_table,
        figures.summary_table,
        figures.workload_table,
        figures.calibration_row_table,
    ):
        html = fn(res)._repr_html_()
        assert "<table" in html
    assert figures.mfu_chart(res).to_dict()["layer"]
    for fn in (text.headline, text.band_sentence, text.misses_sentence, text.speedup_sentence, text.mfu_caption):
        assert fn(res)
    assert ch.row_count() == len(data.published_runs())
    assert ch.share(np.array([0.1, -0.2, 0.5]), 0.2) == pytest.approx(2 / 3)


def test_sentence_branches(default):
    from dataclasses import replace

    clean = replace(default, outliers=default.outliers.iloc[:0], step=default.step.assign(inside=True),
                    whole=default.whole.assign(inside=True), ratios=default.ratios.assign(inside=True))  # fmt: skip
    assert text.outliers_clause(clean) == ""
    assert text.misses_sentence(clean) == "every validation row lies inside its band"
    assert "missed" in text.headline(default) and "met" in text.headline(default)


def test_bands_a_plan_carries_by_class_and_kind():
    """Issue 33's band rule (no band wider than x1.6 either side of the central figure), met where the data
    allow: a dense model under 100B on Ampere, Hopper or Blackwell with its stack named, its layout pinned or
    picked (measured on the step time x0.80-x1.43; whole run x0.79-x1.55), and a dense model of 100B or
    more at a pinned layout (x0.83-x1.35; whole run x0.65-x1.55). Not met at the planner's pick for a dense
    model of 100B or more (x0.89-x2.9: torchtitan's 405B demonstrations ran 1F1B with eight micro-batches and
    full recomputation, a layout 2-3 times slower than the pick) nor for a mixture of experts (three
    sources, pooled into every run and stretched to hold its own, x2.5 on Blackwell): there the plan says
    its band is wider than the rule. A whole run's band is never narrower than its steady state's."""
    table = bands.class_table().set_index(["plan", "layout", "stack"])
    for fam in ("Ampere", "Hopper", "Blackwell"):
        for layout in ("pinned", "picked"):
            r = table.loc[(f"dense, under 100B, {fam}", layout, "named")]
            assert r["band from"] == "dense, under 100B"
            for side in ("steady", "whole"):
                assert 1 / 1.6 <= r[f"{side} lo"] < 1 < r[f"{side} hi"] <= 1.6
            assert r["whole lo"] <= r["steady lo"] and r["whole hi"] >= r["steady hi"]
        large = table.loc[(f"dense, 100B and over, {fam}", "pinned", "named")]
        assert 1 / 1.6 <= large["whole lo"] and large["whole hi"] <= 1.6
        assert table.loc[(f"dense, 100B and over, {fam}", "picked", "named"), "steady hi"] > 2.0
    for fam in ("Hopper", "Blackwell"):
        moe = table.loc[(f"moe, 100B and over, {fam}", "picked", "named")]
        assert moe["band from"] == bands.ALL and moe["steady hi"] > 1.6
