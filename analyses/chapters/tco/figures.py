"""Charts of the cost chapter, each ``fn(result) -> chart``: they only read the :class:`Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.tco import GENERATIONS, NEW, Result
from analyses.models import tco
from analyses.pages import sliders
from analyses.pages.encodings import LABEL_SIZE, dashes, describe, fixed, number, percent, stack_labels
from analyses.pages.ledger_html import RECOMPUTED_COLOUR, STATED_COLOUR
from analyses.pages.notebook import Table, table
from analyses.scenario import buying
from analyses.units import settle
from analyses.units.formats import fmt, money, span, stated

STATED = STATED_COLOUR  # stated figures and bands
PUBLIC = RECOMPUTED_COLOUR  # recomputed intervals


def stack_chart(res: Result) -> alt.LayerChart:
    """Owned cost per GPU-hour stacked by component, with the rent as a black tick, per generation."""
    frame = res.stack
    long = frame.melt(id_vars="gpu", value_vars=list(tco.COMPONENTS), var_name="component", value_name="cost")
    rent = frame[["gpu", "rented (incl. storage/network)"]].rename(columns={"rented (incl. storage/network)": "cost"})
    bars = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("gpu:N", sort=list(GENERATIONS), title=None),
            y=alt.Y("sum(cost):Q", title=f"{res.unit} per GPU-hour"),
            color=alt.Color("component:N", sort=sorted(tco.COMPONENTS, reverse=True), title="owned, by component"),
            order=alt.Order("component:N"),
            tooltip=["gpu", "component", alt.Tooltip("cost:Q", format=".2f")],
        )
    )
    ticks = (
        alt.Chart(rent)
        .mark_tick(color="black", thickness=3, size=40)
        .encode(x=alt.X("gpu:N", sort=list(GENERATIONS)), y="cost:Q", tooltip=[alt.Tooltip("cost:Q", format=".2f")])
    )
    top = max(float(rent["cost"].max()), float(long.groupby("gpu")["cost"].sum().max()))
    names = stack_labels(long, "gpu", "component", "cost", sorted(tco.COMPONENTS), min_share=0.06, axis_max=top)
    labels = (
        alt.Chart(names)
        .mark_text(color="black", fontSize=LABEL_SIZE, baseline="middle")
        .encode(x=alt.X("gpu:N", sort=list(GENERATIONS)), y="mid:Q", text="label:N")
    )
    owned = long.groupby("gpu", sort=False)["cost"].sum()
    text = (
        f"Stacked bar chart of the owned cost per GPU-hour ({res.unit}) of each GPU generation, split into "
        + ", ".join(tco.COMPONENTS)
        + ", each part named where it fits, with the rent as a black tick: "
        + "; ".join(
            f"{g} owned {fixed(owned[g], 2)}, rented {fixed(r, 2)}"
            for g, r in zip(rent["gpu"], rent["cost"], strict=True)
            if g in owned
        )
        + "."
    )
    return describe((bars + labels + ticks).properties(width=360, height=260), text)


def interval_chart(frame: pd.DataFrame, label: str, x_title: str, log: bool = False) -> alt.LayerChart:
    """Horizontal 90% intervals (rule from ``5%`` to ``95%``) with the central value as a point."""
    scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    base = alt.Chart(frame).encode(y=alt.Y(f"{label}:N", title=None, sort=None, axis=alt.Axis(labelLimit=300)))
    rule = base.mark_rule(strokeWidth=3, color=PUBLIC).encode(x=alt.X("5%:Q", scale=scale, title=x_title), x2="95%:Q")
    point = base.mark_point(filled=True, size=80, color="black").encode(
        x="central:Q", tooltip=[label, alt.Tooltip("central:Q", format=".3g")]
    )
    text = (
        f"Interval chart, {x_title}: for each {label}, the central value (a dot) and the 90% interval (a bar): "
        + "; ".join(
            f"{r[label]} {number(r['central'])} ({number(r['5%'])} to {number(r['95%'])})"
            for r in frame.to_dict("records")
        )
        + "."
    )
    return describe((rule + point).properties(width=420, height=32 * len(frame)), text)


def pflop_day_chart(res: Result) -> alt.LayerChart:
    """Cost of one useful PFLOP-day per generation, owned and rented, with 90% intervals."""
    return interval_chart(res.pflop_day, "option", f"{res.unit} per useful PFLOP-day (90% interval)")


def recommender_chart(res: Result) -> alt.LayerChart:
    """Document 000's case: cost after / before under each reading, against the stated 53% (orange rule)."""
    frame = res.recommender_readings
    chart = interval_chart(frame, "reading", "monthly compute cost after / before (log)", log=True)
    said = pd.DataFrame({"x": [1 - res.recommender.cut], "what": ["stated"]})
    rule = (
        alt.Chart(said)
        .mark_rule(color=STATED, strokeDash=[4, 3], strokeWidth=2)
        .encode(x="x:Q", tooltip=[alt.Tooltip("x:Q", title="stated after / before", format=".0%")])
    )
    return describe(
        alt.layer(chart, rule),
        f"{chart.description[:-1]}; the dashed rule marks the stated after / before of {percent(1 - res.recommender.cut)}.",
    )


def tornado_chart(res: Result) -> alt.LayerChart:
    """Document 001's owned monthly cost with each input at its 5th and 95th percentile, the rest central
    (in the page's currency)."""
    c = res.customer
    k, _ = buying.rate_to("RMB", res.unit, res.s)
    frame = res.tornado.assign(at_low=res.tornado["at_low"] * k, at_high=res.tornado["at_high"] * k)
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("input:N", sort=list(frame["input"]), title=None),
            x=alt.X(
                "at_low:Q",
                title=f"monthly cost of the {stated(c.gpus)} owned {NEW}s ({res.unit})",
                scale=alt.Scale(zero=False),
            ),
            x2="at_high:Q",
            tooltip=["input", alt.Tooltip("at_low:Q", format=",.0f"), alt.Tooltip("at_high:Q", format=",.0f")],
        )
    )
    marks = pd.DataFrame(
        {
            "x": [c.own_rmb.central * k, c.own_stated_rmb * k],
            "what": ["central estimate", f"stated {res.stated_money(c.own_stated_rmb)}"],
        }
    )
    kinds = list(marks["what"])
    lines = (
        alt.Chart(marks)
        .mark_rule(strokeWidth=2)
        .encode(
            x="x:Q",
            color=alt.Color("what:N", scale=alt.Scale(domain=kinds, range=["black", STATED]), title=None),
            strokeDash=dashes("what:N", kinds, title=None),
        )
    )
    widest = frame.assign(span=(frame["at_high"] - frame["at_low"]).abs().map(settle)).sort_values(
        "span", ascending=False, kind="stable"
    )
    text = (
        f"Tornado chart of document 001's owned monthly cost ({stated(c.gpus)} {NEW}s, {res.unit}) with each input at "
        "its 5th and 95th percentile: "
        + "; ".join(f"{r.input} {fixed(r.at_low)} to {fixed(r.at_high)}" for r in widest.itertuples())
        + f"; solid rule: the central estimate {fixed(c.own_rmb.central * k)}, dashed: the stated "
        f"{fixed(c.own_stated_rmb * k)}."
    )
    return describe((bars + lines).properties(width=420, height=22 * len(frame)), text)


def payback_chart(res: Result) -> alt.LayerChart:
    """Payback months per case with 90% intervals (log scale), the documents' window as an orange band."""
    low, high = res.payback_window
    chart = interval_chart(res.payback, "case", "payback of one B300 (months, log scale)", log=True)
    band = (
        alt.Chart(pd.DataFrame({"low": [low], "high": [high]}))
        .mark_rect(opacity=0.2, color=STATED)
        .encode(x="low:Q", x2="high:Q")
    )
    return describe(
        alt.layer(band, chart),
        f"{chart.description[:-1]}; the shaded band is the documents' payback window of {number(low)} to {number(high)} months.",
    )


def _page_slider(res: Result, index: int) -> sliders.Slider:
    """The chapter's slider ``index`` with a price in the page's currency."""
    s = res.sliders[index]
    return sliders.scaled(s, *buying.rate_to(s.unit, res.unit, res.s))


def slider_figure(res: Result, index: int) -> alt.Chart:
    """The chapter's slider figure ``index`` (0: the B300/A100 speed-up, 1: the B300 system price)."""
    return sliders.figure(_page_slider(res, index))


def run_view(res: Result) -> Table:
    """One run of the chapter's workload on both generations, rented and owned, in words."""
    rows = [
        {
            "GPU": r["gpu"],
            "basis": r["basis"],
            "GPUs": f"{int(r['n_gpus']):,}",
            "days (90%)": f"{fmt(r['days'], '', 2)} ({span(r['days_lo'], r['days_hi'], '', 2)})",
            f"cost ({res.unit})": money(r["cost"]),
            "90% range": span(r["cost_lo"], r["cost_hi"], res.unit, 2),
        }
        for r in res.run.to_dict("records")
    ]
    return table(pd.DataFrame(rows))


def export_table(res: Result) -> pd.DataFrame:
    """The US export rules on advanced GPUs to China, in date order, with their locators and sources."""
    cols = {
        "effective": "in effect from",
        "action": "what it did",
        "china": "to China",
        "locator": "Federal Register",
        "source": "source",
    }
    return res.export_controls[list(cols)].rename(columns=cols)


def china_prices_table(res: Result) -> pd.DataFrame:
    """The public prices of GPUs in China (servers and rents), each with its date and source."""
    frame = res.china_prices.copy()
    frame["item"] = frame["item"].str.replace("_", " ")
    return frame[["gpu", "item", "unit", "low", "central", "high", "date", "source"]]
