"""Page ``claims``: the whole ledger with verdicts, a filterable and sortable table, a chart by topic,
and the printable summary written with the site's downloads.

The ledger's columns come from :func:`analyses.ledger.ledger`; every column it has is shown, in
the reading order of :data:`analyses.site.ledger_html.LEDGER_ORDER` (verdict first). ``kind``,
``holds`` and ``flips_if`` get a filter, a percentage and plain text when the ledger has them.
The filters and sorting are ``_static/audit.js`` (no external script); without JavaScript the
table shows every row.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

from analyses import chapters, ledger, robustness, verdicts
from analyses.chapters.params import ChapterSpec, Config, Param
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.site import downloads, sliders
from analyses.site.encodings import LABEL_SIZE, describe
from analyses.site.ledger_html import (
    VERDICT_COLOURS,
    HtmlTable,
    filter_value,
    ledger_table,
    short_document,
    verdict_legend,
    verdict_mark_expr,
    verdict_scale,
)
from analyses.site.notebook import fmt

DOCUMENTS = ("all", "000_f164c1abc5db046d.txt", "001_df9bc65650076e7a.txt")
FILTERS = ("verdict", "document", "chapter", "kind")  # a filter for each of these the ledger has

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


def _keep(cfg: Mapping[str, Any], document: str, verdict: str) -> bool:
    return cfg["document"] in ("all", document) and cfg["verdict"] in ("all", verdict)


@dataclass(frozen=True)
class Result:
    """Everything the ledger page shows, computed once."""

    cfg: Config
    ledger: pd.DataFrame  # the ledger rows the filters keep
    counts: dict[str, int]  # claims per verdict (every verdict, zero where none), and "all"
    rules: pd.DataFrame  # kind, claims of that kind, the rule in words
    flips: pd.DataFrame  # :func:`analyses.site.sliders.flip_points` of the kept rows
    draws: int = robustness.DRAWS  # joint scenario draws behind ``holds``
    level: float = INTERVAL_LEVEL  # two-sided level of every range the checks recompute


def rules_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Each kind of claim with how many of ``frame``'s claims are of it and its verdict rule in words."""
    per_kind = frame["kind"].value_counts()
    return pd.DataFrame(
        [(kind, int(per_kind.get(kind, 0)), rule) for kind, rule in verdicts.rules_table()],
        columns=["kind", "claims", "rule"],
    )


def compute(cfg: Config) -> Result:
    """Assess every claim once, keep those the filters select, and derive the page's tables."""
    rows = [a for a in ledger.assessments() if _keep(cfg, a.claim.document, a.verdict)]
    frame = ledger.frame(rows)
    counts = {v: int((frame["verdict"] == v).sum()) for v in verdicts.VERDICTS}
    counts["all"] = len(frame)
    return Result(cfg, frame, counts, rules_frame(frame), sliders.flip_points(rows))


def verdict_order(frame: pd.DataFrame) -> list[str]:
    """The verdicts in the ledger's fixed order those present in ``frame`` only."""
    present = set(frame["verdict"])
    return [v for v in verdicts.VERDICTS if v in present]


def summary(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    """Claims per value of ``by`` (document, chapter, kind) and verdict, with totals."""
    order = verdict_order(frame)
    out = frame.groupby(by)["verdict"].value_counts().unstack(fill_value=0).reindex(columns=order, fill_value=0)
    out["total"] = out.sum(axis=1)
    out.loc["all"] = out.sum()
    return out.reset_index().rename(columns={by: by}).rename_axis(columns=None)


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


def ledger_html(
    frame: pd.DataFrame,
    written: frozenset[str] | None = None,
    base: str = "",
    buttons: bool = True,
    leave_out: tuple[str, ...] = (),
) -> str:
    """The ledger as a table (:func:`analyses.site.ledger_html.ledger_table`): every column but
    ``leave_out``, verdict first; the claim id links to the row of its check in its chapter
    (``base`` prefixes links)."""
    written = frozenset(chapters.chapter_slugs()) if written is None else written
    return ledger_table(frame, leave_out=leave_out, written=written, base=base, buttons=buttons)


class LedgerTable:
    """The ledger with filters (verdict, document, chapter, kind), a text search and sortable
    columns (``_static/audit.js``), and a plain-text form for nbval."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame

    def _controls(self) -> str:
        selects = []
        for col in FILTERS:
            if col not in self.frame.columns:
                continue
            values = verdict_order(self.frame) if col == "verdict" else sorted(set(self.frame[col].astype(str)))
            options = "".join(
                f'<option value="{html.escape(filter_value(col, v))}" title="{html.escape(v)}">'
                f"{html.escape(filter_value(col, v))}</option>"
                for v in values
            )
            selects.append(
                f'<label>{col} <select data-filter="{col}"><option value="">all</option>{options}</select></label>'
            )
        search = '<label>text <input type="search" data-filter-text placeholder="a figure, a word, an id"></label>'
        count = f'<span class="ledger-count" aria-live="polite">{len(self.frame)} claims</span>'
        return f'<div class="ledger-controls" hidden>{"".join(selects)}{search}{count}</div>'

    def _repr_html_(self) -> str:
        return f'<div class="audit-ledger">{self._controls()}{ledger_html(self.frame)}</div>'

    def __repr__(self) -> str:
        return self.frame[[c for c in ("id", "verdict", "chapter") if c in self.frame.columns]].to_string(index=False)


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


def download_links() -> downloads.LinkList:
    """Links to the ledger's downloads and the printable page."""
    return downloads.links(
        [("ledger.csv", "ledger (CSV)"), ("ledger.json", "ledger (JSON)"), (downloads.PRINTABLE, "printable ledger")]
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
col.col-flips_if { width: 8em; }
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
    ledger = ledger_html(frame, base="../book/", buttons=False)
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


def flip_caption(res: Result) -> str:
    """The caption of the flip map: what its marks mean and where the sliders are."""
    level = fmt(res.level, pct=True, sig=2)
    if res.flips.empty:
        return f"No verdict among the claims shown flips anywhere within its assumptions' {level} ranges."
    n = len(res.flips)
    inputs = ", ".join(sorted(set(res.flips["assumption"])))
    return (
        f"The {n} claims whose verdict flips within the {level} range of one assumption ({inputs}). The grey bar is that "
        "range from its 5th to its 95th percentile, the black tick its central value, and the diamond the point where "
        "the verdict flips, coloured by the verdict it would flip to and labelled with that verdict's mark (✓ ✗ ! ?) and "
        "the threshold. A diamond near "
        "the tick is a fragile verdict; one near an end of the bar needs an unusual value to flip. Each chapter's "
        "slider figures show the same flips over a precomputed grid."
    )
