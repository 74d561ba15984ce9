"""Per-GPU training throughput, training FLOPs, time-to-train and the speed-ups claims imply.

Conventions: FLOP/s are dense (no 2:4 sparsity; training never uses it); times in seconds unless a
name says ``days``; ``mfu`` is model FLOPs utilisation, the share of the dense peak at the chosen
precision that the training run turns into model FLOPs (Chowdhery et al. 2022, PaLM, appendix B).
Every function takes plain numbers or numpy arrays and broadcasts.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from analyses.models.units import SECONDS_PER_DAY


def training_flops(
    params: ArrayLike,
    tokens: ArrayLike,
    n_layers: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
    seq_len: ArrayLike | None = None,
) -> np.ndarray:
    """Model FLOPs to train a dense transformer, FLOP.

    ``6·N·D`` (Kaplan et al. 2020, sec. 2.1: 2N forward + 4N backward per token) plus, when the
    layer count, width and sequence length are given, the attention-score term of PaLM's
    appendix B, ``12·L·H·Q·T`` per token with ``H·Q = d_model`` and ``T = seq_len``:
    ``C = 6·N·D + 12·L·d_model·seq_len·D``.

    Parameters
    ----------
    params
        Parameter count N.
    tokens
        Training tokens D.
    n_layers, d_model, seq_len
        Layers L, hidden size, sequence length (all three or none).
    """
    flops = 6.0 * np.asarray(params, float) * np.asarray(tokens, float)
    if n_layers is not None and d_model is not None and seq_len is not None:
        attention_per_token = (
            12.0 * np.asarray(n_layers, float) * np.asarray(d_model, float) * np.asarray(seq_len, float)
        )
        flops = flops + attention_per_token * np.asarray(tokens, float)
    return flops


def effective_flops_per_s(peak_flops_dense: ArrayLike, mfu: ArrayLike) -> np.ndarray:
    """Achieved model FLOP/s per GPU = dense peak at the training precision × MFU."""
    return np.asarray(peak_flops_dense, float) * np.asarray(mfu, float)


def time_to_train_s(
    total_flops: ArrayLike, n_gpus: ArrayLike, peak_flops_dense: ArrayLike, mfu: ArrayLike
) -> np.ndarray:
    """Wall-clock seconds to deliver ``total_flops`` on ``n_gpus`` at ``mfu`` of the dense peak.

    ``t = C / (n · peak · MFU)`` (Narayanan et al. 2021, eq. 4, with 6 instead of 8 when the
    achieved rate is counted in model FLOPs rather than hardware FLOPs).
    """
    return np.asarray(total_flops, float) / (np.asarray(n_gpus, float) * effective_flops_per_s(peak_flops_dense, mfu))


def gpu_hours(total_flops: ArrayLike, peak_flops_dense: ArrayLike, mfu: ArrayLike) -> np.ndarray:
    """GPU-hours to deliver ``total_flops`` at ``mfu`` of the dense peak (independent of GPU count)."""
    return np.asarray(total_flops, float) / effective_flops_per_s(peak_flops_dense, mfu) / 3600.0


def tokens_trainable(
    n_gpus: ArrayLike, days: ArrayLike, params: ArrayLike, peak_flops_dense: ArrayLike, mfu: ArrayLike
) -> np.ndarray:
    """Tokens a cluster can train in ``days``: ``D = n·peak·MFU·t / (6·N)`` (inverse of 6ND)."""
    flops = (
        np.asarray(n_gpus, float)
        * effective_flops_per_s(peak_flops_dense, mfu)
        * np.asarray(days, float)
        * SECONDS_PER_DAY
    )
    return flops / (6.0 * np.asarray(params, float))


def implied_per_gpu_speedup(
    gpus_before: ArrayLike, days_before: ArrayLike, gpus_after: ArrayLike, days_after: ArrayLike
) -> np.ndarray:
    """Per-GPU speed-up an anecdote implies for the same job: GPU-days before / GPU-days after.

    Assumes the same work and equal scaling efficiency on both clusters; fewer GPUs usually
    scale better, so the hardware-only speed-up needed is, if anything, a little smaller.
    """
    return (np.asarray(gpus_before, float) * np.asarray(days_before, float)) / (
        np.asarray(gpus_after, float) * np.asarray(days_after, float)
    )


def time_reduction(days_before: ArrayLike, days_after: ArrayLike) -> np.ndarray:
    """Fractional cut in wall-clock time, ``1 − after/before``."""
    return 1.0 - np.asarray(days_after, float) / np.asarray(days_before, float)


def speedup_for_time_reduction(reduction: ArrayLike) -> np.ndarray:
    """Speed-up needed for a fractional time cut at equal GPU count: ``1/(1 − r)``."""
    return 1.0 / (1.0 - np.asarray(reduction, float))


def amdahl_precision_speedup(matmul_time_share: ArrayLike, peak_ratio: ArrayLike) -> np.ndarray:
    """End-to-end speed-up when only matmuls run ``peak_ratio`` times faster (Amdahl's law).

    ``S = 1 / ((1 − f) + f / r)`` with ``f`` the share of step time in tensor-core matmuls at
    the old precision. FP8 doubles the dense peak over BF16 (r = 2) but attention softmax,
    norms, optimizer and communication do not speed up, which is why published FP8 training
    runs report 1.2-1.6× rather than 2×.
    """
    f = np.asarray(matmul_time_share, float)
    return 1.0 / ((1.0 - f) + f / np.asarray(peak_ratio, float))


def matmul_share_from_speedup(speedup: ArrayLike, peak_ratio: ArrayLike) -> np.ndarray:
    """Invert :func:`amdahl_precision_speedup`: the matmul time share a measured speed-up implies."""
    s, r = np.asarray(speedup, float), np.asarray(peak_ratio, float)
    return (1.0 - 1.0 / s) / (1.0 - 1.0 / r)


def achieved_ratio(peak_new: ArrayLike, mfu_new: ArrayLike, peak_old: ArrayLike, mfu_old: ArrayLike) -> np.ndarray:
    """Per-GPU achieved-throughput ratio of two GPUs: ``(peak·MFU)_new / (peak·MFU)_old``."""
    return effective_flops_per_s(peak_new, mfu_new) / effective_flops_per_s(peak_old, mfu_old)
