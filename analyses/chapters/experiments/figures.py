"""Charts of the experiments chapter, each drawn from a computed :class:`~analyses.chapters.experiments.Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.experiments import Result
from analyses.pages import sliders
from analyses.pages.encodings import dashes, describe, end_labels, fixed, label_layer, number, percent
from analyses.units.formats import stated


def timeline_chart(res: Result) -> alt.LayerChart:
    """The sweep's runs serially and side by side on the old cluster and side by side on B300, the stated
    days as a dashed rule."""
    days = res.sweep.case.parallel_days
    rule = pd.DataFrame({"days": [days], "label": [f"stated: {stated(days)} days"]})
    bars = (
        alt.Chart(res.timeline)
        .mark_bar(stroke="white")
        .encode(
            x=alt.X("start:Q", title="days"),
            x2="end:Q",
            y=alt.Y("schedule:N", title=None, sort=None),
            yOffset=alt.YOffset("run:O"),
            color=alt.Color("schedule:N", title=None, legend=None),
            tooltip=["schedule", "run", alt.Tooltip("start:Q", format=".1f"), alt.Tooltip("end:Q", format=".1f")],
        )
    )
    line = alt.Chart(rule).mark_rule(strokeDash=[6, 4], color="black").encode(x="days:Q", tooltip=["label"])
    spans = res.timeline.groupby("schedule", sort=False)["end"].max()
    text = (
        "Timeline (Gantt) chart of the hyper-parameter sweep's runs under each schedule, one row per schedule: "
        + "; ".join(f"{name} ends after {number(end)} days" for name, end in spans.items())
        + f". The dashed rule marks the stated {stated(days)} days."
    )
    return describe((bars + line).properties(width=480, height=240), text)


def early_stopping_chart(res: Result) -> alt.HConcatChart:
    """Left: what successive halving saves and risks against eta. Right: the risk against rank correlation."""
    quantities = list(dict.fromkeys(res.by_eta["quantity"]))
    etas = list(dict.fromkeys(res.by_rank["eta"]))
    left = (
        alt.Chart(res.by_eta)
        .mark_line(point=True)
        .encode(
            x=alt.X("eta:O", title="eta (1 in eta configurations promoted)"),
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"), title=None),
            color=alt.Color(
                "quantity:N",
                title=None,
                scale=alt.Scale(domain=quantities),
                legend=alt.Legend(orient="bottom", direction="vertical"),
            ),
            strokeDash=dashes(
                "quantity:N", quantities, title=None, legend=alt.Legend(orient="bottom", direction="vertical")
            ),
            tooltip=["eta", "quantity", alt.Tooltip("value:Q", format=".1%")],
        )
        .properties(width=260, height=240)
    )
    # each quantity's line named at its end, in a few words (the legend below gives the full name)
    short = {quantities[0]: "compute spent", quantities[-1]: "P(best kept)"} if len(quantities) == 2 else None
    left_names = label_layer(end_labels(res.by_eta, "eta", "value", "quantity", gap=0.08, text=short), "x:O", "y:Q")
    rule = (
        alt.Chart(pd.DataFrame({"rc": [round(res.s["early_stop_rank_correlation"], 4)]}))
        .mark_rule(strokeDash=[4, 3], color="grey")
        .encode(x="rc:Q")
    )
    right = (
        alt.Chart(res.by_rank)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "rank correlation:Q", scale=alt.Scale(domain=[0.3, 1]), title="rank correlation, first rung vs final"
            ),
            y=alt.Y(
                "P(best kept):Q",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%"),
                title="P(best configuration kept)",
            ),
            color=alt.Color("eta:N", title=None, scale=alt.Scale(domain=etas), legend=None),
            strokeDash=dashes("eta:N", etas, title=None, legend=None),
            tooltip=["eta", "rank correlation", alt.Tooltip("P(best kept):Q", format=".1%")],
        )
        .properties(width=260, height=240)
    )
    # each eta's line named at its end (the lines meet at a correlation of 1: spread the names apart)
    ends = end_labels(res.by_rank, "rank correlation", "P(best kept)", "eta", gap=0.07)
    names = label_layer(ends, alt.X("x:Q"), alt.Y("y:Q"))
    chart = alt.hconcat(left + left_names, right + rule + names).resolve_scale(
        color="independent", strokeDash="independent"
    )
    text = (
        "Two line charts, lines told apart by dash as well as colour and each named at its end. Left: against eta, "
        "the share of the full sweep's compute successive halving spends and the probability it keeps the best "
        "configuration ("
        + ", ".join(
            f"eta {r.eta}: {percent(r.value)}"
            for r in res.by_eta[res.by_eta["quantity"] == quantities[-1]].itertuples()
        )
        + "). Right: that probability against the rank correlation between the first rung and the final result, one "
        f"line per eta named at its end, with the scenario's correlation of {fixed(res.s['early_stop_rank_correlation'], 2)} dashed."
    )
    return describe(chart, text)


def slider_charts(res: Result) -> tuple[alt.HConcatChart, ...]:
    """The chapter's slider figure (the B300/A100 speed-up over the sweep)."""
    return tuple(sliders.figure(s) for s in res.sliders)
