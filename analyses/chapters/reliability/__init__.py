"""Chapter ``reliability``: how often big jobs fail, what a failure costs, how often to checkpoint.

Checks the stability claims of both documents (000 part 2.4 and the part 3 table; 001 part 2.4):
weeks-long runs and hours-long recoveries, "lowest failure rate", hot migration cutting recovery
from hours to minutes, the fintech anecdote (a crash every 5 days, 3 h each, 50 clean days, ~30 h
saved, R&D efficiency +18%), "interruption probability −90%" and the 15-minute/hourly policy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Config, Param, Rule
from analyses.models import reliability as rel
from analyses.site.notebook import fmt, stated
from analyses.verdicts import Verdict, check

POLICY = "001-2.4-checkpoint-15min-then-hourly"
CATEGORIES = ("GPU", "Host", "Network", "Dependency", "Unplanned Maintenance", "Unknown")
HOUR, DAY = rel.SECONDS_PER_HOUR, rel.SECONDS_PER_DAY


def _log_ids() -> list[str]:
    return list(data.failure_logs()["id"])


SPEC = ChapterSpec(
    slug="reliability",
    title="Failures, checkpoints and recovery",
    params=(
        Param(
            "mtbf_source",
            "str",
            "llama3-405b-unexpected",
            "-",
            "failure log that calibrates the per-GPU failure rate",
            choices=_log_ids,
        ),
        Param(
            "gpus", "int", 512, "GPUs", "GPUs in the job under study (the fintech job's size is not stated)", 1, 200_000
        ),
        Param("checkpoint_s", "float", 60.0, "s", "time to write one checkpoint (job blocked)", 0.1, 7200),
        Param(
            "restart_s",
            "float",
            600.0,
            "s",
            "time to detect a failure, restart and reload the last checkpoint",
            0,
            36_000,
        ),
        Param(
            "early_share",
            "float",
            0.1,
            "fraction",
            "share of training work in the 'early' phase of the 15-minute policy",
            0,
            1,
        ),
        Param(
            "policy_tolerance",
            "float",
            0.01,
            "fraction",
            "goodput shortfall against the optimum still called near-optimal",
            0,
            0.5,
        ),
        Param(
            "addressable_categories",
            "str_list",
            ("GPU", "Host"),
            "-",
            "Llama 3 interruption categories that ECC, redundant power and fans and thermal monitoring could remove",
            choices=CATEGORIES,
        ),
        Param(
            "b300_failure_ratio",
            "float",
            1.0,
            "ratio",
            "B300 platform interruptions per day relative to the old platform",
            0.01,
            10,
        ),
    ),
    rules=(Rule(("gpus", "checkpoint_s", "mtbf_source"), lambda c: _monte_carlo_problem(c)),),
)


# --------------------------------------------------------------------------------------------
# Calibration
# --------------------------------------------------------------------------------------------


MC_RUNS = 2000  # Monte Carlo jobs per checkpoint interval
MC_WORK_DAYS = 30.0  # days of work per Monte Carlo job
AGREEMENT_FACTOR = 2.0  # a log "agrees" with the calibration when its per-GPU rate is within this factor


def logs_table(cfg: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Published interruption logs with the per-GPU MTBF and job MTBF each implies.

    With ``cfg``, adds each log's per-GPU failure rate relative to the calibration log
    (``cfg.mtbf_source``) and whether it lies within a factor :data:`AGREEMENT_FACTOR` of it.
    """
    frame = data.failure_logs()
    per_gpu_h = rel.per_gpu_mtbf_s(frame["interruptions"], frame["days"], frame["gpus"]) / HOUR
    out = pd.DataFrame(
        {
            "id": frame["id"],
            "run": frame["run"],
            "hardware": frame["hardware"],
            "GPUs": frame["gpus"],
            "days": frame["days"],
            "interruptions": frame["interruptions"],
            "count": frame["bound"],
            "job MTBF (h)": frame["days"] * 24 / frame["interruptions"],
            "per-GPU MTBF (h)": per_gpu_h,
            "per-GPU MTBF (years)": per_gpu_h / (24 * 365.25),
        }
    )
    if cfg is not None:
        ratio = (per_gpu_mtbf(cfg) / HOUR) / out["per-GPU MTBF (h)"]
        out["rate vs calibration"] = ratio
        out["within 2x"] = np.where((ratio <= AGREEMENT_FACTOR) & (ratio >= 1 / AGREEMENT_FACTOR), "yes", "no")
    return out


def per_gpu_mtbf(cfg: Mapping[str, Any]) -> float:
    """Per-GPU mean time between interruptions (s) from the chosen log."""
    row = data.failure_logs().set_index("id").loc[cfg["mtbf_source"]]
    return float(rel.per_gpu_mtbf_s(row["interruptions"], row["days"], row["gpus"]))


def job_mtbf(cfg: Mapping[str, Any], gpus: int | None = None) -> float:
    """Mean time between interruptions (s) of a job on ``gpus`` (default ``cfg.gpus``) GPUs."""
    return float(rel.cluster_mtbf_s(cfg["gpus"] if gpus is None else gpus, per_gpu_mtbf(cfg)))


def llama3_effective_time() -> float:
    """Llama 3's stated lower bound on effective training time (``failure_logs.effective_time_min``)."""
    return float(data.failure_logs().set_index("id").loc["llama3-405b-all", "effective_time_min"])


def llama3_downtime_bound_s() -> float:
    """Upper bound on mean downtime per interruption (s) implied by Llama 3's effective training time.

    All interruptions of the snapshot; if at least the stated share of time was productive, each
    interruption cost at most ``(1 − share) · days / interruptions`` (restart plus lost work).
    """
    row = data.failure_logs().set_index("id").loc["llama3-405b-all"]
    return (1 - llama3_effective_time()) * row["days"] * DAY / row["interruptions"]


def cause_shares() -> pd.DataFrame:
    """Llama 3 unexpected interruptions by category: count and share of the total."""
    causes = data.failure_causes("llama3-405b-unexpected")
    out = causes.groupby("category", as_index=False)["count"].sum().sort_values("count", ascending=False)
    out["share"] = out["count"] / causes["count"].sum()
    return out.reset_index(drop=True)


def addressable_share(cfg: Mapping[str, Any]) -> float:
    """Share of Llama 3's unexpected interruptions in the categories the hardware features could remove."""
    shares = cause_shares()
    return float(shares[shares["category"].isin(cfg["addressable_categories"])]["share"].sum())


# --------------------------------------------------------------------------------------------
# Checkpoint policy
# --------------------------------------------------------------------------------------------


def optimum(cfg: Mapping[str, Any]) -> dict[str, float]:
    """Young, Daly and exact-optimum intervals (s) and goodputs for the job in ``cfg``."""
    m, d, r = job_mtbf(cfg), cfg["checkpoint_s"], cfg["restart_s"]
    young = float(rel.checkpoint_interval(d, m, method="young"))
    daly = float(rel.checkpoint_interval(d, m, method="daly"))
    exact = rel.optimal_interval_numeric(d, m, r)
    return {
        "mtbf_s": m,
        "young_s": young,
        "daly_s": daly,
        "exact_s": exact,
        "goodput_young": float(rel.goodput(young, d, m, r)),
        "goodput_daly": float(rel.goodput(daly, d, m, r)),
        "goodput_exact": float(rel.goodput(exact, d, m, r)),
    }


def policy_intervals_min(claim_id: str = POLICY) -> tuple[float, float]:
    """The stated policy's early and late checkpoint intervals (minutes)."""
    claim = data.claim(claim_id)
    return claim.value("checkpoint_interval_early_min"), claim.value("checkpoint_interval_late_min")


def policy(cfg: Mapping[str, Any], claim_id: str = POLICY) -> dict[str, float]:
    """Goodput of the stated 15-minute/hourly policy, each interval alone, and the optimum."""
    claim = data.claim(claim_id)
    early = claim.value("checkpoint_interval_early_min") * 60
    late = claim.value("checkpoint_interval_late_min") * 60
    m, d, r = job_mtbf(cfg), cfg["checkpoint_s"], cfg["restart_s"]
    share = cfg["early_share"]
    return {
        "early_s": early,
        "late_s": late,
        "goodput_early": float(rel.goodput(early, d, m, r)),
        "goodput_late": float(rel.goodput(late, d, m, r)),
        "goodput_policy": rel.policy_goodput([early, late], [share, 1 - share], d, m, r),
        "goodput_optimum": optimum(cfg)["goodput_exact"],
    }


# The Monte Carlo holds about this many numbers per array (segments and failures of every run):
# 2.5e7 keeps the chapter's worst allowed run under about 1.5 GB and half a minute.
MC_MAX_ITEMS = 25_000_000


def monte_carlo_intervals(cfg: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The checkpoint intervals of the Monte Carlo table: (label, seconds)."""
    early, late = policy_intervals_min()
    return [
        (f"{stated(early)} min", early * 60),
        ("Young", optimum(cfg)["young_s"]),
        (f"{stated(late)} min", late * 60),
        ("4 h", 4 * HOUR),
    ]


def monte_carlo_items(cfg: Mapping[str, Any], runs: int = MC_RUNS) -> float:
    """Expected size of the Monte Carlo's largest arrays: segments plus failures over all runs.

    A job of ``MC_WORK_DAYS`` is cut into segments of interval + checkpoint; a segment of length
    ``L`` fails ``exp(L / M) - 1`` times on average before it completes (geometric), where ``M``
    is the job MTBF, so a long interval on a large job grows the simulation exponentially.
    """
    m, d = job_mtbf(cfg), cfg["checkpoint_s"]
    work = MC_WORK_DAYS * DAY
    total = 0.0
    for _, tau in monte_carlo_intervals(cfg):
        segments = math.ceil(work / tau)
        total = max(total, runs * segments * (1.0 + math.expm1(min((tau + d) / m, 700.0))))
    return total


def _monte_carlo_problem(cfg: Config) -> str | None:
    items = monte_carlo_items(cfg)
    if items <= MC_MAX_ITEMS:
        return None
    return (
        f"the job fails every {fmt(job_mtbf(cfg) / 60, 'min')}, so the Monte Carlo of {MC_RUNS:,} {stated(MC_WORK_DAYS)}-day "
        f"runs (checkpoints up to 4 h apart) would track about {fmt(items)} segments and failures, more than the "
        f"{fmt(MC_MAX_ITEMS)} that fit in a minute and 2 GB; use fewer gpus, a longer checkpoint_s or a log with rarer failures"
    )


def monte_carlo_table(cfg: Mapping[str, Any], runs: int = MC_RUNS, seed: int = 0) -> pd.DataFrame:
    """Monte Carlo goodput (mean and 90% range of 30-day runs) beside the closed form, per interval."""
    m, d, r = job_mtbf(cfg), cfg["checkpoint_s"], cfg["restart_s"]
    rows = []
    for label, tau in monte_carlo_intervals(cfg):
        sims = rel.simulate_goodput(tau, d, m, r, work_s=MC_WORK_DAYS * DAY, runs=runs, seed=seed)
        rows.append(
            {
                "interval": label,
                "minutes": tau / 60,
                "closed form": float(rel.goodput(tau, d, m, r)),
                "Monte Carlo mean": float(sims.mean()),
                "MC 5%": float(np.quantile(sims, 0.05)),
                "MC 95%": float(np.quantile(sims, 0.95)),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Charts
# --------------------------------------------------------------------------------------------


def goodput_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Goodput against checkpoint interval, optimum and the stated policy intervals marked."""
    m, d, r = job_mtbf(cfg), cfg["checkpoint_s"], cfg["restart_s"]
    opt = optimum(cfg)
    top = max(6 * opt["exact_s"], 2 * 3600.0)
    curve = rel.goodput_curve(d, m, r, np.geomspace(max(d, 1.0), top, 300))
    early, late = policy_intervals_min()
    marks = pd.DataFrame(
        {
            "label": ["optimum (exact)", "Young", "Daly", f"{stated(early)} min (early)", f"{stated(late)} min (late)"],
            "interval_min": [opt["exact_s"] / 60, opt["young_s"] / 60, opt["daly_s"] / 60, early, late],
        }
    )
    marks["goodput"] = rel.goodput(marks["interval_min"].to_numpy() * 60, d, m, r)
    line = (
        alt.Chart(curve)
        .mark_line()
        .encode(
            x=alt.X("interval_min:Q", scale=alt.Scale(type="log"), title="checkpoint interval (minutes)"),
            y=alt.Y(
                "goodput:Q",
                scale=alt.Scale(zero=False),
                title="goodput (share of wall time kept)",
                axis=alt.Axis(format="%"),
            ),
        )
    )
    points = (
        alt.Chart(marks)
        .mark_point(filled=True, size=80)
        .encode(
            x="interval_min:Q",
            y="goodput:Q",
            color=alt.Color("label:N", title=None),
            tooltip=["label", alt.Tooltip("interval_min:Q", format=".1f"), alt.Tooltip("goodput:Q", format=".4f")],
        )
    )
    return (line + points).properties(width=520, height=300)


def failures_chart(cfg: Mapping[str, Any], claim_id: str = "001-2.4-fintech-crash-every-5-days") -> alt.LayerChart:
    """Interruptions per day against job size for each published log, the stated 'every 5 days' as a rule."""
    logs = data.failure_logs()
    sizes = np.geomspace(8, 131_072, 60)
    frames = []
    for row in logs.itertuples():
        m = float(rel.per_gpu_mtbf_s(row.interruptions, row.days, row.gpus))
        frames.append(
            pd.DataFrame({"GPUs": sizes, "failures per day": rel.failures_per_day(sizes, m), "calibration": row.id})
        )
    curves = pd.concat(frames, ignore_index=True)
    rate = 1.0 / data.claim(claim_id).value("crash_interval_days")
    days = stated(data.claim(claim_id).value("crash_interval_days"))
    rule = pd.DataFrame({"failures per day": [rate], "label": [f"document: one crash every {days} days"]})
    lines = (
        alt.Chart(curves)
        .mark_line()
        .encode(
            x=alt.X("GPUs:Q", scale=alt.Scale(type="log"), title="GPUs in the job"),
            y=alt.Y("failures per day:Q", scale=alt.Scale(type="log"), title="interruptions per day"),
            color=alt.Color("calibration:N", title="calibrated on"),
        )
    )
    hline = (
        alt.Chart(rule).mark_rule(strokeDash=[6, 4], color="black").encode(y="failures per day:Q", tooltip=["label"])
    )
    return (lines + hline).properties(width=520, height=300)


def causes_chart(cfg: Mapping[str, Any]) -> alt.Chart:
    """Llama 3 unexpected interruptions by category, coloured by whether the features could address them."""
    shares = cause_shares()
    shares["addressable"] = np.where(
        shares["category"].isin(cfg["addressable_categories"]), "assumed addressable", "not addressable"
    )
    return (
        alt.Chart(shares)
        .mark_bar()
        .encode(
            x=alt.X(
                "share:Q",
                title=f"share of {int(shares['count'].sum())} unexpected interruptions",
                axis=alt.Axis(format="%"),
            ),
            y=alt.Y("category:N", sort="-x", title=None),
            color=alt.Color("addressable:N", title=None),
            tooltip=["category", "count", alt.Tooltip("share:Q", format=".1%")],
        )
        .properties(width=480, height=200)
    )


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def _weeks_runs_recomputed() -> str:
    logs = data.failure_logs().set_index("id")
    return (
        f"published runs: Llama 3 {fmt(logs.loc['llama3-405b-all', 'days'])} days, OPT-175B about "
        f"{fmt(logs.loc['opt-175b-hardware', 'days'])} days; Llama 3's >{stated(round(llama3_effective_time() * 100, 6))}% effective time bounds mean downtime "
        f"per interruption at {fmt(llama3_downtime_bound_s() / 60, 'min')}"
    )


@check("000-2.4-weeks-long-runs-hours-to-recover")
def _check_weeks_hours_recover(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return Verdict(
        _weeks_runs_recomputed(),
        "consistent",
        "Runs of weeks to months are documented (Llama 3, OPT-175B) and manual restarts such as OPT-175B's can take hours, "
        "though automated restarts at Meta averaged well under an hour.",
    )


@check("001-2.4-weeks-long-runs-hours-lost")
def _check_weeks_hours_lost(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    low_h = claim.value("hours_lost_low")
    # lost time per crash = tau/2 + R; several hours need tau >= 2 (low - R)
    need_tau_h = 2 * (low_h - cfg["restart_s"] / HOUR)
    opt = optimum(cfg)
    recomputed = (
        f"lost per crash = interval/2 + restart; {fmt(low_h, 'h')} or more needs checkpoints {fmt(need_tau_h, 'h')} apart "
        f"(optimum for {cfg['gpus']} GPUs: {fmt(opt['exact_s'] / HOUR, 'h')})"
    )
    return Verdict(
        recomputed,
        "consistent",
        "Weeks-long runs are documented, and hours of lost progress per crash follow whenever checkpoints are hours apart, "
        "as the document itself notes.",
    )


def _unverifiable_rate() -> str:
    return "no public failure-rate data for B300 fleets; NVIDIA publishes no per-GPU failure rate"


@check("000-2.4-failure-rate-industry-lowest")
def _check_lowest(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return Verdict(
        _unverifiable_rate(),
        "unverifiable",
        "No B300 fleet failure statistics are published, and ECC and redundant power and fans are also standard on A100 and H100 servers.",
    )


@check("001-2.4-failure-rate-very-low")
def _check_very_low(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return Verdict(
        _unverifiable_rate(),
        "unverifiable",
        "No B300 fleet failure statistics are published; the document gives no figure to test.",
    )


def _hours_to_minutes(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    bound = llama3_downtime_bound_s()
    lost = cfg["restart_s"] + 0.5 * policy_intervals_min()[1] * 60
    recomputed = (
        f"Llama 3 (H100) already averaged at most {fmt(bound / 60, 'min')} per interruption; restart {fmt(cfg['restart_s'] / 60, 'min')} "
        f"+ half of an hourly interval = {fmt(lost / 60, 'min')} lost"
    )
    return Verdict(
        recomputed,
        "consistent",
        "Minutes-scale recovery is achievable and documented on H100 clusters with automated restart, though it comes from "
        "software and spare nodes rather than from B300 hardware.",
    )


check("000-2.4-recovery-hours-to-minutes", "001-2.4-loss-hours-to-minutes")(_hours_to_minutes)


def _fintech_numbers(claim: data.Claim, cfg: Mapping[str, Any], recovery_h: float) -> dict[str, float]:
    interval_d = claim.value("crash_interval_days")
    run_d = claim.value("run_days_no_fault")
    crashes = run_d / interval_d
    lost_work_h = 0.5 * policy(cfg)["late_s"] / HOUR  # half an hourly checkpoint interval
    gpus_at_5d = float(rel.gpus_for_mtbf(interval_d * DAY, per_gpu_mtbf(cfg)))
    b300_mtbf = interval_d * DAY / cfg["b300_failure_ratio"]
    return {
        "crashes": crashes,
        "saved_h": float(rel.crash_recovery_hours(run_d, interval_d, recovery_h)),
        "saved_with_lost_work_h": float(rel.crash_recovery_hours(run_d, interval_d, recovery_h, lost_work_h)),
        "gpus_at_stated_rate": gpus_at_5d,
        "p_clean": float(rel.prob_no_failure(run_d * DAY, b300_mtbf)),
    }


@check("001-2.4-fintech-crash-every-5-days")
def _check_fintech_001(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    n = _fintech_numbers(claim, cfg, claim.value("recovery_hours_per_crash"))
    clean_days = stated(claim.value("run_days_no_fault"))
    recomputed = (
        f"{fmt(n['crashes'])} crashes × {fmt(claim.value('recovery_hours_per_crash'), 'h')} = {fmt(n['saved_h'], 'h')}; "
        f"a crash every {stated(claim.value('crash_interval_days'))} days matches about {fmt(n['gpus_at_stated_rate'])} GPUs "
        f"at the {cfg['mtbf_source']} rate; chance of {clean_days} clean days at the old rate × {fmt(cfg['b300_failure_ratio'])}: {fmt(n['p_clean'], pct=True, sig=2)}"
    )
    saved = claim.value("hours_saved_approx")
    verdict = "consistent" if abs(n["saved_h"] - saved) <= 0.1 * saved else "inconsistent"
    return Verdict(
        recomputed,
        verdict,
        f"The arithmetic holds (the anecdote itself cannot be checked), but {clean_days} clean days at the old rate would be very "
        "unlikely, so it also implies a platform that fails several times less often.",
    )


@check("000-2.4-fintech-crash-every-5-days")
def _check_fintech_000(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    other = data.claim("001-2.4-fintech-crash-every-5-days")
    recovery_h = other.value("recovery_hours_per_crash")
    n = _fintech_numbers(claim, cfg, recovery_h)
    recomputed = (
        f"{fmt(n['crashes'])} crashes × ({fmt(recovery_h, 'h')} recovery from document 001 + half an hourly interval of lost work) "
        f"= {fmt(n['saved_with_lost_work_h'], 'h')}"
    )
    ok = n["saved_with_lost_work_h"] >= claim.value("hours_saved_min")
    return Verdict(
        recomputed,
        "consistent" if ok else "inconsistent",
        f"With document 001's {stated(recovery_h)} h per recovery plus the work lost since the last checkpoint the saving "
        f"exceeds {stated(claim.value('hours_saved_min'))} h; "
        "the anecdote itself cannot be checked.",
    )


@check("001-2.4-rd-efficiency-18pct")
def _check_rd_efficiency(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    other = data.claim("001-2.4-fintech-crash-every-5-days")
    saved_h = other.value("hours_saved_approx")
    window_h = other.value("run_days_no_fault") * 24
    share = saved_h / window_h
    needed_h = claim.value("rd_efficiency_gain_pct") / 100 * other.value("crash_interval_days") * 24
    recomputed = (
        f"{fmt(saved_h, 'h')} saved of {fmt(window_h, 'h')} = {fmt(share, pct=True, sig=2)} of the time; +{fmt(claim.value('rd_efficiency_gain_pct') / 100, pct=True, sig=2)} would need "
        f"{fmt(needed_h, 'h')} lost per crash"
    )
    return Verdict(
        recomputed,
        "inconsistent",
        f"The anecdote's own figures give a time saving of about {fmt(share, pct=True, sig=2)}, "
        f"not {fmt(claim.value('rd_efficiency_gain_pct') / 100, pct=True, sig=2)}.",
    )


@check("000-3-table-stability")
def _check_interruption_minus_90(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    share = addressable_share(cfg)
    target = claim.value("interruption_reduction_pct") / 100
    recomputed = (
        f"categories {', '.join(cfg['addressable_categories'])} caused {fmt(share, pct=True, sig=3)} of Llama 3's "
        f"{int(cause_shares()['count'].sum())} unexpected interruptions; removing all of them cuts interruptions by at most that"
    )
    if share >= target:
        return Verdict(
            recomputed,
            "consistent",
            f"The assumed-addressable causes are large enough to allow a {fmt(target, pct=True, sig=2)} cut.",
        )
    return Verdict(
        recomputed,
        "implausible",
        f"A {fmt(target, pct=True, sig=2)} cut needs the named hardware features to remove causes (software bugs, network, maintenance) they do not touch; "
        "hot migration shortens recovery but prevents no interruption.",
    )


@check("001-2.4-checkpoint-15min-then-hourly")
def _check_policy(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    p = policy(cfg, claim.id)
    opt = optimum(cfg)
    shortfall = p["goodput_optimum"] - p["goodput_policy"]
    recomputed = (
        f"goodput {fmt(p['goodput_policy'], pct=True, sig=4)} with the policy vs {fmt(p['goodput_optimum'], pct=True, sig=4)} "
        f"at the optimum ({fmt(opt['exact_s'] / 60, 'min')}) for {cfg['gpus']} GPUs, {fmt(cfg['checkpoint_s'], 's')} checkpoints"
    )
    if shortfall <= cfg["policy_tolerance"]:
        return Verdict(
            recomputed,
            "consistent",
            "The policy stays within the tolerance of the optimum, although the optimum depends on checkpoint cost and "
            "failure rate, not on the phase of training.",
        )
    return Verdict(
        recomputed,
        "inconsistent",
        "The policy falls short of the optimum by more than the tolerance; the right interval follows from checkpoint "
        "cost and failure rate, not from the phase of training.",
    )


# --------------------------------------------------------------------------------------------
# Prose: sentences whose conclusion depends on the data and parameters
# --------------------------------------------------------------------------------------------


def _duration(seconds: float) -> str:
    return fmt(seconds / DAY, "days", sig=2) if seconds >= 2 * DAY else fmt(seconds / HOUR, "h", sig=2)


def failures_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the failure-rate section: job MTBF at the chapter's size and at Llama 3's."""
    big = int(data.failure_logs().set_index("id").loc["llama3-405b-unexpected", "gpus"])
    return (
        f"failures scale with GPU count: at the calibration's rate a job of {cfg['gpus']:,} GPUs is interrupted every "
        f"{_duration(job_mtbf(cfg))}, one of {big:,} GPUs every {_duration(job_mtbf(cfg, big))}."
    )


def policy_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the checkpoint section: how the stated intervals compare with the optimum for this job."""
    p = policy(cfg)
    late = fmt(p["late_s"] / 60, "min", sig=2)
    early = fmt(p["early_s"] / 60, "min", sig=2)
    gap = p["goodput_optimum"] - p["goodput_late"]
    first = (
        f"{late} checkpoints are close to optimal for this job"
        if gap <= cfg["policy_tolerance"]
        else f"{late} checkpoints fall {fmt(gap, pct=True, sig=2)} of goodput short of the optimum for this job"
    )
    second = (
        f"{early} checkpoints cost more than they save"
        if p["goodput_early"] < p["goodput_late"]
        else f"{early} checkpoints do better still"
    )
    return f"the right interval follows from checkpoint cost and failure rate; {first}, and {second}."


def mc_takeaway(mc: pd.DataFrame) -> str:
    """Takeaway of the Monte Carlo check: agreement with the closed form and how the spread moves."""
    diff = float((mc["Monte Carlo mean"] - mc["closed form"]).abs().max())
    ordered = mc.sort_values("minutes")
    spread = (ordered["MC 95%"] - ordered["MC 5%"]).to_numpy()
    wider = spread[-1] > spread[0]
    return (
        f"the simulated means differ from the closed form by at most {fmt(100 * diff, sig=2)} percentage points of "
        f"goodput; the spread between runs is {'wider' if wider else 'narrower'} for long intervals than for short ones"
        + (", where a single unlucky failure costs more." if wider else ".")
    )


def causes_sentence(cfg: Mapping[str, Any], claim_id: str = "000-3-table-stability") -> str:
    """Caption sentence: the share of interruptions outside the addressable categories against the stated cut."""
    shares = cause_shares()
    others = shares[~shares["category"].isin(cfg["addressable_categories"])]
    outside = float(others["share"].sum())
    target = data.claim(claim_id).value("interruption_reduction_pct") / 100
    reach = (
        "within reach only if every addressable interruption goes"
        if addressable_share(cfg) >= target
        else "out of reach"
    )
    names = ", ".join(others["category"].str.lower())
    return (
        f"Interruptions outside the addressable categories ({names}) make up {fmt(outside, pct=True, sig=2)}, "
        f"so a {fmt(target, pct=True, sig=2)} cut is {reach}"
    )


def clean_run_sentence(cfg: Mapping[str, Any], claim_id: str = "001-2.4-fintech-crash-every-5-days") -> str:
    """How likely the anecdote's clean run is at the B300 platform's assumed failure ratio."""
    claim = data.claim(claim_id)
    p = _fintech_numbers(claim, cfg, claim.value("recovery_hours_per_crash"))["p_clean"]
    days = fmt(claim.value("run_days_no_fault"), "days", sig=2)
    ratio = cfg["b300_failure_ratio"]
    rate = "at the old platform's rate" if ratio == 1 else f"at {fmt(ratio, 'x', sig=2)} the old platform's rate"
    text = f"And {rate}, {days} without a crash would happen with probability {fmt(p, pct=True, sig=2)}"
    if p < 0.05:
        return text + ": the anecdote also implies a platform that fails several times less often."
    return text + ": at this failure ratio the clean run is plausible."
