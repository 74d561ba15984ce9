"""Charts of the utilisation chapter, each drawn from a computed :class:`~analyses.chapters.utilisation.Result`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analyses.chapters.utilisation import Result
from analyses.pages import sliders

DIGITS = 4  # chart data rounded to what a chart can show (same output on every machine)


def utilisation_chart(res: Result) -> alt.LayerChart:
    """Before/after utilisation as stated, as rebuilt from document 001's loading shares, and in the
    case studies, with the scenario's goodput (the most a well-fed run reaches) as a dashed rule."""
    bars = (
        alt.Chart(res.bars.round({"utilisation": DIGITS}))
        .mark_bar()
        .encode(
            y=alt.Y("source:N", title=None, sort=None),
            yOffset=alt.YOffset("when:N", sort=["before", "after"]),
            x=alt.X(
                "utilisation:Q", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]), title="GPU utilisation"
            ),
            color=alt.Color("when:N", sort=["before", "after"], title=None),
            tooltip=["source", "when", alt.Tooltip("utilisation:Q", format=".0%")],
        )
    )
    ceiling = pd.DataFrame({"utilisation": [round(res.goodput, DIGITS)], "label": ["scenario goodput"]})
    rule = (
        alt.Chart(ceiling)
        .mark_rule(strokeDash=[6, 4], color="black")
        .encode(x="utilisation:Q", tooltip=["label", alt.Tooltip("utilisation:Q", format=".0%")])
    )
    return (bars + rule).properties(width=460, height=260)


BIN = 0.02  # width of the utilisation bins of the MIG histogram


def histogram(values: pd.Series, label: str) -> pd.DataFrame:
    """Counts of ``values`` in bins of :data:`BIN` (binned here, so the chart carries a few rows
    whatever the number of snapshots)."""
    k = np.floor(values.to_numpy() / BIN + 1e-9).astype(int)
    keys, counts = np.unique(k, return_counts=True)
    return pd.DataFrame(
        {
            "from": np.round(keys * BIN, DIGITS),
            "to": np.round((keys + 1) * BIN, DIGITS),
            "snapshots": counts,
            "packing": label,
        }
    )


def mig_chart(res: Result) -> alt.LayerChart:
    """Utilisation per simulated snapshot on whole GPUs and with MIG, with the provider's stated
    before/after (dashed) and the fluid bound of MIG packing (dotted)."""
    sim = res.sim
    bins = pd.concat(
        [
            histogram(sim["util_whole"], "whole GPUs"),
            histogram(sim["util_mig"], f"MIG on {res.cfg['gpu']} (first fit)"),
        ]
    )
    provider = res.provider
    bound = res.mig_cases.set_index("claim").loc["001-2.3-cloud-utilisation-45-to-80", "MIG at most"]
    rules = pd.DataFrame(
        {
            "utilisation": [provider.utilisation_before, provider.utilisation_after_min, bound],
            "label": ["001 §2.3: before MIG", "001 §2.3: after MIG", "MIG at most (fluid bound)"],
            "dash": ["stated", "stated", "bound"],
        }
    ).round({"utilisation": DIGITS})
    hist = (
        alt.Chart(bins)
        .mark_rect(opacity=0.7)
        .encode(
            x=alt.X("from:Q", axis=alt.Axis(format="%"), title="cluster utilisation (compute used / provisioned)"),
            x2="to:Q",
            y=alt.Y("snapshots:Q", title="snapshots"),
            y2=alt.datum(0),
            color=alt.Color("packing:N", title=None),
            tooltip=["packing", alt.Tooltip("from:Q", format=".0%"), alt.Tooltip("to:Q", format=".0%"), "snapshots"],
        )
    )
    lines = (
        alt.Chart(rules)
        .mark_rule(color="black")
        .encode(
            x="utilisation:Q",
            strokeDash=alt.StrokeDash(
                "dash:N", scale=alt.Scale(domain=["stated", "bound"], range=[[6, 4], [2, 2]]), legend=None
            ),
            tooltip=["label", alt.Tooltip("utilisation:Q", format=".0%")],
        )
    )
    return (hist + lines).properties(width=500, height=260)


def slider(res: Result, i: int) -> alt.HConcatChart:
    """Slider figure ``i`` (:data:`analyses.chapters.utilisation.SLIDERS`)."""
    return sliders.figure(res.sliders[i])
