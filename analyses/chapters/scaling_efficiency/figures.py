"""Charts of the scaling-efficiency chapter, each ``fn(res) -> chart`` reading only the :class:`Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses import data
from analyses.chapters.scaling_efficiency import ETHERNET, THOUSAND, Result
from analyses.pages import sliders
from analyses.pages.encodings import dashes, describe, end_labels, fixed, label_layer, percent, shapes
from analyses.units.formats import stated


def curves(res: Result) -> alt.LayerChart:
    """Efficiency against GPU count for every cluster, with the documents' two points (diamonds)."""
    eth, thousand = data.claim(ETHERNET), data.claim(THOUSAND)
    n0, n1, speedup = eth.value("gpus_before"), eth.value("gpus_after"), eth.value("speedup_actual_x")
    pct, order = thousand.value("scaling_efficiency_min_pct"), thousand.value("gpus_order")
    points = pd.DataFrame(
        [
            {
                "GPUs": n1,
                "efficiency": speedup / (n1 / n0),
                "point": f"000 §2.3: {stated(n0)}->{stated(n1)} gave {stated(speedup)}x",
            },
            {"GPUs": order, "efficiency": pct / 100, "point": f"000 §2.3: >{stated(pct)}% at ~{stated(order)}"},
        ]
    )
    frame = res.curves[["cluster", "GPUs", "efficiency"]].round({"efficiency": 4})
    clusters = list(dict.fromkeys(frame["cluster"]))
    x = alt.X("GPUs:Q", scale=alt.Scale(type="log"), title="GPUs")
    y = alt.Y("efficiency:Q", scale=alt.Scale(domain=[0, 1.05]), title="scaling efficiency")
    lines = (
        alt.Chart(frame)
        .mark_line()
        .encode(
            x=x,
            y=y,
            color=alt.Color("cluster:N", title=None, scale=alt.Scale(domain=clusters), legend=None),
            strokeDash=dashes("cluster:N", clusters, title=None, legend=None),  # each line is named at its end
            tooltip=["cluster", "GPUs", alt.Tooltip("efficiency:Q", format=".2f")],
        )
    )
    marks = (
        alt.Chart(points)
        .mark_point(shape="diamond", size=140, filled=True, color="black")
        .encode(x="GPUs:Q", y="efficiency:Q", tooltip=["point"])
    )
    ends = end_labels(frame, "GPUs", "efficiency", "cluster", gap=0.045, lower=0.03)
    labels = label_layer(ends, "x:Q", "y:Q")
    last = (
        frame.sort_values("GPUs", kind="stable")
        .groupby("cluster")
        .tail(1)
        .sort_values("efficiency", ascending=False, kind="stable")
    )
    text = (
        f"Line chart of scaling efficiency against GPU count (log scale, {fixed(frame['GPUs'].min())} to "
        f"{fixed(frame['GPUs'].max())} GPUs) for {len(clusters)} clusters, each line dashed differently and named "
        "at its end; at the largest count, "
        + ", ".join(f"{r.cluster} {percent(r.efficiency)}" for r in last.itertuples())
        + ". Black diamonds: the documents' two points ("
        + "; ".join(points["point"])
        + ")."
    )
    return describe((lines + marks + labels).properties(width=520, height=300), text)


def validation(res: Result) -> alt.LayerChart:
    """Published against predicted scaling efficiencies of jobs measured at several GPU counts, with the
    diagonal; the shape tells whether the batch was fixed, grew with the GPUs or changed otherwise."""
    frame = res.validation.round({"published": 4, "predicted": 4, "error": 4})
    kinds = list(dict.fromkeys(frame["batch"]))
    lo = float(min(frame["published"].min(), frame["predicted"].min()))
    hi = float(max(frame["published"].max(), frame["predicted"].max()))
    domain = [round(lo - 0.05, 2), round(hi + 0.05, 2)]
    points = (
        alt.Chart(frame)
        .mark_point(filled=False, size=80, strokeWidth=2)
        .encode(
            x=alt.X("published:Q", scale=alt.Scale(domain=domain), title="published scaling efficiency"),
            y=alt.Y("predicted:Q", scale=alt.Scale(domain=domain), title="model"),
            shape=shapes("batch:N", kinds, title="batch"),
            tooltip=["id", "GPUs", "batch", alt.Tooltip("error:Q", format="+.1%")],
        )
    )
    diag = (
        alt.Chart(pd.DataFrame({"v": domain}))
        .mark_line(strokeDash=[4, 3], color="grey")
        .encode(x="v:Q", y="v:Q")
    )
    text = (
        f"Scatter plot of the model's scaling efficiency against the published one for {len(frame)} jobs measured at "
        f"two GPU counts (published efficiencies {percent(frame['published'].min())} to "
        f"{percent(frame['published'].max())}; errors from {percent(frame['error'].min(), sign=True)} to "
        f"{percent(frame['error'].max(), sign=True)}), one shape per batch rule, against the dashed line of perfect "
        "agreement."
    )
    return describe((diag + points).properties(width=400, height=320), text)


def slider(res: Result, index: int = 0) -> alt.HConcatChart:
    """One of the chapter's slider figures (0: global batch, 1: RDMA NIC share)."""
    return sliders.figure(res.sliders[index])
