"""Charts of the reliability chapter, each drawn from a computed :class:`~analyses.chapters.reliability.Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.reliability import Result
from analyses.models import reliability as rel
from analyses.pages import sliders
from analyses.pages.encodings import LABEL_SIZE, dashes, describe, number, percent, shapes
from analyses.units.formats import stated


def goodput_chart(res: Result) -> alt.LayerChart:
    """Goodput against checkpoint interval, the best interval and the stated policy intervals marked."""
    curve = res.curve.round({"interval_min": 3, "goodput": 5})
    marks = res.marks.round({"interval_min": 3, "goodput": 5})
    line = (
        alt.Chart(curve)
        .mark_line()
        .encode(
            x=alt.X("interval_min:Q", scale=alt.Scale(type="log"), title="checkpoint interval (minutes)"),
            y=alt.Y(
                "goodput:Q",
                scale=alt.Scale(zero=False),
                title="goodput (share of wall time kept)",
                axis=alt.Axis(format="%"),
            ),
        )
    )
    labels = list(marks["label"])
    points = (
        alt.Chart(marks)
        .mark_point(filled=True, size=80)
        .encode(
            x="interval_min:Q",
            y="goodput:Q",
            color=alt.Color("label:N", title=None, scale=alt.Scale(domain=labels)),
            shape=shapes("label:N", labels, title=None),
            tooltip=["label", alt.Tooltip("interval_min:Q", format=".1f"), alt.Tooltip("goodput:Q", format=".4f")],
        )
    )
    text = (
        "Line chart of goodput (the share of wall time kept) against the checkpoint interval in minutes (log scale), "
        "with marked points, each its own shape: "
        + "; ".join(f"{r.label} at {number(r.interval_min)} min, {percent(r.goodput, 1)}" for r in marks.itertuples())
        + "."
    )
    return describe((line + points).properties(width=520, height=300), text)


def failures_chart(res: Result) -> alt.LayerChart:
    """Interruptions per day against job size at each published log's rate and the scenario's, the
    fintech anecdote's "a crash every 5 days" as a dashed rule."""
    curves = res.failures.assign(
        GPUs=res.failures["GPUs"].round(1), **{"failures per day": res.failures["failures per day"].round(6)}
    )
    days = res.fintech.case.crash_interval_days
    rule = pd.DataFrame(
        {"failures per day": [round(1 / days, 6)], "label": [f"document: one crash every {stated(days)} days"]}
    )
    calibrations = list(dict.fromkeys(curves["calibration"]))
    lines = (
        alt.Chart(curves)
        .mark_line()
        .encode(
            x=alt.X("GPUs:Q", scale=alt.Scale(type="log"), title="GPUs in the job"),
            y=alt.Y("failures per day:Q", scale=alt.Scale(type="log"), title="interruptions per day"),
            color=alt.Color("calibration:N", title="rate of", scale=alt.Scale(domain=calibrations)),
            strokeDash=dashes("calibration:N", calibrations, title="rate of"),
        )
    )
    hline = (
        alt.Chart(rule).mark_rule(strokeDash=[6, 4], color="black").encode(y="failures per day:Q", tooltip=["label"])
    )
    last = curves.sort_values("GPUs", kind="stable").groupby("calibration", sort=False).tail(1)
    text = (
        f"Line chart (log scales) of interruptions per day against the GPUs in a job, one line per published failure "
        f"log and the scenario, each dashed differently and named at its end; at {number(last['GPUs'].max())} GPUs: "
        + "; ".join(
            f"{c} {number(v)} a day" for c, v in zip(last["calibration"], last["failures per day"], strict=True)
        )
        + f". The black dashed rule is the document's one crash every {stated(days)} days."
    )
    return describe((lines + hline).properties(width=520, height=300), text)


def causes_chart(res: Result) -> alt.Chart:
    """Llama 3's unexpected interruptions by cause, coloured by what server hardware could prevent."""
    frame = res.causes.assign(share=res.causes["share"].round(5))
    order = [t for t, _ in rel.PREVENTION_TIERS] + [rel.NOT_PREVENTABLE]
    # each bar carries a number naming its tier (1 = targeted by the documents' hardware features)
    frame = frame.assign(tier_no=frame["tier"].map({t: str(i + 1) for i, t in enumerate(order)}))
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X(
                "share:Q",
                title=f"share of {int(frame['count'].sum())} unexpected interruptions",
                axis=alt.Axis(format="%"),
            ),
            y=alt.Y("cause:N", sort="-x", title=None),
            color=alt.Color(
                "tier:N",
                title=None,
                scale=alt.Scale(domain=order),
                legend=alt.Legend(
                    orient="bottom",
                    columns=2,
                    labelLimit=320,
                    labelExpr="".join(f"datum.label == '{t}' ? '{i + 1}: {t}' : " for i, t in enumerate(order))
                    + "datum.label",
                ),
            ),
            tooltip=["cause", "category", "count", alt.Tooltip("share:Q", format=".1%"), "tier"],
        )
    )
    numbers = bars.mark_text(align="left", dx=3, fontSize=LABEL_SIZE).encode(text="tier_no:N", color=alt.value("black"))
    shares = frame.groupby("tier")["share"].sum().reindex(order).fillna(0)
    text = (
        f"Bar chart of Llama 3's {int(frame['count'].sum())} unexpected interruptions by cause, each bar numbered by "
        "what server hardware could prevent: "
        + "; ".join(f"{i + 1}, {t}: {percent(s)}" for i, (t, s) in enumerate(shares.items()))
        + "."
    )
    return describe((bars + numbers).properties(width=420, height=340), text)


def slider_charts(res: Result) -> tuple[alt.HConcatChart, ...]:
    """The chapter's slider figures (per-GPU rate, checkpoint write time, B300 failure ratio)."""
    return tuple(sliders.figure(s) for s in res.sliders)
