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
from scipy import stats

SECONDS_PER_DAY = 86_400.0
SECONDS_PER_YEAR = 365.25 * SECONDS_PER_DAY


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
        scale = months / 12.0
        return (
            10 ** (self.slope_log10_per_year * scale),
            10 ** (self.slope_low * scale),
            10 ** (self.slope_high * scale),
        )

    @property
    def doubling_months(self) -> float:
        """Months for the quantity to double at the central rate (inf if not growing)."""
        return np.inf if self.slope_log10_per_year <= 0 else 12.0 * np.log10(2.0) / self.slope_log10_per_year

    def predict(self, years: npt.ArrayLike) -> np.ndarray:
        """The fitted value at ``years`` (decimal years)."""
        return 10 ** (self.intercept_log10 + self.slope_log10_per_year * np.asarray(years, dtype=float))


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
    result = stats.linregress(t, np.log10(y))
    half = stats.t.ppf(0.5 + confidence / 2, len(t) - 2) * result.stderr
    return GrowthFit(
        slope_log10_per_year=float(result.slope),
        slope_low=float(result.slope - half),
        slope_high=float(result.slope + half),
        intercept_log10=float(result.intercept),
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


def training_flop(params: npt.ArrayLike, tokens: npt.ArrayLike) -> np.ndarray:
    """Training compute C = 6 N D in FLOP (Kaplan et al. 2020, Sec 2.1: 2 forward + 4 backward)."""
    return 6.0 * np.asarray(params, dtype=float) * np.asarray(tokens, dtype=float)


def years_of_compute(flop: npt.ArrayLike, flop_per_s: npt.ArrayLike, utilisation: npt.ArrayLike) -> np.ndarray:
    """Wall-clock years to perform ``flop`` at ``flop_per_s`` peak sustained at ``utilisation``."""
    return np.asarray(flop, dtype=float) / (np.asarray(flop_per_s) * np.asarray(utilisation)) / SECONDS_PER_YEAR
