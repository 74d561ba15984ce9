"""Charts of the throughput chapter, each drawn from a computed :class:`~analyses.chapters.throughput.Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.throughput import Result
from analyses.pages import sliders
from analyses.pages.encodings import LABEL_SIZE, dashes, describe, number, shapes
from analyses.pages.ledger_html import RECOMPUTED_COLOUR
from analyses.units.formats import stated


def ladder_chart(res: Result) -> alt.Chart:
    """Peak, measured matmul and best published model TFLOP/s per generation and precision (log scale)."""
    frame = res.ladder.melt(["gpu", "precision"], var_name="kind", value_name="TFLOP/s").dropna()
    frame["TFLOP/s"] = frame["TFLOP/s"].round(1)
    x = alt.X("gpu:N", sort=list(res.cfg["ladder_gpus"]), title=None)
    y = alt.Y("TFLOP/s:Q", scale=alt.Scale(type="log"), title="TFLOP/s per GPU (dense)")
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=70)
        .encode(
            x=x,
            y=y,
            color=alt.Color("precision:N"),
            shape=shapes("kind:N", list(dict.fromkeys(frame["kind"])), title=None),
            tooltip=["gpu", "precision", "kind", alt.Tooltip("TFLOP/s:Q", format=",.0f")],
        )
    )
    # each point's precision written beside it, so precision is told by a label, not colour alone
    names = (
        alt.Chart(frame)
        .mark_text(align="left", dx=7, baseline="middle", fontSize=LABEL_SIZE)
        .encode(x=x, y=y, text="precision:N")
    )
    peak = frame[frame["kind"] == frame["kind"].iloc[0]]
    text = (
        "Dot chart (log scale) of TFLOP/s per GPU for each generation and precision (each point labelled with its "
        "precision): the datasheet peak, the measured matmul and the best published model, one shape each; peaks: "
        + "; ".join(f"{r.gpu} {r.precision} {number(r._4)}" for r in peak.itertuples())
        + "."
    )
    return describe((points + names).properties(width=520, height=300), text)


def speedup_chart(res: Result) -> alt.LayerChart:
    """Implied per-GPU speed-ups of the anecdotes against the stated range, the scenario's speed-up
    (with its 90% range) and the datasheet ratios."""
    frame = res.anecdotes[["claim", "anecdote", "implied per-GPU speed-up"]].round({"implied per-GPU speed-up": 3})
    span = f"{stated(res.stated_low)}-{stated(res.stated_high)}×"
    refs = pd.DataFrame(
        {
            "reference": [
                f"stated {span} (low)",
                f"stated {span} (high)",
                "scenario speed-up",
                "datasheet BF16 ratio",
                "datasheet FP8/BF16 ratio",
            ],
            "x": [res.stated_low, res.stated_high, res.expected, res.bf16_ratio, res.fp8_ratio],
        }
    ).round({"x": 3})
    band = pd.DataFrame({"lo": [round(res.speedup.low, 3)], "hi": [round(res.speedup.high, 3)]})
    scale = alt.Scale(type="log", domain=[1, 20])
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("anecdote:N", sort=None, title=None),
            x=alt.X("implied per-GPU speed-up:Q", scale=scale, title="per-GPU speed-up over A100 (×)"),
            x2=alt.datum(1),  # bars start at 1× (no speed-up): a log scale has no zero
            tooltip=["claim", alt.Tooltip("implied per-GPU speed-up:Q", format=".2f")],
        )
    )
    range_band = (
        alt.Chart(band).mark_rect(opacity=0.15, color=RECOMPUTED_COLOUR).encode(x=alt.X("lo:Q", scale=scale), x2="hi:Q")
    )
    kinds = list(refs["reference"])
    rules = (
        alt.Chart(refs)
        .mark_rule(strokeWidth=2)
        .encode(
            x=alt.X("x:Q", scale=scale),
            color=alt.Color("reference:N", title=None, scale=alt.Scale(domain=kinds)),
            strokeDash=dashes("reference:N", kinds, title=None),
        )
    )
    text = (
        "Bar chart (log scale) of the per-GPU speed-up over A100 each anecdote implies: "
        + "; ".join(f"{r.anecdote} {number(r._3)}x" for r in frame.itertuples())
        + f"; against the stated {span}, the scenario's speed-up {number(res.expected)}x (its 90% range "
        f"{number(res.speedup.low)} to {number(res.speedup.high)}x shaded) and the datasheet ratios, each a rule "
        "with its own dash."
    )
    return describe((bars + range_band + rules).properties(width=480, height=220), text)


def speedup_slider(res: Result) -> alt.HConcatChart:
    """What-if over the B300/A100 speed-up: the speed-up claims, months to weeks and the anecdotes."""
    return sliders.figure(res.sliders[0])


def months_slider(res: Result) -> alt.HConcatChart:
    """What-if over tokens per parameter: the 100B-in-months claim."""
    return sliders.figure(res.sliders[1])
