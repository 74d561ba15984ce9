"""Uncertain inputs: ranges, sampling, Monte Carlo, intervals and one-at-a-time sensitivity.

An uncertain input is a :class:`Range`: its ``low`` and ``high`` are the 5th and 95th percentiles
and ``central`` the median of a split distribution, the way Epoch AI carries uncertain inputs
through a calculation (lognormal for positive quantities, logit-normal for fractions in (0, 1),
normal for quantities of any sign). Every function is vectorised with numpy: a model evaluated at
the central inputs, on 100,000 draws or at one input's low and high is the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd

from analyses.models import scipy_special

Z90 = 1.6448536269514722  # standard normal quantile at 0.95: low/high are the 5th/95th percentiles
INTERVAL_LEVEL = 0.9  # two-sided level of every interval in the book (5th to 95th percentile)
DISTRIBUTIONS = ("lognormal", "logitnormal", "normal", "fixed")


def _logit(p: np.ndarray | float) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    return np.log(p / (1.0 - p))


def _expit(x: np.ndarray | float) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-x) overflows to inf for x below about -709: the share is 0.0, its limit
        return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


_TRANSFORMS: dict[str, tuple[Callable, Callable]] = {
    "lognormal": (np.log, np.exp),
    "logitnormal": (_logit, _expit),
    "normal": (lambda x: np.asarray(x, dtype=float), lambda x: np.asarray(x, dtype=float)),
}


class Range(NamedTuple):
    """An uncertain input: 5th percentile, median and 95th percentile, and the family of its law."""

    low: float
    central: float
    high: float
    distribution: str = "lognormal"

    def check(self) -> Range:
        """Raise ``ValueError`` unless the range fits its distribution; return it."""
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {self.distribution!r}")
        if not self.low <= self.central <= self.high:
            raise ValueError(f"a range needs low <= central <= high, got {tuple(self)}")
        if self.distribution == "lognormal" and self.low <= 0 and not self.degenerate:
            raise ValueError(f"a lognormal range needs low > 0, got {tuple(self)}")
        if self.distribution == "logitnormal" and not self.degenerate and not (0 < self.low and self.high < 1):
            raise ValueError(f"a logit-normal range needs 0 < low and high < 1, got {tuple(self)}")
        return self

    @property
    def degenerate(self) -> bool:
        return self.distribution == "fixed" or self.low == self.central == self.high

    def scaled(self, central: float) -> Range:
        """The same relative spread around a new central value (a reader's own figure).

        Lognormal ranges keep their ratios, logit-normal ones their spread in logit space, normal
        ones their distances; a new central value outside (0, 1) makes a logit range degenerate.
        """
        if self.degenerate:
            return Range(central, central, central, self.distribution)
        if self.distribution == "lognormal":
            if self.central == 0 or central <= 0:
                return Range(central, central, central, self.distribution)
            k = central / self.central
            return Range(self.low * k, central, self.high * k, self.distribution)
        if self.distribution == "logitnormal":
            if not 0 < central < 1:
                return Range(central, central, central, self.distribution)
            shift = float(_logit(central) - _logit(self.central))
            lo, hi = (float(_expit(_logit(v) + shift)) for v in (self.low, self.high))
            # near 0 or 1 the shifted ends round to 0.0 or 1.0 (a central of 5e-324 gave low = high
            # = 0.0 < central): keep them inside (0, 1) and on their side of the central value
            lo = min(max(lo, float(np.nextafter(0.0, 1.0))), central)
            hi = max(min(hi, float(np.nextafter(1.0, 0.0))), central)
            return Range(lo, central, hi, self.distribution)
        shift = central - self.central
        return Range(self.low + shift, central, self.high + shift, self.distribution)

    def quantile(self, z: np.ndarray | float) -> np.ndarray:
        """The value at standard-normal score ``z`` (z = -1.645 gives ``low``, +1.645 ``high``)."""
        z = np.asarray(z, dtype=float)
        if self.degenerate:
            return np.full(z.shape, float(self.central))
        if self.distribution == "lognormal":
            sigma = np.where(z < 0, np.log(self.central / self.low), np.log(self.high / self.central)) / Z90
            return self.central * np.exp(sigma * z)
        forward, back = _TRANSFORMS[self.distribution]
        lo, c, hi = (float(forward(v)) for v in (self.low, self.central, self.high))
        sigma = np.where(z < 0, c - lo, hi - c) / Z90
        return back(c + sigma * z)

    def score(self, value: np.ndarray | float) -> np.ndarray:
        """Inverse of :meth:`quantile`: the standard-normal score of ``value`` (0 at the median)."""
        value = np.asarray(value, dtype=float)
        if self.degenerate:
            return np.zeros(value.shape)
        forward, _ = _TRANSFORMS[self.distribution]
        lo, c, hi = (float(forward(v)) for v in (self.low, self.central, self.high))
        with np.errstate(invalid="ignore", divide="ignore"):
            x = forward(value)
            return np.where(x < c, (x - c) / (c - lo) * Z90, (x - c) / max(hi - c, 1e-300) * Z90)


def sample_range(r: Range, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of ``r``: ``central`` shifted by ``sigma z`` in the distribution's space, with
    ``sigma`` set by ``low`` for ``z < 0`` and by ``high`` for ``z > 0`` (a split law allowing a
    skewed range). A degenerate range returns a constant."""
    r.check()
    if r.degenerate:
        return np.full(size, float(r.central))
    return r.quantile(rng.standard_normal(size))


def monte_carlo(
    fn: Callable[..., np.ndarray], ranges: Mapping[str, Range], n: int = 20_000, seed: int = 0
) -> np.ndarray:
    """Evaluate ``fn(**inputs)`` on ``n`` joint draws of independent inputs (one vectorised call).

    Inputs are drawn in the mapping's order from one ``numpy.random.Generator(PCG64(seed))``.
    """
    rng = np.random.default_rng(seed)
    draws = {name: sample_range(r, n, rng) for name, r in ranges.items()}
    return np.broadcast_to(np.asarray(fn(**draws), dtype=float), (n,)).copy()


def central_value(fn: Callable[..., np.ndarray], ranges: Mapping[str, Range]) -> float:
    """``fn`` at every input's central value."""
    return float(np.asarray(fn(**{k: r.central for k, r in ranges.items()})))


def interval(samples: np.ndarray, level: float = INTERVAL_LEVEL) -> tuple[float, float, float]:
    """(lower, median, upper) of the central ``level`` interval of ``samples`` (inf allowed)."""
    tail = (1.0 - level) / 2.0
    big = np.finfo(float).max
    finite = np.minimum(np.asarray(samples, dtype=float), big)  # inf (never) sorts last without inf - inf
    out = np.quantile(finite, [tail, 0.5, 1.0 - tail], method="inverted_cdf")
    return tuple(float(np.inf) if v >= big else float(v) for v in out)  # type: ignore[return-value]


def error_band(errors: np.ndarray, level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """The ``level`` band of a new error from ``n`` past out-of-sample errors (split conformal
    prediction, Vovk et al. 2005; Lei et al. 2018): the order statistics of rank ``n + 1 − k`` and
    ``k``, ``k = ⌈(n + 1)(1 − tail)⌉`` (capped at ``n``: the extremes), each tail ``(1 − level) / 2``.

    Plain quantiles of the same errors cover less than ``level`` of a new row when ``n`` is small (with
    18 errors the 5-95% quantiles cover 16 of 18 in sample, fewer out of it); these ranks cover at
    least ``level`` of exchangeable new errors."""
    x = np.sort(np.asarray(errors, dtype=float))
    n = x.size
    if n == 0:
        raise ValueError("error_band needs at least one error")
    tail = (1.0 - level) / 2.0
    k = min(int(np.ceil((n + 1) * (1.0 - tail) - 1e-9)), n)
    return float(x[n - k]), float(x[k - 1])


ROBUST_SD = 1.4826  # the median absolute deviation of a normal sample times this is its standard deviation


def robust_sd(x: np.ndarray) -> float:
    """The standard deviation of ``x`` estimated from its median absolute deviation (``1.4826 · MAD``:
    a few outliers move it little)."""
    x = np.asarray(x, dtype=float)
    return float(ROBUST_SD * np.median(np.abs(x - np.median(x))))


def combined_errors(
    steady: np.ndarray, whole: np.ndarray, level: float = INTERVAL_LEVEL, grid: int = 21
) -> tuple[np.ndarray, float]:
    """Errors of a whole run: the steady-state model error (a draw of ``steady``) plus the campaign's own
    spread, independent of it, ``c ~ N(0, k·σ_c)``; returns the sample (each steady error with each of
    ``grid`` normal quantiles of ``c``) and ``k·σ_c``.

    ``σ_c`` is what the whole-run errors ``whole`` scatter beyond the steady-state errors,
    ``√max(s_w² − s_s², 0)`` with robust standard deviations (:func:`robust_sd`); ``k ≥ 1`` is the least
    factor (in steps of 0.05) whose :func:`error_band` of the sample holds ``level`` of ``whole`` and
    reaches at least as far as the steady state's band on either side: the band is sized on the whole
    runs and is never narrower than the steady state's."""
    s = np.asarray(steady, dtype=float)
    w = np.asarray(whole, dtype=float)
    sigma = float(np.sqrt(max(robust_sd(w) ** 2 - robust_sd(s) ** 2, 0.0)))
    if sigma == 0.0:
        sigma = 0.01  # a floor, so that k can widen the band where the whole runs ask it to
    z = np.array([NormalDist().inv_cdf((i + 0.5) / grid) for i in range(grid)])
    s_lo, s_hi = error_band(s, level)
    for k in np.arange(1.0, 20.0, 0.05):
        sample = (s[:, None] + k * sigma * z[None, :]).ravel()
        lo, hi = error_band(sample, level)
        if np.mean((w >= lo) & (w <= hi)) >= level and lo <= s_lo and hi >= s_hi:
            return sample, float(k * sigma)
    return sample, float(k * sigma)


def tornado(fn: Callable[..., np.ndarray], ranges: Mapping[str, Range]) -> pd.DataFrame:
    """One-at-a-time sensitivity: ``fn`` with each input at its low and high, the rest central.

    Columns ``input, at_low, at_high, swing`` (``|at_high - at_low|``), largest swing first.
    """
    base = {k: r.central for k, r in ranges.items()}
    rows = []
    for name, r in ranges.items():
        at_low = float(np.asarray(fn(**(base | {name: r.low}))))
        at_high = float(np.asarray(fn(**(base | {name: r.high}))))
        rows.append({"input": name, "at_low": at_low, "at_high": at_high, "swing": abs(at_high - at_low)})
    frame = pd.DataFrame(rows, columns=["input", "at_low", "at_high", "swing"])
    return frame.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)


def prediction_factor(log_sd: float, dof: int, n: int, count=np.inf, level: float = INTERVAL_LEVEL):
    """Multiplicative half-width of a ``level`` prediction band of a new observation on a log scale:
    ``exp(t_dof · sqrt(sd² (1 + 1/n) + 1/count))`` (Student's t at the residuals' degrees of freedom,
    the uncertainty of a mean of ``n`` observations, and the Poisson noise of a count; ``count``
    infinite for a measured quantity)."""
    var = log_sd**2 * (1.0 + 1.0 / n) + 1.0 / np.asarray(count, dtype=float)
    return np.exp(float(scipy_special().stdtrit(dof, 0.5 + level / 2.0)) * np.sqrt(var))
