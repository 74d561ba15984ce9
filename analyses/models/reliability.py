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
* The interval that maximises that goodput exactly, in closed form with the Lambert W function
  (:func:`optimal_interval_s`), and the expected time one interruption costs
  (:func:`lost_per_interruption_s`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from analyses.models import scipy_special
from analyses.units import DAYS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_YEAR, settle

ArrayLike = npt.ArrayLike


def per_gpu_mtbf_s(interruptions: ArrayLike, days: ArrayLike, gpus: ArrayLike) -> np.ndarray:
    """Mean time between failures of one GPU (s) implied by a job's interruption log.

    Assumes the ``gpus`` GPUs fail independently at one rate and that every interruption is
    attributed to the job: ``m = gpus · days · 86400 / interruptions`` (GPU-seconds per failure).
    """
    interruptions = np.asarray(interruptions, dtype=float)
    return np.asarray(gpus, dtype=float) * np.asarray(days, dtype=float) * SECONDS_PER_DAY / interruptions


def interruptions_per_gpu_year(interruptions: ArrayLike, days: ArrayLike, gpus: ArrayLike) -> np.ndarray:
    """Interruptions per GPU per year implied by a job's log: ``interruptions · 365.25 / (gpus · days)``.

    The reciprocal of :func:`per_gpu_mtbf_s` in GPU-years (a Julian year, :mod:`analyses.units`).
    """
    gpu_days = np.asarray(gpus, dtype=float) * np.asarray(days, dtype=float)
    return np.asarray(interruptions, dtype=float) * DAYS_PER_YEAR / gpu_days


def per_gpu_mtbf_from_rate_s(interruptions_per_gpu_year: ArrayLike) -> np.ndarray:
    """Per-GPU mean time between interruptions (s) from a rate in interruptions per GPU-year."""
    return SECONDS_PER_YEAR / np.asarray(interruptions_per_gpu_year, dtype=float)


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


def clean_run_mtbf_s(duration_s: ArrayLike, probability: ArrayLike) -> np.ndarray:
    """The smallest mean time between interruptions (s) under which a run of ``duration_s`` has at
    least ``probability`` of no interruption: ``T / −ln p`` (inverse of :func:`prob_no_failure`)."""
    return np.asarray(duration_s, dtype=float) / -np.log(np.asarray(probability, dtype=float))


def downtime_bound_s(effective_time_min: ArrayLike, days: ArrayLike, interruptions: ArrayLike) -> np.ndarray:
    """Upper bound on the mean time (s) one interruption cost a run that kept at least
    ``effective_time_min`` of its ``days`` productive: ``(1 − share) · days · 86400 / interruptions``
    (restart plus recomputed work together)."""
    lost_days = (1.0 - np.asarray(effective_time_min, dtype=float)) * np.asarray(days, dtype=float)
    return lost_days * SECONDS_PER_DAY / np.asarray(interruptions, dtype=float)


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
    with np.errstate(over="ignore"):  # a segment far longer than M never completes: infinite time
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


def optimal_interval_s(checkpoint_s: ArrayLike, mtbf_s: ArrayLike) -> np.ndarray:
    """The interval τ (s) that maximises :func:`goodput` exactly, for any restart time (closed form).

    Setting the derivative of ``log τ − log(exp((τ + δ)/M) − 1)`` to zero gives
    ``exp(x)(1 + δ/M − x) = 1`` with ``x = (τ + δ)/M``, whose root with ``τ > 0`` is
    ``τ* = M (1 + W₀(−exp(−(1 + δ/M))))`` (W₀: principal branch of Lambert's W). The restart time
    scales the expected segment time by ``M + R`` and does not move the optimum. Young's
    ``sqrt(2δM)`` is its first-order term in ``δ/M``.
    """
    delta = np.asarray(checkpoint_s, dtype=float)
    m = np.asarray(mtbf_s, dtype=float)
    if np.any(delta < 0) or np.any(m <= 0):
        raise ValueError("checkpoint_s must be >= 0 and mtbf_s > 0")
    # the argument lies in (-1/e, 0); keep it inside when δ/M is tiny (W is undefined in floating
    # point at -1/e itself, where δ = 0 and the optimum is τ = 0)
    z = np.maximum(-np.exp(-(1.0 + delta / m)), np.nextafter(-np.exp(-1.0), 0.0))
    return np.where(delta > 0, m * np.maximum(1.0 + scipy_special().lambertw(z, 0).real, 0.0), 0.0)


def redone_work_s(interval_s: ArrayLike, checkpoint_s: ArrayLike, mtbf_s: ArrayLike) -> np.ndarray:
    """Expected work (s) an interruption throws away: the time since the last checkpoint.

    A failure strikes an attempt of length ``L = τ + δ`` at a time exponential with mean ``M``
    truncated to ``[0, L)``, whose mean is ``M − L / (exp(L/M) − 1)`` (about ``L/2`` when
    ``L ≪ M``; at most ``L``).
    """
    length = np.asarray(interval_s, dtype=float) + np.asarray(checkpoint_s, dtype=float)
    m = np.asarray(mtbf_s, dtype=float)
    with np.errstate(over="ignore"):  # L far beyond M: exp overflows to inf and the mean is its limit M
        return m - length / np.expm1(length / m)


def time_to_recover_s(
    interval_s: ArrayLike, checkpoint_s: ArrayLike, mtbf_s: ArrayLike, restart_s: ArrayLike = 0.0
) -> np.ndarray:
    """The book's one definition of the time an interruption costs (s): **time to recover**.

    ``restart_s`` (detection, replacing or excluding the faulty node, reloading the last
    checkpoint: the *restart*) plus :func:`redone_work_s` (the work since that checkpoint, done
    again). The restart alone is the scenario's ``restart_s`` of the cluster's operations mode; the
    redone work follows from the checkpoint interval and the job's mean time between interruptions.
    """
    return np.asarray(restart_s, dtype=float) + redone_work_s(interval_s, checkpoint_s, mtbf_s)


def lost_per_interruption_s(
    interval_s: ArrayLike, checkpoint_s: ArrayLike, mtbf_s: ArrayLike, restart_s: ArrayLike = 0.0
) -> np.ndarray:
    """Expected time (s) one interruption costs: the restart plus the work since the last checkpoint
    (:func:`time_to_recover_s`, under its older name)."""
    return time_to_recover_s(interval_s, checkpoint_s, mtbf_s, restart_s)


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

    Each job is cut into segments of ``τ`` work + ``δ`` checkpoint (the last one shorter). The
    failed attempts of a segment are geometric, so a job's failed attempts over its ``n`` equal
    segments are negative binomial (``n`` successes at ``exp(−L/M)``), drawn once per job, and
    those of the shorter last segment once more. Every failure then gets its time (exponential
    truncated to its attempt's length, by inverse CDF) and a restart ``R``. Returns the goodput
    ``work_s / wall time`` of each run.
    """
    # settled: a last-bit difference in an input must not change the number of whole segments
    interval_s, checkpoint_s, mtbf_s, restart_s, work_s = map(
        settle, (interval_s, checkpoint_s, mtbf_s, restart_s, work_s)
    )
    rng = np.random.default_rng(seed)
    n_full = int(work_s // interval_s)
    tail = work_s - n_full * interval_s
    lengths = [(n_full, interval_s + checkpoint_s)] + ([(1, tail + checkpoint_s)] if tail > 0 else [])
    wall = np.zeros(runs)
    for count, length in lengths:
        if count == 0:
            continue
        failures = rng.negative_binomial(count, np.exp(-length / mtbf_s), size=runs)  # failed attempts per job
        u = rng.random(int(failures.sum()))
        lost = -mtbf_s * np.log1p(u * np.expm1(-length / mtbf_s))  # time into each failed attempt
        run_of_failure = np.repeat(np.arange(runs), failures)
        wall += count * length + failures * restart_s + np.bincount(run_of_failure, weights=lost, minlength=runs)
    return work_s / wall


def policy_goodput(
    intervals_s: ArrayLike,
    shares: ArrayLike,
    checkpoint_s: ArrayLike,
    mtbf_s: ArrayLike,
    restart_s: ArrayLike = 0.0,
) -> np.ndarray:
    """Goodput of a phased checkpoint policy: interval ``intervals_s[i]`` for a share ``shares[i]`` of the work.

    Work-weighted harmonic combination: total wall time is the sum over phases of
    ``share / goodput(interval)``. The phases run along the first axis; every other input (and
    each phase's share) may be an array of scenario draws.
    """
    with np.errstate(divide="ignore"):  # a phase with zero goodput takes forever: the policy's goodput is 0
        phases = [
            np.asarray(w, dtype=float) / goodput(t, checkpoint_s, mtbf_s, restart_s)
            for t, w in zip(intervals_s, shares, strict=True)
        ]
        return 1.0 / np.sum(np.broadcast_arrays(*phases), axis=0)


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


# --------------------------------------------------------------------------------------------
# What interrupts a job, and what server hardware could prevent
# --------------------------------------------------------------------------------------------

# Llama 3's Table 5 causes in three nested tiers of what server hardware features could prevent at
# most: the causes ECC memory, redundant power and thermal monitoring target; every other GPU and
# host component; the network and unplanned host maintenance the paper counts as (suspected)
# hardware. Software, dependencies and unexplained NCCL timeouts are in none. Causes not listed
# (a new source's rows) count as not preventable.
PREVENTION_TIERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "targeted by ECC, redundant power and thermal monitoring",
        ("GPU HBM3 memory", "GPU SRAM memory", "System memory", "GPU thermal interface and sensor", "Power supply"),
    ),
    (
        "other GPU and host hardware",
        (
            "Faulty GPU",
            "GPU system processor",
            "Silent data corruption",
            "NIC",
            "SSD",
            "Server chassis",
            "IO expansion board",
            "CPU",
        ),
    ),
    ("network and host maintenance", ("Network switch/cable", "Host maintenance")),
)
NOT_PREVENTABLE = "software and unknown"


def prevention_tier(cause: str) -> str:
    """The tier of :data:`PREVENTION_TIERS` a cause belongs to (:data:`NOT_PREVENTABLE` if none)."""
    for tier, causes in PREVENTION_TIERS:
        if cause in causes:
            return tier
    return NOT_PREVENTABLE


def preventable_shares(causes: pd.DataFrame) -> np.ndarray:
    """Cumulative share of interruptions in the first 1, 2 and 3 tiers of :data:`PREVENTION_TIERS`.

    ``causes`` has columns ``cause`` and ``count`` (``data/failure_causes.csv``). These are the low,
    central and high values of the scenario's ``preventable_interruption_share``.
    """
    tiers = causes["cause"].map(prevention_tier)
    counts = causes["count"].to_numpy(dtype=float)
    total = counts.sum()
    shares = [counts[tiers.isin([t for t, _ in PREVENTION_TIERS[: k + 1]]).to_numpy()].sum() / total for k in range(3)]
    return np.asarray(shares)


def cause_table(causes: pd.DataFrame) -> pd.DataFrame:
    """Interruptions by cause with their share of the total, prevention tier and category, largest first."""
    out = causes[["cause", "category", "count"]].copy()
    out["share"] = out["count"] / out["count"].sum()
    out["tier"] = out["cause"].map(prevention_tier)
    return out.sort_values("count", ascending=False, kind="stable").reset_index(drop=True)


def interruption_cut_factor(preventable_share: ArrayLike) -> np.ndarray:
    """How many times fewer interruptions remain if a share of them is prevented: ``1 / (1 − share)``."""
    return 1.0 / (1.0 - np.asarray(preventable_share, dtype=float))
