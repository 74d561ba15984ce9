"""Per-GPU training throughput, training FLOPs, time-to-train and the speed-ups claims imply.

Conventions: FLOP/s are dense (no 2:4 sparsity; training never uses it); times in seconds unless a
name says ``days``; ``mfu`` is model FLOPs utilisation, the share of the dense peak at the chosen
precision that the training run turns into model FLOPs (Chowdhery et al. 2022, PaLM, appendix B).
Every function takes plain numbers or numpy arrays and broadcasts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from analyses.models.flops import training_flops
from analyses.units import DAYS_PER_MONTH, SECONDS_PER_DAY, SECONDS_PER_HOUR


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


def pretrain_months(
    params: ArrayLike, tokens_per_param: ArrayLike, n_gpus: ArrayLike, peak_flops_dense: ArrayLike, mfu: ArrayLike
) -> np.ndarray:
    """Months to pretrain ``params`` parameters on ``tokens_per_param`` tokens each (``6·N·D``).

    A month is :data:`analyses.units.DAYS_PER_MONTH` days; see :func:`time_to_train_s`.
    """
    n = np.asarray(params, float)
    flops = training_flops(n, n * np.asarray(tokens_per_param, float))
    return time_to_train_s(flops, n_gpus, peak_flops_dense, mfu) / SECONDS_PER_DAY / DAYS_PER_MONTH


def finetune_hours(
    params: ArrayLike,
    samples: ArrayLike,
    tokens_per_sample: ArrayLike,
    epochs: ArrayLike,
    n_gpus: ArrayLike,
    peak_flops_dense: ArrayLike,
    mfu: ArrayLike,
) -> np.ndarray:
    """Hours of a full-parameter fine-tune: ``epochs`` passes over ``samples`` entries of
    ``tokens_per_sample`` tokens, ``6·N·D`` FLOPs (Kaplan et al. 2020), on ``n_gpus`` at ``mfu``."""
    tokens = np.asarray(samples, float) * np.asarray(tokens_per_sample, float) * np.asarray(epochs, float)
    return time_to_train_s(training_flops(params, tokens), n_gpus, peak_flops_dense, mfu) / SECONDS_PER_HOUR


def best_published_ratio(bench: pd.DataFrame, new_gpus: tuple[str, ...], old_gpu: str, new_precision: str) -> float:
    """Best published model TFLOP/s per GPU of ``new_gpus`` at ``new_precision`` over the best of ``old_gpu``.

    ``bench`` is the published-runs table (``data/scaling_benchmarks.csv``: ``gpu``, ``precision``,
    ``metric``, ``value``); only ``model_tflops_per_gpu`` rows count. Model FLOP/s are the same work
    on both sides (6·N per token), so the ratio is a per-GPU speed-up of published software.
    """
    tf = bench[bench["metric"] == "model_tflops_per_gpu"]
    old = tf[tf["gpu"] == old_gpu]["value"]
    new = tf[tf["gpu"].isin(new_gpus) & (tf["precision"] == new_precision)]["value"]
    if old.empty or new.empty:
        raise ValueError(f"no published model TFLOP/s for {old_gpu} or for {', '.join(new_gpus)} at {new_precision}")
    return float(new.max() / old.max())
