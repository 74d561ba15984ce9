"""Checks of the utilisation chapter: GPUs waiting for data (GDS) and GPUs shared with MIG.

Each check recomputes its claim from sourced data, the documents' own figures (:mod:`analyses.scenario.cases`)
and the scenario (``s``: GPU utilisation, goodput, the power of a server whose GPUs wait, the
needs of jobs that use part of a GPU, bytes per token, the B300/A100 speed-up and the A100's MFU),
and returns a :class:`~analyses.verdicts.Finding`; the rule of the claim's kind decides the verdict.
Every check is numpy-vectorised in ``s``. The readings of vague words are the ``reading`` column
of ``data/claims.csv``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from analyses import data, scenario, units
from analyses.chapters.utilisation.wiring import (
    PERCENT,
    electricity_saving,
    gds_context,
    gds_timing,
    llm_input,
    max_instances,
    mig_bound,
    profile_table,
    profiles,
    same_slicing,
)
from analyses.models import mig, pipeline
from analyses.scenario import cases, frame, operations
from analyses.scenario.generations import NEW, OLD, OLD_MFU, gpu
from analyses.units.formats import fmt, percent, stated
from analyses.verdicts import Arithmetic, Credit, Finding, Reading, at_least, at_most, between, check, exactly, rounded

GDS, MIG = Credit("gds"), Credit("mig")


def _reading(claim: data.Claim) -> str:
    return claim.reading or ""


# --------------------------------------------------------------------------------------------
# Data loading and GPUDirect Storage
# --------------------------------------------------------------------------------------------


@check("000-3-table-data-loading", "001-2.2-gds-latency-60-80pct")
def check_table_data_loading(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Both documents: GPUDirect Storage cuts data-movement latency by 60-80% (000 §3 table, 001 §2.2)."""
    lo, hi = claim.value("latency_reduction_low_pct"), claim.value("latency_reduction_high_pct")
    faster = [fmt(PERCENT / (PERCENT - x), "x") for x in (lo, hi)]
    table = claim.section == "3"  # 000 §3's comparison table: its A100 column says data must pass through the CPU
    return Finding(
        stated=between(lo, hi),
        value=None,
        unit="%",
        recomputed=f"a {stated(lo)}-{stated(hi)}% latency cut is a {faster[0]}-{faster[1]} faster transfer; "
        "no published measurement to compare",
        context=gds_context(),
        reading=_reading(claim),
        credits=(Credit("gds", compared=table),),
    )


@check("001-2.2-utilisation-below-50pct")
def check_utilisation_below_50pct(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.2: data loading cannot keep up, GPU utilisation long below 50%."""
    limit = claim.value("utilisation_max_pct") / PERCENT
    frame.use(frame.UTILISATION["busy share"])
    run = cases.gds_run()
    tokens, rate = llm_input(run.params, s)
    model = f"{stated(run.params / 1e9)}B"

    def context(verdict: str) -> str:
        loader = f"a {model} text model's loader has only {fmt(rate / units.KB, 'kB/s')} per {NEW} to deliver"
        if verdict == "consistent":
            return f"at this utilisation clusters do sit near {percent(limit)}, though for text models data loading is rarely why: {loader}"
        return (
            f"jobs at or below {percent(limit)} exist, often slowed by data operations, but they are not the norm of "
            f"training clusters, and {loader}"
        )

    busy = operations.busy_share(s)
    return Finding(
        stated=at_most(limit),
        value=busy,
        unit="fraction",
        recomputed=lambda: (
            f"a training job keeps its GPUs busy {percent(busy)} of the time in the scenario "
            f"({scenario.assumption('utilisation').source}); a {model} dense model on {NEW} consumes {fmt(tokens)} tokens/s "
            f"= {fmt(rate / units.KB, 'kB/s')} per GPU"
        ),
        context=context,
        reading=_reading(claim),
        taken="利用率 as the share of time a job's GPUs are busy (nvidia-smi utilisation)",
        readings=(Reading(f"利用率 as model FLOP utilisation (an {OLD}'s MFU)", value=s[OLD_MFU]),),
    )


@check("001-2.2-loading-share-35-to-12")
def check_loading_share_35_to_12(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.2: GDS cut loading from 35% to 12% of training time, utilisation 62% -> 88%."""
    g, t = cases.gds_run(), gds_timing()
    gap = t["busy_before"] - g.utilisation_before
    return Finding(
        stated=rounded(PERCENT * g.utilisation_before),
        value=PERCENT * t["busy_before"],
        unit="%",
        recomputed=(
            f"1 − loading share: {percent(t['busy_before'])} -> {percent(t['busy_after'])} (stated {percent(g.utilisation_before)} -> "
            f"{percent(g.utilisation_after)}); wall time ×{fmt(t['time_ratio_shares'])} from the shares, "
            f"×{fmt(t['time_ratio_util'])} from the utilisations"
        ),
        context=(
            f"the two pairs describe one run if loading was the only stall after GDS and about {fmt(PERCENT * gap, sig=1)} "
            "points of other stalls remained before it"
        ),
        arithmetic=(
            Arithmetic(
                "the utilisation after GDS (1 − the loading share)",
                rounded(PERCENT * g.utilisation_after),
                PERCENT * t["busy_after"],
            ),
        ),
        reading=_reading(claim),
        credits=(GDS,),
    )


@check("001-2.2-days-saved-2p5-of-10")
def check_days_saved_2p5_of_10(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.2: about 2.5 of 10 days saved, electricity and labour cost -25%."""
    g, t = cases.gds_run(), gds_timing()
    saving = electricity_saving(s)
    labour = pipeline.mix_share_for_saving(g.cost_saving, saving, t["time_cut"])

    def context(verdict: str) -> str:
        if verdict == "consistent":
            return (
                f"with waiting servers at {percent(s['idle_power_fraction'])} of training power electricity falls nearly "
                "as much as time, and labour paid by the day falls with time"
            )
        return (
            f"electricity falls less than time because waiting servers still draw power; labour paid by the day does "
            f"fall {percent(t['time_cut'])}, and the two together fall {percent(g.cost_saving)} only if labour is at least "
            f"{percent(labour)} of their cost"
        )

    return Finding(
        stated=rounded(PERCENT * g.cost_saving),
        value=PERCENT * saving,
        unit="%",
        recomputed=lambda: (
            f"{fmt(t['days_saved_shares'], 'days')} saved from the loading shares, {fmt(t['days_saved_util'], 'days')} "
            f"from the utilisations; electricity −{percent(saving)} with waiting servers at {percent(s['idle_power_fraction'])} "
            f"of training power; labour paid by the day −{percent(t['time_cut'])}"
        ),
        context=context,
        arithmetic=(
            Arithmetic(
                f"the days saved over the {stated(g.cycle_days)}-day cycle",
                rounded(g.days_saved, 0.5),
                t["days_saved_shares"],
            ),
        ),
        reading=_reading(claim),
        taken="电费 as metered energy, which waiting servers still draw",
        readings=(Reading("电费 as power billed by time (a colocation contract per kW)", value=PERCENT * t["time_cut"]),),
        credits=(GDS,),
    )


@check("000-4-pb-scale-training-data")
def check_pb_scale_training_data(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: the case-study company trains on petabyte-scale data."""
    r = cases.recommender()
    rate = r.data_pb_min * units.PB / (r.days_before * units.SECONDS_PER_DAY)
    return Finding(
        stated=at_least(r.data_pb_min),
        value=None,
        unit="PB",
        recomputed=(
            f"one pass over {fmt(r.data_pb_min, 'PB')} in the {fmt(r.days_before, 'days')} {r.gpu_before} run needs "
            f"{fmt(rate / units.GB, 'GB/s')} for the cluster, {fmt(rate / r.gpus_before / units.MB, 'MB/s')} per GPU"
        ),
        context=(
            "plausible: the company's data volume is not public, but petabyte-scale training data is common for a "
            "recommender of this size; reading a petabyte once per run takes a small share of what an NVMe tier "
            "delivers, so data at this scale does not by itself starve the GPUs"
        ),
        reading=_reading(claim),
    )


def _after_utilisation(
    claim: data.Claim, s: Mapping[str, Any], stated_after: Any, before: float, after: float, extra: str = ""
) -> Finding:
    """An anecdote's utilisation after the fix (a job's busy share) against the most a job whose GPUs
    never wait for data keeps busy: the share of its wall time not spent writing checkpoints,
    restarting or redoing work, the scenario's goodput."""
    ceiling = operations.goodput(s)
    frame.use(frame.UTILISATION["busy share"])
    return Finding(
        stated=stated_after,
        value=ceiling,
        unit="fraction",
        recomputed=lambda: (
            f"{percent(before)} -> {percent(after)} (×{fmt(after / before)}); a job whose GPUs never wait for data keeps "
            f"them busy at most {percent(ceiling)} of the time (the scenario's goodput: the rest goes to checkpoints, "
            f"restarts and redone work); a typical job, {percent(operations.busy_share(s))}"
        ),
        context=lambda v: (
            f"the case itself cannot be checked{extra}"
            if v != "implausible"
            else "it claims more busy GPU time than checkpoints, restarts and recomputation leave"
        ),
        reading=_reading(claim),
        credits=(GDS,),
    )


@check("001-4-utilisation-55-to-89")
def check_utilisation_55_to_89(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §4: the customer's GPU utilisation from 55% (slow data loading) to 89% on B300."""
    c = cases.customer_service()
    return _after_utilisation(
        claim,
        s,
        rounded(c.utilisation_after, 1 / PERCENT),
        c.utilisation_before,
        c.utilisation_after,
        "; moving from rented instances to owned servers changed the storage too, so GDS need not be the cause",
    )


@check("000-6-half-idle-to-near-full")
def check_half_idle_to_near_full(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §6: B300 lifts GPU utilisation from half idle to nearly full load: the summary of
    document 000's own case (000 §4: 58% -> 87%), not document 001's."""
    r = cases.recommender()
    f = _after_utilisation(
        claim,
        s,
        rounded(r.utilisation_after, 1 / PERCENT),
        r.utilisation_before,
        r.utilisation_after,
        f"; the summary restates the document's own case study ({percent(r.utilisation_before)} -> "
        f"{percent(r.utilisation_after)}, 000 §4)",
    )
    full = claim.value("utilisation_after_pct_approx") / PERCENT
    return dataclasses.replace(f, strict=exactly(full))


@check("000-4-utilisation-58-to-87")
def check_utilisation_58_to_87(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: effective GPU utilisation 58% -> 87%, described as +50%."""
    r = cases.recommender()
    gain = PERCENT * (r.utilisation_after / r.utilisation_before - 1)
    return Finding(
        stated=rounded(claim.value("improvement_pct")),
        value=gain,
        unit="%",
        recomputed=f"{percent(r.utilisation_before)} -> {percent(r.utilisation_after)} = ×{fmt(1 + gain / PERCENT)} (+{fmt(gain)}%)",
        context="the stated gain is the ratio of the two utilisations; the case study itself cannot be checked",
        reading=_reading(claim),
    )


# --------------------------------------------------------------------------------------------
# MIG
# --------------------------------------------------------------------------------------------


def _profile_span(gpu: str) -> str:
    names = profiles(gpu).names
    return f"{names[0]} ... {names[-1]}"


@check("000-3-table-mig")
def check_table_mig(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §3 table: A100's MIG has few instances; B300's finer MIG lifts utilisation 50% -> 85%."""
    before, after = claim.value("utilisation_before_pct") / PERCENT, claim.value("utilisation_after_pct") / PERCENT
    bound = mig_bound(before, s)
    n = max_instances()
    same = same_slicing()
    return Finding(
        stated=rounded(after, 1 / PERCENT),
        value=bound.utilisation_mig,
        unit="fraction",
        recomputed=lambda: (
            f"MIG on either GPU lifts a cluster at {percent(before)} on whole GPUs to at most {percent(bound.utilisation_mig)} "
            f"({percent(bound.small_share)} of its jobs needing part of a GPU); {OLD} and {NEW} both split {n} ways"
        ),
        context=lambda v: (
            f"{OLD} and {NEW} share the slice shapes ({_profile_span(OLD)} against {_profile_span(NEW)}); a gain like "
            f"{percent(before)} -> {percent(after)} is what MIG itself delivers on either generation, not an advance of {NEW}"
            if same
            else "the gain is within what packing partial-GPU jobs recovers"
        ),
        reading=_reading(claim),
        credits=(Credit("mig", compared=True),),
    )


@check("001-2.3-mig-up-to-7-instances")
def check_mig_up_to_7_instances(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.3: MIG splits one B300 into up to seven independent instances."""
    table = profile_table()
    n = int(table["max_instances"].max())
    return Finding(
        stated=exactly(claim.value("max_instances")),
        value=float(n),
        unit="instances",
        recomputed=f"{NEW}: up to {n} instances ({profiles().names[0]} × {n}) in NVIDIA's profile list",
        context=f"each instance has its own compute and memory slices; {OLD} already splits {max_instances(OLD)} ways",
        reading=_reading(claim),
        sig=1,
        credits=(MIG,),
    )


@check("001-2.3-debug-20pct-memory")
def check_debug_20pct_memory(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.3: few jobs fill a card, e.g. debugging that uses 20% of its memory."""
    frac = claim.value("memory_used_pct") / PERCENT
    table = profile_table()
    shared = mig.largest_shared_memory(table)
    slot = mig.assign_profiles(1 / mig.COMPUTE_SLICES, frac, table).iloc[0]
    per_gpu = int(table.set_index("profile").loc[slot["profile"], "max_instances"])
    size = frac * gpu(NEW).hbm_usable_bytes / units.GB
    return Finding(
        stated=rounded(frac, 1 / PERCENT),
        value=shared,
        unit="fraction",
        recomputed=(
            f"a job using {percent(frac)} of a {NEW}'s memory ({fmt(size, 'GB')}) takes a {slot['profile']} slice, {per_gpu} "
            f"of which share one {NEW}; MIG packs jobs of up to {percent(shared)} of the memory two or more to a GPU"
        ),
        context=lambda v: (
            "an illustration rather than a measurement: on a whole GPU such a job leaves most of it idle, and MIG packs it with others"
            if v != "implausible"
            else "a job that large cannot share a GPU through MIG"
        ),
        reading=_reading(claim),
        credits=(MIG,),
    )


@check("001-2.3-cloud-utilisation-45-to-80")
def check_cloud_utilisation_45_to_80(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.3: a cloud provider's cluster utilisation from 45% to over 80% with MIG, 4 cards for 7."""
    c = cases.cloud_provider()
    bound = mig_bound(c.utilisation_before, s)
    ratio = float(mig.gpus_ratio_from_utilisation(c.utilisation_before, c.utilisation_after_min))
    counts = f"{stated(c.gpus_after)} for {stated(c.gpus_before)}"
    return Finding(
        stated=at_least(c.utilisation_after_min),
        value=bound.utilisation_mig,
        unit="fraction",
        recomputed=lambda: (
            f"{percent(c.utilisation_before)} on whole GPUs means {percent(bound.small_share)} of the jobs need part of a GPU; "
            f"MIG packs them to at most {percent(bound.utilisation_mig)}; {percent(c.utilisation_before)}/"
            f"{percent(c.utilisation_after_min)} = {fmt(ratio)} of the GPUs against {counts} = "
            f"{fmt(c.gpus_after / c.gpus_before)}"
        ),
        context=lambda v: (
            "the provider's data cannot be checked; a cluster with that many partial-GPU jobs can reach it with MIG"
            if v != "implausible"
            else "it claims more than packing the partial-GPU jobs can recover"
        ),
        arithmetic=(
            Arithmetic(f"the GPUs for the same work ({counts})", exactly(c.gpus_after / c.gpus_before), ratio),
        ),
        reading=_reading(claim),
        credits=(MIG,),
    )


@check("001-2.3-procurement-30pct")
def check_procurement_30pct(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.3: the same provider cut its annual hardware procurement by 30%."""
    c = cases.cloud_provider()
    allowed = PERCENT * (1 - c.gpus_after / c.gpus_before)
    cut = PERCENT * c.procurement_cut
    counts = f"{stated(c.gpus_after)} cards for {stated(c.gpus_before)}"
    return Finding(
        stated=rounded(cut),
        value=allowed,
        unit="%",
        recomputed=(
            f"{counts} allows up to −{fmt(allowed, sig=2)}% if every purchase serves work MIG can pack; "
            f"−{stated(cut)}% means about {percent(cut / allowed)} of purchases do"
        ),
        context=f"its cut stays below the {fmt(allowed, sig=2)}% that its own {counts} allows, as it must when some purchases serve whole-GPU work",
        arithmetic=(Arithmetic(f"the procurement cut, at most what {counts} allows", at_most(allowed), cut),),
        reading=_reading(claim),
        credits=(MIG,),
    )


# --------------------------------------------------------------------------------------------
# 001 §2.2 and §2.3: what HBM and MIG memory can do
# --------------------------------------------------------------------------------------------


@check("001-2.2-hbm-bandwidth-larger-batch")
def check_hbm_bandwidth_larger_batch(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.2: B300's HBM3e, over 8 TB/s, holds larger batches. A batch fits in memory's
    capacity; bandwidth decides how fast it streams, not how much of it fits."""
    new, old = gpu(NEW), gpu(OLD)
    ratio = new.hbm_bytes / old.hbm_bytes
    bandwidth = claim.value("bandwidth_min_tb_s")
    return Finding(
        stated=at_least(1.0),
        value=ratio,
        unit="x",
        recomputed=lambda: (
            f"{NEW} holds {fmt(new.hbm_bytes / units.GIB, 'GiB')} of HBM against {fmt(old.hbm_bytes / units.GIB, 'GiB')} "
            f"on {OLD} ({fmt(ratio, 'x')}), room for a larger batch per GPU; its "
            f"{fmt(new.hbm_bytes_per_s / units.TB, 'TB/s')} of bandwidth sets how fast that memory streams, not how much fits"
        ),
        context=(
            "read as the memory's capacity, true; the bandwidth the sentence cites does not decide the batch, and a larger "
            "batch moves the same data from storage per sample"
        ),
        reading=_reading(claim),
        taken="容纳 (to hold) as the memory's capacity",
        readings=(
            Reading(
                f"strictly, the {stated(bandwidth)} TB/s bandwidth as what allows the larger batch",
                contradiction=f"a batch fits in memory's capacity; HBM bandwidth ({fmt(new.hbm_bytes_per_s / units.TB, 'TB/s')}) "
                "decides how fast it streams, not its size",
            ),
        ),
    )


@check("001-2.3-mig-memory-oversubscription")
def check_mig_memory_oversubscription(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.3: with MIG, oversubscribing GPU memory raises concurrency without hurting
    performance. A MIG instance owns a fixed slice of memory the hardware isolates; nothing lets jobs
    share or exceed it, and oversubscribing memory by paging to the host slows the job."""
    top = profiles(NEW).names[-1]
    return Finding(
        stated=exactly(claim.value("performance_loss_pct")),
        value=None,
        unit="%",
        recomputed=(
            f"{NEW}'s MIG profiles ({_profile_span(NEW)}) each give an instance a fixed memory slice (data/mig_profiles.csv); "
            f"the largest, {top}, is the whole GPU"
        ),
        context="",
        contradiction=(
            "NVIDIA's MIG user guide gives each instance its own fixed, isolated memory slice: MIG cannot oversubscribe "
            "memory, and oversubscribing through unified memory pages to the host and slows the job"
        ),
        direction="overstates",
        reading=_reading(claim),
    )
