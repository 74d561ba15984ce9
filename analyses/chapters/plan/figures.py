"""The plan page's charts and tables, drawn from a computed :class:`~analyses.chapters.plan.Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.plan import Result
from analyses.chapters.plan.wiring import recommended_table
from analyses.models import plan as pl
from analyses.pages.encodings import (
    LABEL_SIZE,
    dashes,
    describe,
    end_labels,
    label_layer,
    number,
    shapes,
    stack_labels,
)
from analyses.pages.notebook import Table, table
from analyses.units import settle
from analyses.units.formats import round_sig_array

SIG = 4  # significant figures of chart data (at 6, a band edge sat on a rounding boundary under the determinism test)
WIDTH = 520


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every float column rounded to :data:`SIG` significant figures."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = round_sig_array(out[col].to_numpy(float), SIG)
    return out


def pareto_chart(res: Result) -> alt.LayerChart:
    """Time vs cost: the cheapest layout of each GPU count (dots) and the Pareto front per generation with 90% intervals."""
    req, k, unit = res.request, res.run.money_factor, res.run.currency
    cols = ["gpu", "days", "cost", "days_lo", "days_hi", "cost_lo", "cost_hi", "n_gpus", "layout"]
    front = res.front[cols] if not res.front.empty else pd.DataFrame(columns=cols)
    front = _rounded(front.assign(**{c: front[c] * k for c in ("cost", "cost_lo", "cost_hi")}))
    gpus = list(dict.fromkeys([*res.cloud.get("gpu", []), *front["gpu"]]))
    cloud = (
        alt.Chart(
            _rounded(
                res.cloud[["gpu", "days", "cost"]].assign(cost=lambda d: d["cost"] * k)
                if not res.cloud.empty
                else pd.DataFrame(columns=["gpu", "days", "cost"])
            )
        )
        .mark_point(size=18, opacity=0.35, filled=True)
        .encode(
            x=alt.X("days:Q", scale=alt.Scale(type="log"), title="wall-clock days"),
            y=alt.Y("cost:Q", scale=alt.Scale(type="log"), title=f"cost ({req.cost_basis}, {unit})"),
            color=alt.Color("gpu:N", title="GPU", scale=alt.Scale(domain=gpus)),
            shape=shapes("gpu:N", gpus, title="GPU"),
        )
    )
    pts = alt.Chart(front).encode(
        x="days:Q",
        y="cost:Q",
        color="gpu:N",
        tooltip=[
            "gpu:N",
            "n_gpus:Q",
            "layout:N",
            alt.Tooltip("days:Q", format=".1f"),
            alt.Tooltip("cost:Q", format=",.0f"),
        ],
    )
    xerr = alt.Chart(front).mark_rule(opacity=0.5).encode(x="days_lo:Q", x2="days_hi:Q", y="cost:Q", color="gpu:N")
    yerr = alt.Chart(front).mark_rule(opacity=0.5).encode(y="cost_lo:Q", y2="cost_hi:Q", x="days:Q", color="gpu:N")
    deadline = (
        alt.Chart(pd.DataFrame({"days": [req.deadline_days]}))
        .mark_rule(strokeDash=[4, 3], color="black")
        .encode(x="days:Q")
    )
    front_line = pts.mark_line().encode(strokeDash=dashes("gpu:N", gpus, title="GPU"))
    front_dots = pts.mark_point(filled=True, size=50).encode(shape=shapes("gpu:N", gpus, title="GPU"))
    # each generation's front named at its slowest (cheapest) end, the names spread apart (log cost)
    ends = end_labels(front, "days", "cost", "gpu", log_y=True, gap=0.08)
    log = alt.Scale(type="log")
    names = label_layer(ends, alt.X("x:Q", scale=log), alt.Y("y:Q", scale=log))
    chart = (cloud + xerr + yerr + front_line + front_dots + deadline + names).properties(width=WIDTH, height=340)
    fastest = front.sort_values("days", kind="stable").groupby("gpu", sort=False).head(1)
    text = (
        f"Scatter plot (log scales) of wall-clock days against {req.cost_basis} cost in {unit} for every layout searched "
        "(faint points), with each GPU generation's Pareto front as a line of larger points with 90% intervals, one "
        "shape and dash per generation and named at its slowest end, and the deadline of "
        f"{number(req.deadline_days)} days dashed; fastest on each front: "
        + "; ".join(f"{r.gpu} {number(r.days)} days for {number(r.cost)} {unit}" for r in fastest.itertuples())
        + "."
    )
    return describe(chart, text)


def breakdown_chart(res: Result) -> alt.Chart:
    """Days of each generation's recommended layout, stacked by where they go."""
    frame = _rounded(res.breakdown)
    parts = list(pl.TIME_PARTS)
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("gpu:N", title=None),
            x=alt.X("days:Q", title="wall-clock days of the recommended layout"),
            color=alt.Color("part:N", sort=parts, title="where the time goes"),
            order=alt.Order("order:Q"),
            tooltip=["gpu:N", "part:N", alt.Tooltip("days:Q", format=".2f"), alt.Tooltip("share:Q", format=".1%")],
        )
        .transform_calculate(order=f"indexof({parts}, datum.part)")
    )
    names = stack_labels(frame, "gpu", "part", "days", parts, min_share=0.12)
    labels = (
        alt.Chart(names)
        .mark_text(color="black", fontSize=LABEL_SIZE, baseline="middle")
        .encode(y="gpu:N", x="mid:Q", text="label:N")
    )
    totals = frame.groupby("gpu", sort=False)["days"].sum()
    text = (
        "Stacked bar chart of the wall-clock days of each generation's recommended layout, split by where the time "
        "goes ("
        + ", ".join(parts)
        + "), each part named where it fits: "
        + "; ".join(f"{g} {number(d)} days" for g, d in totals.items())
        + "."
    )
    chart = (bars + labels).properties(width=WIDTH, height=30 * max(frame["gpu"].nunique(), 1))
    return describe(chart, text)


def sensitivity_chart(res: Result) -> alt.LayerChart:
    """Cost of the recommended layout with each input at its two extremes (a tornado)."""
    k, unit = res.run.money_factor, res.run.currency
    frame = (
        _rounded(res.sensitivity.assign(cost_a=res.sensitivity["cost_a"] * k, cost_b=res.sensitivity["cost_b"] * k))
        if not res.sensitivity.empty
        else pd.DataFrame(columns=["input", "cost_a", "cost_b"])
    )
    best = res.best
    base = float(best["cost"]) * k if best is not None else float("nan")
    gpu = best["gpu"] if best is not None else "-"
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("input:N", sort=list(frame["input"]), title=None),
            x=alt.X("cost_a:Q", title=f"cost of the recommended {gpu} layout ({unit})", scale=alt.Scale(zero=False)),
            x2="cost_b:Q",
            tooltip=["input:N", alt.Tooltip("cost_a:Q", format=",.0f"), alt.Tooltip("cost_b:Q", format=",.0f")],
        )
    )
    rule = alt.Chart(_rounded(pd.DataFrame({"x": [base]}))).mark_rule(color="black", strokeDash=[4, 3]).encode(x="x:Q")
    widest = frame.assign(span=(frame["cost_b"] - frame["cost_a"]).abs().map(settle)).sort_values(
        "span", ascending=False, kind="stable"
    )
    text = (
        f"Tornado chart of the cost of the recommended {gpu} layout ({unit}) with each input at its two extremes, widest "
        "first: "
        + "; ".join(f"{r.input} {number(r.cost_a)} to {number(r.cost_b)}" for r in widest.head(6).itertuples())
        + f"; the dashed rule is the central cost, {number(base)}."
    )
    return describe((bars + rule).properties(width=420, height=26 * max(len(frame), 1)), text)


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def recommended_view(res: Result) -> Table:
    """The recommended layout per generation, formatted for the page (money as prose writes it)."""
    run = res.run
    frame = recommended_table(run.recommended, res.plan.efficiency_basis, run.per_run, run.currency, run.money_factor)
    return table(
        frame,
        **{"memory (GiB)": "{:.0f}", "MFU": "{:.0%}", "goodput": "{:.1%}", "days": "{:.1f}", "GEMM eff.": "{:.2f}"},
    )


def efficiency_view(res: Result) -> Table:
    """Where each generation's GEMM efficiency ceiling comes from."""
    return table(res.efficiency)


def assumptions_view(res: Result) -> Table:
    """The scenario's assumptions the plan reads, at this run, with their 90% ranges and sources."""
    return table(res.assumptions.drop(columns=["name", "derived from"]))


def comparison_view(res: Result) -> Table:
    """The published runs planned (the layout and basis are in the prose)."""
    shown = res.comparison.drop(columns=["preset", "basis", "layout", "GPUs", "tokens"])
    return table(
        shown,
        **{
            "GEMM efficiency": "{:.3f}",
            "MFU": "{:.1%}",
            "goodput": "{:.1%}",
            "days": "{:.1f}",
            "planned GPU-hours": "{:,.0f}",
            "published GPU-hours": "{:,.0f}",
            "error": "{:+.1%}",
        },
    )


def scenarios_view(res: Result) -> Table:
    """The documents' scenarios planned (cost in the page's currency)."""
    frame = res.scenarios.copy()
    unit = res.run.currency
    if "cost (USD)" in frame.columns:
        frame = frame.rename(columns={"cost (USD)": f"cost ({unit})"})
        frame[f"cost ({unit})"] = frame[f"cost ({unit})"] * res.run.money_factor
    return table(
        frame,
        **{
            "parameters": "{:.3g}",
            "tokens": "{:.2g}",
            "stated days": "{:g}",
            "planned days": "{:.2f}",
            f"cost ({unit})": "money",
        },
    )
