"""Exponential growth fits: how fast model size, training compute and per-GPU FLOP/s grow.

A quantity growing by a constant factor per year is a straight line in log10 space. We fit
``log10(y) = a + b * t`` by ordinary least squares (t in decimal years), so the growth factor per
year is ``10**b`` and per ``m`` months ``10**(b * m / 12)``; the confidence interval follows from
the t distribution of the slope (any regression text, e.g. Montgomery, Peck & Vining,
*Introduction to Linear Regression Analysis*, Sec 2.4). Epoch AI fits its compute and hardware
trends the same way (Sevilla et al. 2022, "Compute Trends Across Three Eras of Machine
Learning", Sec 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from analyses.models import scipy_special
from analyses.models.flops import flops_per_token, training_flops
from analyses.units import MONTHS_PER_YEAR, SECONDS_PER_YEAR, TERA


@dataclass(frozen=True)
class GrowthFit:
    """An exponential fit: slope in log10 units per year with its confidence interval."""

    slope_log10_per_year: float
    slope_low: float
    slope_high: float
    intercept_log10: float
    n_points: int
    start_year: float
    end_year: float
    confidence: float

    def factor(self, months: float = 12.0) -> tuple[float, float, float]:
        """Growth factor over ``months``: (central, low, high) at the fit's confidence level."""
        scale = months / MONTHS_PER_YEAR
        return (
            10 ** (self.slope_log10_per_year * scale),
            10 ** (self.slope_low * scale),
            10 ** (self.slope_high * scale),
        )

    @property
    def doubling_months(self) -> float:
        """Months for the quantity to double at the central rate (inf if not growing)."""
        return np.inf if self.slope_log10_per_year <= 0 else MONTHS_PER_YEAR * np.log10(2.0) / self.slope_log10_per_year

    def predict(self, years: npt.ArrayLike) -> np.ndarray:
        """The fitted value at ``years`` (decimal years)."""
        return 10 ** (self.intercept_log10 + self.slope_log10_per_year * np.asarray(years, dtype=float))


def least_squares(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Ordinary least squares of ``y`` on ``x`` (3+ points): slope, intercept and the slope's standard
    error ``sqrt((1 - r²) s_yy / s_xx / (n - 2))``, computed as :func:`scipy.stats.linregress` does
    (same operations, same floats) without importing ``scipy.stats`` (a second on a loaded machine)."""
    xmean, ymean = np.mean(x, None), np.mean(y, None)
    ssxm, ssxym, _, ssym = np.cov(x, y, bias=1).flat
    if ssxm == 0.0 or ssym == 0.0:
        r = np.nan if ssxym == 0 else 0.0
    else:
        r = min(max(ssxym / np.sqrt(ssxm * ssym), -1.0), 1.0)
    slope = ssxym / ssxm
    return slope, ymean - slope * xmean, np.sqrt((1 - r**2) * ssym / ssxm / (len(x) - 2))


def student_t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (what ``scipy.stats.t.ppf`` computes)."""
    return float(scipy_special().stdtrit(df, p))


def fit_exponential(years: npt.ArrayLike, values: npt.ArrayLike, confidence: float = 0.9) -> GrowthFit:
    """Fit ``values = 10**(a + b*years)`` by least squares in log10 space.

    Parameters
    ----------
    years
        Decimal years (2020.5 = mid-2020).
    values
        Positive values of the quantity (any unit; the growth factor is unit-free).
    confidence
        Two-sided confidence level of the slope's interval (0.9 gives a 90% interval).

    Returns
    -------
    GrowthFit
        Slope ``b`` (log10 per year) with its t-based interval; needs at least 3 points.
    """
    t = np.asarray(years, dtype=float)
    y = np.asarray(values, dtype=float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError("years and values must be 1-D arrays of the same length")
    if len(t) < 3:
        raise ValueError(f"need at least 3 points to fit a trend with an interval, got {len(t)}")
    if np.any(y <= 0):
        raise ValueError("values must be positive")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    slope, intercept, stderr = least_squares(t, np.log10(y))
    half = student_t_quantile(0.5 + confidence / 2, len(t) - 2) * stderr
    return GrowthFit(
        slope_log10_per_year=float(slope),
        slope_low=float(slope - half),
        slope_high=float(slope + half),
        intercept_log10=float(intercept),
        n_points=len(t),
        start_year=float(t.min()),
        end_year=float(t.max()),
        confidence=confidence,
    )


def factor_per_period(factor: npt.ArrayLike, from_months: float, to_months: float) -> np.ndarray:
    """Convert a growth factor over ``from_months`` into the equivalent over ``to_months``.

    ``factor_per_period(10, 18, 12)`` = 10**(12/18) = 4.64: tenfold per 18 months is 4.64x a year.
    """
    return np.asarray(factor, dtype=float) ** (to_months / from_months)


def running_max_frontier(years: npt.ArrayLike, values: npt.ArrayLike) -> np.ndarray:
    """Boolean mask of points that set a new record (the frontier) when taken in time order."""
    t = np.asarray(years, dtype=float)
    y = np.asarray(values, dtype=float)
    if t.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(t, kind="stable")
    best = np.maximum.accumulate(y[order])
    is_record = np.empty_like(best, dtype=bool)
    is_record[0] = True
    is_record[1:] = best[1:] > best[:-1]
    mask = np.zeros(len(t), dtype=bool)
    mask[order] = is_record & (y[order] >= best)
    return mask


def years_of_compute(flop: npt.ArrayLike, flop_per_s: npt.ArrayLike, utilisation: npt.ArrayLike) -> np.ndarray:
    """Wall-clock years to perform ``flop`` at ``flop_per_s`` peak sustained at ``utilisation``."""
    return np.asarray(flop, dtype=float) / (np.asarray(flop_per_s) * np.asarray(utilisation)) / SECONDS_PER_YEAR


def tokens_per_param_for_years(
    years: npt.ArrayLike, params: npt.ArrayLike, flop_per_s: npt.ArrayLike, utilisation: npt.ArrayLike
) -> np.ndarray:
    """Tokens per parameter at which training ``params`` takes ``years`` at ``flop_per_s`` × ``utilisation``.

    The inverse of :func:`years_of_compute` with ``C = 6·N·(r·N)``: ``r = t·F·u / (6·N²)``.
    """
    n = np.asarray(params, dtype=float)
    seconds = np.asarray(years, dtype=float) * SECONDS_PER_YEAR
    return (
        seconds * np.asarray(flop_per_s, dtype=float) * np.asarray(utilisation, dtype=float) / (flops_per_token(n) * n)
    )


# --------------------------------------------------------------------------------------------
# The data behind the fits: models and GPUs as points in time
# --------------------------------------------------------------------------------------------

MID_MONTH = 0.5  # a month-precision date sits mid-month
MID_YEAR_MONTH = 7  # a year-only date sits mid-year (July)


def decimal_year(dates: pd.Series) -> np.ndarray:
    """'2020-05' -> 2020.375 (mid-month); '2020' -> 2020.54 (mid-July)."""
    out = []
    for text in dates.astype(str):
        parts = text.split("-")
        month = int(parts[1]) if len(parts) > 1 else MID_YEAR_MONTH
        out.append(int(parts[0]) + (month - MID_MONTH) / MONTHS_PER_YEAR)
    return np.array(out)


def model_points(models: pd.DataFrame, start: int, end: int) -> pd.DataFrame:
    """Models released in ``start``-``end`` (years, inclusive) with decimal year ``t``, training compute
    ``compute_flop`` (reported, else ``6·N·D`` over active parameters) and the record flags
    ``params_record`` and ``compute_record`` (a new maximum in time order within the window)."""
    frame = models.copy()
    frame["t"] = decimal_year(frame["date"])
    flop = frame["training_flop"].to_numpy(dtype=float, copy=True)
    missing = np.isnan(flop)
    active = frame["active_params"].fillna(frame["params"]).to_numpy(dtype=float)
    flop[missing] = training_flops(active[missing], frame["training_tokens"].to_numpy(dtype=float)[missing])
    frame["compute_flop"] = flop
    frame = frame[(frame["year"] >= start) & (frame["year"] <= end)].copy()
    frame["params_record"] = running_max_frontier(frame["t"], frame["params"])
    ok = frame["compute_flop"].notna()
    frame["compute_record"] = False
    frame.loc[ok, "compute_record"] = running_max_frontier(frame.loc[ok, "t"], frame.loc[ok, "compute_flop"])
    return frame.reset_index(drop=True)


GPU_BASES = ("fp32", "tensor16", "lowest")  # per-GPU FLOP/s bases a fit may use


def generations(gpus: pd.DataFrame) -> pd.DataFrame:
    """One row per GPU generation: ``gpus`` without the rows that are variants of another GPU (an
    export, memory or packaging variant such as H800 or H200 of H100, GB300 of B300, named in a
    ``variant_of`` column), so a growth fit or a count of generations counts each compute die once."""
    if "variant_of" not in gpus.columns:
        return gpus
    return gpus[gpus["variant_of"].isna() | (gpus["variant_of"] == "")]


def gpu_points(gpus: pd.DataFrame, basis: str, start: int, end: int) -> pd.DataFrame:
    """GPU generations (:func:`generations`) launched in ``start``-``end`` with decimal year ``t`` and
    dense ``flop_per_s`` on ``basis``: ``fp32``, ``tensor16`` (the better of BF16 and FP16) or
    ``lowest`` (the best of every precision)."""
    if basis not in GPU_BASES:
        raise ValueError(f"basis must be one of {GPU_BASES}, got {basis!r}")
    frame = generations(gpus).copy()
    frame["t"] = decimal_year(frame["launch_date"])
    cols = [c for c in frame.columns if c.startswith("peak_tflops_dense_")]
    if basis == "fp32":
        tflops = frame["peak_tflops_dense_fp32"]
    elif basis == "tensor16":
        tflops = frame[["peak_tflops_dense_bf16", "peak_tflops_dense_fp16"]].max(axis=1)
    else:
        tflops = frame[cols].max(axis=1)
    frame["flop_per_s"] = tflops * TERA
    frame = frame[(frame["launch_year"] >= start) & (frame["launch_year"] <= end)]
    return frame[frame["flop_per_s"].notna()].reset_index(drop=True)


def newer_generations(gpus: pd.DataFrame, name: str, year: int) -> int:
    """How many GPU generations (:func:`generations`) of ``gpus`` launched after ``name`` and no later
    than ``year`` (0 = the newest then; -1 when ``name`` itself launched after ``year`` or is not listed)."""
    row = gpus[gpus["name"] == name]
    gpus = generations(gpus)
    if row.empty or int(row["launch_year"].iloc[0]) > year:
        return -1
    launched = pd.to_datetime(gpus["launch_date"])
    own = pd.to_datetime(row["launch_date"]).iloc[0]
    return int(((launched > own) & (gpus["launch_year"] <= year)).sum())


def params_for_compute(flop: npt.ArrayLike, tokens_per_param: npt.ArrayLike) -> np.ndarray:
    """Parameters whose training on ``tokens_per_param`` tokens each costs ``flop``: ``N = sqrt(C / (6·r))``,
    the inverse of ``C = 6·N·(r·N)``."""
    return np.sqrt(np.asarray(flop, dtype=float) / training_flops(1.0, np.asarray(tokens_per_param, dtype=float)))
