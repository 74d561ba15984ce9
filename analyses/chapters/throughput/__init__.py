"""Chapter ``throughput``: per-GPU training speed of B300 against A100, and the time-to-train anecdotes.

Checks every speed claim of document 000 (sections 2.1, 3, 4, 6) and document 001 (sections 2.1, 4):
"2-3x" and "2.5-3x effective throughput", "64 GPUs × 30 days -> 32 × 20", the 13B and 7B
anecdotes, "-60-70% training time", the case studies and "months to weeks".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Param, precision_rule
from analyses.models import throughput
from analyses.site.notebook import fmt, stated
from analyses.verdicts import Verdict, check

PRECISION_CHOICES = ("bf16", "fp8", "fp4")

SPEC = ChapterSpec(
    slug="throughput",
    title="Throughput and time-to-train",
    params=(
        Param("gpu_old", "str", "A100", "-", "the baseline GPU", choices=data.gpu_names),
        Param("precision_old", "str", "bf16", "-", "training precision on the baseline GPU", choices=PRECISION_CHOICES),
        Param("mfu_old", "float", 0.52, "fraction", "MFU on the baseline (Megatron 1T on A100: 52%)", 0.05, 0.9),
        Param("gpu_new", "str", "B300", "-", "the new GPU", choices=data.gpu_names),
        Param("precision_new", "str", "fp8", "-", "training precision on the new GPU", choices=PRECISION_CHOICES),
        Param(
            "mfu_new",
            "float",
            0.37,
            "fraction",
            "MFU on the new GPU (Megatron-Bridge 405B FP8 on B200: 37%)",
            0.05,
            0.9,
        ),
        Param("tokens_per_param", "float", 20.0, "tokens/parameter", "pretraining tokens per parameter", 1, 1000),
        Param("n_gpus", "int", 64, "GPUs", "cluster size for the time-to-train examples", 1, 100000),
        Param("finetune_gpus", "int", 8, "GPUs", "GPUs of the case-study fine-tune (one server)", 1, 1024),
        Param("tokens_per_sample", "float", 2048.0, "tokens", "tokens per fine-tuning corpus entry", 16, 1e6),
        Param("finetune_epochs", "float", 3.0, "epochs", "passes over the fine-tuning corpus", 1, 100),
    ),
    rules=(precision_rule("gpu_old", "precision_old"), precision_rule("gpu_new", "precision_new")),
)


def _peak(gpu: str, precision: str) -> float:
    return data.gpu(gpu).peak_flops(precision)


def expected_speedup(cfg: Mapping[str, Any]) -> float:
    """Per-GPU achieved-throughput ratio new/old: (peak·MFU)_new / (peak·MFU)_old."""
    return float(
        throughput.achieved_ratio(
            _peak(cfg["gpu_new"], cfg["precision_new"]),
            cfg["mfu_new"],
            _peak(cfg["gpu_old"], cfg["precision_old"]),
            cfg["mfu_old"],
        )
    )


def datasheet_ratio(cfg: Mapping[str, Any], precision_new: str | None = None) -> float:
    """Ratio of dense peaks new/old (new at ``precision_new`` or the configured precision)."""
    return _peak(cfg["gpu_new"], precision_new or cfg["precision_new"]) / _peak(cfg["gpu_old"], cfg["precision_old"])


def published_ratio_range(cfg: Mapping[str, Any]) -> tuple[float, float]:
    """Low/high per-GPU ratio from published model TFLOP/s: BF16 datasheet × equal MFU, and the
    best published FP8 model TFLOP/s of a Blackwell GPU (B200 ≈ B300 on FP8) over the best A100 row."""
    bench = data.table("scaling_benchmarks")
    tf = bench[bench["metric"] == "model_tflops_per_gpu"]
    a100 = tf[tf["gpu"] == "A100"]["value"].max()
    blackwell = tf[tf["gpu"].isin(["B200", "B300"]) & (tf["precision"] == "fp8")]["value"].max()
    low = datasheet_ratio(cfg, "bf16")  # same MFU, BF16 on both
    return min(low, blackwell / a100), max(low, blackwell / a100)


# --------------------------------------------------------------------------------------------
# Tables and charts
# --------------------------------------------------------------------------------------------

LADDER_GPUS = ("V100", "A100", "H100", "H200", "B200", "B300", "GB300")


def ladder(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Peak dense TFLOP/s per generation and precision, with measured/published achieved rates."""
    bench = data.table("scaling_benchmarks")
    tf = bench[bench["metric"] == "model_tflops_per_gpu"]
    micro = data.measurements("gpu_microbench_h200")
    rows = []
    for name in LADDER_GPUS:
        g = data.gpu(name)
        for prec in ("bf16", "fp8", "fp4"):
            peak = g.peak_flops_dense.get(prec if prec != "bf16" else "bf16") or (
                g.peak_flops_dense.get("fp16") if prec == "bf16" else None
            )
            if peak is None:
                continue
            pub = tf[(tf["gpu"] == name) & (tf["precision"] == prec)]["value"]
            meas = micro[(micro["gpu"] == name) & (micro["quantity"] == "matmul") & (micro["precision"] == prec)][
                "value"
            ]
            rows.append(
                {
                    "gpu": name,
                    "precision": prec,
                    "peak TFLOP/s": peak / 1e12,
                    "measured matmul TFLOP/s": meas.max() if len(meas) else np.nan,
                    "best published model TFLOP/s": pub.max() if len(pub) else np.nan,
                }
            )
    return pd.DataFrame(rows)


def ladder_chart(cfg: Mapping[str, Any]) -> alt.Chart:
    """Peak vs achieved per generation (log scale)."""
    frame = ladder(cfg).melt(["gpu", "precision"], var_name="kind", value_name="TFLOP/s").dropna()
    return (
        alt.Chart(frame)
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("gpu:N", sort=list(LADDER_GPUS), title=None),
            y=alt.Y("TFLOP/s:Q", scale=alt.Scale(type="log"), title="TFLOP/s per GPU (dense)"),
            color=alt.Color("precision:N"),
            shape=alt.Shape("kind:N", title=None),
            tooltip=["gpu", "precision", "kind", alt.Tooltip("TFLOP/s:Q", format=",.0f")],
        )
        .properties(width=520, height=300)
    )


CARDS = "000-4-128-a100-to-96-b300"  # the GPU counts of the 28 -> 11 days case study

ANECDOTES = (
    # claim id, label template (filled with the claim's stated values, see anecdote_label),
    # GPUs before / after value names (None = not stated), days names
    (
        "000-2.1-64x30-to-32x20",
        "000 §2.1: {gpus_before}×{days_before} d -> {gpus_after}×{days_after} d",
        "gpus_before",
        "gpus_after",
        "days_before",
        "days_after",
    ),
    (
        "001-2.1-64x30-to-32x20",
        "001 §2.1: {gpus_before}×{days_before} d -> {gpus_after}×{days_after} d",
        "gpus_before",
        "gpus_after",
        "days_before",
        "days_after",
    ),
    (
        "000-4-training-days-28-to-11",
        "000 §4: {gpus_before} A100 {days_before} d -> {gpus_after} B300 {days_after} d",
        None,
        None,
        "days_before",
        "days_after",
    ),
    (
        "000-2.1-13b-anecdote-days",
        "000 §2.1: {params}, {days_a100} d -> {days_b300} d",
        None,
        None,
        "days_a100",
        "days_b300",
    ),
    (
        "001-2.1-7b-anecdote-days",
        "001 §2.1: {params}, {days_a100} d -> {days_b300} d",
        None,
        None,
        "days_a100",
        "days_b300",
    ),
    (
        "001-4-finetune-5-to-2p8-days",
        "001 §4: fine-tune {days_before} d -> {days_after} d",
        None,
        None,
        "days_before",
        "days_after",
    ),
)


def billions(params: float) -> str:
    """A parameter count as the documents write it: 13e9 -> "13B"."""
    return f"{stated(params / 1e9)}B"


def gpu_days(g0: float, d0: float, g1: float, d1: float) -> str:
    """GPU-days before / after as the documents state them: "64×30 / 32×20 GPU-days"."""
    return f"{stated(g0)}×{stated(d0)} / {stated(g1)}×{stated(d1)} GPU-days"


def anecdote_label(cid: str, template: str) -> str:
    """Fill an ANECDOTES label template with the claim's stated values (the case study's GPU counts
    come from its companion claim; ``params`` prints as "13B")."""
    values = dict(data.claim(cid).values)
    if cid == "000-4-training-days-28-to-11":
        values = data.claim(CARDS).values | values
    text = {k: (billions(v) if k == "params" else stated(v)) for k, v in values.items()}
    return template.format_map(text)


def implied_speedups(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Per-GPU speed-up each anecdote implies (equal GPU counts where the document gives none)."""
    rows = []
    for cid, label, gb, ga, db, da in ANECDOTES:
        c = data.claim(cid)
        if cid == "000-4-training-days-28-to-11":
            cards = data.claim(CARDS)
            g0, g1 = cards.value("gpus_before"), cards.value("gpus_after")
        elif gb is None:
            g0 = g1 = 1.0
        else:
            g0, g1 = c.value(gb), c.value(ga)
        s = float(throughput.implied_per_gpu_speedup(g0, c.value(db), g1, c.value(da)))
        rows.append(
            {
                "claim": cid,
                "anecdote": anecdote_label(cid, label),
                "GPU counts stated": gb is not None or g0 != g1,
                "implied per-GPU speed-up": s,
            }
        )
    return pd.DataFrame(rows)


def speedup_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Implied per-GPU speed-ups against the documents' range, the model and the datasheets."""
    frame = implied_speedups(cfg)
    low, high = published_ratio_range(cfg)
    per_gpu = data.claim("000-2.1-per-gpu-2-3x")
    s_lo, s_hi = per_gpu.value("speedup_low_x"), per_gpu.value("speedup_high_x")
    span = f"{stated(s_lo)}-{stated(s_hi)}x"
    refs = pd.DataFrame(
        {
            "reference": [
                f"stated {span} (low)",
                f"stated {span} (high)",
                "expected (peak × MFU)",
                "datasheet BF16 ratio",
                "datasheet FP8/BF16 ratio",
            ],
            "x": [s_lo, s_hi, expected_speedup(cfg), datasheet_ratio(cfg, "bf16"), datasheet_ratio(cfg, "fp8")],
        }
    )
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("anecdote:N", sort=None, title=None),
            x=alt.X(
                "implied per-GPU speed-up:Q",
                scale=alt.Scale(type="log", domain=[1, 20]),
                title="per-GPU speed-up over A100 (×)",
            ),
            tooltip=["claim", alt.Tooltip("implied per-GPU speed-up:Q", format=".2f")],
        )
    )
    rules = alt.Chart(refs).mark_rule(strokeDash=[4, 3]).encode(x="x:Q", color=alt.Color("reference:N", title=None))
    return (bars + rules).properties(width=480, height=220)


def precision_speedups() -> pd.DataFrame:
    """Published low-precision training speed-ups and the matmul share of step time they imply."""
    frame = data.table("precision_speedups")[
        [
            "workload",
            "gpu",
            "n_gpus",
            "baseline_precision",
            "new_precision",
            "datasheet_peak_ratio",
            "speedup_low",
            "speedup_high",
            "source",
        ]
    ].copy()
    mid = (frame["speedup_low"] + frame["speedup_high"]) / 2
    frame["implied matmul share"] = throughput.matmul_share_from_speedup(mid, frame["datasheet_peak_ratio"])
    return frame


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def _ratio_claim(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    lo, hi = claim.value("speedup_low_x"), claim.value("speedup_high_x")
    exp = expected_speedup(cfg)
    p_lo, p_hi = published_ratio_range(cfg)
    bf16 = datasheet_ratio(cfg, "bf16")
    verdict = "consistent" if lo <= exp <= hi * 1.2 else "inconsistent"
    return Verdict(
        recomputed=f"expected {fmt(exp, 'x')} ({cfg['gpu_new']} {cfg['precision_new']} at {fmt(cfg['mfu_new'], pct=True)} MFU vs "
        f"{cfg['gpu_old']} {cfg['precision_old']} at {fmt(cfg['mfu_old'], pct=True)}); published {fmt(p_lo, 'x')}-{fmt(p_hi, 'x')}; "
        f"BF16 datasheet {fmt(bf16, 'x')}",
        verdict=verdict,
        reason=(
            "The range understates B300: even at BF16 with equal MFU it is "
            f"{fmt(bf16, 'x')} an A100, and published FP8 runs reach about {fmt(p_hi, 'x')}; structured sparsity "
            "plays no part in training."
            if verdict == "inconsistent"
            else "The stated range contains the per-GPU ratio expected from datasheet peaks and published MFU."
        ),
    )


check("000-2.1-per-gpu-2-3x")(_ratio_claim)


@check("001-2.1-throughput-2p5-3x")
def _per_gpu_001(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    v = _ratio_claim(claim, cfg)
    return Verdict(
        v.recomputed,
        v.verdict,
        v.reason + " B300 also drops dense INT8 tensor throughput, so INT8 cannot be the cause.",
    )


@check("000-3-table-throughput")
def _table(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    v = _ratio_claim(claim, cfg)
    pct_lo, pct_hi = claim.value("time_reduction_low_pct"), claim.value("time_reduction_high_pct")
    x_lo, x_hi = claim.value("speedup_low_x"), claim.value("speedup_high_x")
    s_lo = float(throughput.speedup_for_time_reduction(pct_lo / 100))
    s_hi = float(throughput.speedup_for_time_reduction(pct_hi / 100))
    cut_lo, cut_hi = (float(throughput.time_reduction(x, 1.0)) for x in (x_lo, x_hi))
    return Verdict(
        f"{v.recomputed}; -{stated(pct_lo)}..{stated(pct_hi)}% time needs {fmt(s_lo, 'x')}-{fmt(s_hi, 'x')} at equal GPU count",
        v.verdict,
        v.reason + f" Internally, {stated(x_lo)}-{stated(x_hi)}x cuts time by "
        f"{fmt(cut_lo * 100, sig=2)}-{fmt(cut_hi, pct=True, sig=2)}, so '-{stated(pct_hi)}%' needs {fmt(s_hi, 'x')}.",
    )


def _anecdote(claim: data.Claim, s: float, counts: str, cfg: Mapping[str, Any], extra: str = "") -> Verdict:
    exp = expected_speedup(cfg)
    ok = s <= exp * 1.1
    return Verdict(
        recomputed=f"implied per-GPU speed-up {fmt(s, 'x')} ({counts}); expected {fmt(exp, 'x')}",
        verdict="consistent" if ok else "implausible",
        reason=(
            f"The arithmetic holds and {fmt(s, 'x')} is within what B300 can deliver over A100; the anecdote itself cannot be checked.{extra}"
            if ok
            else f"It needs {fmt(s, 'x')} per GPU, above the {fmt(exp, 'x')} that peaks and published MFU allow."
        ),
    )


@check("000-2.1-64x30-to-32x20")
def _c64_000(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    s = float(
        throughput.implied_per_gpu_speedup(
            claim.value("gpus_before"), claim.value("days_before"), claim.value("gpus_after"), claim.value("days_after")
        )
    )
    cut = float(throughput.time_reduction(claim.value("days_before"), claim.value("days_after")))
    counts = gpu_days(*(claim.value(k) for k in ("gpus_before", "days_before", "gpus_after", "days_after")))
    return _anecdote(claim, s, f"{counts}; time cut {fmt(cut, pct=True)}", cfg)


@check("001-2.1-64x30-to-32x20")
def _c64_001(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    s = float(
        throughput.implied_per_gpu_speedup(
            claim.value("gpus_before"), claim.value("days_before"), claim.value("gpus_after"), claim.value("days_after")
        )
    )
    counts = gpu_days(*(claim.value(k) for k in ("gpus_before", "days_before", "gpus_after", "days_after")))
    return _anecdote(claim, s, counts, cfg)


@check("000-2.1-13b-anecdote-days")
def _c13b(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    s = claim.value("days_a100") / claim.value("days_b300")
    cut = float(throughput.time_reduction(claim.value("days_a100"), claim.value("days_b300")))
    ok = abs(cut * 100 - claim.value("reduction_pct")) < 1.0
    v = _anecdote(claim, s, f"equal GPU counts assumed; cut {fmt(cut, pct=True)}", cfg)
    return (
        v
        if ok
        else Verdict(
            v.recomputed,
            "inconsistent",
            f"{stated(claim.value('days_a100'))} -> {stated(claim.value('days_b300'))} days is a "
            f"{fmt(cut, pct=True)} cut, not the stated figure.",
        )
    )


@check("001-2.1-7b-anecdote-days")
def _c7b(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    s = claim.value("days_a100") / claim.value("days_b300")
    own = data.claim("001-2.1-throughput-2p5-3x")  # document 001's own per-GPU range
    return _anecdote(
        claim,
        s,
        "equal GPU counts assumed",
        cfg,
        f" At equal GPU counts {fmt(s, 'x')} sits below the document's own "
        f"{stated(own.value('speedup_low_x'))}-{stated(own.value('speedup_high_x'))}x.",
    )


@check("000-4-128-a100-to-96-b300")
def _cards(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    g0, g1 = claim.value("gpus_before"), claim.value("gpus_after")
    cut = 1 - g1 / g0
    ok = abs(cut * 100 - claim.value("card_reduction_pct")) < 0.5
    return Verdict(
        f"1 - {stated(g1)}/{stated(g0)} = {fmt(cut, pct=True)}",
        "consistent" if ok else "inconsistent",
        "The arithmetic holds; the case itself cannot be checked."
        if ok
        else f"{stated(g1)} of {stated(g0)} is not the stated reduction.",
    )


@check("000-4-training-days-28-to-11")
def _c28(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    cards = data.claim(CARDS)
    s = float(
        throughput.implied_per_gpu_speedup(
            cards.value("gpus_before"), claim.value("days_before"), cards.value("gpus_after"), claim.value("days_after")
        )
    )
    cut = float(throughput.time_reduction(claim.value("days_before"), claim.value("days_after")))
    counts = gpu_days(
        cards.value("gpus_before"), claim.value("days_before"), cards.value("gpus_after"), claim.value("days_after")
    )
    return _anecdote(claim, s, f"{counts}; cut {fmt(cut, pct=True)}", cfg)


def months_on(params: float, cfg: Mapping[str, Any], n_gpus: float, gpu: str, precision: str, mfu: float) -> float:
    """Months (30-day) to pretrain ``params`` at ``tokens_per_param`` on ``n_gpus``."""
    flops = throughput.training_flops(params, params * cfg["tokens_per_param"])
    return (
        float(throughput.time_to_train_s(flops, n_gpus, _peak(gpu, precision), mfu)) / throughput.SECONDS_PER_DAY / 30
    )


@check("000-2.1-100b-months-on-hundreds-of-gpus")
def _c100b(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    n = claim.value("params")
    lo = months_on(n, cfg, claim.value("gpus_high"), cfg["gpu_old"], cfg["precision_old"], cfg["mfu_old"])
    hi = months_on(n, cfg, claim.value("gpus_low"), cfg["gpu_old"], cfg["precision_old"], cfg["mfu_old"])
    ok = hi >= 1 and lo <= claim.value("duration_months_high")
    return Verdict(
        f"{fmt(lo, 'months', 2)} on {stated(claim.value('gpus_high'))} to {fmt(hi, 'months', 2)} on "
        f"{stated(claim.value('gpus_low'))} {cfg['gpu_old']} ({fmt(cfg['tokens_per_param'])} tokens/param)",
        "consistent" if ok else "inconsistent",
        f"On {cfg['gpu_old']} a compute-optimal run of this size does take months on hundreds of GPUs."
        if ok
        else "The recomputed duration is outside 'months'.",
    )


@check("000-6-months-to-weeks")
def _months_weeks(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    need = claim.value("training_time_before_order_days") / claim.value("training_time_after_order_days")
    exp = expected_speedup(cfg)
    return Verdict(
        f"months -> weeks needs about {fmt(need, 'x')} at equal GPU count; expected {fmt(exp, 'x')}",
        "consistent" if need <= exp else "implausible",
        f"{cfg['gpu_new']}'s per-GPU gain over {cfg['gpu_old']} is large enough to turn a month into a week or "
        f"less{_beyond_stated(exp)}."
        if need <= exp
        else f"The needed speed-up exceeds what {cfg['gpu_new']} delivers at these MFU values.",
    )


def finetune_days(cfg: Mapping[str, Any], params: float, samples: float, gpu: str, precision: str, mfu: float) -> float:
    """Days for a full fine-tune of ``samples`` corpus entries (``tokens_per_sample`` × ``finetune_epochs``)."""
    tokens = samples * cfg["tokens_per_sample"] * cfg["finetune_epochs"]
    flops = throughput.training_flops(params, tokens)
    return (
        float(throughput.time_to_train_s(flops, cfg["finetune_gpus"], _peak(gpu, precision), mfu))
        / throughput.SECONDS_PER_DAY
    )


@check("001-4-case-workload-7b-13b")
def _workload(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    hours = 24 * finetune_days(
        cfg,
        claim.value("params_high"),
        claim.value("new_samples_per_month_high"),
        cfg["gpu_old"],
        cfg["precision_old"],
        cfg["mfu_old"],
    )
    return Verdict(
        f"a month's new data on the {billions(claim.value('params_high'))} model: {fmt(hours, 'hours', 2)} on {cfg['finetune_gpus']} {cfg['gpu_old']}",
        "unverifiable",
        "The customer's workload is a private description; the book only notes that a few thousand entries a month is a small compute load.",
    )


@check("001-4-finetune-5-to-2p8-days")
def _finetune(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    work = data.claim("001-4-case-workload-7b-13b")
    days = finetune_days(
        cfg,
        work.value("params_high"),
        work.value("new_samples_per_month_high"),
        cfg["gpu_old"],
        cfg["precision_old"],
        cfg["mfu_old"],
    )
    factor = claim.value("days_before") / days
    return Verdict(
        f"{fmt(days * 24, 'hours', 2)} on {cfg['finetune_gpus']} {cfg['gpu_old']} for "
        f"{billions(work.value('params_high'))} × {stated(work.value('new_samples_per_month_high'))} entries; "
        f"{stated(claim.value('days_before'))} days is {fmt(factor, 'x')} that",
        "implausible" if factor > 10 else "consistent",
        f"A {stated(claim.value('days_before'))}-day fine-tune needs a corpus about {fmt(factor, 'x', 2)} larger than the several thousand entries the case describes "
        "(input: corpus tokens per fine-tune)."
        if factor > 10
        else "The durations fit the described corpus.",
    )


# --------------------------------------------------------------------------------------------
# Sentences of the chapter that depend on the numbers (computed, so they follow the parameters)
# --------------------------------------------------------------------------------------------

STATED_RANGE = "000-3-table-throughput"
WORKED_EXAMPLE = "000-2.1-64x30-to-32x20"
HUNDRED_B = "000-2.1-100b-months-on-hundreds-of-gpus"


def stated_range() -> tuple[float, float]:
    """The documents' stated per-GPU speed-up range of B300 over A100 (low, high)."""
    c = data.claim(STATED_RANGE)
    return c.value("speedup_low_x"), c.value("speedup_high_x")


def _beyond_stated(ratio: float) -> str:
    lo, hi = stated_range()
    if ratio > hi:
        return f", although that exceeds the documents' own {stated(lo)}-{stated(hi)}×"
    return ""


def peak_sentence(cfg: Mapping[str, Any]) -> str:
    """How the new GPU's dense peaks step up with precision, and where it differs from B200."""
    g = data.gpu(cfg["gpu_new"])
    parts = [f"On {g.name}, FP8 gives {fmt(g.peak_flops('fp8') / g.peak_flops('bf16'), 'x')} the dense BF16 peak"]
    try:
        parts.append(f"and FP4 {fmt(g.peak_flops('fp4') / g.peak_flops('fp8'), 'x')} the FP8 peak")
    except ValueError:
        pass
    return " ".join(parts) + "."


def sibling_sentence() -> str:
    """B300 against B200, precision by precision, from the datasheet table."""
    new, old = data.gpu("B300"), data.gpu("B200")
    same, gains = [], []
    for p in ("bf16", "fp8", "fp4"):
        ratio = new.peak_flops(p) / old.peak_flops(p)
        (same if abs(ratio - 1) < 1e-9 else gains).append((p.upper(), ratio))
    text = "B300's dense " + " and ".join(p for p, _ in same) + " peaks equal B200's" if same else "B300"
    if gains:
        text += "; it gains over B200 in " + ", ".join(f"{p} ({fmt(r, 'x')})" for p, r in gains) + " only"
    return text + "."


def worked_example() -> str:
    """The implied per-GPU speed-up of the documents' GPU-count anecdote, as arithmetic."""
    c = data.claim(WORKED_EXAMPLE)
    g0, d0, g1, d1 = (c.value(k) for k in ("gpus_before", "days_before", "gpus_after", "days_after"))
    s = float(throughput.implied_per_gpu_speedup(g0, d0, g1, d1))
    return f"{stated(g0)} × {stated(d0)} / ({stated(g1)} × {stated(d1)}) = {fmt(s)}"


def hundred_b_months(cfg: Mapping[str, Any]) -> tuple[float, float, float]:
    """Parameters of the documents' 100B model and its months on ``n_gpus`` old and new GPUs."""
    n = data.claim(HUNDRED_B).value("params")
    old = months_on(n, cfg, cfg["n_gpus"], cfg["gpu_old"], cfg["precision_old"], cfg["mfu_old"])
    new = months_on(n, cfg, cfg["n_gpus"], cfg["gpu_new"], cfg["precision_new"], cfg["mfu_new"])
    return n, old, new


def takeaways(cfg: Mapping[str, Any]) -> dict[str, str]:
    """The chapter's one-line conclusions, computed from the same numbers as the sections."""
    ps = precision_speedups()
    g = data.gpu(cfg["gpu_new"])
    lo, hi = stated_range()
    exp = expected_speedup(cfg)
    if exp > hi:
        stated_text = (
            f"at these MFU values the stated {stated(lo)}-{stated(hi)}× understates {cfg['gpu_new']}; "
            "it is the anecdotes that look modest"
        )
    elif exp < lo:
        stated_text = f"at these MFU values the stated {stated(lo)}-{stated(hi)}× overstates {cfg['gpu_new']}"
    else:
        stated_text = f"at these MFU values the expected ratio lies inside the stated {stated(lo)}-{stated(hi)}×"
    _, old, new = hundred_b_months(cfg)
    at_stated = old / hi
    weeks = "turns months into weeks" if old >= 1 > new else "does not turn months into weeks"
    months = (
        f"at these inputs the switch from {cfg['gpu_old']} to {cfg['gpu_new']} {weeks} "
        f"({fmt(old, 'months', 2)} to {fmt(new, 'months', 2)}); the documents' own {stated(hi)}× would give "
        f"{fmt(at_stated, 'months', 2)}"
    )
    return {
        "precision": (
            f"count a precision switch as about {fmt(ps.speedup_low.min(), 'x')} to "
            f"{fmt(ps.speedup_high.max(), 'x')} end to end, not the "
            f"{fmt(g.peak_flops('fp8') / g.peak_flops('bf16'), 'x')} of the dense peaks"
        ),
        "stated": stated_text,
        "months": months,
    }
