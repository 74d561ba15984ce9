"""Checks of the throughput chapter: per-GPU speed-up claims and the training-time anecdotes.

Each check recomputes its claim from the scenario (``s``: the B300/A100 speed-up, the A100's MFU,
tokens per parameter, the fine-tune assumptions) and returns a :class:`~analyses.verdicts.Finding`;
the rule of the claim's kind decides the verdict (:mod:`analyses.verdicts`). Every check is
numpy-vectorised in ``s``, so the ledger evaluates the central scenario, the draws and the
one-input grids in one call.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import data, units
from analyses.models import throughput
from analyses.scenario import cases, generations
from analyses.scenario.generations import NEW, NEW_PRECISION, OLD, OLD_MFU, OLD_PRECISION, peak_flops, speedup
from analyses.units.formats import fmt, stated
from analyses.verdicts import Arithmetic, Credit, Finding, Reading, at_least, between, check, exactly, rounded

BLACKWELL = ("B200", "B300")  # B300's dense FP8 peak equals B200's: their published FP8 runs are one group
HUNDRED_B = "000-2.1-100b-months-on-hundreds-of-gpus"


@functools.cache
def datasheet_bf16_ratio() -> float:
    """B300/A100 dense BF16 peak ratio: the speed-up at equal MFU without FP8."""
    return data.gpu(NEW).peak_flops(OLD_PRECISION) / peak_flops(OLD)


@functools.cache
def best_published_ratio() -> float:
    """Best published Blackwell FP8 model TFLOP/s per GPU over the best published A100 row."""
    return throughput.best_published_ratio(data.table("scaling_benchmarks"), BLACKWELL, OLD, NEW_PRECISION)


def reading(claim: data.Claim) -> str:
    """The claim's reading of its vague words (``data/claims.csv``), or "" where it has none."""
    return claim.reading if isinstance(claim.reading, str) else ""


def _workload_basis(workload: str) -> str:
    """Where a workload's speed-up comes from, in words (the step-time model, on that workload)."""
    work = generations.model_workload(workload)
    if work is None:
        return generations.speedup_basis()
    return f"the step-time model calibrated on published runs, on {work.describe()}"


def _speedup_text(s: Mapping[str, Any], workload: str = "pretrain") -> str:
    return (
        f"expected {fmt(speedup(s, workload), 'x')} ({NEW} FP8 over {OLD} BF16, "
        f"{_workload_basis(workload)}); "
        f"BF16 datasheet {fmt(datasheet_bf16_ratio(), 'x')}; best published runs {fmt(best_published_ratio(), 'x')}"
    )


def documents_speedups(claim_id: str = "000-3-table-throughput") -> tuple[Reading, Reading]:
    """The documents' own per-GPU speed-up (000 §3: about 2.5-3x) as two findings' values to recompute at."""
    lo, hi = cases.stated_speedup(claim_id)
    return (Reading(f"{stated(lo)}×", value=lo), Reading(f"{stated(hi)}×", value=hi))


TRAINING_CREDITS = (Credit("fp8"), Credit("sparsity"))  # what the per-GPU claims credit: FP8 and structured sparsity


def _ratio_finding(claim: data.Claim, s: Mapping[str, Any], extra: str = "", credits: tuple[Credit, ...] = TRAINING_CREDITS) -> Finding:
    lo, hi = claim.value("speedup_low_x"), claim.value("speedup_high_x")

    def context(verdict: str) -> str:
        if verdict == "inconsistent":
            return (
                f"even at BF16 with equal MFU {NEW} runs {fmt(datasheet_bf16_ratio(), 'x')} an {OLD}, and structured "
                f"sparsity plays no part in training{extra}"
            )
        if verdict == "implausible":
            return f"at this speed-up {NEW} would not deliver the stated gain{extra}"
        return f"peaks and published MFU put {NEW} in this range{extra}"

    return Finding(
        stated=between(lo, hi),
        value=speedup(s, "pretrain"),
        unit="x",
        recomputed=lambda: _speedup_text(s),
        context=context,
        reading=reading(claim),
        credits=credits,
    )


@check("000-2.1-per-gpu-2-3x")
def check_per_gpu_2_3x(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.1: effective per-GPU training throughput 2-3x an A100."""
    return _ratio_finding(claim, s)


@check("001-2.1-throughput-2p5-3x")
def check_throughput_2p5_3x(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.1: effective training throughput about 2.5-3x an A100 (FP8/INT8, sparsity)."""
    return _ratio_finding(
        claim,
        s,
        f"; {NEW} also drops dense INT8 tensor throughput, so INT8 cannot be the cause",
        (Credit("fp8"), Credit("int8"), Credit("sparsity")),
    )


@check("000-3-table-throughput")
def check_table_throughput(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §3 table: about 2.5-3x per GPU, training time 60-70% shorter."""
    f = _ratio_finding(claim, s)
    x_lo, x_hi = claim.value("speedup_low_x"), claim.value("speedup_high_x")
    cut_lo, cut_hi = claim.value("time_reduction_low_pct"), claim.value("time_reduction_high_pct")
    cut_at_hi = 100 * float(throughput.time_reduction(x_hi, 1.0))
    need = float(throughput.speedup_for_time_reduction(cut_hi / 100))
    return Finding(
        stated=f.stated,
        value=f.value,
        unit="x",
        recomputed=lambda: (
            f"{_speedup_text(s)}; {stated(x_lo)}-{stated(x_hi)}× cuts time by "
            f"{fmt(float(throughput.time_reduction(x_lo, 1.0)), pct=True, sig=2)}-{fmt(cut_at_hi / 100, pct=True, sig=2)}, "
            f"and -{stated(cut_hi)}% needs {fmt(need, 'x')}"
        ),
        context=f.context,
        arithmetic=(
            Arithmetic(
                f"the time cut of {stated(x_lo)}-{stated(x_hi)}× (upper end)", between(cut_lo, cut_hi), cut_at_hi
            ),
        ),
        reading=f.reading,
        credits=f.credits,
    )


def _anecdote(claim: data.Claim, s: Mapping[str, Any], workload: str, extra: str = "") -> Finding:
    """A training-time anecdote: the per-GPU speed-up its days (and GPU counts) imply against the
    speed-up of its workload; nothing public records the deployment, so at best it is plausible."""
    a = cases.anecdote(claim.id)
    implied = a.gpu_days_ratio
    x = speedup(s, workload)
    counts = (
        f"{stated(a.gpus_before)}×{stated(a.days_before)} / {stated(a.gpus_after)}×{stated(a.days_after)} GPU-days"
        if a.gpus_before is not None
        else f"{stated(a.days_before)} -> {stated(a.days_after)} days, equal GPU counts assumed"
    )
    work = generations.model_workload(workload)  # the step-time model's description of it
    return Finding(
        stated=exactly(implied),
        value=x,
        unit="x",
        recomputed=lambda: (
            f"implied per-GPU speed-up {fmt(implied, 'x')} ({counts}); expected {fmt(x, 'x')}"
            + (f" for {work.describe()}" if work is not None else "")
        ),
        context=lambda v: (
            f"the deployment itself cannot be checked, and its implied speed-up is within what the hardware delivers{extra}"
            if v != "implausible"
            else f"it needs {fmt(implied, 'x')} per GPU, more than peaks and published MFU allow"
        ),
        reading=reading(claim),
        documents=documents_speedups(),
    )


def _cut(days_before: float, days_after: float) -> float:
    return 100 * float(throughput.time_reduction(days_before, days_after))


def _example(claim: data.Claim, arithmetic: tuple[Arithmetic, ...] = ()) -> Finding:
    """The documents' worked example (64 GPUs × 30 days -> 32 × 20): the per-GPU speed-up it implies
    against the same document's own per-GPU figure, which it illustrates."""
    a = cases.anecdote(claim.id)
    implied = a.gpu_days_ratio
    own = "000-2.1-per-gpu-2-3x" if claim.document.startswith("000") else "001-2.1-throughput-2p5-3x"
    lo, hi = cases.stated_speedup(own)
    # stated: the per-GPU figure the document writes (section 2.1); recomputed: what its example's GPU-days give
    return Finding(
        stated=between(lo, hi),
        value=implied,
        unit="x",
        recomputed=(
            f"{stated(a.gpus_before)}×{stated(a.days_before)} / {stated(a.gpus_after)}×{stated(a.days_after)} GPU-days = "
            f"{fmt(implied, 'x')} per GPU, against the document's own {stated(lo)}-{stated(hi)}× (section 2.1)"
        ),
        context=(
            "a worked example of the document's own per-GPU figure, which it reproduces; the per-GPU figure itself is "
            "judged in its own row"
        ),
        arithmetic=arithmetic,
        reading=reading(claim),
    )


@check("000-2.1-64x30-to-32x20")
def check_64x30_to_32x20_000(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.1: 64 GPUs × 30 days -> 32 × 20, half the cards and a third less time."""
    a = cases.anecdote(claim.id)
    return _example(
        claim,
        (
            Arithmetic(
                "the card cut", rounded(claim.value("gpu_reduction_pct")), 100 * (1 - a.gpus_after / a.gpus_before)
            ),
            Arithmetic("the time cut", rounded(claim.value("time_reduction_pct")), _cut(a.days_before, a.days_after)),
        ),
    )


@check("001-2.1-64x30-to-32x20")
def check_64x30_to_32x20_001(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.1: the same 64 × 30 -> 32 × 20 example, at the same accuracy."""
    return _example(claim)


@check("001-2.1-7b-anecdote-days")
def check_7b_anecdote_days(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.1: a 7B model from 28 days on A100 to 16 on B300."""
    lo, hi = cases.stated_speedup("001-2.1-throughput-2p5-3x")
    implied = cases.anecdote(claim.id).gpu_days_ratio
    below = implied < lo
    extra = (
        f"; at equal GPU counts {fmt(implied, 'x')} sits below the document's own {stated(lo)}-{stated(hi)}×"
        if below
        else ""
    )
    return _anecdote(claim, s, "pretrain-7b", extra=extra)


@check("000-2.1-13b-anecdote-days")
def check_13b_anecdote_days(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.1: a 13B model's training cycle from 22 days on A100 to 8 on B300."""
    return _anecdote(claim, s, "pretrain-13b")


@check("000-4-training-days-28-to-11")
def check_training_days_28_to_11(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: one full training from 28 days (128 A100) to 11 (96 B300)."""
    return _anecdote(claim, s, "recommender")


TIME_CUTS = {  # a stated cut of training time: the anecdote whose days it is the cut of
    "000-2.1-13b-time-cut-64pct": "000-2.1-13b-anecdote-days",
    "000-4-time-cut-61pct": "000-4-training-days-28-to-11",
}


@check(*TIME_CUTS)
def check_time_cut(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.1 and §4: the stated cut of the training time against the days stated beside it."""
    a = cases.anecdote(TIME_CUTS[claim.id])
    before, after = a.days_before, a.days_after
    cut = _cut(before, after)
    return Finding(
        stated=rounded(claim.value("reduction_pct")),
        value=cut,
        unit="%",
        recomputed=f"1 - {stated(after)}/{stated(before)} = {fmt(cut / 100, pct=True)}",
        context="the percentage follows from the days stated beside it; the days themselves are judged in their own row",
        reading=reading(claim),
    )


@check("000-4-128-a100-to-96-b300")
def check_128_a100_to_96_b300(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: 128 A100s replaced by 96 B300s, 25% fewer cards."""
    r = cases.recommender()
    cut = 100 * (1 - r.gpus_after / r.gpus_before)
    return Finding(
        stated=rounded(claim.value("card_reduction_pct")),
        value=cut,
        unit="%",
        recomputed=f"1 - {stated(r.gpus_after)}/{stated(r.gpus_before)} = {fmt(cut / 100, pct=True)}",
        context="the case itself cannot be checked",
    )


def hundred_b_months(claim: data.Claim, s: Mapping[str, Any]) -> tuple[Any, Any]:
    """Months of the claim's 100B pretraining on its most and fewest A100s (scenario tokens and MFU)."""
    n, peak = claim.value("params"), peak_flops(OLD)
    return tuple(
        throughput.pretrain_months(n, s["tokens_per_param"], claim.value(k), peak, s[OLD_MFU])
        for k in ("gpus_high", "gpus_low")
    )


@check("000-2.1-100b-months-on-hundreds-of-gpus")
def check_100b_months_on_hundreds_of_gpus(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.1: a 100B model can take months even on several hundred GPUs."""
    many, few = hundred_b_months(claim, s)
    return Finding(
        stated=between(claim.value("duration_months_low"), claim.value("duration_months_high")),
        value=np.sqrt(many * few),
        low=many,
        high=few,
        unit="months",
        recomputed=lambda: (
            f"{fmt(many, 'months', 2)} on {stated(claim.value('gpus_high'))} to {fmt(few, 'months', 2)} on "
            f"{stated(claim.value('gpus_low'))} {OLD}s at {fmt(s['tokens_per_param'])} tokens per parameter"
        ),
        context=f"a run of this size does take months on hundreds of {OLD}s",
        reading=reading(claim),
    )


@check("000-6-months-to-weeks")
def check_months_to_weeks(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §6: training time from months to weeks."""
    need = claim.value("training_time_before_order_days") / claim.value("training_time_after_order_days")
    lo, hi = cases.stated_speedup()
    x = speedup(s, "pretrain")
    return Finding(
        stated=at_least(need),
        value=x,
        unit="x",
        recomputed=lambda: f"a month to a week needs {fmt(need, 'x')} at equal GPU count; expected {fmt(x, 'x')}",
        documents=documents_speedups(),
        context=lambda v: (
            f"{NEW}'s per-GPU gain over {OLD} turns a month into a week, though the documents' own "
            f"{stated(lo)}-{stated(hi)}× would not"
            if v == "consistent"
            else f"the needed speed-up exceeds what {NEW} delivers in this scenario"
        ),
        reading=reading(claim),
    )


def month_finetune_hours(s: Mapping[str, Any]) -> tuple[Any, Any]:
    """Hours of a full fine-tune of the customer-service case's largest model on a month's new entries
    (the case's upper figure), on its GPU count of A100s at the scenario's tokens, epochs and MFU,
    and how many times that the case's stated fine-tune days are."""
    c = cases.customer_service()
    hours = throughput.finetune_hours(
        c.params_high,
        c.new_samples_per_month_high,
        s["finetune_tokens_per_sample"],
        s["finetune_epochs"],
        c.gpus,
        peak_flops(OLD),
        s[OLD_MFU],
    )
    return hours, c.finetune_days_before * units.HOURS_PER_DAY / hours


@check("001-4-case-workload-7b-13b")
def check_case_workload_7b_13b(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §4: the customer fine-tunes 7B-13B models on a few thousand new entries a month."""
    c = cases.customer_service()
    hours, _ = month_finetune_hours(s)
    return Finding(
        stated=between(c.new_samples_per_month_low, c.new_samples_per_month_high),
        value=None,
        unit="entries",
        recomputed=lambda: (
            f"a month's new entries on the {stated(c.params_high / 1e9)}B model: {fmt(hours, 'hours', 2)} on "
            f"{stated(c.gpus)} {OLD}s"
        ),
        context=(
            "plausible: a customer-service firm adding a few thousand entries a month to its corpus is an ordinary "
            "workload, and a small compute load; the firm itself cannot be checked"
        ),
        reading=reading(claim),
    )


@check("001-4-finetune-5-to-2p8-days")
def check_finetune_5_to_2p8_days(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §4: a full fine-tune from 5 days (rented A100) to 2.8 days (owned B300)."""
    c = cases.customer_service()
    hours, multiple = month_finetune_hours(s)
    return Finding(
        stated=exactly(c.finetune_days_before),
        value=None,
        unit="days",
        recomputed=lambda: (
            f"a month's new entries take {fmt(hours, 'hours', 2)} on {stated(c.gpus)} {OLD}s; "
            f"{stated(c.finetune_days_before)} days is {fmt(multiple, 'x', 2)} that"
        ),
        context=lambda v: (
            "plausible only over a large accumulated corpus: 全量微调 read as a full-parameter fine-tune over everything "
            f"gathered so far, whose size the case does not state; {stated(c.finetune_days_before)} days is "
            f"{fmt(multiple, 'x', 2)} the compute of one month's new entries, which alone would make it implausible"
        ),
        reading=reading(claim),
        taken="a fine-tune over the whole accumulated corpus (size unknown)",
        readings=(Reading("a fine-tune on one month's new entries", value=hours / units.HOURS_PER_DAY),),
    )


# --------------------------------------------------------------------------------------------
# 000 §3 and 001 §2.1: A100 called "the previous generation"
# --------------------------------------------------------------------------------------------


@check("000-3-a100-previous-generation", "001-2.1-a100-previous-generation")
def check_a100_previous_generation(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Both documents call A100 B300's previous generation: it is two data-centre architectures earlier
    (Ampere, then Hopper, then Blackwell: NVLink 3, 4, 5 in data/gpus.csv) and more product launches."""
    new, old = generations.gpu(NEW), generations.gpu(OLD)
    back = float(new.nvlink_generation - old.nvlink_generation)
    ladder = [g for g in generations.documents_span() if g not in (NEW,)]
    between_ = [g for g in ladder if g != OLD]
    return Finding(
        stated=exactly(claim.value("generations_back")),
        value=back,
        unit="generations",
        recomputed=lambda: (
            f"{OLD} ({old.launch_year}, NVLink {old.nvlink_generation}) is {stated(back)} architectures before {NEW} "
            f"({new.launch_year}, NVLink {new.nvlink_generation}); between them came {', '.join(between_)} "
            "(data/gpus.csv, launch order)"
        ),
        context=(
            f"{OLD} is not {NEW}'s previous generation: Hopper ({', '.join(g for g in between_ if g.startswith('H'))}) "
            f"came between, so every gain the documents credit against {OLD} is the sum of two generations' steps"
        ),
        reading=claim.reading or "",
        sig=1,
    )
