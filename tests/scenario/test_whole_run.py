"""Issue 33: what real runs do beyond the step-time model (training stacks, the planner's pick, the
campaign overhead of a whole run), each fitted on published runs and scored by grouped cross-validation;
architectures, precisions and pinned layouts a plan takes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses import data
from analyses.models import flops, layouts, performance, step_time_fit
from analyses.models import plan as pl
from analyses.models.training_run import generic_layers_and_width
from analyses.models.uncertainty import combined_errors, error_band
from analyses.scenario import bands, calibration, planning, stacks, whole_run


def test_rows_that_share_a_source_fall_in_one_group():
    """Llama 3.1 405B's whole run cites the model card and the Llama 3 paper, whose throughput rows cite
    the paper alone: one group, so leaving the paper out leaves the whole run out too."""
    groups = calibration.cv_groups(pd.Series(["a; b", "b", "c", "d; c", "e"]))
    assert groups == ["a", "a", "c", "c", "e"]
    runs = calibration.runs().set_index("id")
    assert runs.loc["llama31-405b-run", "cv_group"] == runs.loc["llama3-405b-8192-cp1", "cv_group"]


def test_stack_efficiency_is_a_shrunk_geometric_mean_anchored_on_the_family():
    """Hand-worked: family f with stacks x (rows ln 0.6, ln 0.6) and y (no row); k = 3. The family's
    ln e = 2 ln 0.6 / (2 + 3); x's = (2 ln 0.6 + 3 ln e_f) / 5; y takes the family's; the reference 1;
    the pooled stack every row, the reference's included."""
    r = np.log([0.6, 0.6, 1.0])
    eff = step_time_fit.stack_efficiencies(
        r, ["x", "x", "ref"], {"ref": "r", "x": "f", "y": "f", "all": "u"}, "ref", "all", prior_rows=3
    )
    ln_f = 2 * np.log(0.6) / 5
    assert eff["ref"] == 1.0
    assert eff["y"] == pytest.approx(np.exp(ln_f))
    assert eff["x"] == pytest.approx(np.exp((2 * np.log(0.6) + 3 * ln_f) / 5))
    assert eff["all"] == pytest.approx(np.exp(r.sum() / 6))


def test_published_stacks_reach_what_their_runs_show():
    """Fitted on every published step-time row: MegaScale's stack is faster than Megatron's (its paper:
    +17% to +35% on the same 175B recipe, Table 2), torchtitan's and DeepSpeed's slower; a stack with no
    run of its own (GPT-NeoX, Hugging Face/FSDP) takes its family's; aliases name stacks."""
    eff = calibration.stack_efficiencies()
    assert eff["megatron"] == 1.0
    assert 1.05 < eff["megascale"] < 1.35
    assert 0.8 < eff["torchtitan"] < 0.97 and 0.8 < eff["deepspeed"] < 0.97
    assert eff["gpt-neox"] != 1.0 and eff["fsdp"] != 1.0
    assert stacks.stack_id("NeMo") == "megatron" and stacks.stack_id("llm-foundry") == "mosaic"
    with pytest.raises(KeyError, match="known: megatron"):
        stacks.stack_id("jax")


def test_grouped_cross_validation_errors_are_larger_than_in_sample():
    """The steady-state band a plan carries is grouped cross-validation, not in-sample residuals."""
    p = calibration.predictions()
    assert np.median(np.abs(p["log_error"])) > np.median(np.abs(p["log_error_in_sample"]))
    lo, hi = error_band(calibration.errors())
    assert np.exp(lo) < 1 < np.exp(hi) < 1.6


def test_multi_head_latent_attention_counts_its_head_sizes():
    """DeepSeek-V3: 128 heads of query-key 192 (128 + 64 rotary) and value 128 on a 7,168 residual:
    PaLM's H·Q is 20,480 (mean head 160), nearly three times d_model; Qwen3-235B's 64 heads of 128 give
    8,192 on a 4,096 residual; a sliding window of 4,096 on 32k sequences counts 8,192 keys."""
    assert flops.attention_width(7168, 128, 192, 128) == 20480
    assert flops.attention_width(4096, 64, 128) == 8192
    assert flops.attention_width(4096) == 4096
    assert flops.attention_span(32768, 4096) == 8192 and flops.attention_span(8192, 0) == 8192
    runs = calibration.runs().set_index("id", drop=False)
    arrays = calibration.inputs(runs.loc[["dsv3-h800-2048"]])
    assert arrays["attention_width"][0] == 20480 and arrays["moe_layers"][0] == 58


def test_the_generic_shape_has_heads_tensor_parallelism_divides():
    """Widths in multiples of 1,024 (128-wide heads in multiples of 8), as real models: 7B gets 4,096
    (Llama 2 7B: 4,096, 32 layers), 175B 12,288 and 96 layers (GPT-3), 15.5B no longer 43 heads; a
    256k vocabulary takes its embeddings off before the layers are counted."""
    for n in (1e9, 1.5e9, 7e9, 15.5e9, 70e9, 130e9, 175e9, 405e9):
        layers, width = generic_layers_and_width(n)
        assert width % 1024 == 0 and (width // 128) % 8 == 0 and layers >= 2
    assert generic_layers_and_width(7e9)[1] == 4096
    assert generic_layers_and_width(175e9) == (97, 12288)
    assert generic_layers_and_width(15.7e9, vocab=256_000)[0] < generic_layers_and_width(15.7e9)[0]
    shape = pl.Shape.from_params(15.5e9)
    assert all(shape.heads % t == 0 for t in (2, 4, 8))


@pytest.fixture(scope="module")
def req() -> pl.Request:
    return planning.request(planning.shape("llama2-7b"), 1e11, 60, gpus=("A100",), min_gpus=64, max_gpus=64)


def test_a_pinned_layout_is_the_only_one_and_an_exact_count_is_kept(req):
    """Pinning tp, pp, micro-batch and recompute leaves the search the rest; min = max GPUs gives that count."""
    pinned = req.with_(pinned=(("tp", 2), ("pp", 2), ("micro_batch", 1), ("recompute", "none")))
    frame = pl.candidates(pinned, "A100")
    assert len(frame) and (frame["tp"] == 2).all() and (frame["pp"] == 2).all() and (frame["n_gpus"] == 64).all()
    assert set(frame["recompute"]) == {"none"} and (frame["micro_batch"] == 1).all()
    ev = planning.evaluate(pinned, "A100", frame.iloc[:1])
    assert ev["mem_bytes"].iloc[0] > 0
    with pytest.raises(pl.PlanError, match="tensor parallelism must divide"):
        req.with_(pinned=(("tp", 3),))
    with pytest.raises(pl.PlanError, match="no layout of 64-64 A100 GPUs"):
        pl.candidates(req.with_(pinned=(("dp", 128),)), "A100")


def test_a_stack_without_model_parallelism_searches_data_parallelism_only(req):
    """MosaicML's trainer shards with FSDP (ZeRO-3) and splits no model: its plans search only that."""
    mosaic = planning.request(
        planning.shape("llama2-7b"), 1e11, 60, gpus=("A100",), min_gpus=64, max_gpus=64, stack="llm-foundry"
    )
    assert mosaic.stack == "mosaic" and mosaic.stack_efficiency == calibration.stack_efficiency("mosaic")
    frame = pl.candidates(mosaic, "A100")
    assert set(frame["tp"]) == {1} and set(frame["pp"]) == {1} and set(frame["zero_stage"]) == {3}
    assert req.stack == "unspecified" and req.stack_efficiency == calibration.stack_efficiency("unspecified")


def test_fp16_keeps_bf16s_peak_and_memory():
    """FP16 mixed precision: the A100's and H100's FP16 tensor peak is their BF16 one, and its states
    are BF16 mixed precision's (loss scaling costs no memory)."""
    for gpu in ("A100", "H100"):
        assert data.gpu(gpu).peak_flops("fp16") == data.gpu(gpu).peak_flops("bf16")
    assert pl.MEMORY_RECIPE["fp16"] == pl.MEMORY_RECIPE["bf16"]
    base = planning.request(planning.shape("llama2-7b"), 1e11, 60, gpus=("A100",), min_gpus=64, max_gpus=64)
    a = planning.evaluate(base, "A100")
    b = planning.evaluate(base.with_(precision="fp16"), "A100")
    assert np.allclose(a["days"], b["days"]) and np.allclose(a["mem_bytes"], b["mem_bytes"])


def test_campaign_overhead_is_fitted_on_whole_runs_apart():
    """The campaign overhead comes from the whole-run rows alone (GPU-hours for stated tokens), never
    below none; each whole run's error is of a fit that did not see its group."""
    w = whole_run.whole_runs()
    assert len(w) >= 8 and 0 <= whole_run.campaign_overhead() < 0.3
    assert (w["campaign_cv"] >= 0).all() and not np.allclose(w["predicted"], w["predicted_in_sample"])
    assert set(w["how"]) == {"its own layout", "the planner's pick"}


def test_a_plan_carries_its_kind_of_band():
    """A plan that pins its layout takes the band of the published layouts, one that does not the band
    at the planner's pick, which is wider (for a model of 100B or more, where layouts differ most)."""
    large = bands.path(False, 405e9, "H100")
    pinned = error_band(bands.steady_errors(large, True, True)[0])
    picked = error_band(bands.steady_errors(large, False, True)[0])
    assert picked[1] - picked[0] > pinned[1] - pinned[0]


def test_layouts_search_space_is_unchanged_for_the_bench():
    """The default search (no pins, every ZeRO stage, model parallelism) still lists the bench's layouts."""
    frame = layouts.candidates(
        "B300", layers=80, heads=80, sequences_per_step=2048, min_gpus=8, max_gpus=4096, domain_gpus=8, seq_len=2048
    )
    assert set(frame["recompute"]) == {"selective", "full"} and len(frame) > 10_000


def test_new_rows_keep_the_first_score_the_model_gave_them_before_any_refit():
    """Issue 33 item 7: 30 rows added in round 2 carry the error the model had on them before it was
    refitted (tools/first_score.py, model at commit ca7da11): at least 15 whole runs and 10 steady-state
    rows. The record is the table's, never recomputed: a row now in the table cannot be scored again as new."""
    runs = data.published_runs()
    scored = runs[runs["first_score_error"].notna()]
    whole = scored["gpu_hours"].notna() | scored["wall_clock_days"].notna()
    assert whole.sum() >= 15 and (~whole).sum() >= 10
    assert scored["first_scored"].str.contains("ca7da11").all()
    row = scored.set_index("id").loc["llama1-7b-run"]
    assert row["first_score_error"] == pytest.approx(0.0227, abs=1e-4)  # 84,300 planned against 82,432 GPU-hours
    with pytest.raises(ValueError, match="already in data/published_runs.csv"):
        whole_run.first_scores(runs[runs["id"] == "llama1-7b-run"])


def test_the_attention_kernel_is_a_property_of_the_run():
    """A run without FlashAttention (Megatron-LM 2021) is predicted with the materialised kernel's fitted
    efficiency, one with it with FlashAttention's; the planner searches only full recomputation for the
    former (every 2021-22 run used it) and its stack's micro-batch sizes."""
    runs = calibration.runs().set_index("id")
    assert runs.loc["meg21-t1-1.7b-32", "attention_kernel"] == "materialized"
    assert runs.loc["mosaic-mpt7b-h100-80gb-bf16-s2048-8", "attention_kernel"] == "flash"
    coef = calibration.coefficients()
    assert 0.1 < coef.e_attn_materialized < 0.6 and 0.1 < coef.e_attn < 0.8
    r = calibration.runs().set_index("id", drop=False).loc["meg21-t1-1.7b-32"].to_dict()
    old = whole_run.published_request(r, pinned=False)
    assert old.attention_kernel == "materialized" and set(pl.candidates(old, "A100")["recompute"]) == {"full"}
    assert set(pl.candidates(old, "A100")["micro_batch"]) <= {1, 2}  # Megatron's recipes
    req = planning.request(
        planning.shape("llama2-7b"), 1e11, 60, gpus=("A100",), min_gpus=64, max_gpus=64, stack="fsdp"
    )
    assert {1, 2, 4, 8} <= set(pl.candidates(req, "A100")["micro_batch"]) <= {1, 2, 4, 8, 16}  # FSDP recipes
    slow = req.with_(attention_kernel="materialized")
    layout = pl.candidates(req, "A100").iloc[:1]
    assert (
        planning.evaluate(slow, "A100", layout)["step_s"].iloc[0]
        > planning.evaluate(req, "A100", layout)["step_s"].iloc[0]
    )
    with pytest.raises(pl.PlanError, match="attention_kernel"):
        req.with_(attention_kernel="eager")


def test_a_whole_runs_band_carries_the_steady_state_and_the_campaign():
    """Hand-worked: steady errors ±0.1 and whole-run errors ±0.5 (robust spread 0.5 against 0.1): the
    campaign adds a spread of at least sqrt(0.5² − 0.1²) ≈ 0.49 and the band holds 90% of the whole runs."""
    steady = np.array([-0.1, 0.0, 0.1] * 10)
    whole = np.array([-0.5, 0.0, 0.5] * 10)
    sample, sigma = combined_errors(steady, whole)
    lo, hi = error_band(sample)
    assert sigma >= np.sqrt(0.5**2 * 1.4826**2 - 0.1**2 * 1.4826**2) - 1e-9
    assert np.mean((whole >= lo) & (whole <= hi)) >= 0.9 and lo <= -0.1 and hi >= 0.1


def test_shared_experts_count_as_the_dense_part_a_token_always_uses():
    """A shared expert processes every token, so it belongs with attention and the dense layers in N_active's
    dense part, never among the routed experts that the expert-parallel ranks shard and the MoE GEMM
    efficiency applies to: the routed experts' parameters ``(N − N_active) / (1 − k/E)`` (from the published
    totals) equal each model's own architecture within 0.1%. DeepSeek-V3 (one shared expert, three dense
    layers, MLA): 58 MoE layers x 256 experts x 3 x 7,168 x 2,048 = 653.9B; Qwen3-235B (no shared expert):
    94 x 128 x 3 x 4,096 x 1,536 = 227.1B (each report's Table 1 or 2 shape)."""
    runs = calibration.runs().set_index("id")
    for run, moe_layers, experts, d, ffn in (
        ("dsv3-h800-2048", 58, 256, 7168, 2048),
        ("mb2602-qwen3-235b-a22b-h100-fp8-cs-256", 94, 128, 4096, 1536),
    ):
        r = runs.loc[run]
        routed = performance.routed_expert_params(
            r["params_total"], r["params_active"], r["n_experts"], r["experts_active"]
        )
        assert r["n_layers"] - (r["dense_layers"] if r["dense_layers"] == r["dense_layers"] else 0) == moe_layers
        assert float(routed) == pytest.approx(moe_layers * experts * 3 * d * ffn, rel=1e-3)
