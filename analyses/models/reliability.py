"""Failures, checkpoints and goodput of a synchronous training job.

Conventions: times in seconds unless a name says otherwise; failures are a Poisson process
(exponential inter-arrival times), so a job on ``n`` GPUs, each failing at rate ``1/m``, fails at
rate ``n/m`` (a series system: any GPU's failure stops the whole synchronous job).

Formulas and their sources
--------------------------
* Young (1974), "A first order approximation to the optimum checkpoint interval", CACM 17(9),
  doi:10.1145/361147.361115: ``T = sqrt(2 δ M)``.
* Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps",
  FGCS 22(3), doi:10.1016/j.future.2004.11.016, Eq. 37: ``T = sqrt(2 δ M) [1 + (1/3) sqrt(δ/(2M))
  + (1/9) (δ/(2M))] − δ`` for ``δ < 2M``, else ``T = M``.
* Expected wall time of one segment of ``τ`` work plus a ``δ`` checkpoint, restarts (``R``) that
  do not themselves fail: ``E = (M + R)(exp((τ + δ)/M) − 1)`` (renewal argument: the number of
  failed attempts is geometric with mean ``exp(L/M) − 1`` and each costs ``R`` plus the
  truncated-exponential time before failure; derivation in :func:`expected_segment_time_s`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from analyses.models.units import SECONDS_PER_DAY

ArrayLike = npt.ArrayLike


def per_gpu_mtbf_s(interruptions: ArrayLike, days: ArrayLike, gpus: ArrayLike) -> np.ndarray:
    """Mean time between failures of one GPU (s) implied by a job's interruption log.

    Assumes the ``gpus`` GPUs fail independently at one rate and that every interruption is
    attributed to the job: ``m = gpus · days · 86400 / interruptions`` (GPU-seconds per failure).
    """
    interruptions = np.asarray(interruptions, dtype=float)
    return np.asarray(gpus, dtype=float) * np.asarray(days, dtype=float) * SECONDS_PER_DAY / interruptions


def cluster_mtbf_s(gpus: ArrayLike, per_gpu_mtbf: ArrayLike) -> np.ndarray:
    """Mean time between job interruptions (s) of a synchronous job on ``gpus`` GPUs: ``m / n``."""
    return np.asarray(per_gpu_mtbf, dtype=float) / np.asarray(gpus, dtype=float)


def failures_per_day(gpus: ArrayLike, per_gpu_mtbf: ArrayLike) -> np.ndarray:
    """Expected job interruptions per day on ``gpus`` GPUs (1/day)."""
    return SECONDS_PER_DAY / cluster_mtbf_s(gpus, per_gpu_mtbf)


def gpus_for_mtbf(mtbf_s: ArrayLike, per_gpu_mtbf: ArrayLike) -> np.ndarray:
    """The GPU count at which a job's mean time between interruptions equals ``mtbf_s``."""
    return np.asarray(per_gpu_mtbf, dtype=float) / np.asarray(mtbf_s, dtype=float)


def prob_no_failure(duration_s: ArrayLike, mtbf_s: ArrayLike) -> np.ndarray:
    """Probability of no interruption in ``duration_s`` when interruptions arrive every ``mtbf_s`` on average."""
    return np.exp(-np.asarray(duration_s, dtype=float) / np.asarray(mtbf_s, dtype=float))


def checkpoint_interval(checkpoint_s: ArrayLike, mtbf_s: ArrayLike, *, method: str = "young") -> np.ndarray:
    """Optimal compute time between checkpoints (s).

    Parameters
    ----------
    checkpoint_s
        δ, time to write one checkpoint (s).
    mtbf_s
        M, mean time between job interruptions (s).
    method
        ``"young"``: ``sqrt(2 δ M)`` (Young 1974). ``"daly"``: Daly (2006) Eq. 37,
        ``sqrt(2δM)[1 + (1/3)sqrt(δ/(2M)) + (1/9)(δ/(2M))] − δ`` for ``δ < 2M``, else ``M``.

    Returns
    -------
    numpy.ndarray
        The interval τ in seconds (compute time between the ends of successive checkpoints).
    """
    delta = np.asarray(checkpoint_s, dtype=float)
    m = np.asarray(mtbf_s, dtype=float)
    if np.any(delta < 0) or np.any(m <= 0):
        raise ValueError("checkpoint_s must be >= 0 and mtbf_s > 0")
    young = np.sqrt(2.0 * delta * m)
    if method == "young":
        return young
    if method == "daly":
        x = delta / (2.0 * m)
        higher = young * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - delta
        return np.where(delta < 2.0 * m, higher, m)
    raise ValueError(f"method must be 'young' or 'daly', got {method!r}")


def expected_segment_time_s(
    interval_s: ArrayLike, checkpoint_s: ArrayLike, mtbf_s: ArrayLike, restart_s: ArrayLike
) -> np.ndarray:
    """Expected wall time (s) to complete τ of work and its checkpoint under exponential failures.

    Each attempt lasts ``L = τ + δ``; it succeeds with probability ``q = exp(−L/M)``. The number
    of failed attempts is geometric with mean ``(1 − q)/q = exp(L/M) − 1``; a failed attempt
    costs ``R`` plus the time to failure, exponential truncated to ``[0, L)`` with mean
    ``M − L q/(1 − q)``. Summing gives ``E = (M + R)(exp(L/M) − 1)``.
    """
    tau = np.asarray(interval_s, dtype=float)
    m = np.asarray(mtbf_s, dtype=float)
    return (m + np.asarray(restart_s, dtype=float)) * np.expm1((tau + np.asarray(checkpoint_s, dtype=float)) / m)


def goodput(
    interval_s: ArrayLike, checkpoint_s: ArrayLike, mtbf_s: ArrayLike, restart_s: ArrayLike = 0.0
) -> np.ndarray:
    """Fraction of wall time spent on work that is kept: ``τ / E[segment time]`` (dimensionless).

    To first order in ``1/M`` this is ``τ/(τ + δ) · (1 − ((τ + δ)/2 + R)/M)``: checkpoint
    overhead, half an interval of lost work per failure, and the restart.
    """
    tau = np.asarray(interval_s, dtype=float)
    return tau / expected_segment_time_s(tau, checkpoint_s, mtbf_s, restart_s)


def optimal_interval_numeric(checkpoint_s: float, mtbf_s: float, restart_s: float = 0.0) -> float:
    """The interval (s) that maximises :func:`goodput` exactly, by bounded scalar minimisation."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(
        lambda t: -float(goodput(t, checkpoint_s, mtbf_s, restart_s)),
        bounds=(1e-6 * mtbf_s, 5.0 * mtbf_s),
        method="bounded",
        options={"xatol": 1e-6 * mtbf_s},
    )
    return float(res.x)


def simulate_goodput(
    interval_s: float,
    checkpoint_s: float,
    mtbf_s: float,
    restart_s: float = 0.0,
    *,
    work_s: float = 30 * SECONDS_PER_DAY,
    runs: int = 2000,
    seed: int = 0,
) -> np.ndarray:
    """Monte Carlo goodput of ``runs`` jobs of ``work_s`` seconds of work (fixed seed, vectorised).

    Each job is cut into segments of ``τ`` work + ``δ`` checkpoint (the last one shorter). For every
    segment the number of failed attempts is drawn (geometric), and for every failure its time
    (exponential truncated to the attempt length, by inverse CDF) and a restart ``R``. Returns the
    goodput ``work_s / wall time`` of each run.
    """
    rng = np.random.default_rng(seed)
    n_full = int(work_s // interval_s)
    tail = work_s - n_full * interval_s
    lengths = np.full(n_full, interval_s + checkpoint_s)
    if tail > 0:
        lengths = np.append(lengths, tail + checkpoint_s)
    q = np.exp(-lengths / mtbf_s)  # success probability of one attempt, per segment
    failures = rng.geometric(np.broadcast_to(q, (runs, lengths.size))) - 1  # failed attempts
    per_run_failures = failures.sum(axis=1)
    seg_of_failure = np.repeat(np.tile(np.arange(lengths.size), runs), failures.ravel())
    p_fail = -np.expm1(-lengths[seg_of_failure] / mtbf_s)
    u = rng.random(seg_of_failure.size)
    lost = -mtbf_s * np.log1p(-u * p_fail)  # time into the attempt when it failed
    run_of_failure = np.repeat(np.arange(runs), per_run_failures)
    lost_per_run = np.bincount(run_of_failure, weights=lost, minlength=runs)
    wall = lengths.sum() + per_run_failures * restart_s + lost_per_run
    return work_s / wall


def policy_goodput(
    intervals_s: ArrayLike, shares: ArrayLike, checkpoint_s: float, mtbf_s: float, restart_s: float = 0.0
) -> float:
    """Goodput of a phased checkpoint policy: interval ``intervals_s[i]`` for a share ``shares[i]`` of the work.

    Work-weighted harmonic combination: total wall time is the sum over phases of
    ``share / goodput(interval)``.
    """
    intervals = np.asarray(intervals_s, dtype=float)
    shares = np.asarray(shares, dtype=float)
    return float(1.0 / np.sum(shares / goodput(intervals, checkpoint_s, mtbf_s, restart_s)))


def goodput_curve(checkpoint_s: float, mtbf_s: float, restart_s: float, intervals_s: ArrayLike) -> pd.DataFrame:
    """Goodput against checkpoint interval: columns ``interval_min``, ``goodput``."""
    intervals = np.asarray(intervals_s, dtype=float)
    return pd.DataFrame(
        {"interval_min": intervals / 60.0, "goodput": goodput(intervals, checkpoint_s, mtbf_s, restart_s)}
    )


def crash_recovery_hours(
    run_days: float, crash_interval_days: float, recovery_h: float, lost_work_h: float = 0.0
) -> float:
    """Hours spent recovering over ``run_days`` with a crash every ``crash_interval_days``.

    ``run_days / crash_interval_days`` crashes, each costing ``recovery_h`` plus ``lost_work_h`` of
    recomputed work.
    """
    return run_days / crash_interval_days * (recovery_h + lost_work_h)
