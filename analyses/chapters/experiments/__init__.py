"""Chapter ``experiments``: how many experiments a cluster can run, serially or side by side.

Checks document 001 part 2.5 (12 hyper-parameter sets, 36 days serially vs 9 days six at a time,
27 days early, 75% less labour; dozens of parallel experiments), part 2.1 (12 -> 8 rounds) and
part 4 (4 full runs + 6 comparisons a month); document 000 part 2.1 (1 -> 4 experiments a month)
and part 4 (1 -> 3 a month, monthly -> weekly updates). Every figure the page shows is computed
once by :func:`compute` from the cases, the scenario (the B300/A100 speed-up, the rank
correlation of early and final losses) and the scaling model, with the functions the checks use.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.chapters import ledger
from analyses.chapters.experiments import checks
from analyses.models import experiments as ex
from analyses.scenario import cases, operations
from analyses.scenario.generations import NEW, SPEEDUP, speedup
from analyses.scenario.params import ChapterSpec, Config, Param
from analyses.verdicts.sweeps import Slider

SLUG = "experiments"
RANK_CORRELATION = "early_stop_rank_correlation"

SPEC = ChapterSpec(
    slug=SLUG,
    title="Experiments per month",
    params=(
        scenario.param(SPEEDUP),
        scenario.param(RANK_CORRELATION),
        Param("sh_eta", "int", 3, "ratio", "successive halving: the best 1/eta of each rung go on", 2, 10),
        Param(
            "sh_min_budget",
            "float",
            0.1,
            "fraction",
            "successive halving: first rung's training as a share of a full run",
            0.001,
            1,
        ),
        Param("sh_resume", "bool", True, "-", "promoted runs continue from their checkpoint instead of restarting"),
    ),
)

TRIALS = 20_000  # Monte Carlo trials of the selection risk at the chapter's settings (fixed seed)
CHART_TRIALS = 4_000  # ... for each point of the early-stopping chart
SEED = 0
CHART_ETAS = (2, 3, 4, 5, 6)  # promotion ratios of the chart's left panel
CURVE_ETAS = (2, 3, 4)  # ... and of its right panel
CURVE_RANK_CORRELATIONS = np.round(np.linspace(0.3, 0.95, 12), 3)
SWEEP_SLIDER = ("001-2.5-hyperparam-sweep-36-to-9-days",)


@dataclass(frozen=True)
class Sweep:
    """Document 001's sweep recomputed on the old cluster and on B300."""

    case: cases.Sweep
    gpus: float  # GPUs of the cluster (read: one server per concurrent run)
    slice_gpus: float
    e_full: float
    e_slice: float
    mfu_slice: float  # the step-time model's MFU of one run on a slice
    old_concurrent_days: float
    b300_serial_days: float
    b300_concurrent_days: float
    stated_speedup: float
    speedup: float  # serial days on the old cluster over concurrent days on B300
    required_ratio: float  # e_slice/e_full the stated days need on the same cluster
    required_speedup: float  # per-GPU speed-up the stated days need
    per_gpu: float  # the per-GPU speed-up of the sweep's workload (the registry's named quantity)


@dataclass(frozen=True)
class EarlyStopping:
    """The sweep run as successive halving on B300: compute, GPU-days, wall-clock and risk."""

    configs: int
    rung_configs: tuple[int, ...]
    rung_budgets: tuple[float, ...]
    full_runs: float
    fraction: float
    gpu_days: float
    gpu_days_all: float
    wall_days: float
    p_best_kept: float
    regret_when_missed: float  # in units of the spread between configurations


@dataclass(frozen=True)
class Result:
    """Everything the experiments page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    sweep: Sweep
    timeline: pd.DataFrame
    early: EarlyStopping
    rungs: pd.DataFrame
    by_eta: pd.DataFrame
    by_rank: pd.DataFrame
    rounds_before: int
    rounds_after: float
    single_cut: dict[str, float]
    runs: pd.DataFrame
    ledger: pd.DataFrame
    sliders: tuple[Slider, ...]

    def verdict(self, claim_id: str) -> str:
        """The ledger's verdict of one claim of this chapter."""
        return str(self.ledger.set_index("id").loc[claim_id, "verdict"])


# --------------------------------------------------------------------------------------------
# The sweep, its timeline and early stopping
# --------------------------------------------------------------------------------------------


def _sweep(s: dict[str, float]) -> Sweep:
    setup = checks.sweep_setup()
    gpus, e_full, e_slice = setup.gpus, setup.e_full, setup.e_slice
    n = checks.sweep_numbers(s)
    sw = cases.sweep()
    return Sweep(
        case=sw,
        gpus=gpus,
        slice_gpus=gpus / sw.concurrent_runs,
        e_full=e_full,
        e_slice=e_slice,
        mfu_slice=setup.mfu_slice,
        old_concurrent_days=float(n["old_concurrent_days"]),
        b300_serial_days=float(n["b300_serial_days"]),
        b300_concurrent_days=float(n["b300_concurrent_days"]),
        stated_speedup=float(n["stated_speedup"]),
        speedup=float(n["speedup"]),
        required_ratio=float(n["required_ratio"]),
        required_speedup=float(n["required_speedup"]),
        per_gpu=float(speedup(s, "sweep-8b")),
    )


def timeline(sw: Sweep) -> pd.DataFrame:
    """Gantt rows (schedule, run, start, end in days): serial and concurrent on the old cluster, concurrent on B300."""
    runs, k = int(sw.case.configs), int(sw.case.concurrent_runs)
    waves = -(-runs // k)
    lanes = (
        ("serial, old cluster", sw.case.run_days, 1),
        (f"{k} at a time, old cluster", sw.old_concurrent_days / waves, k),
        (f"{k} at a time, {NEW}", sw.b300_concurrent_days / waves, k),
    )
    rows = [
        {
            "schedule": name,
            "run": i + 1,
            "start": round((i // per_wave) * length, 3),
            "end": round((i // per_wave + 1) * length, 3),
        }
        for name, length, per_wave in lanes
        for i in range(runs)
    ]
    return pd.DataFrame(rows)


@functools.lru_cache(maxsize=512)
def _selection(configs: int, eta: Any, r0: Any, noise: float, trials: int) -> MappingProxyType:
    return MappingProxyType(ex.successive_halving_selection(configs, eta, r0, noise=noise, trials=trials, seed=SEED))


def selection(configs: int, eta: Any, r0: Any, noise: float, trials: int) -> MappingProxyType:
    """:func:`analyses.models.experiments.successive_halving_selection` at the chapter's seed, simulated
    once per setting (the illustration does not depend on the scenario's other assumptions)."""
    return _selection(configs, eta, r0, float(noise), trials)


def _noise(rank_correlation: float) -> float:
    return float(ex.noise_for_rank_correlation(rank_correlation))


def _early_stopping(cfg: Config, s: dict[str, float], sw: Sweep) -> EarlyStopping:
    n, k = int(sw.case.configs), int(sw.case.concurrent_runs)
    eta, r0, resume = cfg["sh_eta"], cfg["sh_min_budget"], cfg["sh_resume"]
    rungs = ex.successive_halving_rungs(n, eta, r0)
    full_runs = float(ex.successive_halving_full_runs(n, eta, r0, resume))
    setup = checks.sweep_setup()
    by_concurrency = ex.run_efficiency(setup.coef, sw.gpus / np.arange(1, k + 1), **setup.run)
    wall = ex.successive_halving_wall_days(
        n,
        eta,
        r0,
        sw.case.run_days,
        k,
        sw.e_full,
        sw.e_slice,
        speedup(s, "sweep-8b"),
        resume=resume,
        e_by_concurrency=by_concurrency,
    )
    risk = selection(n, eta, r0, noise=_noise(s[RANK_CORRELATION]), trials=TRIALS)
    missed = max(1 - risk["p_best_kept"], 1 / TRIALS)
    return EarlyStopping(
        configs=n,
        rung_configs=tuple(int(v) for v in rungs["configs"][rungs["active"]]),
        rung_budgets=tuple(float(v) for v in rungs["budget"][rungs["active"]]),
        full_runs=full_runs,
        fraction=full_runs / n,
        gpu_days=float(ex.successive_halving_gpu_days(n, eta, r0, sw.case.run_days, sw.gpus, resume)),
        gpu_days_all=n * sw.case.run_days * sw.gpus,
        wall_days=wall,
        p_best_kept=risk["p_best_kept"],
        regret_when_missed=risk["mean_regret"] / missed,
    )


def rungs_table(early: EarlyStopping, resume: bool) -> pd.DataFrame:
    """One row per rung of the sweep's successive-halving schedule."""
    budgets = np.array(early.rung_budgets)
    previous = np.concatenate([[0.0], budgets[:-1]])
    added = budgets - previous if resume else budgets
    return pd.DataFrame(
        {
            "rung": np.arange(1, budgets.size + 1),
            "configurations": early.rung_configs,
            "share of a full run": budgets,
            "full runs of compute": np.array(early.rung_configs) * added,
        }
    )


def early_stopping_frames(cfg: Config, s: dict[str, float], configs: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compute share and P(best kept) against eta; P(best kept) against rank correlation per eta."""
    r0, noise = cfg["sh_min_budget"], _noise(s[RANK_CORRELATION])
    by_eta = []
    for eta in CHART_ETAS:
        share = float(ex.successive_halving_cost(configs, eta, r0, resume=cfg["sh_resume"]))
        p = selection(configs, eta, r0, noise=noise, trials=CHART_TRIALS)
        by_eta += [
            {"eta": eta, "quantity": "share of the full sweep's compute", "value": round(share, 4)},
            {"eta": eta, "quantity": "P(best configuration kept)", "value": round(p["p_best_kept"], 4)},
        ]
    rows = [
        {
            "rank correlation": float(rc),
            "eta": f"eta = {eta}",
            "P(best kept)": round(
                selection(configs, eta, r0, noise=_noise(rc), trials=CHART_TRIALS)["p_best_kept"],
                4,
            ),
        }
        for eta in CURVE_ETAS
        for rc in CURVE_RANK_CORRELATIONS
    ]
    return pd.DataFrame(by_eta), pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Runs a month
# --------------------------------------------------------------------------------------------


def runs_table() -> pd.DataFrame:
    """Runs a month each case's run length allows, beside the stated counts."""
    a, r, c = cases.anecdote(checks.THIRTEEN_B), cases.recommender(), cases.customer_service()
    rows = [
        ("000 §2.1 13B anecdote", a.days_before, a.days_after, "000-2.1-13b-experiments-1-to-4"),
        ("000 §4 recommender", r.days_before, r.days_after, "000-4-experiments-1-to-3"),
        ("001 §4 customer service", c.finetune_days_before, c.finetune_days_after, None),
    ]
    out = []
    for label, before, after, claim_id in rows:
        claim = data.claim(claim_id) if claim_id else None
        out.append(
            {
                "case": label,
                "run days before": before,
                "run days after": after,
                "runs/month before": float(operations.runs_per_month(None, before)),
                "runs/month after": float(operations.runs_per_month(None, after)),
                "stated before": claim.value("experiments_per_month_before") if claim else np.nan,
                "stated after": (
                    claim.value("experiments_per_month_after")
                    if claim
                    else c.full_runs_per_month + c.comparison_runs_per_month
                ),
            }
        )
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# compute
# --------------------------------------------------------------------------------------------


def compute(cfg: Config) -> Result:
    """Every table, figure input and number of the page at ``cfg`` (one pass)."""
    s = scenario.values(cfg)
    sw = _sweep(s)
    early = _early_stopping(cfg, s, sw)
    by_eta, by_rank = early_stopping_frames(cfg, s, int(sw.case.configs))
    rounds = data.claim(checks.ROUNDS)
    before = int(rounds.value("experiment_rounds_before"))
    return Result(
        cfg=cfg,
        s=s,
        sweep=sw,
        timeline=timeline(sw),
        early=early,
        rungs=rungs_table(early, cfg["sh_resume"]),
        by_eta=by_eta,
        by_rank=by_rank,
        rounds_before=before,
        rounds_after=rounds.value("experiment_rounds_after"),
        single_cut=checks.single_cut_full_runs(before),
        runs=runs_table(),
        ledger=ledger.ledger(SLUG, cfg),
        sliders=(ledger.slider(SPEEDUP, SWEEP_SLIDER, {SLUG: cfg}),),
    )
