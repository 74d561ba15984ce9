"""Chapter ``reliability``: how often big jobs fail, what a failure costs, how often to checkpoint.

Checks the stability claims of both documents (000 part 2.4 and the part 3 table; 001 part 2.4):
weeks-long runs and hours-long recoveries, "lowest failure rate", hot migration cutting recovery
from hours to minutes, the fintech anecdote (a crash every 5 days, 3 h each, 50 clean days, ~30 h
saved, R&D efficiency +18%), "interruption probability −90%" and the 15-minute/hourly policy.
Every figure the page shows is computed once by :func:`compute` from the scenario (per-GPU
interruption rate, job size, checkpoint and restart times, ...) with the functions the checks use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.chapters import ledger
from analyses.chapters.reliability import checks
from analyses.models import reliability as rel
from analyses.scenario import cases, failures, operations
from analyses.scenario.params import ChapterSpec, Config, Param
from analyses.units import HOURS_PER_DAY, SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE
from analyses.verdicts.sweeps import Slider

SLUG = "reliability"
RATE = "interruptions_per_gpu_year"

SPEC = ChapterSpec(
    slug=SLUG,
    title="Failures, checkpoints and recovery",
    params=(
        Param(
            "operations",
            "str",
            failures.OPERATIONS[0],
            "-",
            "how the cluster detects and clears interruptions: automated (health checks and restart on a spare) or manual (a person)",
            choices=failures.OPERATIONS,
        ),
        scenario.param(RATE),
        scenario.param(failures.RATE["manual"]),
        scenario.param("job_gpus"),
        scenario.param("checkpoint_write_s"),
        scenario.param("restart_s"),
        scenario.param(failures.RESTART["manual"]),
        scenario.param("early_phase_share"),
        scenario.param("b300_failure_ratio"),
        scenario.param("preventable_interruption_share"),
    ),
)

MC_RUNS = 1000  # simulated jobs per checkpoint interval (fixed seed)
MC_WORK_DAYS = 30.0  # days of work per simulated job
MC_SEED = 0
MC_MAX_FAILURES = 2_000  # expected failures per simulated job above which an interval is not simulated
MC_EXTRA_INTERVAL_S = 4 * SECONDS_PER_HOUR  # a long interval beside the stated ones and the optimum
FAILURE_CURVE_GPUS = (8, 131_072)  # job sizes of the failures-per-day chart

# The claims each slider follows (document 000's fintech claim repeats 001's, so it is left out to
# keep the page light)
RATE_SLIDER = (checks.POLICY, "001-2.4-weeks-long-runs-hours-lost")
CHECKPOINT_SLIDER = (checks.POLICY, "001-2.4-weeks-long-runs-hours-lost")
RATIO_SLIDER = ("001-2.4-fintech-crash-every-5-days",)


@dataclass(frozen=True)
class Optimum:
    """Checkpoint intervals (s) for the scenario's job and the goodput each gives."""

    young_s: float
    daly_s: float
    exact_s: float
    goodput_young: float
    goodput_daly: float
    goodput_exact: float


@dataclass(frozen=True)
class Policy:
    """Document 001's phased policy for the scenario's job."""

    early_s: float
    late_s: float
    early_share: float
    goodput_early: float
    goodput_late: float
    goodput_policy: float
    ratio: float  # policy goodput / best goodput


@dataclass(frozen=True)
class Fintech:
    """The fintech anecdote recomputed (both documents, part 2.4)."""

    case: cases.Fintech
    crashes: float
    saved_h: float
    run_h: float
    saved_share: float  # saved hours over the clean run's hours
    gpus_at_rate: float  # job size whose MTBF is the stated crash interval at the scenario's rate
    need_mtbf_days: float  # smallest B300 job MTBF under which the clean run lies in the 90% interval
    b300_gpus: float  # the B300 job doing the old job's work (old GPUs / the speed-up)
    b300_mtbf_days: float  # its MTBF at the scenario's rate and B300 failure ratio
    p_clean: float  # chance of the clean run on it
    p_clean_old: float  # ... for a job of the old job's size failing at the B300 failure ratio


@dataclass(frozen=True)
class Result:
    """Everything the reliability page shows, computed once."""

    cfg: Config
    s: dict[str, float]  # the scenario at cfg (both modes' rates and restarts)
    operations: str  # the chapter's cluster's operations mode
    rate: float  # its all-cause interruptions per GPU-year
    restart_s: float  # its restart
    logs: pd.DataFrame
    rate_low: float  # the scenario's 90% range of the mode's rate
    rate_high: float
    rates: pd.DataFrame  # interruption logs against the model (failures.rate_validation)
    fit: Any  # the rate fit (analyses.models.interruptions.RateFit)
    hardware_share: float  # share of all interruptions that are hardware (scenario)
    goodput_check: pd.DataFrame  # published effective training time against the model
    recovery_check: pd.DataFrame  # published time-to-recover bounds against the model
    goodput_scenario: float  # the scenario's derived goodput (its job, automated)
    per_gpu_mtbf_years: float
    job_mtbf_s: float
    big_gpus: int  # GPUs of the calibrating run
    big_mtbf_s: float  # its job MTBF at the scenario's rate
    optimum: Optimum
    policy: Policy
    curve: pd.DataFrame  # goodput against interval
    marks: pd.DataFrame  # the optimum and the stated intervals on the curve
    monte_carlo: pd.DataFrame
    failures: pd.DataFrame  # interruptions per day against job size, per log
    fintech: Fintech
    causes: pd.DataFrame
    preventable: tuple[float, float, float]  # the Table 5 tiers' cumulative shares
    cut_stated: float  # the table's stated cut (fraction)
    downtime_bound_s: float
    effective_time: float
    lost_late_min: float  # lost per crash at the hourly interval
    restart_min: float  # an automated restart (the scenario's named quantity)
    ledger: pd.DataFrame
    sliders: tuple[Slider, ...]

    def verdict(self, claim_id: str) -> str:
        """The ledger's verdict of one claim of this chapter."""
        return str(self.ledger.set_index("id").loc[claim_id, "verdict"])


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def logs_table(rate: float) -> pd.DataFrame:
    """Published interruption logs with the per-GPU rate and job MTBF each implies, the all-cause rate
    that follows from the share of interruptions its kind counts, and that rate against ``rate``."""
    frame = data.failure_logs()
    per_year = rel.interruptions_per_gpu_year(frame["interruptions"], frame["days"], frame["gpus"])
    all_cause = failures.logs().set_index("id").loc[frame["id"], "all_cause"].to_numpy()
    return pd.DataFrame(
        {
            "id": frame["id"],
            "run": frame["run"],
            "hardware": frame["hardware"],
            "operations": frame["operations"],
            "GPUs": frame["gpus"],
            "days": frame["days"],
            "interruptions": frame["interruptions"],
            "kind": frame["kind"],
            "count": frame["bound"],
            "job MTBF (h)": frame["days"] * HOURS_PER_DAY / frame["interruptions"],
            "per GPU-year": per_year,
            "per-GPU MTBF (years)": 1 / per_year,
            "all causes per GPU-year": all_cause,
            "rate vs scenario": all_cause / rate,
        }
    )


def failures_table(rate: float, log_rates: pd.Series) -> pd.DataFrame:
    """Expected interruptions per day against job size at each log's rate and the scenario's."""
    sizes = np.asarray(FAILURE_CURVE_GPUS, dtype=float)  # straight lines on log-log axes: the ends suffice
    rates = {"scenario": rate} | dict(zip(log_rates.index, log_rates.to_numpy(), strict=True))
    frames = [
        pd.DataFrame(
            {
                "GPUs": sizes,
                "failures per day": rel.failures_per_day(sizes, rel.per_gpu_mtbf_from_rate_s(r)),
                "calibration": name,
            }
        )
        for name, r in rates.items()
    ]
    return pd.concat(frames, ignore_index=True)


def monte_carlo_table(s: dict[str, float], opt: Optimum, intervals: tuple[float, float]) -> pd.DataFrame:
    """Monte Carlo goodput (mean and 90% range of simulated jobs) beside the closed form, per interval."""
    m, d, r = float(operations.job_mtbf_s(s)), s["checkpoint_write_s"], float(operations.restart_s(s))
    early, late = intervals
    rows = []
    for label, tau in (
        (f"{early / SECONDS_PER_MINUTE:g} min", early),
        ("best", opt.exact_s),
        (f"{late / SECONDS_PER_MINUTE:g} min", late),
        (f"{MC_EXTRA_INTERVAL_S / SECONDS_PER_HOUR:g} h", MC_EXTRA_INTERVAL_S),
    ):
        work = MC_WORK_DAYS * SECONDS_PER_DAY
        with np.errstate(over="ignore"):  # beyond float range: inf attempts, a job that never finishes
            failures = work / tau * np.expm1((tau + d) / m)  # expected failed attempts per simulated job
        row = {"interval": label, "minutes": tau / SECONDS_PER_MINUTE, "closed form": float(operations.goodput(s, tau))}
        if failures <= MC_MAX_FAILURES:
            sims = rel.simulate_goodput(tau, d, m, r, work_s=work, runs=MC_RUNS, seed=MC_SEED)
            row |= {
                "Monte Carlo mean": float(sims.mean()),
                "MC 5%": float(np.quantile(sims, 0.05)),
                "MC 95%": float(np.quantile(sims, 0.95)),
            }
        else:  # a job that almost never finishes a segment: nothing to simulate in reasonable memory
            row |= {"Monte Carlo mean": np.nan, "MC 5%": np.nan, "MC 95%": np.nan}
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# compute
# --------------------------------------------------------------------------------------------


def _optimum(s: dict[str, float]) -> Optimum:
    m, d = operations.job_mtbf_s(s), s["checkpoint_write_s"]
    young = float(rel.checkpoint_interval(d, m, method="young"))
    daly = float(rel.checkpoint_interval(d, m, method="daly"))
    exact = float(operations.optimal_interval_s(s))
    g = [float(operations.goodput(s, t)) for t in (young, daly, exact)]
    return Optimum(young, daly, exact, *g)


def _policy(s: dict[str, float]) -> Policy:
    early, late = checks.policy_intervals_s()
    g = checks.policy_goodputs(s)
    return Policy(
        early_s=early,
        late_s=late,
        early_share=s["early_phase_share"],
        goodput_early=float(g["early"]),
        goodput_late=float(g["late"]),
        goodput_policy=float(g["policy"]),
        ratio=float(g["ratio"]),
    )


def _curve(s: dict[str, float], opt: Optimum, policy: Policy) -> tuple[pd.DataFrame, pd.DataFrame]:
    m, d, r = float(operations.job_mtbf_s(s)), s["checkpoint_write_s"], float(operations.restart_s(s))
    top = max(6 * opt.exact_s, 2 * SECONDS_PER_HOUR)
    curve = rel.goodput_curve(d, m, r, np.geomspace(max(d, 1.0), top, 80))
    early, late = policy.early_s / SECONDS_PER_MINUTE, policy.late_s / SECONDS_PER_MINUTE
    marks = pd.DataFrame(
        {
            "label": ["best (exact)", "Young", "Daly", f"{early:g} min (early)", f"{late:g} min (late)"],
            "interval_min": [opt.exact_s / 60, opt.young_s / 60, opt.daly_s / 60, early, late],
        }
    )
    marks["goodput"] = operations.goodput(s, marks["interval_min"].to_numpy() * SECONDS_PER_MINUTE)
    return curve, marks


def _fintech(s: dict[str, float]) -> Fintech:
    n = checks.fintech_numbers(s)
    case = cases.fintech()
    return Fintech(
        case=case,
        crashes=float(n["crashes"]),
        saved_h=float(n["saved_h"]),
        run_h=float(n["run_h"]),
        saved_share=float(n["saved_h"] / n["run_h"]),
        gpus_at_rate=float(n["gpus_at_rate"]),
        need_mtbf_days=float(n["need_mtbf_days"]),
        b300_gpus=float(n["gpus"]),
        b300_mtbf_days=float(n["b300_mtbf_days"]),
        p_clean=float(n["p_clean"]),
        p_clean_old=float(n["p_clean_same_size"]),
    )


def compute(cfg: Config) -> Result:
    """Every table, figure input and number of the page at ``cfg`` (one pass)."""
    every = scenario.values(cfg)
    mode = cfg["operations"]
    s = dict(checks.operated(every, cfg))  # the chapter's cluster: its mode's rate and restart
    ranges = scenario.ranges(cfg)
    rng = ranges[failures.RATE[mode]]
    logs = logs_table(s[RATE])
    calibration = data.failure_logs().set_index("id").loc[checks.CALIBRATION]
    opt, policy = _optimum(s), _policy(s)
    curve, marks = _curve(s, opt, policy)
    causes = data.failure_causes(checks.CALIBRATION)
    m = operations.job_mtbf_s(s)
    everything = data.failure_logs().set_index("id").loc[checks.ALL_INTERRUPTIONS]
    return Result(
        cfg=cfg,
        s=s,
        operations=mode,
        rate=s[RATE],
        restart_s=float(operations.restart_s(s)),
        logs=logs,
        rate_low=rng.low,
        rate_high=rng.high,
        rates=failures.rate_validation(),
        fit=failures.fit(),
        hardware_share=every[failures.HARDWARE_SHARE],
        goodput_check=failures.goodput_validation(ranges),
        recovery_check=failures.recovery_validation(ranges),
        goodput_scenario=every[failures.GOODPUT],
        per_gpu_mtbf_years=1 / s[RATE],
        job_mtbf_s=float(m),
        big_gpus=int(calibration["gpus"]),
        big_mtbf_s=float(operations.job_mtbf_s(s, calibration["gpus"])),
        optimum=opt,
        policy=policy,
        curve=curve,
        marks=marks,
        monte_carlo=monte_carlo_table(s, opt, (policy.early_s, policy.late_s)),
        failures=failures_table(s[RATE], logs.set_index("id")["all causes per GPU-year"]),
        fintech=_fintech(s),
        causes=rel.cause_table(causes),
        preventable=tuple(float(v) for v in rel.preventable_shares(causes)),
        cut_stated=data.claim(checks.STABILITY).value("interruption_reduction_pct") / 100,
        downtime_bound_s=checks.downtime_bound_s(),
        effective_time=float(everything["effective_time_min"]),
        lost_late_min=float(operations.minutes(operations.lost_per_interruption_s(s, policy.late_s))),
        restart_min=float(operations.minutes(operations.restart_s(s))),
        ledger=ledger.ledger(SLUG, cfg),
        sliders=(
            ledger.slider(failures.RATE[mode], RATE_SLIDER, {SLUG: cfg}),
            ledger.slider("checkpoint_write_s", CHECKPOINT_SLIDER, {SLUG: cfg}),
            ledger.slider("b300_failure_ratio", RATIO_SLIDER, {SLUG: cfg}),
        ),
    )
