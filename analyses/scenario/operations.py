"""How a training job runs in the scenario: interruptions, restarts, lost work, goodput and busy share.

Each function is one named quantity (:mod:`analyses.scenario.quantities`): the checks of the
reliability, utilisation, cost and experiments chapters read these, never the scenario inputs
behind them, so "the time an interruption costs" or "goodput" means the same in every row. The
formulas are :mod:`analyses.models.reliability`'s (the renewal model of a job that checkpoints
every ``interval`` and restarts after each interruption); a restart takes the scenario's
``restart_s`` where recovery is automated (spare nodes, scripted restarts: MegaScale, Llama 3) and
``restart_s_manual`` where it waits for an operator (OPT-175B before its scripts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses.models import experiments as ex
from analyses.models import reliability as rel
from analyses.scenario.generations import speedup
from analyses.scenario.quantities import named
from analyses.units import SECONDS_PER_DAY, SECONDS_PER_MINUTE
from analyses.units.formats import round_sig_array

Scenario = Mapping[str, Any]
MODES = ("automated", "manual")  # how a job gets going again after an interruption
RESTART = {"automated": "restart_s", "manual": "restart_s_manual"}


def _mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return RESTART[mode]


@named(
    "job_mtbf",
    "mean time between a job's interruptions",
    "s",
    "A synchronous job fails when any of its GPUs does: the per-GPU mean time between interruptions "
    "(1 / the scenario's interruptions per GPU-year) over the job's GPU count",
    owns=("interruptions_per_gpu_year",),
    wraps=("cluster_mtbf_s",),
    audit="R4",
)
def job_mtbf_s(s: Scenario, gpus: Any = None) -> np.ndarray:
    """Mean time between interruptions (s) of a job on ``gpus`` GPUs (the scenario's job size when None)."""
    n = s["job_gpus"] if gpus is None else gpus
    return rel.cluster_mtbf_s(n, rel.per_gpu_mtbf_from_rate_s(s["interruptions_per_gpu_year"]))


def per_gpu_mtbf_s(s: Scenario) -> np.ndarray:
    """Per-GPU mean time between interruptions (s) at the scenario's rate (:func:`job_mtbf_s` on one GPU)."""
    return job_mtbf_s(s, 1.0)


@named(
    "checkpoint_interval",
    "checkpoint interval that maximises goodput",
    "s",
    "The interval between checkpoints that maximises the scenario job's goodput, for its checkpoint write time "
    "and mean time between interruptions (closed form of the renewal model)",
    wraps=("optimal_interval_s",),
    audit="R2",
)
def optimal_interval_s(s: Scenario) -> np.ndarray:
    """The checkpoint interval (s) that maximises the scenario job's goodput."""
    return rel.optimal_interval_s(s["checkpoint_write_s"], job_mtbf_s(s))


@named(
    "restart_time",
    "time to get a job training again after an interruption",
    "s",
    "Detection, replacing the failed node and reloading the last checkpoint, recomputed work excluded; by how "
    "recovery runs: automated (spare nodes, scripted restarts) or manual (waiting for an operator)",
    owns=("restart_s", "restart_s_manual"),
    audit="R1",
)
def restart_s(s: Scenario, mode: str = "automated") -> np.ndarray:
    """Seconds from an interruption to training again, ``mode`` "automated" or "manual"."""
    return np.asarray(s[_mode(mode)], dtype=float)


@named(
    "lost_per_interruption",
    "time one interruption costs",
    "s",
    "The restart (by operations mode) plus the work redone since the last checkpoint, in expectation under the "
    "renewal model, at a given checkpoint interval (the goodput-maximising one unless stated)",
    wraps=("lost_per_interruption_s",),
    audit="R3",
)
def lost_per_interruption_s(s: Scenario, interval_s: Any = None, mode: str = "automated") -> np.ndarray:
    """Expected time (s) one interruption costs at checkpoint interval ``interval_s`` (the optimum when None)."""
    tau = optimal_interval_s(s) if interval_s is None else interval_s
    return rel.lost_per_interruption_s(tau, s["checkpoint_write_s"], job_mtbf_s(s), restart_s(s, mode))


def redone_work_s(s: Scenario, interval_s: Any = None, mode: str = "automated") -> np.ndarray:
    """Expected work redone after one interruption (s): :func:`lost_per_interruption_s` less the restart."""
    return lost_per_interruption_s(s, interval_s, mode) - restart_s(s, mode)


@named(
    "goodput",
    "training goodput",
    "fraction",
    "Share of a running job's wall time that ends in kept work: not spent writing checkpoints, restarting or "
    "redoing work after interruptions; the renewal model at the goodput-maximising interval with automated "
    "restarts, for the scenario's job, rounded to three figures like every derived value, so it equals the "
    "scenario's derived goodput row (data/scenario.csv, derivation goodput) at its central inputs and follows each "
    "draw of the inputs; at a given interval or operations mode, the same model unrounded",
    wraps=("goodput", "job_goodput"),
    audit="R5",
)
def goodput(s: Scenario, interval_s: Any = None, mode: str = "automated") -> np.ndarray:
    """Goodput of the scenario's job at checkpoint interval ``interval_s``: at the optimum with automated
    restarts (None) to three figures, as the scenario's derived ``goodput``; else the renewal model at
    that interval."""
    if interval_s is None and mode == "automated":
        return round_sig_array(rel.goodput(optimal_interval_s(s), s["checkpoint_write_s"], job_mtbf_s(s), restart_s(s)))
    tau = optimal_interval_s(s) if interval_s is None else interval_s
    return rel.goodput(tau, s["checkpoint_write_s"], job_mtbf_s(s), restart_s(s, mode))


@named(
    "busy_share",
    "GPU utilisation of a job (busy share)",
    "fraction",
    "Share of the wall time of the GPUs a training job holds in which they compute rather than wait for data, the "
    "network or other GPUs (nvidia-smi utilisation, as the Philly traces measure it); what both documents call a "
    "job's GPU (有效)利用率. Owned and rented GPU-hours that a job holds pay for its waits alike",
    owns=("utilisation",),
    audit="R6",
)
def busy_share(s: Scenario) -> np.ndarray:
    """A training job's busy share: the scenario's GPU utilisation."""
    return np.asarray(s["utilisation"], dtype=float)


@named(
    "runs_per_month",
    "runs a month",
    "runs/month",
    "Back-to-back runs of a given length in an average month (30.44 days), compared with a stated count after "
    "rounding (a monthly average, 月均)",
    wraps=("runs_per_month",),
    audit="R12",
)
def runs_per_month(s: Scenario | None, run_days: Any) -> np.ndarray:
    """Runs of ``run_days`` that fit in an average month, back to back (``s`` unused: a quantity of the documents' days)."""
    return ex.runs_per_month(run_days)


def minutes(seconds: Any) -> np.ndarray:
    """Seconds as minutes."""
    return np.asarray(seconds, dtype=float) / SECONDS_PER_MINUTE


@named(
    "fintech_job",
    "the fintech anecdote's B300 job",
    "GPUs",
    "Both documents' fintech risk model, the same work before and after: the old platform's job is as large as "
    "one that fails every stated crash interval at the scenario's per-GPU rate, and the B300 job does that work "
    "on as many GPUs over the workload's speed-up",
    audit="R16",
)
def fintech_gpus(s: Scenario, crash_interval_days: Any) -> tuple[np.ndarray, np.ndarray]:
    """(old GPUs, B300 GPUs) of the fintech job: the old job fails every ``crash_interval_days`` at the
    scenario's rate; the B300 job does the same work on old GPUs / the speed-up of a 10B risk model."""
    old = rel.gpus_for_mtbf(np.asarray(crash_interval_days, dtype=float) * SECONDS_PER_DAY, per_gpu_mtbf_s(s))
    return old, old / speedup(s, "risk-10b")
