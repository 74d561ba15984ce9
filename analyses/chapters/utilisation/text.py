"""Sentences of the utilisation chapter (takeaways and captions), each read from a computed Result.

Where a sentence says whether figures agree, it applies the rule of the claim's kind
(:func:`agrees`), never a threshold of its own; where it names a tipping point, it reads the flip
the chapter's slider found with the claim's own check.
"""

from __future__ import annotations

import numpy as np

from analyses import data, units
from analyses.chapters.utilisation import Result, wiring
from analyses.pages import sliders
from analyses.scenario.generations import NEW, OLD
from analyses.units.formats import fmt, percent, stated
from analyses.verdicts import RULES, VERDICTS, Finding, Interval, rounded, verdict_codes

DAYS = "001-2.2-days-saved-2p5-of-10"
BELOW_50 = "001-2.2-utilisation-below-50pct"
PROVIDER = "001-2.3-cloud-utilisation-45-to-80"


def agrees(stated_interval: Interval, value: float, kind: str) -> bool:
    """Whether ``value`` agrees with a stated interval under the rule of ``kind``."""
    f = Finding(stated=stated_interval, value=value)
    return VERDICTS[int(verdict_codes(f, RULES[kind], 1)[0])] == "consistent"


def _row(res: Result, claim_id: str) -> dict:
    return res.ledger.set_index("id").loc[claim_id].to_dict()


def _flip(res: Result, name: str, claim_id: str) -> float | None:
    """Where the slider over ``name`` found the verdict of ``claim_id`` flip (nearest the central value)."""
    s = next(sl for sl in res.sliders if sl.input == name)
    flips = s.flips[s.flips["claim"] == claim_id]
    if flips.empty:
        return None
    x = flips["x"].to_numpy()
    return float(x[np.argmin(np.abs(x - s.central))])


# --------------------------------------------------------------------------------------------
# Data loading
# --------------------------------------------------------------------------------------------


def model_name(res: Result) -> str:
    """Document 001's model as it writes it: 1e11 parameters -> "100B"."""
    return f"{stated(res.input_need.params / 1e9)}B"


def input_takeaway(res: Result) -> str:
    """What a text model's loader must deliver, against what stalls it."""
    n = res.input_need
    return (
        f"with any prefetching, GPUs wait only when the loader is slower than the GPU on average; for a "
        f"{model_name(res)} text model the loader must deliver {fmt(n.bytes_per_s / units.KB, 'kB/s')} per GPU, "
        "so long waits for data belong to image, video and recommendation pipelines that decode heavy samples on the CPU"
    )


def utilisation_takeaway(res: Result) -> str:
    """Where the claim that utilisation below 50% is the norm stands, and what would change it."""
    row = _row(res, BELOW_50)
    limit = data.claim(BELOW_50).value("utilisation_max_pct") / wiring.PERCENT
    flip = _flip(res, "utilisation", BELOW_50)
    text = (
        f"at the scenario's GPU utilisation of {percent(res.busy_share)}, utilisation at or below {percent(limit)} "
        f"as the norm of training clusters is {row['verdict']}"
    )
    if flip is not None:
        text += f"; it turns at {percent(flip)}"
    return text


def days_sentence(res: Result) -> str:
    """Which reading reproduces the stated days saved (the arithmetic rule on the claim's rounding)."""
    g = res.loading.run
    said = rounded(g.days_saved, 0.5)
    shares = agrees(said, res.loading.days_saved_shares, "arithmetic")
    util = agrees(said, res.loading.days_saved_util, "arithmetic")
    days = fmt(g.days_saved, "days", sig=2)
    if shares and util:
        return f"the stated {days} matches both"
    if shares or util:
        return f"the stated {days} matches the {'loading shares' if shares else 'utilisations'}"
    return f"the stated {days} matches neither"


def electricity_takeaway(res: Result) -> str:
    """Which of document 001's figures hang together, and the power while waiting the 25% would need."""
    load = res.loading
    shares = _row(res, "001-2.2-loading-share-35-to-12")["verdict"] == "consistent"
    elec = _row(res, DAYS)["verdict"] == "consistent"
    pairs = "the two pairs and the days saved hang together" if shares else "the two pairs do not hang together"
    if elec:
        return f"{pairs}, and so does the electricity saving of {percent(load.electricity_saving)}"
    flip = _flip(res, "idle_power_fraction", DAYS)
    need = (
        f"it would take servers that draw {percent(flip)} of their training power while their GPUs wait"
        if flip is not None
        else "no power drawn while waiting gives it"
    )
    return (
        f"{pairs}; the {percent(load.run.cost_saving)} electricity saving does not ({need}), while labour paid by the day "
        f"does fall {percent(load.time_cut)}"
    )


# --------------------------------------------------------------------------------------------
# MIG
# --------------------------------------------------------------------------------------------


def mig_sentence(res: Result) -> str:
    """What the provider's 45% implies for its job mix, and how far MIG packing lifts it."""
    row = res.mig_cases.set_index("claim").loc[PROVIDER]
    return (
        f"on whole GPUs every job holds a GPU, so {percent(res.provider.utilisation_before)} means that "
        f"{percent(row['partial-GPU jobs'])} of the jobs use part of one; packed onto MIG slices they reach at most "
        f"{percent(row['MIG at most'])}, and first-fit packing of the simulated snapshots reaches {percent(res.sim['util_mig'].mean())}"
    )


def mig_caption(res: Result) -> str:
    """Caption of the MIG histogram: the simulated cluster against the provider's figures."""
    sim = res.sim
    return (
        f"Cluster utilisation over {fmt(int(res.cfg['snapshots']))} random snapshots of a job mix with "
        f"{percent(res.small_share)} partial-GPU jobs (about {fmt(float(sim['jobs'].mean()))} jobs each), on whole GPUs "
        f"(mean {percent(sim['util_whole'].mean())}) and with MIG on {res.cfg['gpu']} (mean {percent(sim['util_mig'].mean())}). "
        f"Dashed rules: document 001's {percent(res.provider.utilisation_before)} before and "
        f"{percent(res.provider.utilisation_after_min)} after; dotted: the most MIG packing can reach."
    )


def provider_sentence(res: Result) -> str:
    """The provider's 4-for-7 against its 45% -> 80%, and where its gain stands against MIG packing."""
    p = res.provider
    ratio = p.utilisation_before / p.utilisation_after_min
    agree = agrees(Interval(p.gpus_after / p.gpus_before, p.gpus_after / p.gpus_before), ratio, "arithmetic")
    text = (
        f"{stated(p.gpus_after)} cards for {stated(p.gpus_before)} is {fmt(p.gpus_after / p.gpus_before)} of the GPUs and "
        f"{percent(p.utilisation_before)} -> {percent(p.utilisation_after_min)} is {fmt(ratio)}: the two "
        f"{'agree' if agree else 'disagree'}, and against what MIG packing recovers the gain is {res.verdict(PROVIDER)}"
    )
    flip = _flip(res, "mig_small_job_memory", PROVIDER)
    if flip is not None:
        s = next(sl for sl in res.sliders if sl.input == "mig_small_job_memory")
        beyond = s.flips[s.flips["claim"] == PROVIDER]["verdict"].iloc[0]
        text += f"; it turns {beyond} where partial-GPU jobs hold about {percent(flip)} of a GPU's memory"
    return text


def generations_sentence(res: Result) -> str:
    """Why every MIG-capable generation gives the same answer (or that they differ)."""
    g = res.generations
    if g[["GPUs MIG", "util MIG"]].nunique().max() == 1:
        ways = wiring.max_instances(res.cfg["gpu"])
        return (
            f"The same mix on every generation in this table gives the same answer, because each of them "
            f"splits {ways} ways with the same slice shapes (not every MIG-capable GPU does: smaller ones split fewer ways):"
        )
    return "The same mix on each MIG-capable generation (their profiles differ):"


def table_mig_sentence(res: Result) -> str:
    """Document 000's MIG row: the same MIG on A100 and B300, and what MIG itself reaches from 50%."""
    row = res.mig_cases.set_index("claim").loc["000-3-table-mig"]
    same = (
        f"{OLD} offers the same MIG profiles as {NEW}"
        if res.same_slicing
        else f"{OLD} and {NEW} offer different MIG profiles"
    )
    return (
        f"{same}; from {percent(row['before (whole GPUs)'])} on whole GPUs, MIG on either reaches at most "
        f"{percent(row['MIG at most'])} against the stated {percent(row['stated after'])}"
    )


def mig_takeaway(res: Result) -> str:
    """What MIG recovers, whether it is new in B300, and where the two documents' MIG gains stand."""
    new = (
        f"it is not new in {NEW} ({OLD} offers the same profiles)"
        if res.same_slicing
        else f"{NEW}'s profiles differ from {OLD}'s"
    )
    return (
        f"MIG pays where many jobs need a fraction of a GPU; {new}; document 001's cloud-provider gain is "
        f"{res.verdict(PROVIDER)} and document 000's A100-to-B300 gain is {res.verdict('000-3-table-mig')}"
    )


def procurement_sentence(res: Result) -> str:
    """The procurement cut the documents' own 4-for-7 allows, and the share of purchases the 30% implies."""
    p = res.provider
    share = p.procurement_cut / res.procurement_allowed
    return (
        f"{stated(p.gpus_after)} cards doing the work of {stated(p.gpus_before)} cut the GPUs a workload needs by "
        f"{percent(res.procurement_allowed)}; the stated {percent(p.procurement_cut)} cut in annual purchases fits it if about "
        f"{percent(share)} of purchases serve work MIG can pack, so it falls short of the gain without contradicting it"
    )


# --------------------------------------------------------------------------------------------
# Slider captions
# --------------------------------------------------------------------------------------------


def slider_caption(res: Result, i: int) -> str:
    """Caption of slider figure ``i``."""
    s = res.sliders[i]
    return sliders.caption(s, "utilisation", f"What if the {s.label} were different?")


def gds_verdicts(res: Result) -> str:
    """The two GPUDirect Storage rows as the ledger judges them: the latency figure, and the table's A100 column."""
    return (
        f"No published result matches the figure, so document 001's claim is {res.verdict('001-2.2-gds-latency-60-80pct')}; "
        f"document 000's table, whose {OLD} column says data must pass through the CPU, is "
        f"{res.verdict('000-3-table-data-loading')}, since GPUDirect Storage already supports {OLD}"
    )
