"""The buy-or-rent page's tables and chart, drawn from a computed :class:`~analyses.chapters.buy_or_rent.Result`."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd

from analyses.chapters.buy_or_rent import Result, text
from analyses.pages import bottom_line as bl
from analyses.pages.encodings import describe, fixed
from analyses.pages.notebook import Table, table
from analyses.scenario.buying import READER
from analyses.units.formats import percent, round_sig

CHEAPEST = "★"  # marks the cheapest generation of a basis (also said in words in the table's column)


def answer_frame(res: Result, workload: str) -> pd.DataFrame:
    """One workload on every generation: GPUs and layout, days and cost rented and owned with their
    90% ranges, the cheapest of each basis starred, when owning pays, and what moves the cost most."""
    rows = res.of(workload)
    out = []
    for gpu, g in rows.groupby("gpu", sort=False):
        rented = g[g["basis"] == "rented"].iloc[0]
        owned = g[g["basis"] == "owned"].iloc[0]
        star = lambda r: f" {CHEAPEST}" if r["cheapest"] else ""  # noqa: E731
        out.append(
            {
                "GPU": gpu,
                "GPUs · layout": f"{int(rented['n_gpus']):,} · {rented['layout']}",
                "time (90%)": f"{text.days(rented['days'])} ({text.span_days(rented)})",
                f"rented ({res.currency})": f"{text.money(res, rented['cost'])}{star(rented)}",
                "rented 90%": text.money_span(res, rented["cost_lo"], rented["cost_hi"]),
                f"owned ({res.currency})": f"{text.money(res, owned['cost'])}{star(owned)}",
                "owned 90%": text.money_span(res, owned["cost_lo"], owned["cost_hi"]),
                "owning pays if busy over": percent(owned["break_even_utilisation"]),
                "most sensitive to (rented; owned)": (
                    f"{rented['sensitive_to'].replace(' (90% range)', '')}; "
                    f"{owned['sensitive_to'].replace(' (90% range)', '')}"
                ),
            }
        )
    return pd.DataFrame(out)


def answer_view(res: Result, workload: str) -> Table:
    """:func:`answer_frame` as the page's table (every cell already in words)."""
    return table(answer_frame(res, workload))


def bottom_line(res: Result) -> bl.BottomLine:
    """The page's answer for its first screen (:mod:`analyses.pages.bottom_line`): the cheapest rented and
    owned option of each workload and the busy share above which owning wins, the reader's run by its size."""
    rows = bl.answers(res.runs, res.workloads)
    labels = {w.key: html.escape(text.workload_title(w)) for w in res.workloads if w.key == READER}
    return bl.block(rows, res.currency, labels=labels, more=text.bottom_line_more(res))


def cost_chart(res: Result) -> alt.Chart:
    """Cost per run of every workload on every generation, rented and owned, with 90% ranges (log scale)."""
    frame = res.runs[["label", "gpu", "basis", "cost", "cost_lo", "cost_hi", "cheapest"]].copy()
    for col in ("cost", "cost_lo", "cost_hi"):
        frame[col] = [round_sig(x, 4) for x in frame[col]]
    frame["cheapest"] = frame["cheapest"].map({True: "cheapest", False: ""})
    unit = res.currency
    base = alt.Chart(frame).encode(
        y=alt.Y("gpu:N", title=None, sort=list(dict.fromkeys(frame["gpu"]))),
        yOffset=alt.YOffset("basis:N", sort=["rented", "owned"]),
    )
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("cost_lo:Q", scale=alt.Scale(type="log"), title=f"cost of one run ({unit}, log scale)"),
        x2="cost_hi:Q",
        strokeDash=alt.StrokeDash("basis:N", sort=["rented", "owned"], legend=None),
    )
    points = base.mark_point(filled=True, size=60).encode(
        x="cost:Q",
        shape=alt.Shape("basis:N", sort=["rented", "owned"], title="basis"),
        tooltip=[
            "label:N",
            "gpu:N",
            "basis:N",
            alt.Tooltip("cost:Q", format=",.0f", title=f"cost ({unit})"),
            "cheapest:N",
        ],
    )
    stars = (
        base.mark_text(text=CHEAPEST, dx=12, fontSize=14)
        .encode(x="cost:Q")
        .transform_filter("datum.cheapest == 'cheapest'")
    )
    cheapest = frame[frame["cheapest"] == "cheapest"]
    text = (
        f"Dot-and-range chart (log scale) of the cost of one run in {unit} of each workload on each GPU generation, "
        "rented (circles, solid range) and owned (squares, dashed range), one panel per workload; the cheapest of "
        "each basis starred: "
        + "; ".join(f"{r.label}, {r.basis}: {r.gpu} at {fixed(r.cost)} {unit}" for r in cheapest.itertuples())
        + "."
    )
    chart = (
        (bars + points + stars)
        .properties(width=480, height=110)
        .facet(
            row=alt.Row(
                "label:N",
                title=None,
                sort=list(dict.fromkeys(frame["label"])),
                # each workload's name above its panel, read left to right (a rotated label overlaps the next)
                header=alt.Header(labelAngle=0, labelOrient="top", labelAnchor="start", labelFontWeight="bold"),
            )
        )
        .resolve_scale(x="independent")
    )
    return describe(chart, text)
