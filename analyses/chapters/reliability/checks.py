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
from analyses.scenario import cases, failures, operations
from analyses.scenario.failures import OPERATIONS
from analyses.scenario.generations import NEW
from analyses.scenario.operations import job_mtbf_s, minutes
from analyses.scenario.operations import optimal_interval_s as optimum_s
from analyses.units import HOURS_PER_DAY, MINUTES_PER_HOUR, SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE
from analyses.units.formats import fmt, stated
from analyses.verdicts import Arithmetic, Credit, Finding, Reading, at_least, at_most, between, check, exactly, rounded

POLICY = "001-2.4-checkpoint-15min-then-hourly"
FINTECH_001 = "001-2.4-fintech-crash-every-5-days"
RD_EFFICIENCY = "001-2.4-rd-efficiency-18pct"
STABILITY = "000-3-table-stability"
CALIBRATION = "llama3-405b-unexpected"  # the log the scenario's central interruption rate comes from
ALL_INTERRUPTIONS = "llama3-405b-all"  # the same run with planned interruptions: its effective-time bound
CLEAN_RUN_TAIL = (1 - INTERVAL_LEVEL) / 2  # a clean run "happens" if it lies within the book's 90% interval

READING_HOURS = "数小时 read as hours rather than minutes (one hour or more), as the section's own 小时级 contrast says"
READING_MINUTES = (
    "分钟级 read as on the order of minutes (under an hour); strictly, a few minutes (1-9), as 数 reads elsewhere"
)


# --------------------------------------------------------------------------------------------
# The job, its optimum and the policy (shared by the checks and the page): the job's mean time
# between interruptions and its best checkpoint interval are the scenario's named quantities
# (:mod:`analyses.scenario.operations`), imported above as ``job_mtbf_s`` and ``optimum_s``.
# --------------------------------------------------------------------------------------------


def operated(s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """The scenario as the chapter's cluster runs it: the rate and restart of its ``operations``
    mode (automated unless the chapter sets it; :func:`analyses.scenario.failures.for_operations`)."""
    return failures.for_operations(s, cfg.get("operations", OPERATIONS[0]) if cfg else OPERATIONS[0])


def policy_intervals_s(claim: data.Claim | None = None) -> tuple[float, float]:
    """Document 001's early and late checkpoint intervals (s)."""
    c = claim if claim is not None else data.claim(POLICY)
    early = c.value("checkpoint_interval_early_min") * SECONDS_PER_MINUTE
    return early, c.value("checkpoint_interval_late_min") * SECONDS_PER_MINUTE


def policy_goodputs(s: Mapping[str, Any], claim: data.Claim | None = None) -> dict[str, Any]:
    """Goodput of each stated interval alone, of the phased policy and at the optimum."""
    early, late = policy_intervals_s(claim)
    m, d, r, share = job_mtbf_s(s), s["checkpoint_write_s"], operations.restart_s(s), s["early_phase_share"]
    tau = optimum_s(s)
    best = operations.goodput(s, tau)  # unrounded, like the policy it is compared with
    policy = rel.policy_goodput([early, late], [share, 1 - np.asarray(share)], d, m, r)
    with np.errstate(invalid="ignore", divide="ignore"):
        # failures so frequent that even the best interval's goodput underflows to 0: the policy's
        # longer intervals fall behind it without bound, so the ratio's limit is 0 (not 0/0 = NaN)
        ratio = np.where(best > 0, policy / np.where(best > 0, best, 1.0), 0.0)
    return {
        "early": operations.goodput(s, early),
        "late": operations.goodput(s, late),
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
    manual = minutes(operations.restart_s(s, "manual"))
    automated = minutes(operations.restart_s(s, "automated"))
    return Finding(
        stated=at_least(SECONDS_PER_HOUR / SECONDS_PER_MINUTE),
        value=manual,
        unit="min",
        recomputed=lambda: (
            f"{_run_lengths()}; getting a job training again from its last checkpoint takes {fmt(manual, 'min')} where "
            f"recovery waits for an operator (OPT-175B before its restart scripts) and {fmt(automated, 'min')} where it is "
            f"automated; {_bound_text()}, recomputed work included"
        ),
        context=lambda v: (
            "runs do last weeks, and on platforms without automated recovery, the state before the hot migration both "
            "documents credit, a restart often took hours"
            if v == "consistent"
            else "runs do last weeks, but a restart from a checkpoint takes less than an hour even when it waits for an operator"
        ),
        reading=(
            "从checkpoint恢复 read as getting the job training again from the last checkpoint, the quantity the section's "
            "hours-to-minutes promise speaks of (lost progress is counted separately), on a platform whose recovery waits "
            f"for an operator; {READING_HOURS}"
        ),
        taken="a restart that waits for an operator, as before the promised hot migration",
        readings=(Reading("a restart on a platform with automated recovery, as A100 and H100 clusters already had", value=automated),),
        strict=between(
            claim.value("recovery_hours_low") * MINUTES_PER_HOUR, claim.value("recovery_hours_high") * MINUTES_PER_HOUR
        ),
        credits=(Credit("auto-restart"),),
    )


@check("000-2.4-fault-sends-progress-to-zero")
def check_fault_sends_progress_to_zero(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.4: one hardware fault may send training progress back to zero."""
    weeks = data.claim("000-2.4-weeks-long-runs-hours-to-recover").value("run_weeks_low")
    run_h = weeks * 7 * HOURS_PER_DAY
    tau_h = optimum_s(s) / SECONDS_PER_HOUR
    lost = 100 * tau_h / run_h
    return Finding(
        stated=exactly(claim.value("progress_lost_pct")),
        value=lost,
        unit="%",
        recomputed=lambda: (
            f"a job that checkpoints at its best interval ({fmt(tau_h, 'h')}) loses at most that interval of work: "
            f"{fmt(lost / 100, pct=True, sig=2)} of a {stated(weeks)}-week run; every published 100B-class run checkpoints "
            "(OPT-175B, BLOOM, Llama 3)"
        ),
        context=lambda v: (
            "with checkpoints, which the same paragraph goes on to rely on, a fault costs at most the work since the "
            "last one, never the run"
        ),
        reading=claim.reading or "",
        taken="进度归零 as the run's progress lost, as written",
        readings=(Reading("the progress since the last checkpoint", value=np.full_like(np.asarray(lost, dtype=float), 100.0)),),
        credits=(Credit("ecc-memory"),),
    )


@check("001-2.4-weeks-long-runs-hours-lost")
def check_weeks_long_runs_hours_lost(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: 100B runs last weeks, and a crash may lose hours of progress."""
    s = operated(s, cfg)
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
        taken="a whole checkpoint interval at the best interval, one hour or more",
        readings=(Reading("the work a crash loses on average, half an interval", value=tau_h / 2),),
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
        credits=(Credit("ecc-memory"), Credit("redundant-power")),
    )


def _minutes_finding(value_min: Any, recomputed: Any, what: str) -> Finding:
    return Finding(
        credits=(Credit("auto-restart"),),
        taken="under an hour",
        stated=at_most(SECONDS_PER_HOUR / SECONDS_PER_MINUTE),
        value=value_min,
        unit="min",
        recomputed=recomputed,
        context=lambda v: (
            f"{what} in minutes comes from automated restart on spare nodes ({_bound_text()}), not from B300 hardware"
            if v == "consistent"
            else f"{what} takes longer than minutes in this scenario"
        ),
        reading=READING_MINUTES,
        strict=between(1.0, 9.0),
    )


@check("000-2.4-recovery-hours-to-minutes")
def check_recovery_hours_to_minutes(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.4: hot migration of checkpoints cuts recovery time from hours to minutes."""
    # after the hot migration: the restart of the chapter's cluster (automated unless a reader runs it by hand)
    restart_min = minutes(operations.restart_s(operated(s, cfg), "automated"))
    manual = minutes(operations.restart_s(s, "manual"))
    return _minutes_finding(
        restart_min,
        lambda: (
            f"a restart on a spare node from the last checkpoint takes {fmt(restart_min, 'min')} where recovery is "
            f"automated, against {fmt(manual, 'min')} where it waits for an operator"
        ),
        "recovery",
    )


@check("001-2.4-loss-hours-to-minutes")
def check_loss_hours_to_minutes(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: hot migration cuts the time a crash loses from hours to minutes."""
    s = operated(s, cfg)
    late = policy_intervals_s()[1]
    lost = minutes(operations.lost_per_interruption_s(s, late))
    at_best = minutes(operations.lost_per_interruption_s(s))
    before = minutes(operations.lost_per_interruption_s(s, late, "manual"))
    return _minutes_finding(
        lost,
        lambda: (
            f"an automated restart of {fmt(minutes(operations.restart_s(s)), 'min')} + the work since the last of the "
            f"document's own {fmt(late / SECONDS_PER_MINUTE, 'min', 2)} checkpoints = {fmt(lost, 'min')} lost per crash "
            f"({fmt(at_best, 'min')} at the interval that maximises goodput), against {fmt(before / MINUTES_PER_HOUR, 'h')} "
            "where the restart waits for an operator"
        ),
        "the time a crash loses",
    )


# --------------------------------------------------------------------------------------------
# The fintech crash log (both documents) and its R&D efficiency
# --------------------------------------------------------------------------------------------


def fintech_numbers(s: Mapping[str, Any]) -> dict[str, Any]:
    """The fintech anecdote recomputed: crashes, hours saved, the B300 job MTBF the clean run needs,
    and the MTBF of the B300 job that does the old job's work (the scenario's named quantity
    ``fintech_job``: the old job fails every stated interval at the scenario's per-GPU rate, the B300
    job has as many GPUs over the speed-up) at that rate times the B300 failure ratio."""
    f = cases.fintech()
    crashes = f.run_days_no_fault / f.crash_interval_days
    old_gpus, b300_gpus = operations.fintech_gpus(s, f.crash_interval_days)
    b300_per_gpu = operations.per_gpu_mtbf_s(s) / np.asarray(s["b300_failure_ratio"])
    mtbf_days = b300_per_gpu / b300_gpus / SECONDS_PER_DAY
    same_size_days = b300_per_gpu / old_gpus / SECONDS_PER_DAY
    return {
        "crashes": crashes,
        "saved_h": rel.crash_recovery_hours(f.run_days_no_fault, f.crash_interval_days, f.recovery_hours_per_crash),
        "run_h": f.run_days_no_fault * HOURS_PER_DAY,
        "need_mtbf_days": float(rel.clean_run_mtbf_s(f.run_days_no_fault, CLEAN_RUN_TAIL)),
        "gpus": b300_gpus,
        "b300_mtbf_days": mtbf_days,
        "same_platform_days": same_size_days,
        "p_clean": rel.prob_no_failure(f.run_days_no_fault, mtbf_days),
        "p_clean_same_size": rel.prob_no_failure(f.run_days_no_fault, same_size_days),
        "gpus_at_rate": old_gpus,
        "manual_restart_h": operations.restart_s(s, "manual") / SECONDS_PER_HOUR,
    }


def _fintech(claim: data.Claim, s: Mapping[str, Any], arithmetic: Arithmetic) -> Finding:
    f, n = cases.fintech(), fintech_numbers(s)
    return Finding(
        stated=at_least(n["need_mtbf_days"]),
        value=n["b300_mtbf_days"],
        unit="days",
        recomputed=lambda: (
            f"{fmt(n['crashes'], sig=2)} crashes × {fmt(f.recovery_hours_per_crash, 'h', 1)} = {fmt(n['saved_h'], 'h', 2)} "
            f"(a manual restart takes {fmt(n['manual_restart_h'], 'h', 2)} in the scenario); {stated(f.run_days_no_fault)} "
            f"clean days need a job MTBF of {fmt(n['need_mtbf_days'], 'days')} or more; a crash every "
            f"{stated(f.crash_interval_days)} days is a job of about {fmt(n['gpus_at_rate'], 'GPUs', 2)} at the scenario's "
            f"per-GPU rate, and the same work on {fmt(n['gpus'], 'GPUs', 2)} {NEW}s fails every "
            f"{fmt(n['b300_mtbf_days'], 'days', 2)} (chance of the clean run {fmt(n['p_clean'], pct=True, sig=2)})"
        ),
        context=lambda v: (
            "the saving's arithmetic holds, and the same work on the fewer GPUs B300's speed-up needs fails rarely "
            "enough at published failure rates for 50 clean days; the credit belongs to the smaller job, since ECC and "
            f"redundant power came before B300 (read as the same job size, the clean run would have a "
            f"{fmt(float(np.min(n['p_clean_same_size'])), pct=True, sig=2)} chance)"
            if v != "implausible"
            else "the saving's arithmetic holds, but even the smaller B300 job fails too often at the scenario's rate "
            "for 50 clean days to be likely"
        ),
        arithmetic=(arithmetic,),
        reading=(
            f"the B300 job doing the old job's work on as many GPUs over the speed-up, failing at published per-GPU "
            f"rates; {stated(f.run_days_no_fault)} clean days read as a run within the book's "
            f"{fmt(INTERVAL_LEVEL, pct=True, sig=2)} interval; strictly, the same job size failing as often as on the old platform"
        ),
        taken="the same work on as many B300s as the speed-up needs",
        readings=(Reading("the same job size as on the old platform", value=n["same_platform_days"]),),
        credits=(Credit("ecc-memory"), Credit("redundant-power")),
    )


@check("001-2.4-fintech-crash-every-5-days")
def check_fintech_crash_every_5_days_001(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: a crash every 5 days, 3 h each; 50 clean days on B300, about 30 h saved."""
    s = operated(s, cfg)
    f = cases.fintech()
    saved = rel.crash_recovery_hours(f.run_days_no_fault, f.crash_interval_days, f.recovery_hours_per_crash)
    return _fintech(claim, s, Arithmetic("the recovery time saved (hours)", rounded(f.hours_saved_001), saved))


@check("000-2.4-fintech-crash-every-5-days")
def check_fintech_crash_every_5_days_000(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.4: a crash every 5 days; 50 clean days on B300, over 30 h saved (3 h per crash from 001)."""
    s = operated(s, cfg)
    f = cases.fintech()
    saved = rel.crash_recovery_hours(f.run_days_no_fault, f.crash_interval_days, f.recovery_hours_per_crash)
    return _fintech(
        claim,
        s,
        Arithmetic("the recovery time saved at document 001's 3 h a crash", at_least(f.hours_saved_000_min), saved),
    )


@check("001-2.4-rd-efficiency-18pct")
def check_rd_efficiency_18pct(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: the fintech firm's R&D efficiency rose by 18% (a business result whose own
    figures are checked)."""
    s = operated(s, cfg)
    f = cases.fintech()
    n = fintech_numbers(s)
    # efficiency = productive hours after / before - 1: the 50 days' hours over those left after the
    # recovery hours the old platform lost; +18% needs 1 - 1/1.18 = 15.3% of every crash interval lost
    gain = 100 * (n["run_h"] / (n["run_h"] - n["saved_h"]) - 1)
    needed_h = (1 - 1 / (1 + f.rd_efficiency_gain)) * f.crash_interval_days * HOURS_PER_DAY
    return Finding(
        stated=rounded(100 * f.rd_efficiency_gain),
        value=gain,
        unit="%",
        recomputed=lambda: (
            f"{fmt(n['run_h'], 'h')} of work where the old platform kept {fmt(n['run_h'] - n['saved_h'], 'h')} after "
            f"{fmt(n['saved_h'], 'h', 2)} of recovery = {fmt(gain / 100, pct=True, sig=2)} more productive time; "
            f"+{stated(100 * f.rd_efficiency_gain)}% would need {fmt(needed_h, 'h')} lost per crash "
            f"({fmt(1 - 1 / (1 + f.rd_efficiency_gain), pct=True, sig=3)} of each {stated(f.crash_interval_days)}-day interval), "
            f"not {fmt(f.recovery_hours_per_crash, 'h', 1)}"
        ),
        context="nothing else in the anecdote explains the rest",
        arithmetic=(
            Arithmetic(
                "the productive time the saved recovery hours free (%)", rounded(100 * f.rd_efficiency_gain), gain
            ),
        ),
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
        context=lambda v: (
            "software bugs, dependencies, network faults and timeouts interrupt jobs whatever the server, and hot "
            f"migration shortens a recovery but prevents no interruption; even removing every interruption server "
            f"hardware could prevent leaves {fmt(factor, 'x')} fewer, not {fmt(times(cut), 'x', 2)}"
        ),
        reading=f"降低{stated(cut)}% read as about {stated(cut)}% ({stated(band.lo)}-{stated(band.hi)}%)",
        taken=f"降低{stated(cut)}% as about {stated(cut)}%",
        strict=exactly(times(cut)),
        credits=(  # the table's A100 column ("failure rate medium") against B300's "ECC + redundancy + hot migration"
            Credit("ecc-memory", compared=True),
            Credit("redundant-power", compared=True),
            Credit("auto-restart", compared=True),
        ),
    )


@check(POLICY)
def check_checkpoint_15min_then_hourly(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.4: checkpoint every 15 minutes early in training and hourly later."""
    s = operated(s, cfg)
    g = policy_goodputs(s, claim)
    early, late = policy_intervals_s(claim)
    return Finding(
        stated=exactly(1.0),
        promise="the goodput of the best checkpoint interval, safety balanced against overhead",
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
