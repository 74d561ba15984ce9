"""Page ``claims``: the whole ledger with verdicts, a filterable table and a chart by topic."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import altair as alt
import pandas as pd

from analyses import chapters, ledger, verdicts
from analyses.chapters.params import ChapterSpec, Param
from analyses.site.notebook import VERDICT_COLOURS

DOCUMENTS = ("all", "000_f164c1abc5db046d.txt", "001_df9bc65650076e7a.txt")

SPEC = ChapterSpec(
    slug="claims",
    title="The claims ledger",
    params=(
        Param("document", "str", "all", "-", "show claims of one document, or all", choices=DOCUMENTS),
        Param(
            "verdict",
            "str",
            "all",
            "-",
            "show only claims with this verdict",
            choices=("all", *verdicts.VERDICTS),
        ),
    ),
)


def filtered_ledger(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """The ledger restricted to the chosen document and verdict."""
    frame = ledger.ledger()
    if cfg["document"] != "all":
        frame = frame[frame["document"] == cfg["document"]]
    if cfg["verdict"] != "all":
        frame = frame[frame["verdict"] == cfg["verdict"]]
    return frame.reset_index(drop=True)


def counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims per document and verdict."""
    out = frame.groupby(["document", "verdict"]).size().unstack(fill_value=0)
    return out.reset_index()


def verdict_chart(frame: pd.DataFrame) -> alt.Chart:
    """Stacked bars: claims per topic, coloured by verdict, one panel per document."""
    order = list(verdicts.VERDICTS)
    colours = alt.Scale(domain=order, range=[VERDICT_COLOURS[v] for v in order])
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("topic:N", title=None, sort="-x"),
            x=alt.X("count():Q", title="claims"),
            color=alt.Color("verdict:N", scale=colours, legend=alt.Legend(orient="bottom")),
            row=alt.Row("document:N", title=None),
            tooltip=["topic:N", "verdict:N", "count():Q"],
        )
        .properties(width=460, height=180)
    )


class LedgerTable:
    """The ledger as an HTML table with a text filter (no external script) and a plain-text form."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame

    def _repr_html_(self) -> str:
        written = set(chapters.chapter_slugs())
        rows = []
        for r in self.frame.itertuples():
            chapter = html.escape(r.chapter)
            link = f'<a href="{chapter}.html">{chapter}</a>' if r.chapter in written else chapter
            colour = VERDICT_COLOURS.get(r.verdict, "inherit")
            cells = [
                f"<code>{html.escape(r.id)}</code>",
                html.escape(r.section),
                html.escape(r.topic),
                html.escape(r.claim),
                html.escape(r.stated),
                html.escape(r.recomputed),
                f'<b style="color:{colour}">{r.verdict}</b>',
                html.escape(r.reason),
                link,
            ]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        head = "".join(
            f"<th>{h}</th>"
            for h in ["id", "section", "topic", "claim", "stated", "recomputed", "verdict", "reason", "chapter"]
        )
        return (
            '<div class="ledger">'
            '<input type="search" placeholder="Filter claims (any text: a topic, a verdict, a figure)" '
            'style="width:100%;margin:0.5em 0;padding:0.3em" '
            "oninput=\"var q=this.value.toLowerCase();this.parentNode.querySelectorAll('tbody tr').forEach("
            "function(tr){tr.style.display=tr.textContent.toLowerCase().indexOf(q)>=0?'':'none';});\">"
            f'<table class="table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
        )

    def __repr__(self) -> str:
        return self.frame[["id", "verdict", "chapter"]].to_string(index=False)
