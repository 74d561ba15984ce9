"""Slider figures and the flip map: what-if grids drawn for the page (computed by
:mod:`analyses.verdicts.sweeps`).

The page only selects precomputed rows with a Vega-Lite parameter bound to a range input, so no
formula is written twice in JavaScript.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages.encodings import LABEL_SIZE, describe
from analyses.pages.ledger_html import VERDICT_MARKS, verdict_legend, verdict_mark_expr, verdict_scale
from analyses.verdicts import show
from analyses.verdicts.sweeps import Slider, sig


def caption(s: Slider, slug: str, lead: str = "") -> str:
    """The caption of a slider figure: ``lead`` (what the chapter wants the reader to look for), then
    what the strips, the dashed line, the diamonds and the text mean, the flip points, and how the
    figure relates to rerunning the chapter."""
    central = show(s.central, s.unit, 3)
    flips = "; ".join(f"{r.label} turns {r.verdict} at {show(r.x, s.unit, 2)}" for r in s.flips.itertuples())
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
                out.append({"label": label, "x": float(sig((lo + hi) / 2, 6)), "mark": f"{mark} {word}".strip()})
    return pd.DataFrame(out, columns=["label", "x", "mark"])


def description(s: Slider) -> str:
    """What a slider figure shows, in words (its accessible name)."""
    claims = s.grid["label"].nunique()
    flips = "; ".join(f"{r.label} turns {r.verdict} at {show(r.x, s.unit, 2)}" for r in s.flips.itertuples())
    central = s.at(s.central)
    now = "; ".join(f"{r.label}: {r.verdict} ({r.recomputed})" for r in central.itertuples())
    return (
        f"Slider figure: the verdicts of {claims} claim{'s' if claims != 1 else ''} as the {s.label} moves from "
        f"{show(float(s.grid['x'].min()), s.unit, 3)} to {show(float(s.grid['x'].max()), s.unit, 3)}. "
        f"At the scenario's {show(s.central, s.unit, 3)}: {now}. "
        + (f"Flips: {flips}." if flips else "No verdict flips within the span shown.")
    )


PACKED = ("x", "verdict", "recomputed")  # the grid's columns a slider figure carries as one list per claim


def packed(grid: pd.DataFrame) -> pd.DataFrame:
    """The slider grid with one row per claim (label) and :data:`PACKED` as lists in grid order:
    Vega-Lite's ``flatten`` transform gives back one row per grid point."""
    rows = [
        {"label": label, **{c: strip[c].tolist() for c in PACKED}} for label, strip in grid.groupby("label", sort=False)
    ]
    return pd.DataFrame(rows, columns=["label", *PACKED])


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
    # the page carries each claim's strip once, as parallel lists (its label written once, not on
    # every grid point; the browser flattens them back into rows), without the claim id its label
    # already names; the strip's edges are computed in the browser (positions only, never shown)
    grid = s.grid.drop(columns=["claim"])
    base = alt.Chart(packed(grid)).transform_flatten(list(PACKED))
    y = alt.Y("label:N", title=None, sort=None)
    x_title = f"{s.label} ({s.unit})"
    domain = [float(sig(xs.min() - half, 6)), float(sig(xs.max() + half, 6))]
    strips = (
        base.transform_calculate(x1=f"datum.x - {half}", x2=f"datum.x + {half}")
        .mark_rect()
        .encode(
            x=alt.X("x1:Q", title=x_title, scale=alt.Scale(domain=domain, nice=False)),
            x2="x2:Q",
            y=y,
            color=alt.Color("verdict:N", scale=colours, legend=verdict_legend(orient="bottom", title=None)),
            tooltip=[alt.Tooltip("x:Q", title=s.label, format=".3~g"), "label:N", "verdict:N", "recomputed:N"],
        )
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
            alt.Chart(s.flips.drop(columns=["claim"]))
            .mark_point(shape="diamond", filled=True, color="white", stroke="black", size=70)
            .encode(
                x="x:Q",
                y=y,
                tooltip=[
                    "label:N",
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


def scaled(s: Slider, factor: float, unit: str) -> Slider:
    """The slider ``s`` with its assumption shown in another unit (an amount in USD shown in RMB): the
    grid's values, the central value, the step and the flip points times ``factor``. The verdicts and
    recomputed figures are the checks' own, unchanged."""
    if factor == 1.0 and unit == s.unit:
        return s
    grid = s.grid.assign(x=sig(s.grid["x"].to_numpy() * factor, 6))
    flips = s.flips.assign(x=sig(s.flips["x"].to_numpy(dtype=float) * factor, 6)) if len(s.flips) else s.flips
    return Slider(
        s.input, s.label, unit, float(sig(s.central * factor, 6)), float(sig(s.step * factor, 6)), grid, flips
    )
