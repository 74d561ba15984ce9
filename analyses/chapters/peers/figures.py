"""The peers appendix's chart, drawn from a computed :class:`~analyses.chapters.peers.Result`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analyses.chapters.peers import QUANTITY_LABELS, TOOL_LABELS, Result
from analyses.models import peers
from analyses.pages.encodings import describe, percent, shapes


def diff_chart(res: Result) -> alt.LayerChart:
    """Every difference (peer / ours − 1) by quantity and peer, with the ±threshold band."""
    threshold = res.cfg["threshold"]
    frame = res.table.dropna(subset=["diff"]).assign(
        quantity=lambda f: f["quantity"].map(QUANTITY_LABELS),
        peer=lambda f: f["tool"].map(TOOL_LABELS),
        diff=lambda f: f["diff"].round(6),
    )[["quantity", "peer", "diff"]]
    order = [QUANTITY_LABELS[q] for q in (*peers.MEMORY_QUANTITIES, *peers.STEP_QUANTITIES)]
    band = (
        alt.Chart(pd.DataFrame({"lo": [-threshold], "hi": [threshold]}))
        .mark_rect(opacity=0.15, color="#888888")
        .encode(x="lo:Q", x2="hi:Q")
    )
    names = list(dict.fromkeys(frame["peer"]))
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("diff:Q", axis=alt.Axis(format="+%", title="peer / ours − 1")),
            y=alt.Y("quantity:N", sort=order, title=None),
            yOffset=alt.YOffset("peer:N"),
            color=alt.Color("peer:N", title=None, scale=alt.Scale(domain=names), legend=alt.Legend(orient="bottom")),
            shape=shapes("peer:N", names, title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["quantity", "peer", alt.Tooltip("diff:Q", format="+.1%")],
        )
    )
    outside = frame[frame["diff"].abs() > threshold]
    text = (
        f"Dot plot of every difference between a peer tool and this book (peer / ours − 1) for {frame['quantity'].nunique()} "
        f"quantities, one shape per peer ({', '.join(names)}), against a shaded band of ±{percent(threshold)}; "
        f"{len(outside)} of {len(frame)} differences lie outside it"
        + (
            ": " + "; ".join(f"{r.peer} on {r.quantity} {percent(r.diff, sign=True)}" for r in outside.itertuples())
            if len(outside)
            else ""
        )
        + "."
    )
    return describe((band + points).properties(width=520, height=320), text)
