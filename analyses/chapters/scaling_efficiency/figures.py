"""Charts of the scaling-efficiency chapter, each ``fn(res) -> chart`` reading only the :class:`Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses import data
from analyses.chapters.scaling_efficiency import ETHERNET, THOUSAND, Result
from analyses.pages import sliders
from analyses.units.formats import stated

DIAGONAL = (0.5, 4000)  # span of the validation chart's perfect-agreement line (TFLOP/s and ratios)


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
    lines = (
        alt.Chart(res.curves[["cluster", "GPUs", "efficiency"]].round({"efficiency": 4}))
        .mark_line()
        .encode(
            x=alt.X("GPUs:Q", scale=alt.Scale(type="log"), title="GPUs"),
            y=alt.Y("efficiency:Q", scale=alt.Scale(domain=[0, 1.05]), title="scaling efficiency"),
            color=alt.Color("cluster:N", title=None),
            tooltip=["cluster", "GPUs", alt.Tooltip("efficiency:Q", format=".2f")],
        )
    )
    marks = (
        alt.Chart(points)
        .mark_point(shape="diamond", size=140, filled=True, color="black")
        .encode(x="GPUs:Q", y="efficiency:Q", tooltip=["point"])
    )
    return (lines + marks).properties(width=520, height=300)


def validation(res: Result) -> alt.LayerChart:
    """Model against published per-GPU TFLOP/s and scaling efficiencies (log-log) with the diagonal."""
    frame = res.validation.round({"measured": 4, "predicted": 4, "error": 4})
    base = alt.Chart(frame).encode(
        x=alt.X("measured:Q", scale=alt.Scale(type="log"), title="published"),
        y=alt.Y("predicted:Q", scale=alt.Scale(type="log"), title="model"),
    )
    pts = base.mark_point(filled=True, size=80).encode(
        color=alt.Color("role:N"),
        shape=alt.Shape("quantity:N", title=None),
        tooltip=["id", "quantity", alt.Tooltip("error:Q", format="+.1%")],
    )
    diag = (
        alt.Chart(pd.DataFrame({"v": list(DIAGONAL)}))
        .mark_line(strokeDash=[4, 3], color="grey")
        .encode(x="v:Q", y="v:Q")
    )
    return (diag + pts).properties(width=400, height=320)


def slider(res: Result, index: int = 0) -> alt.HConcatChart:
    """One of the chapter's slider figures (0: global batch, 1: RDMA NIC share)."""
    return sliders.figure(res.sliders[index])
