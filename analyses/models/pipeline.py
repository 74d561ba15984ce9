"""Input pipelines: how data loading that partly overlaps compute sets step time and utilisation.

Conventions: times in seconds, bandwidths in bytes/s, shares and utilisations as fractions.
A training step needs ``compute_s`` of GPU work and ``load_s`` of loader work for the next batch.
With no prefetching the two run back to back; with a prefetch queue they overlap and, in steady
state, the step takes ``max(compute_s, load_s)`` (the producer-consumer bound). ``overlap`` in
[0, 1] interpolates between the two. The GPU utilisation attributable to input is
``compute_s / step_s`` and the exposed loading share is ``1 − compute_s / step_s``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from analyses.models.flops import flops_per_token

ArrayLike = npt.ArrayLike


def step_time_s(compute_s: ArrayLike, load_s: ArrayLike, overlap: ArrayLike = 1.0) -> np.ndarray:
    """Step time (s): ``compute + load − overlap · min(compute, load)``.

    ``overlap = 0`` is a synchronous loader (``compute + load``); ``overlap = 1`` a prefetching
    loader in steady state (``max(compute, load)``).
    """
    c = np.asarray(compute_s, dtype=float)
    ld = np.asarray(load_s, dtype=float)
    return c + ld - np.asarray(overlap, dtype=float) * np.minimum(c, ld)


def utilisation(compute_s: ArrayLike, load_s: ArrayLike, overlap: ArrayLike = 1.0) -> np.ndarray:
    """Share of wall time the GPU computes, ``compute_s / step_time_s``."""
    return np.asarray(compute_s, dtype=float) / step_time_s(compute_s, load_s, overlap)


def load_time_s(batch_bytes: ArrayLike, loader_bytes_per_s: ArrayLike, latency_s: ArrayLike = 0.0) -> np.ndarray:
    """Time (s) for the loader to deliver one batch: fixed latency plus bytes over throughput."""
    return np.asarray(latency_s, dtype=float) + np.asarray(batch_bytes, dtype=float) / np.asarray(
        loader_bytes_per_s, dtype=float
    )


def simulate_prefetch(
    compute_s: float, mean_load_s: float, prefetch_depth: int, *, cv: float = 0.5, steps: int = 4000, seed: int = 0
) -> float:
    """Monte Carlo utilisation of a producer-consumer loader with a queue of ``prefetch_depth`` batches.

    Load times are lognormal with mean ``mean_load_s`` and coefficient of variation ``cv``; the
    loader may run at most ``prefetch_depth`` batches ahead of the GPU (depth 0: synchronous).
    Recurrence: loading batch ``i`` starts once batch ``i−1`` is loaded and a queue slot is free
    (step ``i − depth`` has taken its batch; depth 0: step ``i−1`` has finished), so it is ready at
    ``r_i = max(r_{i−1}, free_i) + L_i``; step ``i`` starts at ``s_i = max(s_{i−1} + compute_s, r_i)``. Returns ``steps · compute_s / wall``.
    """
    rng = np.random.default_rng(seed)
    sigma2 = np.log1p(cv**2)
    loads = rng.lognormal(np.log(mean_load_s) - sigma2 / 2, np.sqrt(sigma2), steps)
    start = np.empty(steps)
    prev_ready = 0.0
    for i in range(steps):  # a recurrence: each step depends on the previous ones
        if prefetch_depth == 0:
            slot_free = start[i - 1] + compute_s if i > 0 else 0.0
        else:
            slot_free = start[i - prefetch_depth] if i >= prefetch_depth else 0.0
        prev_ready = max(prev_ready, slot_free) + loads[i]
        start[i] = max(start[i - 1] + compute_s, prev_ready) if i > 0 else prev_ready
    wall = start[-1] + compute_s
    return float(steps * compute_s / wall)


def time_ratio_from_shares(share_before: ArrayLike, share_after: ArrayLike) -> np.ndarray:
    """Wall-time ratio after/before when the exposed loading share changes and compute stays fixed.

    Compute time is ``(1 − share) · T`` both times, so ``T_after / T_before = (1 − s_b)/(1 − s_a)``.
    """
    return (1.0 - np.asarray(share_before, dtype=float)) / (1.0 - np.asarray(share_after, dtype=float))


def time_ratio_from_utilisation(util_before: ArrayLike, util_after: ArrayLike) -> np.ndarray:
    """Wall-time ratio after/before for fixed work when utilisation changes: ``u_b / u_a``."""
    return np.asarray(util_before, dtype=float) / np.asarray(util_after, dtype=float)


def loading_fix(
    share_before: float, share_after: float, util_before: float, util_after: float, cycle_days: float
) -> dict[str, float]:
    """A run whose exposed loading share falls from ``share_before`` to ``share_after`` (fractions of
    wall time) and whose stated utilisation rises from ``util_before`` to ``util_after``, for the same
    compute: the utilisation if loading were the only stall (``busy_*`` = 1 − share), the wall-time
    ratios after/before from the shares and from the utilisations, the time cut, and the days saved
    over a ``cycle_days`` cycle read as the time before."""
    ratio_s = float(time_ratio_from_shares(share_before, share_after))
    ratio_u = float(time_ratio_from_utilisation(util_before, util_after))
    return {
        "busy_before": 1 - share_before,
        "busy_after": 1 - share_after,
        "time_ratio_shares": ratio_s,
        "time_ratio_util": ratio_u,
        "time_cut": 1 - ratio_s,
        "days_saved_shares": cycle_days * (1 - ratio_s),
        "days_saved_util": cycle_days * (1 - ratio_u),
    }


def energy_ratio(util_before: ArrayLike, util_after: ArrayLike, idle_power_fraction: ArrayLike) -> np.ndarray:
    """Energy after/before for fixed work when waiting GPUs' servers draw ``idle_power_fraction`` of
    their training power.

    Busy energy is the same both times (same work); waiting energy is the waiting time times the
    waiting power: ``E ∝ u·T + f·(1 − u)·T`` with ``u·T`` fixed, so per unit of compute time
    ``E = 1 + f·(1/u − 1)``.
    """
    f = np.asarray(idle_power_fraction, dtype=float)
    e_before = 1.0 + f * (1.0 / np.asarray(util_before, dtype=float) - 1.0)
    e_after = 1.0 + f * (1.0 / np.asarray(util_after, dtype=float) - 1.0)
    return e_after / e_before


def mix_share_for_saving(target: ArrayLike, saving_a: ArrayLike, saving_b: ArrayLike) -> np.ndarray:
    """Share ``w`` of a bill in item B for the bill to fall by ``target`` when item A falls by
    ``saving_a`` and item B by ``saving_b``: ``w·b + (1 − w)·a = target`` solved for ``w``
    (outside [0, 1] when no mix reaches the target; infinite or NaN where ``a == b``, when every
    mix saves the same)."""
    a, b = np.asarray(saving_a, dtype=float), np.asarray(saving_b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.asarray(target, dtype=float) - a) / (b - a)


def llm_tokens_per_s_per_gpu(params: ArrayLike, achieved_flops: ArrayLike) -> np.ndarray:
    """Training tokens per second per GPU of a dense model at ``achieved_flops`` (model FLOP/s per
    GPU, peak x MFU): ``achieved / (6 N)`` (Kaplan et al. 2020, C = 6ND)."""
    return np.asarray(achieved_flops, dtype=float) / flops_per_token(params)


def required_input_bytes_per_s(tokens_per_s: ArrayLike, bytes_per_token: ArrayLike) -> np.ndarray:
    """Input bandwidth (bytes/s) a text model consumes: tokens per second times bytes per token."""
    return np.asarray(tokens_per_s, dtype=float) * np.asarray(bytes_per_token, dtype=float)
