"""Chapter ``utilisation``: GPUs waiting for data, and GPUs shared with MIG.

Checks document 001 parts 2.2 (data loading, GPUDirect Storage, 35% -> 12%, 62% -> 88%, 2.5 of
10 days) and 2.3 (MIG: 7 instances, 45% -> 80%, "4 cards for 7", procurement -30%), part 4's
55% -> 89%; document 000's table (part 3: GDS latency, MIG 50% -> 85%), case study (part 4:
58% -> 87%, PB-scale data) and summary (part 6: half idle to nearly full).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import altair as alt
import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Config, Param, Rule
from analyses.models import mig
from analyses.models import pipeline as pl
from analyses.site.notebook import fmt, stated
from analyses.verdicts import Verdict, check


def _mig_gpus() -> list[str]:
    return sorted(set(data.mig_profiles()["gpu"]), key=data.gpu_names().index)


SPEC = ChapterSpec(
    slug="utilisation",
    title="Idle GPUs: data loading and MIG",
    params=(
        Param("gpu", "str", "B300", "-", "GPU whose MIG profiles pack the job mix", choices=_mig_gpus),
        Param("mean_jobs", "float", 100.0, "jobs", "mean number of concurrent jobs in a snapshot (Poisson)", 5, 500),
        Param("small_share", "float", 0.7, "fraction", "share of jobs that need only part of a GPU", 0, 1),
        Param("small_compute", "float", 0.2, "fraction", "compute a small job uses (±50% spread)", 0.01, 1),
        Param(
            "small_memory",
            "float",
            0.2,
            "fraction",
            "memory a small job uses (±50% spread); 001 cites 20% for debugging",
            0.01,
            1,
        ),
        Param("large_compute", "float", 0.9, "fraction", "compute a whole-GPU job uses", 0.05, 1),
        Param("snapshots", "int", 200, "-", "random job snapshots simulated (fixed seed)", 10, 1000),
        Param("seed", "int", 0, "-", "random seed of the MIG simulation", 0, 2**31 - 1),
        Param(
            "mig_eligible_share",
            "float",
            1.0,
            "fraction",
            "share of hardware procurement serving MIG-packable work",
            0,
            1,
        ),
        Param(
            "idle_power_fraction",
            "float",
            0.4,
            "fraction",
            "power a server draws while its GPUs wait for data, relative to busy",
            0,
            1,
        ),
        Param(
            "util_tolerance",
            "float",
            0.05,
            "fraction",
            "gap between recomputed and stated utilisation still called consistent",
            0,
            0.5,
        ),
        Param("mfu", "float", 0.4, "fraction", "model FLOP utilisation of large-model training", 0.05, 0.9),
        Param("bytes_per_token", "float", 4.0, "bytes", "input bytes per training token (int32 token ids)", 1, 1e6),
        Param(
            "prefetch_cv",
            "float",
            0.5,
            "-",
            "coefficient of variation of batch load times in the prefetch simulation",
            0,
            3,
        ),
    ),
    rules=(Rule(("snapshots", "mean_jobs"), lambda c: _simulation_problem(c)),),
)


# --------------------------------------------------------------------------------------------
# Data loading
# --------------------------------------------------------------------------------------------


def loading_pairs(claim_id: str = "001-2.2-loading-share-35-to-12") -> dict[str, float]:
    """Document 001's two pairs and what each implies for wall time (ratios after/before)."""
    c = data.claim(claim_id)
    s_b, s_a = c.value("loading_share_before_pct") / 100, c.value("loading_share_after_pct") / 100
    u_b, u_a = c.value("utilisation_before_pct") / 100, c.value("utilisation_after_pct") / 100
    return {
        "share_before": s_b,
        "share_after": s_a,
        "util_before": u_b,
        "util_after": u_a,
        "util_from_share_before": 1 - s_b,
        "util_from_share_after": 1 - s_a,
        "time_ratio_shares": float(pl.time_ratio_from_shares(s_b, s_a)),
        "time_ratio_util": float(pl.time_ratio_from_utilisation(u_b, u_a)),
    }


def days_saved(cfg: Mapping[str, Any], claim_id: str = "001-2.2-days-saved-2p5-of-10") -> dict[str, float]:
    """Days saved over the stated cycle by each pair, and the electricity saving with idle power."""
    c = data.claim(claim_id)
    p = loading_pairs()
    days = c.value("training_days")
    energy = pl.energy_ratio(p["util_from_share_before"], p["util_from_share_after"], cfg["idle_power_fraction"])
    return {
        "days": days,
        "saved_shares": days * (1 - p["time_ratio_shares"]),
        "saved_util": days * (1 - p["time_ratio_util"]),
        "electricity_saving": 1 - energy,
    }


def utilisation_bars(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Before/after utilisation as stated and as rebuilt from the loading shares (001 part 2.2)."""
    p = loading_pairs()
    rows = [
        ("001 part 2.2: stated", "before", p["util_before"]),
        ("001 part 2.2: stated", "after", p["util_after"]),
        ("001 part 2.2: 1 - loading share", "before", p["util_from_share_before"]),
        ("001 part 2.2: 1 - loading share", "after", p["util_from_share_after"]),
    ]
    for cid, label in [
        ("000-4-utilisation-58-to-87", "000 part 4 case study"),
        ("001-4-utilisation-55-to-89", "001 part 4 case study"),
    ]:
        c = data.claim(cid)
        rows += [
            (label, "before", c.value("utilisation_before_pct") / 100),
            (label, "after", c.value("utilisation_after_pct") / 100),
        ]
    return pd.DataFrame(rows, columns=["source", "when", "utilisation"])


def utilisation_chart(cfg: Mapping[str, Any]) -> alt.Chart:
    """Grouped bars of :func:`utilisation_bars`."""
    return (
        alt.Chart(utilisation_bars(cfg))
        .mark_bar()
        .encode(
            y=alt.Y("source:N", title=None),
            yOffset=alt.YOffset("when:N", sort=["before", "after"]),
            x=alt.X(
                "utilisation:Q", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]), title="GPU utilisation"
            ),
            color=alt.Color("when:N", sort=["before", "after"], title=None),
            tooltip=["source", "when", alt.Tooltip("utilisation:Q", format=".0%")],
        )
        .properties(width=460, height=260)
    )


PREFETCH_DEPTHS = (0, 1, 2, 4, 8)  # batches the loader may queue ahead, in the prefetch table


def prefetch_table(cfg: Mapping[str, Any], load_ratios: tuple[float, ...] | None = None) -> pd.DataFrame:
    """Simulated utilisation by prefetch depth and loader time per batch (relative to compute time).

    The default ratios are document 001's loading share before GDS (load / compute), then 0.8 and 1.2.
    """
    if load_ratios is None:
        p = loading_pairs()
        load_ratios = (p["share_before"] / p["util_from_share_before"], 0.8, 1.2)
    rows = []
    for ratio in load_ratios:
        row: dict[str, Any] = {"load time / compute time": ratio}
        for depth in PREFETCH_DEPTHS:
            row[f"depth {depth}"] = pl.simulate_prefetch(1.0, ratio, depth, cv=cfg["prefetch_cv"], seed=cfg["seed"])
        rows.append(row)
    return pd.DataFrame(rows)


def llm_input_need(cfg: Mapping[str, Any], params: float | None = None) -> dict[str, float]:
    """Input bandwidth per GPU a dense LLM (default: document 001's 100B model) consumes on ``cfg.gpu`` (bytes/s)."""
    if params is None:
        params = data.claim("001-2.2-loading-share-35-to-12").value("params")
    peak = data.gpu(cfg["gpu"]).peak_flops("bf16")
    tokens = float(pl.llm_tokens_per_s_per_gpu(params, peak, cfg["mfu"]))
    return {"tokens_per_s": tokens, "bytes_per_s": float(pl.required_input_bytes_per_s(tokens, cfg["bytes_per_token"]))}


# --------------------------------------------------------------------------------------------
# MIG
# --------------------------------------------------------------------------------------------


# Jobs packed per GPU generation (snapshots x mean_jobs): first-fit packing grows faster than
# linearly with the jobs of a snapshot, and 50,000 (with at most 1,000 snapshots of at most 500 jobs)
# keep the worst allowed run at about 15 s of simulation on 2 cores.
MAX_SIMULATED_JOBS = 50_000


def _simulation_problem(cfg: Config) -> str | None:
    jobs = cfg["snapshots"] * cfg["mean_jobs"]
    if jobs <= MAX_SIMULATED_JOBS:
        return None
    return (
        f"the MIG simulation packs snapshots x mean_jobs = {jobs:,.0f} jobs for each GPU generation; at most "
        f"{MAX_SIMULATED_JOBS:,} keep a run under a minute (fewer snapshots, or fewer jobs per snapshot)"
    )


_SIM_CACHE: dict[tuple, pd.DataFrame] = {}
_SIM_KEYS = ("mean_jobs", "small_share", "small_compute", "small_memory", "large_compute", "snapshots", "seed")


def mig_simulation(cfg: Mapping[str, Any], gpu: str | None = None) -> pd.DataFrame:
    """Snapshots of the job mix packed on whole GPUs and on MIG slices of ``gpu`` (memoised)."""
    key = (gpu or cfg["gpu"], *(cfg[k] for k in _SIM_KEYS))
    if key not in _SIM_CACHE:
        _SIM_CACHE[key] = _simulate(cfg, gpu)
    return _SIM_CACHE[key].copy()


def _simulate(cfg: Mapping[str, Any], gpu: str | None) -> pd.DataFrame:
    return mig.simulate(
        data.mig_profiles(gpu or cfg["gpu"]),
        mean_jobs=cfg["mean_jobs"],
        small_share=cfg["small_share"],
        small_compute=cfg["small_compute"],
        small_memory=cfg["small_memory"],
        large_compute=cfg["large_compute"],
        snapshots=cfg["snapshots"],
        seed=cfg["seed"],
    )


def mig_summary(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Mean GPUs and utilisation per GPU generation for the same job mix."""
    rows = []
    for gpu in _mig_gpus():
        sim = mig_simulation(cfg, gpu)
        rows.append(
            {
                "GPU": gpu,
                "smallest profile": data.mig_profiles(gpu)["profile"].iloc[0],
                "GPUs whole": sim["gpus_whole"].mean(),
                "GPUs MIG": sim["gpus_mig"].mean(),
                "GPUs MIG (bound)": sim["gpus_mig_bound"].mean(),
                "util whole": sim["util_whole"].mean(),
                "util MIG": sim["util_mig"].mean(),
            }
        )
    return pd.DataFrame(rows)


def mig_chart(cfg: Mapping[str, Any]) -> alt.Chart:
    """Utilisation per snapshot on whole GPUs vs MIG, with the documents' before/after figures as rules."""
    sim = mig_simulation(cfg)
    long = pd.concat(
        [
            pd.DataFrame({"utilisation": sim["util_whole"], "packing": "whole GPUs"}),
            pd.DataFrame({"utilisation": sim["util_mig"], "packing": f"MIG on {cfg['gpu']}"}),
        ]
    )
    c = data.claim("001-2.3-cloud-utilisation-45-to-80")
    rules = pd.DataFrame(
        {
            "utilisation": [c.value("utilisation_before_pct") / 100, c.value("utilisation_after_min_pct") / 100],
            "label": ["001: before MIG", "001: after MIG"],
        }
    )
    hist = (
        alt.Chart(long)
        .mark_bar(opacity=0.7)
        .encode(
            x=alt.X(
                "utilisation:Q",
                bin=alt.Bin(step=0.02),
                axis=alt.Axis(format="%"),
                title="cluster utilisation (compute used / provisioned)",
            ),
            y=alt.Y("count():Q", stack=None, title="snapshots"),
            color=alt.Color("packing:N", title=None),
        )
    )
    lines = alt.Chart(rules).mark_rule(strokeDash=[6, 4], color="black").encode(x="utilisation:Q", tooltip=["label"])
    return (hist + lines).properties(width=500, height=260)


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------

GDS_UNVERIFIABLE = (
    "No public benchmark isolates this figure: a gdsio run comparing GPUDirect mode with compatibility (CPU bounce-buffer) "
    "mode on the same drives and transfer sizes would check it; GDS itself shipped in June 2021, before Blackwell."
)


@check("001-2.2-gds-latency-60-80pct")
def _check_gds_001(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    lo, hi = claim.value("latency_reduction_low_pct"), claim.value("latency_reduction_high_pct")
    faster_lo, faster_hi = (stated(round(100 / (100 - pct), 6)) for pct in (lo, hi))
    return Verdict(
        f"{fmt(lo)}-{fmt(hi)}% latency cut is a {faster_lo}-{faster_hi}× faster transfer; no public measurement to compare",
        "unverifiable",
        GDS_UNVERIFIABLE,
    )


@check("000-3-table-data-loading")
def _check_gds_000(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    lo, hi = claim.value("latency_reduction_low_pct"), claim.value("latency_reduction_high_pct")
    return Verdict(
        f"{fmt(lo)}-{fmt(hi)}% latency cut; same figure as document 001 part 2.2", "unverifiable", GDS_UNVERIFIABLE
    )


@check("001-2.2-utilisation-below-50pct")
def _check_below_50(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    need = llm_input_need(cfg)
    params_b = stated(data.claim("001-2.2-loading-share-35-to-12").value("params") / 1e9)
    limit = stated(claim.value("utilisation_max_pct"))
    recomputed = (
        f"a {params_b}B dense model on {cfg['gpu']} at {fmt(cfg['mfu'], pct=True, sig=2)} MFU consumes {fmt(need['tokens_per_s'])} tokens/s "
        f"= {fmt(need['bytes_per_s'] / 1e3, 'kB/s')} per GPU; utilisation < {limit}% needs a loader slower than that"
    )
    return Verdict(
        recomputed,
        "implausible",
        "For text LLM training the input stream is kilobytes per second per GPU, far below any storage system's throughput; "
        f"long stalls below {limit}% arise only in image/video pipelines with heavy CPU decoding.",
    )


@check("001-2.2-loading-share-35-to-12")
def _check_shares(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    p = loading_pairs(claim.id)
    gap = max(abs(p["util_from_share_before"] - p["util_before"]), abs(p["util_from_share_after"] - p["util_after"]))
    recomputed = (
        f"1 − loading share: {fmt(p['util_from_share_before'], pct=True, sig=2)} -> {fmt(p['util_from_share_after'], pct=True, sig=2)} "
        f"(stated {fmt(p['util_before'], pct=True, sig=2)} -> {fmt(p['util_after'], pct=True, sig=2)})"
    )
    if gap <= cfg["util_tolerance"]:
        return Verdict(
            recomputed,
            "consistent",
            "The two pairs agree if loading was the only stall, within a few points left for other stalls.",
        )
    return Verdict(recomputed, "inconsistent", "The utilisation pair does not follow from the loading shares.")


@check("001-2.2-days-saved-2p5-of-10")
def _check_days_saved(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    d = days_saved(cfg, claim.id)
    stated_days, stated_cost = claim.value("days_saved"), claim.value("cost_reduction_pct") / 100
    recomputed = (
        f"{fmt(d['saved_shares'], 'days')} saved from the loading shares, {fmt(d['saved_util'], 'days')} from utilisation; "
        f"electricity −{fmt(d['electricity_saving'], pct=True, sig=2)} with idle servers at {fmt(cfg['idle_power_fraction'], pct=True, sig=2)} power"
    )
    days_ok = abs(d["saved_shares"] - stated_days) <= 0.1 * stated_days
    energy_ok = abs(d["electricity_saving"] - stated_cost) <= cfg["util_tolerance"]
    if days_ok and energy_ok:
        return Verdict(
            recomputed, "consistent", "Both the days and the electricity saving follow from the loading shares."
        )
    return Verdict(
        recomputed,
        "inconsistent",
        f"The {stated(stated_days)} days follow from the loading shares, but electricity falls less than time because waiting servers still draw power.",
    )


def _case_study(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    b, a = claim.value("utilisation_before_pct"), claim.value("utilisation_after_pct")
    ratio = a / b
    text = f"{fmt(b)}% -> {fmt(a)}% = ×{fmt(ratio, sig=3)} (+{fmt(ratio - 1, pct=True, sig=2)})"
    if "improvement_pct" in claim.values:
        ok = abs((ratio - 1) * 100 - claim.value("improvement_pct")) <= 5
        return Verdict(
            text,
            "consistent" if ok else "inconsistent",
            "The stated improvement is the ratio of the two utilisations; the case study itself cannot be checked.",
        )
    return Verdict(
        text,
        "consistent",
        "Both figures are possible for an input-bound job fixed by a faster pipeline; the case study itself cannot be checked.",
    )


check("000-4-utilisation-58-to-87", "001-4-utilisation-55-to-89")(_case_study)


@check("000-6-half-idle-to-near-full")
def _check_half_idle(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    cases = [data.claim(c) for c in ("000-4-utilisation-58-to-87", "001-4-utilisation-55-to-89")]
    after = [c.value("utilisation_after_pct") for c in cases]
    before = [c.value("utilisation_before_pct") for c in cases]
    return Verdict(
        f"the documents' own case studies end at {fmt(min(after))}-{fmt(max(after))}% "
        f"from {stated(min(before))}-{stated(max(before))}%",
        "consistent",
        f"The summary restates the case studies (about half idle to high-{int(min(after) // 10 * 10)}s utilisation), "
        "which themselves cannot be checked.",
    )


@check("000-4-pb-scale-training-data")
def _check_pb(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    pb = claim.value("data_pb_min") * 1e15
    run = data.claim("000-4-training-days-28-to-11")
    days = run.value("days_before")  # the A100 run length, read as one pass over the data
    rate = pb / (days * 86400)
    return Verdict(
        f"one pass over {fmt(pb / 1e15, 'PB')} in {fmt(days, 'days')} = {fmt(rate / 1e9, 'GB/s')} aggregate",
        "unverifiable",
        "The company's data volume is not public; reading it once per run needs well under 1 GB/s, which any NVMe tier delivers.",
    )


@check("001-2.3-mig-up-to-7-instances")
def _check_seven(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    prof = data.mig_profiles("B300")
    n = int(prof["max_instances"].max())
    return Verdict(
        f"B300: up to {n} instances ({prof['profile'].iloc[0]} × {n}); NVIDIA lists {data.gpu('B300').mig_max_instances}",
        "consistent" if math.isclose(n, claim.value("max_instances")) else "inconsistent",
        "NVIDIA's MIG profiles for B300 allow seven 1g instances, each with its own memory and compute slices.",
    )


@check("001-2.3-debug-20pct-memory")
def _check_debug(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    frac = claim.value("memory_used_pct") / 100
    prof = mig.assign_profiles([min(frac, 1 / 7)], [frac], data.mig_profiles("B300")).iloc[0]
    per_gpu = int(data.mig_profiles("B300").set_index("profile").loc[prof["profile"], "max_instances"])
    return Verdict(
        f"a job using {fmt(frac, pct=True, sig=2)} of memory fits a {prof['profile']} slice; {per_gpu} such jobs share one B300",
        "consistent",
        "An illustration rather than a measurement: such a job would waste most of a whole GPU and fits a small MIG slice.",
    )


@check("001-2.3-cloud-utilisation-45-to-80")
def _check_45_80(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    before, after = claim.value("utilisation_before_pct"), claim.value("utilisation_after_min_pct")
    ratio = float(mig.gpus_ratio_from_utilisation(before, after))
    gpus_after, gpus_before = stated(claim.value("gpus_after")), stated(claim.value("gpus_before"))
    gpus_ratio = claim.value("gpus_after") / claim.value("gpus_before")
    sim = mig_simulation(cfg)
    recomputed = (
        f"{stated(before)}/{stated(after)} = {fmt(ratio, sig=3)} of the GPUs vs {gpus_after}/{gpus_before} = {fmt(gpus_ratio, sig=3)}; simulated mix: "
        f"{fmt(sim['util_whole'].mean(), pct=True, sig=2)} -> {fmt(sim['util_mig'].mean(), pct=True, sig=2)}"
    )
    ok = abs(ratio - gpus_ratio) <= 0.05 * gpus_ratio
    return Verdict(
        recomputed,
        "consistent" if ok else "inconsistent",
        f"The {gpus_after}-for-{gpus_before} figure follows from {stated(before)}% -> {stated(after)}%, and a mix dominated "
        "by small jobs reaches that gain with MIG; the provider's data cannot be checked.",
    )


@check("001-2.3-procurement-30pct")
def _check_procurement(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    c = data.claim("001-2.3-cloud-utilisation-45-to-80")
    implied = 1 - c.value("gpus_after") / c.value("gpus_before")
    expected = implied * cfg["mig_eligible_share"]
    target = claim.value("procurement_reduction_pct") / 100
    recomputed = (
        f"{int(c.value('gpus_after'))} for {int(c.value('gpus_before'))} implies −{fmt(implied, pct=True, sig=2)}; with {fmt(cfg['mig_eligible_share'], pct=True, sig=2)} of purchases MIG-packable: "
        f"−{fmt(expected, pct=True, sig=2)}"
    )
    if abs(expected - target) <= cfg["util_tolerance"]:
        return Verdict(
            recomputed,
            "consistent",
            f"The cut matches the {int(c.value('gpus_after'))}-for-{int(c.value('gpus_before'))} gain applied to the "
            "MIG-packable share of purchases.",
        )
    return Verdict(
        recomputed,
        "inconsistent",
        f"The article's own {int(c.value('gpus_after'))}-for-{int(c.value('gpus_before'))} implies a "
        f"{fmt(implied, pct=True, sig=2)} cut; {fmt(target, pct=True, sig=2)} holds only if about "
        f"{fmt(target / implied, pct=True, sig=2)} of purchases serve MIG-packable work.",
    )


@check("000-3-table-mig")
def _check_table_mig(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    a100 = data.mig_profiles("A100")
    b300 = data.mig_profiles("B300")
    same = list(a100["compute_slices"]) == list(b300["compute_slices"]) and list(a100["memory_eighths"]) == list(
        b300["memory_eighths"]
    )
    recomputed = (
        f"A100 and B300 both offer {int(a100['max_instances'].max())} instances with {'identical' if same else 'different'} slice "
        f"shapes ({a100['profile'].iloc[0]} vs {b300['profile'].iloc[0]} smallest)"
    )
    return Verdict(
        recomputed,
        "inconsistent" if same else "consistent",
        "NVIDIA's MIG guide gives A100 the same seven-way split as B300, so 'finer-grained MIG' cannot explain a "
        f"{stated(claim.value('utilisation_before_pct'))}% -> {stated(claim.value('utilisation_after_pct'))}% gain.",
    )


# --------------------------------------------------------------------------------------------
# Prose: sentences whose conclusion depends on the data and parameters
# --------------------------------------------------------------------------------------------


def _days_ok(cfg: Mapping[str, Any], claim_id: str = "001-2.2-days-saved-2p5-of-10") -> tuple[bool, bool]:
    """Whether the stated days follow from the loading shares, and from the utilisation pair (within 10%)."""
    d, stated = days_saved(cfg, claim_id), data.claim(claim_id).value("days_saved")
    return abs(d["saved_shares"] - stated) <= 0.1 * stated, abs(d["saved_util"] - stated) <= 0.1 * stated


def days_sentence(cfg: Mapping[str, Any], claim_id: str = "001-2.2-days-saved-2p5-of-10") -> str:
    """Which reading reproduces the stated days saved."""
    stated = fmt(data.claim(claim_id).value("days_saved"), "days", sig=2)
    shares, util = _days_ok(cfg, claim_id)
    if shares and util:
        return f"the stated {stated} matches both"
    if shares or util:
        return f"the stated {stated} matches the {'shares' if shares else 'utilisations'}"
    return f"the stated {stated} matches neither"


def electricity_takeaway(cfg: Mapping[str, Any], claim_id: str = "001-2.2-days-saved-2p5-of-10") -> str:
    """Takeaway of the loading section: which of the stated figures hang together at these parameters."""
    c, p = data.claim(claim_id), loading_pairs()
    tol = cfg["util_tolerance"]
    pair_ok = abs(p["util_from_share_before"] - p["util_before"]) <= tol
    pair_ok = pair_ok and abs(p["util_from_share_after"] - p["util_after"]) <= tol
    days_ok = _days_ok(cfg, claim_id)[0]
    energy_ok = abs(days_saved(cfg, claim_id)["electricity_saving"] - c.value("cost_reduction_pct") / 100) <= tol
    figures = {
        "the two pairs": pair_ok,
        f"the {fmt(c.value('days_saved'), 'days', sig=2)}": days_ok,
        f"the {fmt(c.value('cost_reduction_pct') / 100, pct=True, sig=2)} electricity saving": energy_ok,
    }
    good = [k for k, ok in figures.items() if ok]
    bad = [k for k, ok in figures.items() if not ok]
    if not bad:
        return "the loading shares, the utilisation pair, the days saved and the electricity saving all hang together."
    if not good:
        return "none of the stated figures hang together at these parameters."
    good_text = ", ".join(good[:-1]) + " and " + good[-1] if len(good) > 1 else good[0]
    return f"{good_text} hang together; {' and '.join(bad)} {'does' if len(bad) == 1 else 'do'} not."


def mig_gap_sentence(cfg: Mapping[str, Any], claim_id: str = "001-2.3-cloud-utilisation-45-to-80") -> str:
    """Caption sentence: does the simulated job mix span the stated before -> after utilisation?"""
    c, sim = data.claim(claim_id), mig_simulation(cfg)
    tol = cfg["util_tolerance"]
    spans = sim["util_whole"].mean() <= c.value("utilisation_before_pct") / 100 + tol
    spans = spans and sim["util_mig"].mean() >= c.value("utilisation_after_min_pct") / 100 - tol
    return f"the chapter's job mix {'spans' if spans else 'does not span'} that gap"


def generations_sentence() -> str:
    """Why every MIG-capable generation gives the same answer (or that they differ)."""
    shapes = {
        gpu: (tuple(data.mig_profiles(gpu)["compute_slices"]), tuple(data.mig_profiles(gpu)["memory_eighths"]))
        for gpu in _mig_gpus()
    }
    if len(set(shapes.values())) == 1:
        ways = int(max(data.mig_profiles(_mig_gpus()[0])["max_instances"]))
        return f"The same mix on every MIG-capable generation gives the same answer, because every one of them splits {ways} ways:"
    return "The same mix on each MIG-capable generation (their profiles differ):"
