"""Charts of the scaling-gap chapter, each ``fn(res) -> chart`` reading only the :class:`Result`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters.scaling_gap import CENTURIES, PER_18_MONTHS, Result
from analyses.models import growth
from analyses.pages import sliders
from analyses.pages.encodings import dashes, describe, end_labels, label_layer, number, shapes
from analyses.pages.ledger_html import RECOMPUTED_COLOUR, STATED_COLOUR

FITTED_COLOUR = RECOMPUTED_COLOUR
YEARS_SHOWN = 30  # points of each growth line


def scissors(res: Result) -> alt.LayerChart:
    """Log-scale growth since the window start: fitted wiring (solid, with their points) against the
    rates document 000 states (dashed)."""
    cfg = res.cfg
    start = float(cfg["window_start"])
    years = np.linspace(start, float(cfg["window_end"]) + 1, YEARS_SHOWN)
    lines = [
        pd.DataFrame({"year": years, "growth": fit.predict(years) / fit.predict(start), "series": f"fitted: {name}"})
        for name, fit in res.fits.items()
    ]
    models = res.model_points[res.model_points["params_record"]] if cfg["model_set"] == "frontier" else res.model_points
    points = [
        pd.DataFrame(
            {
                "year": models["t"],
                "growth": models["params"] / res.fits["parameters"].predict(start),
                "series": "fitted: parameters",
                "label": models["name"],
            }
        ),
        pd.DataFrame(
            {
                "year": res.gpu_points["t"],
                "growth": res.gpu_points["flop_per_s"] / res.fits["per-GPU FLOP/s"].predict(start),
                "series": "fitted: per-GPU FLOP/s",
                "label": res.gpu_points["name"],
            }
        ),
    ]
    claim = data.claim(PER_18_MONTHS)
    months = claim.value("period_months")
    for key, what in (("model_growth_x", "model"), ("gpu_growth_x", "GPU")):
        rate = claim.value(key)
        label = f"stated: {what} {rate:g}x / {months:g} months"
        lines.append(
            pd.DataFrame(
                {"year": years, "growth": rate ** ((years - start) * growth.MONTHS_PER_YEAR / months), "series": label}
            )
        )
    colour = alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom", columns=2))
    base = alt.Chart(pd.concat(lines, ignore_index=True)).encode(
        x=alt.X("year:Q", title="year", scale=alt.Scale(zero=False), axis=alt.Axis(format="d")),
        y=alt.Y("growth:Q", scale=alt.Scale(type="log"), title=f"growth since {int(start)} (x)"),
        color=colour,
        strokeDash=alt.condition("indexof(datum.series, 'stated') >= 0", alt.value([6, 4]), alt.value([1, 0])),
    )
    scatter = (
        alt.Chart(pd.concat(points, ignore_index=True))
        .mark_point(filled=True, size=40, opacity=0.6)
        .encode(
            x="year:Q", y=alt.Y("growth:Q", scale=alt.Scale(type="log")), color=colour, tooltip=["label:N", "year:Q"]
        )
    )
    curves = pd.concat(lines, ignore_index=True)
    ends = end_labels(curves, "year", "growth", "series", log_y=True, gap=0.3)
    names = label_layer(ends, "x:Q", alt.Y("y:Q", scale=alt.Scale(type="log")))
    last = curves.sort_values("year", kind="stable").groupby("series", sort=False).tail(1)
    text = (
        f"Line chart (log scale) of growth since {int(start)}: the fitted trends of model parameters and per-GPU "
        "FLOP/s (solid, with the models and GPUs they were fitted to as points) against the rates document 000 states "
        f"(dashed), each line named at its end; by {last['year'].max():.0f}: "
        + "; ".join(f"{r.series} {number(r.growth)}x" for r in last.itertuples())
        + "."
    )
    return describe((base.mark_line() + scatter + names).properties(width=560, height=340), text)


def models(res: Result) -> alt.Chart:
    """Training compute of notable models against date, records highlighted."""
    frame = res.model_points.dropna(subset=["compute_flop"]).copy()
    frame["set a record"] = frame["compute_record"].map({True: "record", False: "other"})
    kinds = ["record", "other"]
    chart = (
        alt.Chart(frame)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("t:Q", title="date", scale=alt.Scale(zero=False), axis=alt.Axis(format="d")),
            y=alt.Y("compute_flop:Q", scale=alt.Scale(type="log"), title="training compute (FLOP)"),
            color=alt.Color("set a record:N", title=None, scale=alt.Scale(domain=kinds)),
            shape=shapes("set a record:N", kinds, title=None),
            tooltip=["name:N", "date:N", alt.Tooltip("compute_flop:Q", format=".2e"), "hardware:N"],
        )
        .properties(width=560, height=300)
    )
    records = frame[frame["compute_record"]].sort_values("t", kind="stable")
    text = (
        f"Scatter plot (log scale) of the training compute of {len(frame)} notable models against their date, "
        f"{frame['t'].min():.0f} to {frame['t'].max():.0f}; the {len(records)} that set a record are drawn as circles, "
        f"the others as squares; the last record: {records['name'].iloc[-1]}."
        if len(records)
        else f"Scatter plot (log scale) of the training compute of {len(frame)} notable models against their date."
    )
    return describe(chart, text)


def generations(res: Result) -> alt.LayerChart:
    """Stated compute ranges (bars) against recomputed training compute (points and ranges)."""
    frame = res.generation.assign(label=lambda d: d["model"] + " (" + d["year stated"].astype(str) + ")")
    y = alt.Y("label:N", title=None, sort=None)
    stated = (
        alt.Chart(frame)
        .mark_bar(height=14, opacity=0.35, color=STATED_COLOUR)
        .encode(
            x=alt.X("stated FLOP low:Q", scale=alt.Scale(type="log"), title="training compute (FLOP)"),
            x2="stated FLOP high:Q",
            y=y,
        )
    )
    actual = (
        alt.Chart(frame)
        .mark_rule(strokeWidth=3, color=FITTED_COLOUR)
        .encode(x="recomputed FLOP low:Q", x2="recomputed FLOP high:Q", y=y)
    )
    dots = (
        alt.Chart(frame).mark_point(filled=True, size=80, color=FITTED_COLOUR).encode(x="recomputed FLOP high:Q", y=y)
    )
    text = (
        "Range chart (log scale) of training compute for document 000's model generations: the stated range as a "
        "shaded bar and the recomputed range as a line ending in a dot: "
        + "; ".join(
            f"{r['label']} stated {number(r['stated FLOP low'])} to {number(r['stated FLOP high'])} FLOP, recomputed "
            f"{number(r['recomputed FLOP low'])} to {number(r['recomputed FLOP high'])}"
            for r in frame.to_dict("records")
        )
        + "."
    )
    return describe((stated + actual + dots).properties(width=520, height=180), text)


def centuries(res: Result) -> alt.LayerChart:
    """Server-years against tokens per parameter, with the stated "several hundred years" band and the
    scenario's tokens per parameter (dashed)."""
    claim = data.claim(CENTURIES)
    band = pd.DataFrame({"low": [claim.value("server_years_low")], "high": [claim.value("server_years_high")]})
    servers = list(dict.fromkeys(res.server_years["server"]))
    lines = (
        alt.Chart(res.server_years)
        .mark_line()
        .encode(
            x=alt.X("tokens per parameter:Q", scale=alt.Scale(type="log")),
            y=alt.Y("years:Q", scale=alt.Scale(type="log"), title="years on one server"),
            color=alt.Color("server:N", scale=alt.Scale(domain=servers), legend=None),
            strokeDash=dashes("server:N", servers, legend=None),
        )
    )
    ends = end_labels(res.server_years, "tokens per parameter", "years", "server", log_y=True, gap=0.12)
    names = label_layer(ends, alt.X("x:Q", scale=alt.Scale(type="log")), alt.Y("y:Q", scale=alt.Scale(type="log")))
    stated = alt.Chart(band).mark_rect(opacity=0.2, color=STATED_COLOUR).encode(y="low:Q", y2="high:Q")
    rule = alt.Chart(pd.DataFrame({"x": [res.s["tokens_per_param"]]})).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    at = res.server_years.assign(gap=(res.server_years["tokens per parameter"] - res.s["tokens_per_param"]).abs())
    at = at.sort_values("gap", kind="stable").groupby("server", sort=False).head(1)
    text = (
        "Line chart (log scales) of the years one server would take to train document 000's hundred-billion-parameter "
        "model against tokens per parameter, one dashed line per server named at its end, with the stated 'several hundred years' as a "
        f"shaded band ({number(band['low'][0])} to {number(band['high'][0])} years) and the scenario's "
        f"{number(res.s['tokens_per_param'])} tokens per parameter as a dashed rule, where: "
        + "; ".join(f"{r.server} {number(r.years)} years" for r in at.itertuples())
        + "."
    )
    return describe((stated + lines + rule + names).properties(width=520, height=300), text)


def slider(res: Result) -> alt.HConcatChart:
    """The tokens-per-parameter slider over the claims that read it."""
    return sliders.figure(res.sliders[0])
