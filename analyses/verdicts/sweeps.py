"""What-if grids: a claim's verdict as one assumption of the scenario moves, computed by its own check.

A slider shows, for a few claims, the verdict each would get as one assumption moves while the rest
stay at the scenario's central values. :func:`slider` computes the grid with the claims' own checks
(:func:`analyses.verdicts.robustness.sweep`) when the chapter executes; the page only selects
precomputed rows (:mod:`analyses.pages.sliders` draws it), so no formula is written twice. The grid
spans the assumption's 90% range, widened to the nearest flip point of each claim where one exists
within the values a reader may set, and the central value and the flip points are marked.
:func:`flip_points` lists where the ledger's verdicts flip, for the ledger page's flip map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models import scipy_special
from analyses.units.formats import round_sig_array
from analyses.verdicts import CheckFn, robustness, show

POINTS = 41  # grid points of a slider (the page stays small: POINTS x claims rows)
SEARCH = 81  # points of the wide search for flip points beyond the 90% range
DIGITS = 4  # significant digits of the grid values shown and compared in the page


def sig(x: np.ndarray, digits: int = DIGITS) -> np.ndarray:
    """``x`` (array) rounded to ``digits`` significant figures (:func:`round_sig_array`)."""
    return round_sig_array(x, digits)


@dataclass(frozen=True)
class Slider:
    """A precomputed slider: the grid, one row per (grid point, claim), and where verdicts flip."""

    input: str
    label: str
    unit: str
    central: float
    step: float
    grid: pd.DataFrame  # x, claim, label, verdict, recomputed (text)
    flips: pd.DataFrame  # claim, label, x, verdict (the verdict beyond the flip)

    def at(self, x: float) -> pd.DataFrame:
        """The rows the page shows when the slider is at ``x`` (the nearest grid point)."""
        xs = np.unique(self.grid["x"].to_numpy())
        nearest = xs[np.argmin(np.abs(xs - x))]
        return self.grid[self.grid["x"] == nearest].reset_index(drop=True)


def _domain(
    name: str, cfg: Mapping[str, Any], items: Sequence[tuple[data.Claim, Any]], include: Sequence[float] = ()
) -> tuple[float, float]:
    """The slider's span: the 90% range widened to each claim's nearest flip within the allowed values,
    and to every value of ``include`` (a document's own figure for the assumption) within them."""
    a = scenario.assumption(name)
    r = scenario.ranges(cfg)[name]
    lo, hi = r.low, r.high
    if r.degenerate:
        lo, hi = max(a.min, r.central / 2), min(a.max, r.central * 2)
    for x in include:
        if a.min <= x <= a.max:
            lo, hi = min(lo, float(x)), max(hi, float(x))
    if a.min > 0 and a.max / a.min > 20:
        wide = np.geomspace(a.min, a.max, SEARCH)
    else:
        wide = np.linspace(a.min, a.max, SEARCH)
    for claim, fn in items:
        here = robustness.sweep(fn, claim, cfg, name, np.array([r.central]))["verdict"][0]
        codes = robustness.sweep(fn, claim, cfg, name, wide)["verdict"]
        changed = np.flatnonzero(codes != here)
        below, above = changed[wide[changed] < r.central], changed[wide[changed] > r.central]
        if below.size:
            lo = min(lo, float(wide[below.max()]))
        if above.size:
            hi = max(hi, float(wide[above.min()]))
    if not hi > lo:  # a degenerate range at zero (a reader's override): the whole allowed span
        lo, hi = a.min, a.max
    pad = 0.05 * (hi - lo)
    return max(a.min, lo - pad), min(a.max, hi + pad)


def slider(
    name: str, items: Sequence[tuple[data.Claim, CheckFn, Mapping[str, Any]]], include: Sequence[float] = ()
) -> Slider:
    """Precompute a slider over assumption ``name`` for ``items``: each a claim, its check and the
    configuration it is checked at (:func:`analyses.chapters.ledger.slider` resolves them); the span
    reaches every value of ``include`` (the documents' own figure, so a reader can dial it)."""
    cfg0 = items[0][2]
    lo, hi = _domain(name, cfg0, [(c, fn) for c, fn, _ in items], include)
    a = scenario.assumption(name)
    central = float(sig(scenario.values(cfg0)[name]))
    # a regular lattice through the central value, so the slider's step lands on grid points
    # every bound settled to 6 digits: a last-bit difference in a bound must not add or drop a point
    lo, hi, a_min, a_max = (float(v) for v in sig(np.array([lo, hi, a.min, a.max]), 6))
    step = float(sig((hi - lo) / (POINTS - 1), 2))
    k_lo = int(np.floor(sig((lo - central) / step, 6)))
    k_hi = int(np.ceil(sig((hi - central) / step, 6)))
    xs = np.unique(sig(central + step * np.arange(k_lo, k_hi + 1), 6))
    xs = xs[(xs >= a_min) & (xs <= a_max)]
    rows, flips = [], []
    for claim, fn, cfg in items:
        out = robustness.sweep(fn, claim, cfg, name, xs)
        label = short_label(claim)
        for x, verdict, low, high in zip(xs, out["verdict"], out["low"], out["high"], strict=True):
            value = (
                show(low, _unit(claim, fn, cfg), 3)
                if low == high
                else (f"{show(low, _unit(claim, fn, cfg), 3)}–{show(high, _unit(claim, fn, cfg), 3)}")
            )
            rows.append(
                {"x": float(x), "claim": claim.id, "label": label, "verdict": str(verdict), "recomputed": value}
            )
        codes = out["verdict"]
        i0 = int(np.argmin(np.abs(xs - central)))
        for i in range(1, xs.size):
            if codes[i] != codes[i - 1]:
                # the grid point on the central side is "inside"; the flip is narrowed between the two
                inside, outside = (i - 1, i) if i > i0 else (i, i - 1)
                at = robustness.refine_flip(fn, claim, cfg, name, float(xs[inside]), float(xs[outside]))
                flips.append({"claim": claim.id, "label": label, "x": float(sig(at)), "verdict": str(codes[outside])})
    return Slider(
        name,
        a.label,
        a.unit,
        central,
        step,
        pd.DataFrame(rows),
        pd.DataFrame(flips, columns=["claim", "label", "x", "verdict"]),
    )


_UNITS: dict[tuple[str, str], str] = {}


def _unit(claim: data.Claim, fn: Any, cfg: Mapping[str, Any]) -> str:
    key = (claim.id, claim.chapter)
    if key not in _UNITS:
        _UNITS[key] = fn(claim, scenario.values(cfg), cfg).unit
    return _UNITS[key]


def short_label(claim: data.Claim) -> str:
    """A claim as a chart row label: document, section and the id's slug ("000 §2.1 per-gpu-2-3x")."""
    doc, section, slug = claim.id.split("-", 2)
    return f"{doc} §{section} {slug}"


def flip_points(rows: Sequence[robustness.Assessment]) -> pd.DataFrame:
    """One row per claim whose verdict flips within its inputs' 90% ranges: where the flip lies as a
    percentile of the assumption's range (5 to 95), the assumption's central value and threshold."""
    out = []
    for a in rows:
        if not a.flip or not a.flip.get("inside", True):
            continue
        f = a.flip
        r = scenario.ranges()[f["input"]]
        pct = float(100 * scipy_special().ndtr(float(r.score(f["threshold"]))))  # the normal CDF
        unit = scenario.assumption(f["input"]).unit
        s = scenario.values()
        out.append(
            {
                "claim": a.claim.id,
                "label": short_label(a.claim),
                "verdict": a.verdict,
                "flips to": f["verdict"],
                "assumption": f["label"],
                "central": show(*robustness.in_ledger_currency(r.central, unit, s), 3),
                "flips at": show(*robustness.in_ledger_currency(f["threshold"], unit, s), 2),
                "percentile": round(pct, 1),
            }
        )
    return pd.DataFrame(
        out, columns=["claim", "label", "verdict", "flips to", "assumption", "central", "flips at", "percentile"]
    )
