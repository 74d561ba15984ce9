"""The utilisation chapter's glued numbers and phrases: :func:`glued` maps every name its page glues
to text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's
markdown, and the phrases here branch on a verdict or a comparison, each ``fn(result) -> str``.

Where a phrase says whether figures agree, it applies the rule of the claim's kind
(:func:`agrees`), never a threshold of its own; where it names a tipping point, it reads the flip
the chapter's slider found with the claim's own check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from analyses import data, scenario, units
from analyses.chapters.utilisation import PREFETCH_DEPTHS, Result, wiring
from analyses.models.mig import COMPUTE_SLICES, MEMORY_SLICES
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


def below_50_verdict(res: Result) -> str:
    """The verdict on "utilisation below 50% is the norm", and where the utilisation slider turns it."""
    flip = _flip(res, "utilisation", BELOW_50)
    return _row(res, BELOW_50)["verdict"] + (f"; it turns at {percent(flip)}" if flip is not None else "")


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


def provider_agree(res: Result) -> str:
    """Whether the provider's 4-for-7 and its 45% -> 80% agree (the arithmetic rule)."""
    p = res.provider
    ratio = p.utilisation_before / p.utilisation_after_min
    return (
        "agree"
        if agrees(Interval(p.gpus_after / p.gpus_before, p.gpus_after / p.gpus_before), ratio, "arithmetic")
        else "disagree"
    )


def provider_verdict(res: Result) -> str:
    """The provider's gain against MIG packing, and where the memory slider turns it."""
    text = res.verdict(PROVIDER)
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


def same_slicing(res: Result) -> str:
    """Whether the old and new GPU offer the same MIG profiles (document 000's MIG row)."""
    return (
        f"{OLD} offers the same MIG profiles as {NEW}"
        if res.same_slicing
        else f"{OLD} and {NEW} offer different MIG profiles"
    )


def mig_new(res: Result) -> str:
    """Whether MIG is new in the new GPU."""
    return (
        f"it is not new in {NEW} ({OLD} offers the same profiles)"
        if res.same_slicing
        else f"{NEW}'s profiles differ from {OLD}'s"
    )


# --------------------------------------------------------------------------------------------
# Slider captions
# --------------------------------------------------------------------------------------------


def slider_caption(res: Result, i: int) -> str:
    """Caption of slider figure ``i``."""
    s = res.sliders[i]
    return sliders.caption(s, "utilisation", f"What if the {s.label} were different?")


def _loading_glued(res: Result) -> dict[str, Any]:
    """Data loading, utilisation, electricity and GPUDirect Storage."""
    n, load = res.input_need, res.loading
    u = scenario.ranges(res.cfg)["utilisation"]  # a range read: what the page states of the assumption
    return {
        # when a GPU waits for data
        "cv": fmt(res.cfg["prefetch_cv"], sig=2),
        "depth_max": fmt(max(PREFETCH_DEPTHS)),
        "share_b": fmt(load.run.loading_share_before, pct=True, sig=2),
        "ratio_b": fmt(res.prefetch["load time / compute time"].iloc[0], sig=2),
        "u_depth2": fmt(res.prefetch["depth 2"].iloc[0], pct=True, sig=3),
        "n_model": model_name(res),
        "b300_tflops": fmt(n.model_flops / units.TERA, "TFLOP/s"),
        "tok_s": fmt(n.tokens_per_s, "tokens/s"),
        "in_kbs": fmt(n.bytes_per_s / units.KB, "kB/s"),
        "bytes_tok": fmt(res.s["input_bytes_per_token"], "bytes", 1),
        # is low utilisation the norm
        "util": fmt(u.central, pct=True, sig=2),
        "util_lo": fmt(u.low, pct=True, sig=2),
        "util_hi": fmt(u.high, pct=True, sig=2),
        "busy_share": percent(res.busy_share),
        "below_50": percent(data.claim(BELOW_50).value("utilisation_max_pct") / wiring.PERCENT),
        "below_50_verdict": below_50_verdict(res),
        # the loading shares and the utilisations
        "u_b": fmt(load.busy_before, pct=True, sig=2),
        "u_a": fmt(load.busy_after, pct=True, sig=2),
        "s_ub": fmt(load.run.utilisation_before, pct=True, sig=2),
        "s_ua": fmt(load.run.utilisation_after, pct=True, sig=2),
        "ratio_s": fmt(load.time_ratio_shares),
        "ratio_u": fmt(load.time_ratio_util),
        "cycle": fmt(load.run.cycle_days, "days", 2),
        "saved_s": fmt(load.days_saved_shares, "days"),
        "saved_u": fmt(load.days_saved_util, "days"),
        "days_sentence": days_sentence(res),
        "goodput": fmt(res.goodput, pct=True, sig=2),
        # electricity is not time
        "days_saved": fmt(load.run.days_saved, "days", 2),
        "cost_cut": fmt(load.run.cost_saving, pct=True, sig=2),
        "time_cut": fmt(load.time_cut, pct=True, sig=2),
        "idle_p": fmt(res.s["idle_power_fraction"], pct=True, sig=2),
        "elec": fmt(load.electricity_saving, pct=True, sig=2),
        "labour_share": fmt(load.labour_share_needed, pct=True, sig=2),
        "elec_takeaway": electricity_takeaway(res),
        # GPUDirect Storage
        "gds_lo": fmt(res.gds.latency_cut_low, pct=True, sig=2),
        "gds_hi": fmt(res.gds.latency_cut_high, pct=True, sig=2),
        "gds_date": res.gds.released,
        "gds_verdict": res.verdict("001-2.2-gds-latency-60-80pct"),
        "gds_table_verdict": res.verdict("000-3-table-data-loading"),
    }


def _mig_glued(res: Result) -> dict[str, Any]:
    """MIG: the provider's case, the comparison table's row, the simulation and the procurement cut."""
    p, sim = res.provider, res.sim
    mig_cases = res.mig_cases.set_index("claim")
    provider, table_row = mig_cases.loc[PROVIDER], mig_cases.loc["000-3-table-mig"]
    return {
        "slices_c": fmt(COMPUTE_SLICES),
        "slices_m": fmt(MEMORY_SLICES),
        "p_before": percent(p.utilisation_before),
        "p_after": percent(p.utilisation_after_min),
        "p_partial": percent(provider["partial-GPU jobs"]),
        "p_mig_max": percent(provider["MIG at most"]),
        "sim_mig": percent(sim["util_mig"].mean()),
        "sim_whole": percent(sim["util_whole"].mean()),
        "snapshots": fmt(int(res.cfg["snapshots"])),
        "small_share": percent(res.small_share),
        "sim_jobs": fmt(float(sim["jobs"].mean())),
        "mig_gpu": res.cfg["gpu"],
        "generations": generations_sentence(res),
        "gpus_after": stated(p.gpus_after),
        "gpus_before": stated(p.gpus_before),
        "gpus_ratio": fmt(p.gpus_after / p.gpus_before),
        "util_ratio": fmt(p.utilisation_before / p.utilisation_after_min),
        "provider_agree": provider_agree(res),
        "provider_verdict": provider_verdict(res),
        "mem_share": fmt(res.s["mig_small_job_memory"], pct=True, sig=2),
        "s50": fmt(table_row["before (whole GPUs)"], pct=True, sig=2),
        "s85": fmt(table_row["stated after"], pct=True, sig=2),
        "same_slicing": same_slicing(res),
        "table_mig_before": percent(table_row["before (whole GPUs)"]),
        "table_mig_max": percent(table_row["MIG at most"]),
        "table_mig_after": percent(table_row["stated after"]),
        "procurement_allowed": percent(res.procurement_allowed),
        "procurement_cut": percent(p.procurement_cut),
        "procurement_share": percent(p.procurement_cut / res.procurement_allowed),
        "mig_new": mig_new(res),
        "provider_gain_verdict": res.verdict(PROVIDER),
        "table_mig_verdict": res.verdict("000-3-table-mig"),
    }


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    captions = {name: slider_caption(res, i) for i, name in enumerate(("cap_slider_idle", "cap_slider_util", "cap_slider_mig"))}
    return _loading_glued(res) | _mig_glued(res) | captions
