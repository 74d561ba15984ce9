"""Chart encodings a reader can tell apart without colour, and charts that say what they show.

Every series a chart tells apart by colour is also told apart by dash (lines), shape (points) or a
label in the chart (bars and lines): :func:`dashes`, :func:`shapes`, :func:`end_labels`,
:func:`stack_labels`. Every chart carries a description of what it shows (:func:`describe`):
altair's ``description``, which Vega writes as the chart's accessible name (``aria-label``)
instead of its default "Vega visualization"; its numbers are written by the description
formatters of :mod:`analyses.units.formats` (:func:`~analyses.units.formats.number`,
:func:`~analyses.units.formats.fixed`, :func:`~analyses.units.formats.percent_places`,
re-exported here as ``number``, ``fixed`` and ``percent``).
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

# the description formatters live with every other in analyses.units.formats; re-exported for the charts
from analyses.units.formats import fixed, number  # noqa: F401
from analyses.units.formats import percent_places as percent  # noqa: F401

# Dash patterns and point shapes in the order series take them (solid and circle first).
DASH_PATTERNS: tuple[list[int], ...] = (
    [1, 0],
    [6, 3],
    [2, 2],
    [8, 3, 2, 3],
    [1, 4],
    [12, 3],
    [4, 2, 1, 2, 1, 2],
    [10, 2, 2, 2, 2, 2],
    [2, 6],
    [16, 4, 4, 4],
    [6, 2, 2, 2, 2, 2, 2, 2],
    [20, 4],
)
SHAPES: tuple[str, ...] = (
    "circle",
    "square",
    "triangle-up",
    "diamond",
    "cross",
    "triangle-down",
    "triangle-left",
    "triangle-right",
    "wedge",
    "arrow",
    "stroke",
)
LABEL_SIZE = 10  # font size of labels drawn in charts (px)
# The colours of categories, in the order series take them: chosen (by search over sRGB) so that each
# has at least 3:1 against the charts' white background, as graphics need to be seen
# (analyses.pages.charts.chart_html sets it), and any two stay apart for readers with red-green
# (protan, deutan) or blue-yellow (tritan) colour blindness: the first eight at least 16 CAM02-UCS
# units apart under a full simulated dichromacy (Machado et al. 2009, through colorspacious), all ten
# at least 13 (tests/site/test_screens.py). Tableau's red and green, which a deutan reader cannot
# tell apart, are gone; a series beyond the sixth is also named or dashed in its chart.
CATEGORY_COLOURS: tuple[str, ...] = (
    "#476e88",  # slate blue
    "#a23506",  # rust
    "#04a88e",  # teal
    "#ec4cd3",  # magenta
    "#a8892d",  # ochre
    "#5e5c55",  # warm grey
    "#28033d",  # aubergine
    "#52070d",  # maroon
    "#3d15a1",  # indigo
    "#701cdf",  # violet
)


def _domain(domain: Sequence[str], what: str, pool: Sequence) -> list[str]:
    domain = list(dict.fromkeys(domain))
    if len(domain) > len(pool):
        raise ValueError(f"{len(domain)} {what} to tell apart; there are {len(pool)} (add to {what.upper()})")
    return domain


def dashes(field: str, domain: Sequence[str], **kwargs) -> alt.StrokeDash:
    """A ``strokeDash`` encoding of ``field`` over ``domain`` (each value its own pattern)."""
    domain = _domain(domain, "dash_patterns", DASH_PATTERNS)
    scale = alt.Scale(domain=domain, range=list(DASH_PATTERNS[: len(domain)]))
    return alt.StrokeDash(field, scale=scale, **kwargs)


def shapes(field: str, domain: Sequence[str], **kwargs) -> alt.Shape:
    """A ``shape`` encoding of ``field`` over ``domain`` (each value its own shape)."""
    domain = _domain(domain, "shapes", SHAPES)
    return alt.Shape(field, scale=alt.Scale(domain=domain, range=list(SHAPES[: len(domain)])), **kwargs)


def spread(values: Sequence[float], gap: float, lower: float | None = None) -> np.ndarray:
    """``values`` moved apart, as little as possible, until neighbours are at least ``gap`` apart
    (label positions that do not overlap), none below ``lower``; the order of the values is kept."""
    v = np.asarray(values, dtype=float)
    if not v.size:  # nothing to label (a chart with no series left)
        return v
    order = np.argsort(v, kind="stable")
    out = v[order].copy()
    for i in range(1, len(out)):
        out[i] = max(out[i], out[i - 1] + gap)
    # centre the moved block on the original values so labels shift both ways
    shift = (out - v[order]).mean()
    out -= shift
    if lower is not None and len(out):
        out[0] = max(out[0], lower)
    for i in range(1, len(out)):  # re-enforce the gap after centring
        out[i] = max(out[i], out[i - 1] + gap)
    result = np.empty_like(out)
    result[order] = out
    return result


def end_labels(
    frame: pd.DataFrame,
    x: str,
    y: str,
    series: str,
    *,
    log_y: bool = False,
    gap: float = 0.0,
    lower: float | None = None,
    text: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Where to write each series' name: at its last point (largest ``x``), the heights spread by
    ``gap`` (in ``y``'s units, or in decades where ``log_y``) so that no two labels overlap, none
    below ``lower``.
    Columns ``x``, ``y`` and ``label`` (``text`` maps a series to a shorter label)."""
    last = frame.sort_values(x, kind="stable").groupby(series, sort=False).tail(1)
    ys = last[y].to_numpy(dtype=float)
    if gap:
        if log_y:
            ys = 10 ** spread(np.log10(ys), gap, None if lower is None else float(np.log10(lower)))
        else:
            ys = spread(ys, gap, lower)
    labels = [(text or {}).get(s, s) for s in last[series]]
    return pd.DataFrame({"x": last[x].to_numpy(), "y": np.round(ys, 6), "label": labels})


def label_layer(frame: pd.DataFrame, x: alt.X | str, y: alt.Y | str, **mark) -> alt.Chart:
    """Text at ``frame``'s ``x``/``y``, left-aligned just right of the point (see :func:`end_labels`)."""
    style = {"align": "left", "dx": 4, "baseline": "middle", "fontSize": LABEL_SIZE, **mark}
    return alt.Chart(frame).mark_text(**style).encode(x=x, y=y, text="label:N")


def stack_labels(
    frame: pd.DataFrame,
    group: str,
    part: str,
    value: str,
    order: Sequence[str],
    *,
    min_share: float = 0.06,
    symlog: bool = False,
    axis_max: float | None = None,
    text: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Labels for the segments of stacked bars: one row per segment of ``part`` in bar ``group``
    with the middle of the segment (``mid``) and its ``label``, for segments at least
    ``min_share`` of the axis (``axis_max``, else the tallest bar; on a symlog scale in log1p
    units); ``order`` is the order of the stack from the axis out, as the chart's ``order``
    encoding has it. (Give the legend the reverse order, so it lists the parts as the bars stack
    them from the top.)"""
    rank = {p: i for i, p in enumerate(order)}
    rows = []
    for key, bar in frame.groupby(group, sort=False):
        bar = bar.assign(_rank=bar[part].map(rank)).sort_values("_rank", kind="stable")
        top = bar[value].cumsum().to_numpy()
        bottom = top - bar[value].to_numpy()
        for p, lo, hi in zip(bar[part], bottom, top, strict=True):
            rows.append({group: key, part: p, "lo": lo, "hi": hi})
    out = pd.DataFrame(rows, columns=[group, part, "lo", "hi"])
    if out.empty:
        return out.assign(mid=[], label=[])

    def t(v):
        return np.log1p(np.maximum(v, 0.0)) if symlog else v

    tallest = float(t(np.float64(axis_max) if axis_max is not None else out["hi"].max()))
    keep = (t(out["hi"]) - t(out["lo"])) >= min_share * tallest
    out = out[keep].copy()
    mid = (t(out["hi"]) + t(out["lo"])) / 2
    out["mid"] = np.round(np.expm1(mid) if symlog else mid, 6)
    out["label"] = [(text or {}).get(p, p) for p in out[part]]
    return out[[group, part, "mid", "label"]].reset_index(drop=True)


def describe(chart: alt.TopLevelMixin, text: str) -> alt.TopLevelMixin:
    """``chart`` with ``text`` as its description (the accessible name Vega gives the chart)."""
    return chart.properties(description=" ".join(text.split()))
