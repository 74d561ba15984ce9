"""Slider figures: "what if" over one assumption of the scenario, computed by the book's own checks.

A slider figure shows, for a few claims, the verdict each would get as one assumption moves while
the rest stay at the scenario's central values. The grid is computed in Python by the claims' own
checks (:func:`analyses.verdicts.sweep`, which calls the chapter's models) when the chapter
executes; the page only selects precomputed rows with a Vega-Lite parameter bound to a range input,
so no formula is written twice. The grid spans the assumption's 90% range, widened to the nearest
flip point of each claim where one exists within the values a reader may set, and the central
value and the flip points are marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data, ledger, robustness, scenario, verdicts
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.site.encodings import LABEL_SIZE, describe
from analyses.site.ledger_html import VERDICT_MARKS, verdict_legend, verdict_mark_expr, verdict_scale

POINTS = 41  # grid points of a slider (the page stays small: POINTS x claims rows)
SEARCH = 81  # points of the wide search for flip points beyond the 90% range
DIGITS = 4  # significant digits of the grid values shown and compared in the page


def _sig(x: np.ndarray, digits: int = DIGITS) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(x == 0, 0, np.floor(np.log10(np.abs(np.where(x == 0, 1, x)))))
    scale = 10.0 ** (digits - 1 - mag)
    return np.round(x * scale) / scale


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


def _domain(name: str, cfg: Mapping[str, Any], items: Sequence[tuple[data.Claim, Any]]) -> tuple[float, float]:
    """The slider's span: the 90% range widened to each claim's nearest flip within the allowed values."""
    a = scenario.assumption(name)
    r = scenario.ranges(cfg)[name]
    lo, hi = r.low, r.high
    if r.degenerate:
        lo, hi = max(a.min, r.central / 2), min(a.max, r.central * 2)
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


def build(name: str, claim_ids: Sequence[str], cfg_by_chapter: Mapping[str, Mapping[str, Any]] | None = None) -> Slider:
    """Precompute a slider over assumption ``name`` for ``claim_ids`` (each at its chapter's config:
    ``cfg_by_chapter[chapter]``, the chapter's defaults when absent)."""
    from analyses import chapters

    items = []
    for cid in claim_ids:
        claim = data.claim(cid)
        cfg = (cfg_by_chapter or {}).get(claim.chapter) or chapters.spec(claim.chapter).defaults()
        items.append((claim, ledger.checks(claim.chapter)[cid], cfg))
    cfg0 = items[0][2]
    lo, hi = _domain(name, cfg0, [(c, fn) for c, fn, _ in items])
    a = scenario.assumption(name)
    central = float(_sig(scenario.values(cfg0)[name]))
    # a regular lattice through the central value, so the slider's step lands on grid points
    # every bound settled to 6 digits: a last-bit difference in a bound must not add or drop a point
    lo, hi, a_min, a_max = (float(v) for v in _sig(np.array([lo, hi, a.min, a.max]), 6))
    step = float(_sig((hi - lo) / (POINTS - 1), 2))
    k_lo = int(np.floor(_sig((lo - central) / step, 6)))
    k_hi = int(np.ceil(_sig((hi - central) / step, 6)))
    xs = np.unique(_sig(central + step * np.arange(k_lo, k_hi + 1), 6))
    xs = xs[(xs >= a_min) & (xs <= a_max)]
    rows, flips = [], []
    for claim, fn, cfg in items:
        out = robustness.sweep(fn, claim, cfg, name, xs)
        label = short_label(claim)
        for x, verdict, low, high in zip(xs, out["verdict"], out["low"], out["high"], strict=True):
            value = (
                verdicts.show(low, _unit(claim, fn, cfg), 3)
                if low == high
                else (f"{verdicts.show(low, _unit(claim, fn, cfg), 3)}–{verdicts.show(high, _unit(claim, fn, cfg), 3)}")
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
                flips.append({"claim": claim.id, "label": label, "x": float(_sig(at)), "verdict": str(codes[outside])})
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


def caption(s: Slider, slug: str, lead: str = "") -> str:
    """The caption of a slider figure: ``lead`` (what the chapter wants the reader to look for), then
    what the strips, the dashed line, the diamonds and the text mean, the flip points, and how the
    figure relates to rerunning the chapter."""
    central = verdicts.show(s.central, s.unit, 3)
    flips = "; ".join(f"{r.label} turns {r.verdict} at {verdicts.show(r.x, s.unit, 2)}" for r in s.flips.itertuples())
    marks = (
        f"white diamonds mark where a verdict flips ({flips})" if flips else "no verdict flips within the span shown"
    )
    body = (
        f"Each strip is a claim's verdict (its colour and its mark: ✓ consistent, ✗ inconsistent, ! implausible, "
        f"? unverifiable) as the {s.label} moves, recomputed by the claim's own check with every other "
        f"assumption at the scenario's central value; the dashed line marks the scenario's {central}, {marks}, and the "
        "text at right gives each verdict and recomputed figure at the slider. Rerunning the chapter "
        f"(python -m analyses run {slug} -p {s.input} VALUE) changes every other number on the page too."
    )
    return f"{lead.rstrip()} {body}" if lead else body


def runs(s: Slider, width: int) -> pd.DataFrame:
    """Each claim's strip cut into runs of one verdict, with the run's middle and the verdict's
    mark where the run is wide enough (in a ``width``-pixel chart) to hold it."""
    xs = np.unique(s.grid["x"].to_numpy())
    span = (xs.max() - xs.min() + s.step) or 1.0
    out = []
    for label, strip in s.grid.sort_values("x", kind="stable").groupby("label", sort=False):
        verdict = strip["verdict"].to_numpy()
        x = strip["x"].to_numpy()
        starts = np.flatnonzero(np.r_[True, verdict[1:] != verdict[:-1]])
        ends = np.r_[starts[1:], len(x)] - 1
        for a, b in zip(starts, ends, strict=True):
            lo, hi = x[a] - s.step / 2, x[b] + s.step / 2
            pixels = (hi - lo) / span * width
            word = verdict[a] if pixels >= 7 * len(verdict[a]) + 16 else ""
            mark = VERDICT_MARKS.get(verdict[a], "")
            if pixels >= 12:
                out.append({"label": label, "x": float(_sig((lo + hi) / 2, 6)), "mark": f"{mark} {word}".strip()})
    return pd.DataFrame(out, columns=["label", "x", "mark"])


def description(s: Slider) -> str:
    """What a slider figure shows, in words (its accessible name)."""
    claims = s.grid["label"].nunique()
    flips = "; ".join(f"{r.label} turns {r.verdict} at {verdicts.show(r.x, s.unit, 2)}" for r in s.flips.itertuples())
    central = s.at(s.central)
    now = "; ".join(f"{r.label}: {r.verdict} ({r.recomputed})" for r in central.itertuples())
    return (
        f"Slider figure: the verdicts of {claims} claim{'s' if claims != 1 else ''} as the {s.label} moves from "
        f"{verdicts.show(float(s.grid['x'].min()), s.unit, 3)} to {verdicts.show(float(s.grid['x'].max()), s.unit, 3)}. "
        f"At the scenario's {verdicts.show(s.central, s.unit, 3)}: {now}. "
        + (f"Flips: {flips}." if flips else "No verdict flips within the span shown.")
    )


def figure(s: Slider, width: int = 340) -> alt.Chart:
    """The slider figure: verdict strips over the grid (each run of one verdict marked ✓, ✗, ! or ?
    and named where it is wide enough), the central value (dashed rule), the flip points (white
    diamonds), and beside them each claim's verdict and recomputed value at the slider."""
    colours = verdict_scale()
    xs = np.unique(s.grid["x"].to_numpy())
    pick = alt.param(
        name="at",
        value=s.central,
        bind=alt.binding_range(min=float(xs.min()), max=float(xs.max()), step=s.step, name=f"{s.label} ({s.unit}) "),
    )
    half = s.step / 2
    grid = s.grid.assign(x1=lambda d: _sig(d["x"] - half, 6), x2=lambda d: _sig(d["x"] + half, 6))
    base = alt.Chart(grid)
    y = alt.Y("label:N", title=None, sort=None)
    x_title = f"{s.label} ({s.unit})"
    domain = [float(_sig(xs.min() - half, 6)), float(_sig(xs.max() + half, 6))]
    strips = base.mark_rect().encode(
        x=alt.X("x1:Q", title=x_title, scale=alt.Scale(domain=domain, nice=False)),
        x2="x2:Q",
        y=y,
        color=alt.Color("verdict:N", scale=colours, legend=verdict_legend(orient="bottom", title=None)),
        tooltip=[alt.Tooltip("x:Q", title=s.label, format=".3~g"), "claim:N", "verdict:N", "recomputed:N"],
    )
    marks = (
        alt.Chart(runs(s, width))
        .mark_text(color="white", fontSize=LABEL_SIZE, fontWeight="bold", baseline="middle")
        .encode(x="x:Q", y=y, text="mark:N")
    )
    nearest = f"abs(datum.x - at) < {half}"
    cursor = base.transform_filter(nearest).mark_rule(color="black", strokeWidth=2).encode(x="x:Q")
    central = (
        alt.Chart(pd.DataFrame({"x": [s.central]}))
        .mark_rule(color="black", strokeDash=[4, 3], strokeWidth=1)
        .encode(x="x:Q", tooltip=[alt.Tooltip("x:Q", title="scenario central value", format=".3~g")])
    )
    layers = [strips, marks, cursor, central]
    if not s.flips.empty:
        layers.append(
            alt.Chart(s.flips)
            .mark_point(shape="diamond", filled=True, color="white", stroke="black", size=70)
            .encode(
                x="x:Q",
                y=y,
                tooltip=[
                    "claim:N",
                    alt.Tooltip("x:Q", title="flips at", format=".3~g"),
                    alt.Tooltip("verdict:N", title="beyond"),
                ],
            )
        )
    left = alt.layer(*layers).properties(width=width, height=24 * grid["label"].nunique())
    text = (
        base.transform_filter(nearest)
        .mark_text(align="left", baseline="middle")
        .encode(
            x=alt.value(4),
            y=alt.Y("label:N", axis=None, sort=None),
            text=alt.Text("shown:N"),
            color=alt.Color("verdict:N", scale=colours, legend=None),
        )
        .transform_calculate(shown="datum.verdict + ' (' + datum.recomputed + ')'")
        .properties(width=170, height=24 * grid["label"].nunique())
    )
    chart = (
        alt.hconcat(left, text, spacing=4).add_params(pick).resolve_scale(color="shared").configure_view(stroke=None)
    )
    return describe(chart, description(s))


def flip_points(rows: Sequence[robustness.Assessment]) -> pd.DataFrame:
    """One row per claim whose verdict flips within its inputs' 90% ranges: where the flip lies as a
    percentile of the assumption's range (5 to 95), the assumption's central value and threshold."""
    from scipy.stats import norm

    out = []
    for a in rows:
        if not a.flip:
            continue
        f = a.flip
        r = scenario.ranges()[f["input"]]
        pct = float(100 * norm.cdf(float(r.score(f["threshold"]))))
        unit = scenario.assumption(f["input"]).unit
        out.append(
            {
                "claim": a.claim.id,
                "label": short_label(a.claim),
                "verdict": a.verdict,
                "flips to": f["verdict"],
                "assumption": f["label"],
                "central": verdicts.show(r.central, unit, 3),
                "flips at": verdicts.show(f["threshold"], unit, 2),
                "percentile": round(pct, 1),
            }
        )
    return pd.DataFrame(
        out, columns=["claim", "label", "verdict", "flips to", "assumption", "central", "flips at", "percentile"]
    )


def flip_map(frame: pd.DataFrame, width: int = 420) -> alt.LayerChart:
    """Each flipping claim's flip point within its assumption's 90% range (grey bar, 5th to 95th
    percentile; black tick: central value), coloured by the verdict it would flip to."""
    colours = verdict_scale()
    tail = 50.0 * (1.0 - INTERVAL_LEVEL)  # percent below the range's low end (5th percentile)
    base = (
        alt.Chart(frame)
        .transform_calculate(lo=f"{tail:g}", mid="50", hi=f"{100 - tail:g}")
        .encode(y=alt.Y("label:N", title=None, sort=None))
    )
    bar = base.mark_rule(color="#bbbbbb", strokeWidth=6).encode(
        x=alt.X(
            "lo:Q",
            scale=alt.Scale(domain=[0, 100]),
            title="where the verdict flips, as a percentile of the assumption's range",
        ),
        x2="hi:Q",
    )
    tick = base.mark_tick(color="black", thickness=2, size=14).encode(x="mid:Q")
    point = base.mark_point(shape="diamond", filled=True, size=110, stroke="black", opacity=1).encode(
        x="percentile:Q",
        color=alt.Color("flips to:N", scale=colours, legend=verdict_legend(orient="bottom", title="would flip to")),
        tooltip=["claim:N", "verdict:N", "flips to:N", "assumption:N", "central:N", "flips at:N"],
    )
    label = (
        base.transform_calculate(shown=f"({verdict_mark_expr('flips to')}) + ' ' + datum['flips at']")
        .mark_text(align="left", dx=8, fontSize=LABEL_SIZE)
        .encode(x="percentile:Q", text="shown:N")
    )
    text = (
        f"Where each of {len(frame)} verdicts would flip, as a percentile of the one assumption's 90% range that "
        "flips it; each diamond is labelled with the verdict it flips to and the threshold."
    )
    return describe((bar + tick + point + label).properties(width=width, height=22 * max(len(frame), 1)), text)
