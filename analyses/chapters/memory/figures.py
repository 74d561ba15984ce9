"""Charts of the memory chapter, each drawn from a computed :class:`~analyses.chapters.memory.Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.memory import Result, shape
from analyses.models import memory
from analyses.pages import sliders
from analyses.scenario.generations import gpu
from analyses.units import GB

STACK = (*memory.STATE_PARTS, "activations")  # bottom to top, as the caption names them (text.accounting_caption)


def accounting_chart(res: Result) -> alt.Chart:
    """Bytes of one unsharded replica of each model, by part (symlog scale), stacked in :data:`STACK`
    order from the bottom."""
    frame = res.accounting.round({"GB": 3, "parameters (B)": 3})
    frame = frame.assign(stack=frame["part"].map({p: i for i, p in enumerate(STACK)}))
    order = [shape(n)["label"] for n in res.cfg["models"]]
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("model:N", sort=order, title=None),
            y=alt.Y("GB:Q", title="GB (one replica, unsharded)", scale=alt.Scale(type="symlog")),
            color=alt.Color("part:N", sort=list(STACK), title="part"),
            order=alt.Order("stack:Q", sort="ascending"),
            tooltip=["model", "part", alt.Tooltip("GB:Q", format=",.1f")],
        )
        .properties(width=520, height=300)
    )


def zero_chart(res: Result) -> alt.LayerChart:
    """Memory per GPU against GPU count for each ZeRO stage, with each GPU's usable HBM."""
    frame = res.zero.round({"GB per GPU": 3})
    gpus = list(res.cfg["gpus"])
    hbm = pd.DataFrame({"GB": [round(gpu(g).hbm_usable_bytes / GB, 1) for g in gpus], "GPU": gpus})
    lines = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("GPUs:Q", scale=alt.Scale(type="log", base=2), title="GPUs (tp × pp × dp)"),
            y=alt.Y("GB per GPU:Q", scale=alt.Scale(type="log"), title="GB per GPU"),
            color=alt.Color("ZeRO stage:N"),
            tooltip=["GPUs", "ZeRO stage", alt.Tooltip("GB per GPU:Q", format=",.1f")],
        )
    )
    rules = alt.Chart(hbm).mark_rule(strokeDash=[4, 3], color="grey").encode(y="GB:Q", tooltip=["GPU", "GB"])
    labels = (
        alt.Chart(hbm).mark_text(align="left", dx=4, dy=-5, color="grey").encode(y="GB:Q", x=alt.value(0), text="GPU:N")
    )
    return (lines + rules + labels).properties(width=520, height=320)


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
    return (
        alt.Chart(wide)
        .transform_fold([states, torch, megatron], as_=["accounting", "error"])
        .transform_calculate(measured=f"datum.accounting === '{states}' ? datum['states MB'] : datum['activations MB']")
        .mark_point(filled=True, size=50)
        .encode(
            x=alt.X("measured:Q", scale=alt.Scale(type="log"), title="measured (MB)"),
            y=alt.Y("error:Q", axis=alt.Axis(format="%"), title="model / measured − 1"),
            color="accounting:N",
            shape=alt.Shape("precision:N", scale=alt.Scale(domain=["fp32", "bf16"], range=["circle", "square"])),
            tooltip=["config:N", "accounting:N", alt.Tooltip("error:Q", format=".2%")],
        )
        .properties(width=520, height=300)
    )


def allowance_slider(res: Result) -> alt.HConcatChart:
    """What-if over the framework memory per GPU: one card against many, and the 4-8-node plan."""
    return sliders.figure(res.sliders[0])
