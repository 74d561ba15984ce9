"""Charts and tables of the ledger page, and the printable ledger written with the site's downloads.

The ledger's columns come from :func:`analyses.chapters.ledger.ledger`; every column it has is shown, in
the reading order of :data:`analyses.pages.ledger_html.LEDGER_ORDER` (verdict first). ``kind``,
``holds`` and ``flips_if`` get a filter, a percentage and plain text when the ledger has them.
The filters and sorting are ``_static/audit.js`` (no external script); without JavaScript the
table shows every row.
"""

from __future__ import annotations

import html
from typing import Any

import altair as alt
import pandas as pd

from analyses.chapters.claims import direction_summary, summary, verdict_order
from analyses.chapters.ledger import document_titles, verdict_counts
from analyses.pages import sliders
from analyses.pages.encodings import LABEL_SIZE, describe
from analyses.pages.ledger_html import (
    DIRECTION_SYMBOLS,
    VERDICT_COLOURS,
    HtmlTable,
    ledger_html,
    short_document,
    verdict_legend,
    verdict_mark_expr,
    verdict_scale,
)
from analyses.scenario import frame


def verdict_chart(frame: pd.DataFrame) -> alt.Chart:
    """Stacked bars: claims per topic, coloured by verdict and marked with each verdict's mark
    (✓ ✗ ! ?) at the end of its segment, one panel per document."""
    colours = verdict_scale()
    counted = (
        frame.assign(document=frame["document"].map(short_document))
        .groupby(["document", "topic", "verdict"])
        .size()
        .rename("claims")
        .reset_index()
    )
    topics = counted.groupby("topic")["claims"].sum().sort_values(ascending=False, kind="stable").index
    y = alt.Y("topic:N", title=None, sort=list(topics))
    x = alt.X("sum(claims):Q", title="claims", stack="zero")
    order = alt.Order("rank:Q")
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            y=y,
            x=x,
            color=alt.Color("verdict:N", scale=colours, legend=verdict_legend(orient="bottom")),
            order=order,
            tooltip=["topic:N", "verdict:N", "claims:Q"],
        )
    )
    marks = (
        alt.Chart()
        .mark_text(color="white", fontSize=LABEL_SIZE, fontWeight="bold", align="right", dx=-4)
        .encode(y=y, x=x, order=order, detail="verdict:N", text="mark:N")
    )
    totals = counted.groupby("document")["claims"].sum()
    counts = counted.groupby("verdict")["claims"].sum().reindex(list(VERDICT_COLOURS)).fillna(0).astype(int)
    text = (
        "Bar chart of the claims per topic, each bar split by verdict, one panel per document ("
        + ", ".join(f"{d}: {n} claims" for d, n in totals.items())
        + "); in all, "
        + ", ".join(f"{n} {v}" for v, n in counts.items())
        + "."
    )
    chart = (
        alt.layer(bars, marks, data=counted)
        .transform_calculate(rank=f"indexof({list(VERDICT_COLOURS)}, datum.verdict)", mark=verdict_mark_expr("verdict"))
        .properties(width=460, height=180)
    )
    return describe(chart.facet(row=alt.Row("document:N", title=None)), text)


def flip_map(res: Any) -> alt.LayerChart:
    """Where the verdicts of the claims shown flip within their assumptions' ranges
    (:func:`analyses.pages.sliders.flip_map` of the page's flip points)."""
    return sliders.flip_map(res.flips)


def document_pages(frame: pd.DataFrame) -> HtmlTable:
    """A list of the ledger's pages, one per document (``claims-<code>.html``): its code, title and
    its claims per verdict."""
    items, lines, titles = [], [], document_titles()
    for document, rows in frame.groupby("document", sort=True):
        code = short_document(document)
        per_verdict = verdict_counts(rows)
        counts = ", ".join(f"{per_verdict[v]} {v}" for v in verdict_order(rows))
        title = html.escape(titles.get(document, ""))
        items.append(
            f'<li><a href="claims-{code}.html"><b>Document {code}</b></a> <i>{title}</i>: '
            f"{len(rows)} claims ({html.escape(counts)})</li>"
        )
        lines.append(f"claims-{code}: {len(rows)} claims ({counts})")
    text = pd.DataFrame({"page": lines})
    return HtmlTable(f'<ul class="audit-documents">{"".join(items)}</ul>', text)


def summary_html(frame: pd.DataFrame, by: str) -> str:
    """:func:`summary` as a small HTML table (verdict headers coloured by :data:`VERDICT_STYLE`)."""
    table = summary(frame, by)
    head = "".join(
        f'<th class="verdict-{html.escape(str(c))}">{html.escape(str(c))}</th>'
        if c in VERDICT_COLOURS
        else f"<th>{html.escape(str(c))}</th>"
        for c in table.columns
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(short_document(v) if by == 'document' and c == by and v != 'all' else str(v))}</td>"
            for c, v in row.items()
        )
        + "</tr>"
        for row in table.to_dict("records")
    )
    return f'<table class="summary"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def summary_view(frame: pd.DataFrame, by: str) -> HtmlTable:
    """:func:`summary` for a notebook."""
    return HtmlTable(f'<div class="audit-table">{summary_html(frame, by)}</div>', summary(frame, by))


def direction_view(frame: pd.DataFrame) -> HtmlTable:
    """:func:`direction_summary` as a small table, each direction headed by its word and symbol."""
    table = direction_summary(frame)
    head = "".join(
        f"<th>{DIRECTION_SYMBOLS.get(c, '')} {html.escape(str(c))}</th>"
        if c in DIRECTION_SYMBOLS
        else f"<th>{html.escape(str(c))}</th>"
        for c in table.columns
    )
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for c, v in row.items()) + "</tr>"
        for row in table.to_dict("records")
    )
    return HtmlTable(
        f'<div class="audit-table"><table class="summary"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>',
        table,
    )


PRINT_CSS = """
body { font: 10pt/1.35 system-ui, sans-serif; margin: 1.5rem; color: #111; }
h1 { font-size: 1.4rem; margin: 0 0 .3rem; } h2 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
p.meta { color: #444; margin: 0 0 .6rem; }
.summaries { display: flex; flex-wrap: wrap; gap: 1.2rem; align-items: flex-start; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: .15rem .35rem; vertical-align: top; text-align: left; }
table.summary td:not(:first-child) { text-align: right; }
table.ledger-table { width: 100%; font-size: 8pt; table-layout: fixed; }
col.col-verdict { width: 8.2em; } col.col-about { width: 11em; } col.col-holds { width: 3.6em; }
col.col-flips_if { width: 8em; } col.col-direction { width: 6.5em; } col.col-margin { width: 3.6em; }
b.verdict { white-space: nowrap; } td.about i { color: #666; }
table.ledger-table th button { all: unset; font-weight: bold; }
table.ledger-table td { overflow-wrap: anywhere; }
code { font-size: .95em; }
a { color: inherit; }
button.print { float: right; }
@page { size: A4 landscape; margin: 10mm; }
@media print {
  body { margin: 0; font-size: 8pt; }
  button.print { display: none; }
  a { text-decoration: none; }
  thead { display: table-header-group; }
  tr, .summaries table { break-inside: avoid; }
  table.ledger-table { font-size: 6.5pt; }
  h2 { break-after: avoid; }
}
"""


def printable_page(frame: pd.DataFrame) -> str:
    """One standalone HTML page of the verdicts: counts by verdict, document and chapter, then the
    full ledger, with print CSS (A4 landscape, header row repeated on every page)."""
    n = len(frame)
    parts = ", ".join(f"{int((frame['verdict'] == v).sum())} {v}" for v in verdict_order(frame))
    by = [b for b in ("document", "chapter", "kind") if b in frame.columns]
    summaries = "".join(f"<div><h2>By {html.escape(b)}</h2>{summary_html(frame, b)}</div>" for b in by)
    docs = "; ".join(f"{short_document(d)} = {html.escape(d)}" for d in sorted(set(frame["document"])))
    # each reason states its flip points: the page leaves out flips_if and margin to stay under 150 KB
    ledger = ledger_html(frame, base="../book/", buttons=False, leave_out=("flips_if", "margin"))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>The claims ledger: verdicts (printable)</title>
<style>{PRINT_CSS}</style></head>
<body>
<button class="print" type="button" onclick="window.print()">Print</button>
<h1>The claims ledger: verdicts</h1>
<p class="meta">{n} claims of two marketing articles about NVIDIA B300 training servers ({docs}),
each recomputed from sourced public data: {parts}. The same table comes from
<code>python -m analyses verdicts --format csv</code>; every claim id links to its check in the book
(<a href="../book/claims.html">the claims ledger</a>).</p>
<div class="summaries">{summaries}</div>
<h2>Every claim</h2>
{ledger}
</body></html>
"""


def frame_table() -> pd.DataFrame:
    """The buyer's frame every cost row judges in (:mod:`analyses.scenario.frame`), each choice in full:
    the ledger page states it once, each row's reason names the choices it uses."""
    return pd.DataFrame(
        [
            {"question": c.dimension, "about": c.key, "the book's choice": c.detail or c.words}
            for c in frame.all_choices()
        ]
    )
