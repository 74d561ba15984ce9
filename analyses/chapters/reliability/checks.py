"""Checks of the reliability chapter: failures, recovery, the fintech crash log and the checkpoint policy.

Each check recomputes its claim from the scenario (``s``: the per-GPU interruption rate, the job's
GPU count, the checkpoint write and restart times, the B300 failure ratio, the share of the run in
its early phase, the share of interruptions server hardware could prevent) with
:mod:`analyses.models.reliability`, and returns a :class:`~analyses.verdicts.Finding`; the rule of
the claim's kind decides. Every check is numpy-vectorised in ``s``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import data
from analyses.models import reliability as rel
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.scenario import cases
from analyses.units import HOURS_PER_DAY, MINUTES_PER_HOUR, SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE
from analyses.units.formats import fmt, stated
from analyses.verdicts import Arithmetic, Finding, at_least, at_most, between, check, exactly, rounded

POLICY = "001-2.4-checkpoint-15min-then-hourly"
STABILITY = "000-3-table-stability"
CALIBRATION = "llama3-405b-unexpected"  # the log the scenario's central interruption rate comes from
ALL_INTERRUPTIONS = "llama3-405b-all"  # the same run with planned interruptions: its effective-time bound
CLEAN_RUN_TAIL = (1 - INTERVAL_LEVEL) / 2  # a clean run "happens" if it lies within the book's 90% interval

READING_HOURS = "数小时 read as hours rather than minutes (one hour or more), as the section's own 小时级 contrast says"
READING_MINUTES = (
    "分钟级 read as on the order of minutes (under an hour); strictly, a few minutes (1-9), as 数 reads elsewhere"
)


# --------------------------------------------------------------------------------------------
# The job, its optimum and the policy (shared by the checks and the page)
# --------------------------------------------------------------------------------------------


def job_mtbf_s(s: Mapping[str, Any]) -> np.ndarray:
    """Mean time between interruptions (s) of the scenario's job: per-GPU MTBF / GPUs."""
    return rel.cluster_mtbf_s(s["job_gpus"], rel.per_gpu_mtbf_from_rate_s(s["interruptions_per_gpu_year"]))


def optimum_s(s: Mapping[str, Any]) -> np.ndarray:
    """The checkpoint interval (s) that maximises the scenario job's goodput."""
    return rel.optimal_interval_s(s["checkpoint_write_s"], job_mtbf_s(s))


def policy_intervals_s(claim: data.Claim | None = None) -> tuple[float, float]:
    """Document 001's early and late checkpoint intervals (s)."""
    c = claim if claim is not None else data.claim(POLICY)
    early = c.value("checkpoint_interval_early_min") * SECONDS_PER_MINUTE
    return early, c.value("checkpoint_interval_late_min") * SECONDS_PER_MINUTE


def policy_goodputs(s: Mapping[str, Any], claim: data.Claim | None = None) -> dict[str, Any]:
    """Goodput of each stated interval alone, of the phased policy and at the optimum."""
    early, late = policy_intervals_s(claim)
    m, d, r, share = job_mtbf_s(s), s["checkpoint_write_s"], s["restart_s"], s["early_phase_share"]
    tau = optimum_s(s)
    best = rel.goodput(tau, d, m, r)
    policy = rel.policy_goodput([early, late], [share, 1 - np.asarray(share)], d, m, r)
    with np.errstate(invalid="ignore", divide="ignore"):
        # failures so frequent that even the best interval's goodput underflows to 0: the policy's
        # longer intervals fall behind it without bound, so the ratio's limit is 0 (not 0/0 = NaN)
        ratio = np.where(best > 0, policy / np.where(best > 0, best, 1.0), 0.0)
    return {
        "early": rel.goodput(early, d, m, r),
        "late": rel.goodput(late, d, m, r),
        "policy": policy,
        "optimum": best,
        "optimum_s": tau,
        "ratio": ratio,
    }


def downtime_bound_s() -> float:
    """Llama 3's bound on the mean time one interruption cost (s): over 90% effective time."""
    row = data.failure_logs().set_index("id").loc[ALL_INTERRUPTIONS]
    return float(rel.downtime_bound_s(row["effective_time_min"], row["days"], row["interruptions"]))


def _bound_text() -> str:
    return f"Llama 3 on H100s lost at most {fmt(downtime_bound_s() / SECONDS_PER_MINUTE, 'min')} per interruption"


# --------------------------------------------------------------------------------------------
# Weeks-long runs and hours-long recoveries (the problem both documents describe)
# --------------------------------------------------------------------------------------------


def _run_lengths() -> str:
    logs = data.failure_logs().set_index("id")
    return (
        f"published 100B-class runs last weeks to months (OPT-175B about {fmt(logs.loc['opt-175b-hardware', 'days'], 'days', 2)}, "
        f"Llama 3's snapshot {fmt(logs.loc[CALIBRATION, 'days'], 'days', 2)})"
    )


@check("000-2.4-weeks-long-runs-hours-to-recover")
def check_weeks_long_runs_hours_to_recover(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.4: runs last weeks, and recovering from a checkpoint often takes hours."""
    restart_min = np.asarray(s["restart_s"]) / SECONDS_PER_MINUTE
    all_in = rel.lost_per_interruption_s(optimum_s(s), s["checkpoint_write_s"], job_mtbf_s(s), s["restart_s"])
    all_in_min = all_in / SECONDS_PER_MINUTE
    return Finding(
        stated=at_least(SECONDS_PER_HOUR / SECONDS_PER_MINUTE),
        value=all_in_min,
        unit="min",
        recomputed=lambda: (
            f"{_run_lengths()}; an interruption costs {fmt(all_in_min, 'min')} in the scenario: a restart of "
            f"{fmt(restart_min, 'min')} plus the work since the last checkpoint at the best interval; "
            f"{_bound_text()}, recomputed work included"
        ),
        context=lambda v: (
            "runs do last weeks, and getting back to where a run stood takes about an hour even with automated "
            "restarts at the best checkpoint interval; read as the restart alone, which automated recovery on spare "
            "nodes brings to minutes on A100 and H100 clusters, the claim would be inconsistent"
            if v == "consistent"
            else "runs do last weeks, but getting back to where a run stood takes well under an hour with automated "
            "restarts; hours are what a restart that waits for an operator costs"
        ),
        reading=(
            "恢复 read as getting back to where the run stood: the restart plus the work redone since the last "
            f"checkpoint (strictly, the restart alone); {READING_HOURS}"
        ),
        strict=between(
            claim.value("recovery_hours_low") * MINUTES_PER_HOUR, claim.value("recovery_hours_high") * MINUTES_PER_HOUR
        ),
    )


@check("001-2.4-weeks-long-runs-hours-lost")
def check_weeks_long_runs_hours_lost(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: 100B runs last weeks, and a crash may lose hours of progress."""
    tau_h = optimum_s(s) / SECONDS_PER_HOUR
    return Finding(
        stated=at_least(1.0),
        value=tau_h,
        unit="h",
        recomputed=lambda: (
            f"{_run_lengths()}; at the interval that maximises goodput ({fmt(tau_h, 'h')} for "
            f"{fmt(s['job_gpus'], 'GPUs')} and {fmt(s['checkpoint_write_s'], 's')} checkpoints) a crash just before "
            f"the next checkpoint loses {fmt(tau_h, 'h')} of progress, {fmt(tau_h / 2, 'h')} on average"
        ),
        context=lambda v: (
            "a crash can cost hours of progress whenever checkpoints are hours apart, as the document itself notes"
            if v == "consistent"
            else "at this job's best interval no crash loses hours of progress"
        ),
        reading=f"可能损失 (may lose) read as the most one crash can lose, a whole checkpoint interval; {READING_HOURS}",
        strict=between(claim.value("hours_lost_low"), claim.value("hours_lost_high")),
    )


# --------------------------------------------------------------------------------------------
# B300's failure rate and recovery (what the documents promise)
# --------------------------------------------------------------------------------------------


@check("000-2.4-failure-rate-industry-lowest", "001-2.4-failure-rate-very-low")
def check_failure_rate_industry_lowest(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Both documents §2.4: ECC, redundant power and fans bring B300's failure rate to the lowest / a very low level."""
    return Finding(
        stated=exactly(0.0),
        value=None,
        recomputed="no failure statistics of B300 fleets are published, and NVIDIA publishes no per-GPU failure rate",
        context=(
            "ECC memory and redundant power supplies are standard on A100 and H100 servers too; the claim gives no "
            "figure to test"
        ),
        reading="最低 / 极低 give no figure: nothing to compare",
    )


def _minutes_finding(value_min: Any, recomputed: Any, what: str) -> Finding:
    return Finding(
        stated=at_most(SECONDS_PER_HOUR / SECONDS_PER_MINUTE),
        value=value_min,
        unit="min",
        recomputed=recomputed,
        context=lambda v: (
            f"{what} in minutes comes from automated restart on spare nodes, which A100 and H100 clusters already use "
            f"({_bound_text()}), not from B300 hardware"
            if v == "consistent"
            else f"{what} takes longer than minutes in this scenario"
        ),
        reading=READING_MINUTES,
        strict=between(1.0, 9.0),
    )


@check("000-2.4-recovery-hours-to-minutes")
def check_recovery_hours_to_minutes(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.4: hot migration of checkpoints cuts recovery time from hours to minutes."""
    restart_min = np.asarray(s["restart_s"]) / SECONDS_PER_MINUTE
    return _minutes_finding(
        restart_min,
        lambda: f"a restart on a spare node from the last checkpoint takes {fmt(restart_min, 'min')} in the scenario",
        "recovery",
    )


@check("001-2.4-loss-hours-to-minutes")
def check_loss_hours_to_minutes(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: hot migration cuts the time a crash loses from hours to minutes."""
    late = policy_intervals_s()[1]
    m, d, r = job_mtbf_s(s), s["checkpoint_write_s"], s["restart_s"]
    lost = rel.lost_per_interruption_s(late, d, m, r) / SECONDS_PER_MINUTE
    at_best = rel.lost_per_interruption_s(optimum_s(s), d, m, r) / SECONDS_PER_MINUTE
    return _minutes_finding(
        lost,
        lambda: (
            f"restart {fmt(s['restart_s'] / SECONDS_PER_MINUTE, 'min')} + the work since the last of the document's "
            f"own {fmt(late / SECONDS_PER_MINUTE, 'min', 2)} checkpoints = {fmt(lost, 'min')} lost per crash "
            f"({fmt(at_best, 'min')} at the interval that maximises goodput)"
        ),
        "the time a crash loses",
    )


# --------------------------------------------------------------------------------------------
# The fintech crash log (both documents) and its R&D efficiency
# --------------------------------------------------------------------------------------------


def fintech_numbers(s: Mapping[str, Any]) -> dict[str, Any]:
    """The fintech anecdote recomputed: crashes, hours saved, the B300 job MTBF the clean run needs,
    and the MTBF of a B300 job of the size document 000 plans for a 10B model (4-8 nodes) at the
    scenario's per-GPU interruption rate times the B300 failure ratio."""
    f, plan = cases.fintech(), cases.deployment_plan()
    crashes = f.run_days_no_fault / f.crash_interval_days
    per_gpu = rel.per_gpu_mtbf_from_rate_s(s["interruptions_per_gpu_year"])
    b300_per_gpu = per_gpu / np.asarray(s["b300_failure_ratio"])
    mtbf_days = {n: b300_per_gpu / n / SECONDS_PER_DAY for n in (plan.gpus_low, plan.gpus_high)}
    return {
        "crashes": crashes,
        "saved_h": rel.crash_recovery_hours(f.run_days_no_fault, f.crash_interval_days, f.recovery_hours_per_crash),
        "run_h": f.run_days_no_fault * HOURS_PER_DAY,
        "need_mtbf_days": float(rel.clean_run_mtbf_s(f.run_days_no_fault, CLEAN_RUN_TAIL)),
        "gpus": (plan.gpus_low, plan.gpus_high),
        "b300_mtbf_days": mtbf_days[plan.gpus_high],  # the plan's larger cluster: the cautious end
        "b300_mtbf_days_small": mtbf_days[plan.gpus_low],
        "same_platform_days": f.crash_interval_days / np.asarray(s["b300_failure_ratio"]),
        "p_clean": rel.prob_no_failure(f.run_days_no_fault, mtbf_days[plan.gpus_high]),
        "gpus_at_rate": rel.gpus_for_mtbf(f.crash_interval_days * SECONDS_PER_DAY, per_gpu),
    }


def _fintech(claim: data.Claim, s: Mapping[str, Any], arithmetic: Arithmetic) -> Finding:
    f, n = cases.fintech(), fintech_numbers(s)
    lo_gpus, hi_gpus = n["gpus"]
    return Finding(
        stated=at_least(n["need_mtbf_days"]),
        value=n["b300_mtbf_days"],
        high=n["b300_mtbf_days_small"],
        unit="days",
        recomputed=lambda: (
            f"{fmt(n['crashes'], sig=2)} crashes × {fmt(f.recovery_hours_per_crash, 'h', 1)} = {fmt(n['saved_h'], 'h', 2)}; "
            f"{stated(f.run_days_no_fault)} clean days need a job MTBF of {fmt(n['need_mtbf_days'], 'days')} or more; "
            f"a B300 job of {stated(lo_gpus)}-{stated(hi_gpus)} GPUs (document 000's plan for a 10B model) at the "
            f"scenario's rate fails every {fmt(n['b300_mtbf_days'])}-{fmt(n['b300_mtbf_days_small'], 'days')} "
            f"(chance of the clean run {fmt(n['p_clean'], pct=True, sig=2)} or more); the old platform's crash every "
            f"{stated(f.crash_interval_days)} days matches about {fmt(n['gpus_at_rate'], 'GPUs', 2)} at that rate"
        ),
        context=lambda v: (
            "the saving's arithmetic holds, and a 10B job on the few nodes the document plans for it fails rarely enough "
            "at published failure rates for 50 clean days; the old platform crashed far more often than such a job "
            f"would (read as the same job failing as often as before, the clean run would have a "
            f"{fmt(float(np.min(rel.prob_no_failure(f.run_days_no_fault, n['same_platform_days']))), pct=True, sig=2)} chance)"
            if v == "consistent"
            else "the saving's arithmetic holds, but even a job on the few nodes the document plans for a 10B model fails "
            "too often at the scenario's rate for 50 clean days to be likely"
        ),
        arithmetic=(arithmetic,),
        reading=(
            f"the new job sized as document 000 plans a 10B model ({stated(lo_gpus)}-{stated(hi_gpus)} B300s) and "
            f"failing at published per-GPU rates; {stated(f.run_days_no_fault)} clean days read as a run within the "
            f"book's {fmt(INTERVAL_LEVEL, pct=True, sig=2)} interval; strictly, the same job failing as often as on "
            "the old platform"
        ),
    )


@check("001-2.4-fintech-crash-every-5-days")
def check_fintech_crash_every_5_days_001(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: a crash every 5 days, 3 h each; 50 clean days on B300, about 30 h saved."""
    f = cases.fintech()
    saved = rel.crash_recovery_hours(f.run_days_no_fault, f.crash_interval_days, f.recovery_hours_per_crash)
    return _fintech(claim, s, Arithmetic("the recovery time saved (hours)", rounded(f.hours_saved_001), saved))


@check("000-2.4-fintech-crash-every-5-days")
def check_fintech_crash_every_5_days_000(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.4: a crash every 5 days; 50 clean days on B300, over 30 h saved (3 h per crash from 001)."""
    f = cases.fintech()
    saved = rel.crash_recovery_hours(f.run_days_no_fault, f.crash_interval_days, f.recovery_hours_per_crash)
    return _fintech(
        claim,
        s,
        Arithmetic("the recovery time saved at document 001's 3 h a crash", at_least(f.hours_saved_000_min), saved),
    )


@check("001-2.4-rd-efficiency-18pct")
def check_rd_efficiency_18pct(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: the fintech firm's R&D efficiency rose by 18%."""
    f = cases.fintech()
    n = fintech_numbers(s)
    gain = 100 * n["saved_h"] / n["run_h"]
    needed_h = f.rd_efficiency_gain * f.crash_interval_days * HOURS_PER_DAY
    return Finding(
        stated=rounded(100 * f.rd_efficiency_gain),
        value=gain,
        unit="%",
        recomputed=lambda: (
            f"{fmt(n['saved_h'], 'h', 2)} saved of {fmt(n['run_h'], 'h')} = {fmt(gain / 100, pct=True, sig=2)} more "
            f"productive time; +{stated(100 * f.rd_efficiency_gain)}% would need {fmt(needed_h, 'h')} lost per crash, "
            f"not {fmt(f.recovery_hours_per_crash, 'h', 1)}"
        ),
        context="the anecdote's own figures give a far smaller gain; nothing else in it explains the rest",
        reading=(
            f"研发效率 read as the productive time the saved recovery hours free over the {stated(f.run_days_no_fault)} "
            "days, the only figures given"
        ),
    )


# --------------------------------------------------------------------------------------------
# The table's -90% interruptions (000 §3) and the checkpoint policy (001 §2.4)
# --------------------------------------------------------------------------------------------


@check(STABILITY)
def check_table_stability(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §3 table: ECC, redundancy and hot migration cut the probability of interruption by 90%."""
    cut = claim.value("interruption_reduction_pct")
    share = s["preventable_interruption_share"]
    factor = rel.interruption_cut_factor(share)
    band = rounded(cut, 10)

    def times(pct: float) -> float:
        return float(rel.interruption_cut_factor(pct / 100))

    return Finding(
        stated=between(times(band.lo), times(band.hi)),
        value=factor,
        unit="x",
        recomputed=lambda: (
            f"-{stated(cut)}% is {fmt(times(cut), 'x', 2)} fewer interruptions; removing every interruption server "
            f"hardware could prevent ({fmt(share, pct=True)} of Llama 3's {int(data.failure_causes(CALIBRATION)['count'].sum())}) "
            f"leaves {fmt(1 - share, pct=True)}, {fmt(factor, 'x')} fewer"
        ),
        context=(
            "software bugs, dependencies, network faults and timeouts interrupt jobs whatever the server, and hot "
            "migration shortens a recovery but prevents no interruption"
        ),
        reading=f"降低{stated(cut)}% read as about {stated(cut)}% ({stated(band.lo)}-{stated(band.hi)}%)",
        strict=exactly(times(cut)),
    )


@check(POLICY)
def check_checkpoint_15min_then_hourly(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: checkpoint every 15 minutes early in training and hourly later."""
    g = policy_goodputs(s, claim)
    early, late = policy_intervals_s(claim)
    return Finding(
        stated=exactly(1.0),
        value=g["ratio"],
        unit="fraction",
        recomputed=lambda: (
            f"goodput {fmt(g['policy'], pct=True, sig=4)} with the policy ({fmt(s['early_phase_share'], pct=True, sig=2)} "
            f"of the run at {fmt(early / SECONDS_PER_MINUTE, 'min', 2)}, the rest at {fmt(late / SECONDS_PER_MINUTE, 'min', 2)}) "
            f"against {fmt(g['optimum'], pct=True, sig=4)} at the best interval ({fmt(g['optimum_s'] / SECONDS_PER_MINUTE, 'min')}) "
            f"for {fmt(s['job_gpus'], 'GPUs')} with {fmt(s['checkpoint_write_s'], 's')} checkpoints: "
            f"{fmt(g['ratio'], pct=True, sig=4)} of the best"
        ),
        context=lambda v: (
            "the best interval follows from the checkpoint cost and the failure rate, not from the phase of training"
            if v == "consistent"
            else "checkpoints this slow make the 15-minute phase cost more than it saves; the best interval follows "
            "from the checkpoint cost and the failure rate, not from the phase of training"
        ),
        reading="平衡安全性与存储开销 (balance safety and overhead) read as aiming at the best goodput",
    )
