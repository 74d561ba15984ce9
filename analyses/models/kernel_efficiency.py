"""Kernel efficiency of each GPU generation, calibrated on published training throughput.

The kernel efficiency is the share of dense peak FLOP/s that a GPU's matrix kernels reach before
any parallel overhead; the step-time model (:func:`analyses.models.scaling.step_time`) multiplies
it by the peak and adds the bubble and the communication it models. It is solved on the
``role == calibrate`` rows of ``data/scaling_benchmarks.csv`` and checked on the ``validate`` rows
by :func:`analyses.models.scaling.model_vs_measurement` (the scaling-efficiency chapter's
validation, with the scenario's data-parallel overlap); the model's relative errors on the
validation rows are its time uncertainty.

``holdout_sources`` leaves out every benchmark row citing those sources, so a published run can be
planned without its own throughput in the calibration.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import scaling


@functools.cache
def _peak(gpu: str, precision: str, data_dir: str) -> float:
    return data.gpu(gpu).peak_flops(precision)


@functools.cache
def _validation(holdout_sources: tuple[str, ...], overlap: float, data_dir: str) -> pd.DataFrame:
    bench = data.table("scaling_benchmarks")
    if holdout_sources:
        bench = bench[~bench["source"].isin(holdout_sources)]
    return scaling.model_vs_measurement(
        bench, data.table("cluster_configs"), lambda g, p: _peak(g, p, data_dir), overlap=overlap
    )


def validation(holdout_sources: Sequence[str] = (), overlap: float = 0.5) -> pd.DataFrame:
    """The step-time model against every published row (:func:`analyses.models.scaling.model_vs_measurement`)
    at data-parallel ``overlap``, without the rows citing ``holdout_sources``; read once per argument."""
    return _validation(tuple(holdout_sources), float(overlap), str(data.DATA_DIR))


def calibrations(holdout_sources: Sequence[str] = (), overlap: float = 0.5) -> pd.DataFrame:
    """Kernel efficiency per (GPU, precision) calibrated on published throughput rows.

    Columns ``gpu, precision, compute_efficiency, id, source``.
    """
    frame = validation(holdout_sources, overlap)
    cal = frame[frame["role"] == "calibrate"]
    return cal[["gpu", "precision", "compute_efficiency", "id", "source"]].reset_index(drop=True)


def validation_errors(holdout_sources: Sequence[str] = (), overlap: float = 0.5) -> np.ndarray:
    """The step-time model's relative errors (predicted/measured − 1) on the published validation rows."""
    frame = validation(holdout_sources, overlap)
    return frame.loc[frame["role"] == "validate", "error"].to_numpy(dtype=float)


def kernel_efficiency(
    gpu: str, precision: str, holdout_sources: Sequence[str] = (), overlap: float = 0.5
) -> tuple[float, str]:
    """The calibrated kernel efficiency for ``gpu`` at ``precision`` and how it was obtained.

    Exact (GPU, precision) calibration first; else the mean of the same precision's calibrations on
    other GPUs ("borrowed"); else the mean of every calibration.
    """
    return _kernel_efficiency(gpu, precision, tuple(holdout_sources), float(overlap), str(data.DATA_DIR))


@functools.cache
def _kernel_efficiency(
    gpu: str, precision: str, holdout_sources: tuple[str, ...], overlap: float, data_dir: str
) -> tuple[float, str]:
    cal = calibrations(holdout_sources, overlap)
    own = cal[(cal["gpu"] == gpu) & (cal["precision"] == precision)]
    if not own.empty:
        return float(own["compute_efficiency"].mean()), f"calibrated on {', '.join(own['id'])}"
    same = cal[cal["precision"] == precision]
    pool = same if not same.empty else cal
    return (
        float(pool["compute_efficiency"].mean()),
        f"borrowed: the mean of the {' and '.join(pool['gpu'] + ' ' + pool['precision'])} calibrations",
    )
