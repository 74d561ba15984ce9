"""The step-time model calibrated on the published runs in ``data/``: kernel efficiency per GPU
generation and precision, and the model's out-of-sample errors.

:mod:`analyses.models.kernel_efficiency` fed with ``data/scaling_benchmarks.csv`` and
``data/cluster_configs.csv`` (the datasheets give the peaks), computed once per data folder and
argument: the planner, the verdict rule of capability claims (its tolerance is the worst validation
error) and the chapters share one calibration.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import kernel_efficiency as ke


@functools.cache
def _validation(holdout_sources: tuple[str, ...], overlap: float, data_dir: str) -> pd.DataFrame:
    return ke.validation(
        data.table("scaling_benchmarks"),
        data.table("cluster_configs"),
        lambda g, p: data.gpu(g).peak_flops(p),
        holdout_sources,
        overlap,
    )


def validation(holdout_sources: Sequence[str] = (), overlap: float = 0.5) -> pd.DataFrame:
    """The step-time model against every published row at data-parallel ``overlap``, without the rows
    citing ``holdout_sources`` (:func:`analyses.models.kernel_efficiency.validation`); read once per argument."""
    return _validation(tuple(holdout_sources), float(overlap), str(data.DATA_DIR))


def calibrations(holdout_sources: Sequence[str] = (), overlap: float = 0.5) -> pd.DataFrame:
    """Kernel efficiency per (GPU, precision) calibrated on published throughput rows.

    Columns ``gpu, precision, compute_efficiency, id, source``.
    """
    return ke.calibrations(validation(holdout_sources, overlap))


def validation_errors(holdout_sources: Sequence[str] = (), overlap: float = 0.5) -> np.ndarray:
    """The step-time model's relative errors (predicted/measured − 1) on the published validation rows."""
    return ke.validation_errors(validation(holdout_sources, overlap))


def kernel_efficiency(
    gpu: str, precision: str, holdout_sources: Sequence[str] = (), overlap: float = 0.5
) -> tuple[float, str]:
    """The calibrated kernel efficiency for ``gpu`` at ``precision`` and how it was obtained
    (:func:`analyses.models.kernel_efficiency.kernel_efficiency`)."""
    return _kernel_efficiency(gpu, precision, tuple(holdout_sources), float(overlap), str(data.DATA_DIR))


@functools.cache
def _kernel_efficiency(
    gpu: str, precision: str, holdout_sources: tuple[str, ...], overlap: float, data_dir: str
) -> tuple[float, str]:
    return ke.kernel_efficiency(calibrations(holdout_sources, overlap), gpu, precision)
