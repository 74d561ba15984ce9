"""Charts of the memory chapter, each drawn from a computed :class:`~analyses.chapters.memory.Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.memory import Result, shape
from analyses.models import memory
from analyses.pages import sliders
from analyses.pages.encodings import (
    LABEL_SIZE,
    dashes,
    describe,
    end_labels,
    fixed,
    label_layer,
    number,
    percent,
    shapes,
    stack_labels,
)
from analyses.scenario.generations import gpu
from analyses.units import GB

# bottom to top: Vega stacks the parts in their name's order (order="part:N"), the segment labels and the
# caption (glued as acc_stack by text.glued) name them in this order, the legend top to bottom
STACK = tuple(sorted((*memory.STATE_PARTS, "activations")))


def accounting_chart(res: Result) -> alt.Chart:
    """Bytes of one unsharded replica of each model, by part (symlog scale), each part named in its
    segment where it fits."""
    frame = res.accounting.round({"GB": 3, "parameters (B)": 3})
    order = [shape(n)["label"] for n in res.cfg["models"]]
    parts = list(STACK)
    y = alt.Y("GB:Q", title="GB (one replica, unsharded)", scale=alt.Scale(type="symlog"))
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("model:N", sort=order, title=None),
            y=y,
            color=alt.Color("part:N", sort=list(reversed(STACK)), title="part"),
            order=alt.Order("part:N"),
            tooltip=["model", "part", alt.Tooltip("GB:Q", format=",.1f")],
        )
    )
    names = stack_labels(frame, "model", "part", "GB", list(STACK), symlog=True, min_share=0.08)
    labels = (
        alt.Chart(names)
        .mark_text(color="black", fontSize=LABEL_SIZE, baseline="middle")
        .encode(x=alt.X("model:N", sort=order), y=alt.Y("mid:Q", scale=alt.Scale(type="symlog")), text="label:N")
    )
    totals = frame.groupby("model", sort=False)["GB"].sum()
    text = (
        "Stacked bar chart (symlog scale) of the gigabytes one unsharded replica of each model needs, split into "
        + ", ".join(parts)
        + ": "
        + "; ".join(f"{m} {fixed(totals[m])} GB" for m in order if m in totals)
        + "."
    )
    return describe((bars + labels).properties(width=520, height=300), text)


def zero_chart(res: Result) -> alt.LayerChart:
    """Memory per GPU against GPU count for each ZeRO stage, with each GPU's usable HBM."""
    frame = res.zero.round({"GB per GPU": 3})
    gpus = list(res.cfg["gpus"])
    hbm = pd.DataFrame({"GB": [round(gpu(g).hbm_usable_bytes / GB, 1) for g in gpus], "GPU": gpus})
    stages = list(dict.fromkeys(frame["ZeRO stage"]))
    encoding = {
        "x": alt.X("GPUs:Q", scale=alt.Scale(type="log", base=2), title="GPUs (tp × pp × dp)"),
        "y": alt.Y("GB per GPU:Q", scale=alt.Scale(type="log"), title="GB per GPU"),
        "color": alt.Color("ZeRO stage:N", scale=alt.Scale(domain=stages)),
        "tooltip": ["GPUs", "ZeRO stage", alt.Tooltip("GB per GPU:Q", format=",.1f")],
    }
    lines = alt.Chart(frame).mark_line().encode(strokeDash=dashes("ZeRO stage:N", stages), **encoding)
    dots = alt.Chart(frame).mark_point(filled=True).encode(shape=shapes("ZeRO stage:N", stages), **encoding)
    rules = alt.Chart(hbm).mark_rule(strokeDash=[4, 3], color="grey").encode(y="GB:Q", tooltip=["GPU", "GB"])
    labels = (
        alt.Chart(hbm).mark_text(align="left", dx=4, dy=-5, color="grey").encode(y="GB:Q", x=alt.value(0), text="GPU:N")
    )
    ends = end_labels(frame, "GPUs", "GB per GPU", "ZeRO stage", log_y=True, gap=0.09)
    names = label_layer(
        ends, alt.X("x:Q", scale=alt.Scale(type="log", base=2)), alt.Y("y:Q", scale=alt.Scale(type="log"))
    )
    last = (
        frame.sort_values("GPUs", kind="stable").groupby("ZeRO stage").tail(1).sort_values("ZeRO stage", kind="stable")
    )
    text = (
        f"Line chart (log scales) of the memory per GPU against the GPU count, {fixed(frame['GPUs'].min())} to "
        f"{fixed(frame['GPUs'].max())}, one line per ZeRO stage, each with its own dash and point shape; at the largest "
        "count "
        + ", ".join(f"{r._2} needs {fixed(r._3)} GB" for r in last.itertuples())
        + ". Grey dashed lines: each GPU's usable memory ("
        + ", ".join(f"{g} {number(v)} GB" for g, v in zip(hbm["GPU"], hbm["GB"], strict=True))
        + ")."
    )
    return describe((lines + dots + names + rules + labels).properties(width=520, height=320), text)


def measured_chart(res: Result) -> alt.Chart:
    """Model against measurement: relative error against the measured bytes, per accounting.

    One row per measured configuration, folded into one point per accounting in the browser, so the
    page carries each configuration once.
    """
    m = res.measured
    states, torch, megatron = (
        "model states (exact)",
        "activations: PyTorch block",
        "activations: Korthikanti (16-bit)",
    )
    wide = pd.DataFrame(
        {
            "config": m["config"],
            "precision": m["dtype"],
            "states MB": (m["state_bytes"] / 1e6).round(4),
            "activations MB": (m["activation_bytes"] / 1e6).round(4),
            states: m["states_error"].round(5),
            torch: m["activations_torch_error"].round(5),
            megatron: m["activations_megatron_error"].round(5),
        }
    )
    accountings = [states, torch, megatron]
    base = (
        alt.Chart(wide)
        .transform_fold(accountings, as_=["accounting", "error"])
        .transform_calculate(measured=f"datum.accounting === '{states}' ? datum['states MB'] : datum['activations MB']")
        .encode(
            x=alt.X("measured:Q", scale=alt.Scale(type="log"), title="measured (MB)"),
            y=alt.Y("error:Q", axis=alt.Axis(format="%"), title="model / measured − 1"),
            color=alt.Color("accounting:N", scale=alt.Scale(domain=accountings)),
            shape=shapes("accounting:N", accountings),
            tooltip=["config:N", "precision:N", "accounting:N", alt.Tooltip("error:Q", format=".2%")],
        )
    )
    # fp32 runs filled, bf16 runs open: precision told by fill, the accounting by shape and colour
    fp32 = base.transform_filter("datum.precision == 'fp32'").mark_point(filled=True, size=50)
    bf16 = base.transform_filter("datum.precision != 'fp32'").mark_point(filled=False, size=50, strokeWidth=1.5)
    worst = {a: float(wide[a].abs().max()) for a in accountings}
    text = (
        f"Scatter plot of the model's error against {len(wide)} measured PyTorch configurations, one point per "
        "configuration and accounting (shape and colour), filled for fp32 runs and open for bf16; largest errors: "
        + ", ".join(f"{a} {percent(w, 1)}" for a, w in worst.items())
        + "."
    )
    return describe((fp32 + bf16).properties(width=520, height=300), text)


def allowance_slider(res: Result) -> alt.HConcatChart:
    """What-if over the framework memory per GPU: one card against many, and the 4-8-node plan."""
    return sliders.figure(res.sliders[0])


ROLE_WORDS = {"calibrate": "calibration (left out)", "validate": "validation"}


def runs_table(res: Result) -> pd.DataFrame:
    """Every published run's peak memory per GPU against the model, out of sample, with the accounting
    before issue 21 beside it."""
    v = res.runs
    return pd.DataFrame(
        {
            "run": v["model"],
            "framework": v["framework"],
            "role": v["role"].map(ROLE_WORDS),
            "GPUs": v["GPUs"],
            "layout": v["layout"],
            "measured (GiB)": v["measured_gib"],
            "model (GiB)": v["predicted_gib"],
            "error": v["error"],
            "90% band (GiB)": [
                f"{lo:.0f}–{hi:.0f}" for lo, hi in zip(v["band_low_gib"], v["band_high_gib"], strict=True)
            ],
            "inside": v["inside"].map({True: "yes", False: "no"}),
            "before (GiB)": v["before_gib"],
            "error before": v["before_error"],
            "source": v["source"],
        }
    )


def runs_chart(res: Result) -> alt.LayerChart:
    """Predicted against measured peak memory per GPU, one point per run, with the 90% band (bar) and
    the line where they agree; the accounting before issue 21 as hollow points."""
    v = res.runs
    frame = pd.DataFrame(
        {
            "run": v["id"],
            "framework": v["framework"],
            "measured": v["measured_gib"].round(2),
            "model": v["predicted_gib"].round(2),
            "low": v["band_low_gib"].round(2),
            "high": v["band_high_gib"].round(2),
            "before": v["before_gib"].round(2),
        }
    )
    top = float(max(frame["measured"].max(), frame["high"].max(), frame["before"].max())) * 1.05
    axis = alt.Scale(domain=[0, round(top)])
    diagonal = (
        alt.Chart(pd.DataFrame({"x": [0, round(top)]}))
        .mark_line(color="grey", strokeDash=[4, 3])
        .encode(
            x=alt.X("x:Q", scale=axis, title="measured peak per GPU (GiB)"),
            y=alt.Y("x:Q", scale=axis, title="model (GiB)"),
        )
    )
    bands = alt.Chart(frame).mark_rule(opacity=0.4, color="grey").encode(x="measured:Q", y="low:Q", y2="high:Q")
    frameworks = sorted(frame["framework"].unique())
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=50)
        .encode(
            x="measured:Q",
            y="model:Q",
            color=alt.Color("framework:N", title=None, scale=alt.Scale(domain=frameworks)),
            shape=shapes("framework:N", frameworks, title=None),
            tooltip=["run", "framework", "measured", "model", "low", "high", "before"],
        )
    )
    before = (
        alt.Chart(frame)
        .mark_point(shape="diamond", size=40, color="black", opacity=0.5)
        .encode(x="measured:Q", y="before:Q", tooltip=["run", "measured", "before"])
    )
    val = v[v["role"] == "validate"]
    text = (
        f"Scatter plot of predicted against measured peak memory per GPU for {len(v)} published runs "
        f"({', '.join(frameworks)}; shape and colour by framework), each with its prediction band as a grey bar "
        f"and the accounting before as a black diamond; on the {len(val)} validation runs the median error is "
        f"{percent(float(val['error'].abs().median()), 1)} now against "
        f"{percent(float(val['before_error'].abs().median()), 1)} before."
    )
    return describe((diagonal + bands + before + points).properties(width=440, height=360), text)
