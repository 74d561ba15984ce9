"""Interruption rates by operations mode: fitted on published logs, with a prediction band and
leave-one-out errors, and the goodput of a job that follows from them.

Conventions: a rate is job interruptions per GPU-year (a Julian year, :mod:`analyses.units`) of
**all causes** (hardware, software, network, planned maintenance: whatever stops a synchronous
job), so a job of ``n`` GPUs is interrupted ``n × rate`` times a year. A log that counts only part
of them (only hardware failures, only unexpected ones) is compared through the share of all
interruptions its kind covers (:func:`share_of_all`), measured on the one published breakdown
(Llama 3, Table 5).

The **operations mode** of a cluster is how its interruptions are detected and cleared:
``automated`` (health checks find and exclude a faulty node, the job restarts on a spare without a
person, for most interruptions) or ``manual`` (a person diagnoses, replaces and restarts). Logs
whose source describes both count with the manual mode: the mode is automated only when the
automation covers most interruptions (:data:`RATE_MODE`).

The fit (:func:`fit`): each mode's rate is the geometric mean of its calibration logs' all-cause
rates (between-operator differences dominate counting noise, so every log weighs the same); the
spread is the pooled standard deviation of the logs' log-rates around their mode's mean, with
``n − modes`` degrees of freedom. A 90% prediction band for a new cluster's log is
``rate ×/÷ exp(t · sqrt(sd² (1 + 1/n_mode) + 1/count))``: Student's t at those degrees of freedom,
the uncertainty of the mode's mean, and the Poisson noise of a log of ``count`` interruptions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from analyses.models import reliability as rel
from analyses.models import uncertainty
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.units import DAYS_PER_YEAR, HOURS_PER_YEAR

ArrayLike = npt.ArrayLike

OPERATIONS = ("automated", "manual")
# How a log's ``operations`` label maps to the rate model's mode (see the module docstring)
RATE_MODE = {"automated": "automated", "manual": "manual", "mixed": "manual"}
# The scenario's names of each mode's rate and restart (the planner reads them from its scenario ``s``)
RATE_ASSUMPTION = {"automated": "interruptions_per_gpu_year", "manual": "interruptions_per_gpu_year_manual"}
RESTART_ASSUMPTION = {"automated": "restart_s", "manual": "restart_s_manual"}


def per_gpu_year_from_node_days(failures_per_1000_node_days: ArrayLike, gpus_per_node: ArrayLike) -> np.ndarray:
    """Failures per GPU-year from a fleet's failures per 1,000 node-days (each failure stops one node)."""
    per_node_day = np.asarray(failures_per_1000_node_days, dtype=float) / 1000.0
    return per_node_day * DAYS_PER_YEAR / np.asarray(gpus_per_node, dtype=float)


def per_gpu_year_from_job_mttf(mttf_h: ArrayLike, job_gpus: ArrayLike) -> np.ndarray:
    """Interruptions per GPU-year of jobs of ``job_gpus`` GPUs that fail every ``mttf_h`` hours on average."""
    return HOURS_PER_YEAR / (np.asarray(mttf_h, dtype=float) * np.asarray(job_gpus, dtype=float))


def share_of_all(kind: str, shares: Mapping[str, float]) -> float:
    """The share of all interruptions a log of ``kind`` counts (``shares[kind]``; 1 for ``all``).

    ``KeyError`` names the kinds the shares cover: a kind without a share (a partial count such as
    the manual restarts alone) cannot be compared with the model.
    """
    if kind == "all":
        return 1.0
    if kind not in shares:
        raise KeyError(f"no share of all interruptions for a log of kind {kind!r}; known: all, {', '.join(shares)}")
    return float(shares[kind])


@dataclass(frozen=True)
class RateFit:
    """All-cause interruption rate of each operations mode, fitted on calibration logs."""

    rates: dict[str, float]  # per GPU-year, geometric mean of the mode's logs
    counts: dict[str, int]  # calibration logs per mode
    log_sd: float  # pooled between-log standard deviation of ln(rate)
    dof: int  # degrees of freedom of log_sd

    def band(
        self, mode: str, count: ArrayLike = np.inf, level: float = INTERVAL_LEVEL
    ) -> tuple[np.ndarray, np.ndarray]:
        """Multiplicative ``(low, high)`` factors of the ``level`` prediction band of a new log of
        ``count`` interruptions on a cluster of ``mode`` (:func:`prediction_factor`)."""
        factor = prediction_factor(self.log_sd, self.dof, self.counts[mode], count, level)
        return 1.0 / factor, factor

    def rate(self, mode: str) -> float:
        """The mode's all-cause rate; ``KeyError`` lists the modes."""
        if mode not in self.rates:
            raise KeyError(f"operations must be one of {', '.join(self.rates)}, got {mode!r}")
        return self.rates[mode]


def prediction_factor(log_sd: float, dof: int, n_mode: int, count: ArrayLike = np.inf, level: float = INTERVAL_LEVEL):
    """``exp(t_{dof} · sqrt(sd² (1 + 1/n_mode) + 1/count))``: the band's multiplicative half-width
    (:func:`analyses.models.uncertainty.prediction_factor`)."""
    return uncertainty.prediction_factor(log_sd, dof, n_mode, count, level)


def fit(all_cause_rates: ArrayLike, modes: Sequence[str]) -> RateFit:
    """Fit each mode's rate (geometric mean) and the pooled log-spread on calibration logs.

    ``all_cause_rates`` are each log's interruptions per GPU-year of all causes (a partial count
    divided by :func:`share_of_all`), ``modes`` their rate modes (:data:`OPERATIONS`). Every mode
    needs a log and the pooled spread at least one degree of freedom.
    """
    logs = np.log(np.asarray(all_cause_rates, dtype=float))
    modes = np.asarray(list(modes))
    if logs.shape != modes.shape:
        raise ValueError("one mode per rate")
    rates, counts, ss = {}, {}, 0.0
    for mode in OPERATIONS:
        group = logs[modes == mode]
        if group.size == 0:
            raise ValueError(f"no calibration log of operations mode {mode!r}")
        rates[mode] = float(np.exp(group.mean()))
        counts[mode] = int(group.size)
        ss += float(np.sum((group - group.mean()) ** 2))
    dof = int(logs.size - len(OPERATIONS))
    if dof < 1:
        raise ValueError("the pooled spread needs more calibration logs than operations modes")
    return RateFit(rates, counts, float(np.sqrt(ss / dof)), dof)


def leave_one_out(
    all_cause_rates: ArrayLike, modes: Sequence[str], groups: Sequence[str] | None = None
) -> list[RateFit | None]:
    """The fit without each calibration log (and every log of its ``group``: the two ends of one
    published range are one log), in order; ``None`` where too few logs remain to fit."""
    rates = np.asarray(all_cause_rates, dtype=float)
    modes = list(modes)
    groups = list(range(len(modes))) if groups is None else list(groups)
    out: list[RateFit | None] = []
    for g in groups:
        keep = np.array([other != g for other in groups])
        try:
            out.append(fit(rates[keep], [m for m, k in zip(modes, keep, strict=True) if k]))
        except ValueError:
            out.append(None)
    return out


def job_goodput(
    gpus: ArrayLike,
    rate_per_gpu_year: ArrayLike,
    checkpoint_s: ArrayLike,
    restart_s: ArrayLike,
    interval_s: ArrayLike | None = None,
) -> np.ndarray:
    """The book's one definition of **goodput**: the share of a running job's wall time not lost to
    checkpoints, interruptions, restarts and redone work (:func:`analyses.models.reliability.goodput`)
    for a synchronous job of ``gpus`` GPUs at an all-cause rate, at the checkpoint interval that
    maximises it (:func:`analyses.models.reliability.optimal_interval_s`) unless ``interval_s`` is given.

    Utilisation (the share of paid hours a job holds the GPUs busy) and MFU are separate quantities.
    """
    mtbf = rel.cluster_mtbf_s(gpus, rel.per_gpu_mtbf_from_rate_s(rate_per_gpu_year))
    tau = rel.optimal_interval_s(checkpoint_s, mtbf) if interval_s is None else np.asarray(interval_s, dtype=float)
    return rel.goodput(tau, checkpoint_s, mtbf, restart_s)
