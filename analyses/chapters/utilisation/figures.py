"""Charts of the utilisation chapter, each drawn from a computed :class:`~analyses.chapters.utilisation.Result`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analyses.chapters.utilisation import Result
from analyses.pages import sliders
from analyses.pages.encodings import LABEL_SIZE, dashes, describe, percent

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
    words = (
        bars.mark_text(align="left", dx=3, baseline="middle", fontSize=LABEL_SIZE)
        .encode(text="shown:N", color=alt.value("black"))
        .transform_calculate(shown="datum.when + ' ' + format(datum.utilisation, '.0%')")
    )
    ceiling = pd.DataFrame({"utilisation": [round(res.goodput, DIGITS)], "label": ["scenario goodput"]})
    rule = (
        alt.Chart(ceiling)
        .mark_rule(strokeDash=[6, 4], color="black")
        .encode(x="utilisation:Q", tooltip=["label", alt.Tooltip("utilisation:Q", format=".0%")])
    )
    wide = res.bars.pivot(index="source", columns="when", values="utilisation").reindex(res.bars["source"].unique())
    text = (
        "Bar chart of GPU utilisation before and after, each bar labelled: "
        + "; ".join(f"{s} {percent(r['before'])} to {percent(r['after'])}" for s, r in wide.iterrows())
        + f"; the dashed rule is the scenario's goodput, {percent(res.goodput)}."
    )
    return describe((bars + words + rule).properties(width=460, height=260), text)


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
    packings = list(dict.fromkeys(bins["packing"]))
    hist = (
        alt.Chart(bins)
        .mark_rect(opacity=0.7)
        .encode(
            x=alt.X("from:Q", axis=alt.Axis(format="%"), title="cluster utilisation (compute used / provisioned)"),
            x2="to:Q",
            y=alt.Y("snapshots:Q", title="snapshots"),
            y2=alt.datum(0),
            color=alt.Color("packing:N", title=None, scale=alt.Scale(domain=packings)),
            stroke=alt.Stroke("packing:N", title=None, scale=alt.Scale(domain=packings, range=["black", "black"])),
            strokeDash=dashes("packing:N", packings, title=None),
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
    text = (
        "Histogram of cluster utilisation over simulated snapshots, on whole GPUs (solid outline) and with MIG "
        f"(dashed outline): mean {percent(sim['util_whole'].mean())} and {percent(sim['util_mig'].mean())}; the provider's stated "
        f"before and after ({percent(provider.utilisation_before)}, {percent(provider.utilisation_after_min)}) as dashed rules and "
        f"the fluid bound of MIG packing ({percent(bound)}) dotted."
    )
    return describe((hist + lines).properties(width=500, height=260), text)


def slider(res: Result, i: int) -> alt.HConcatChart:
    """Slider figure ``i`` (:data:`analyses.chapters.utilisation.SLIDERS`)."""
    return sliders.figure(res.sliders[i])
