"""Kernel efficiency of each GPU generation, calibrated on published training throughput.

The kernel efficiency is the share of dense peak FLOP/s that a GPU's matrix kernels reach before
any parallel overhead; the step-time model (:func:`analyses.models.scaling.step_time`) multiplies
it by the peak and adds the bubble and the communication it models. It is solved on the
``role == calibrate`` rows of the published-runs table and checked on the ``validate`` rows by
:func:`analyses.models.scaling.model_vs_measurement`; the model's relative errors on the validation
rows are its time uncertainty.

``holdout_sources`` leaves out every benchmark row citing those sources, so a published run can be
planned without its own throughput in the calibration. :mod:`analyses.scenario.calibration` feeds
these functions from ``data/`` and caches them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from analyses.models import scaling


def validation(
    bench: pd.DataFrame,
    clusters: pd.DataFrame,
    peak: Callable[[str, str], float],
    holdout_sources: Sequence[str] = (),
    overlap: float = 0.5,
) -> pd.DataFrame:
    """The step-time model against every published row of ``bench`` (``scaling_benchmarks``) on the
    ``clusters`` (``cluster_configs``) at data-parallel ``overlap``, without the rows citing
    ``holdout_sources`` (:func:`analyses.models.scaling.model_vs_measurement`); ``peak(gpu, precision)``
    is a GPU's dense peak FLOP/s."""
    if holdout_sources:
        bench = bench[~bench["source"].isin(list(holdout_sources))]
    return scaling.model_vs_measurement(bench, clusters, peak, overlap=overlap)


def calibrations(frame: pd.DataFrame) -> pd.DataFrame:
    """Kernel efficiency per (GPU, precision) of the calibration rows of a :func:`validation` frame.

    Columns ``gpu, precision, compute_efficiency, id, source``.
    """
    cal = frame[frame["role"] == "calibrate"]
    return cal[["gpu", "precision", "compute_efficiency", "id", "source"]].reset_index(drop=True)


def validation_errors(frame: pd.DataFrame) -> np.ndarray:
    """The step-time model's relative errors (predicted/measured − 1) on the validation rows of a
    :func:`validation` frame."""
    return frame.loc[frame["role"] == "validate", "error"].to_numpy(dtype=float)


def kernel_efficiency(cal: pd.DataFrame, gpu: str, precision: str) -> tuple[float, str]:
    """The calibrated kernel efficiency for ``gpu`` at ``precision`` (of :func:`calibrations` ``cal``)
    and how it was obtained.

    Exact (GPU, precision) calibration first; else the mean of the same precision's calibrations on
    other GPUs ("borrowed"); else the mean of every calibration.
    """
    own = cal[(cal["gpu"] == gpu) & (cal["precision"] == precision)]
    if not own.empty:
        return float(own["compute_efficiency"].mean()), f"calibrated on {', '.join(own['id'])}"
    same = cal[cal["precision"] == precision]
    pool = same if not same.empty else cal
    return (
        float(pool["compute_efficiency"].mean()),
        f"borrowed: the mean of the {' and '.join(pool['gpu'] + ' ' + pool['precision'])} calibrations",
    )
