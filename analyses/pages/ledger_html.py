"""The ledger as HTML: verdict colours, the reading order of its columns, one cell per value, the
whole table with sort buttons and filters (``_static/audit.js``), and a chapter's verdict summary.

Used by every chapter's summary table (:func:`verdict_table`), the ledger page and its printable
form; numbers come from :mod:`analyses.units.formats`, links from :mod:`analyses.pages.links`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import altair as alt
import pandas as pd

from analyses.pages import links
from analyses.pages.calculator import ELEMENT_ID, PAYBACK_CLAIMS
from analyses.pages.links import check_anchor, check_href, source_links
from analyses.units.formats import fmt, readable, share
from analyses.verdicts import verdict_order

# The verdict palette: Dark2's hues darkened (light theme) or lightened (dark theme) until each
# colour has a contrast of at least 4.5:1 as text on the theme's page, its zebra rows and the
# highlighted target row (tests/site/test_screens.py computes the ratios). Charts, drawn on white
# in either theme, use the light one; a verdict is always also written out or marked by shape.
VERDICT_COLOURS = {
    "consistent": "#157c5d",
    "inconsistent": "#b34f02",
    "implausible": "#ce1775",
    "unverifiable": "#5e58a7",
}
VERDICT_COLOURS_DARK = {
    "consistent": "#1eae83",
    "inconsistent": "#fd6f02",
    "implausible": "#ef6caf",
    "unverifiable": "#9894c6",
}
# Figures reuse two of them: orange for what a document states, green for what the book recomputes.
STATED_COLOUR = VERDICT_COLOURS["inconsistent"]
RECOMPUTED_COLOUR = VERDICT_COLOURS["consistent"]


# A mark for each verdict, written in charts beside or inside what its colour fills, so no chart
# tells verdicts apart by colour alone.
VERDICT_MARKS = {"consistent": "✓", "inconsistent": "✗", "implausible": "!", "unverifiable": "?"}


def verdict_scale() -> alt.Scale:
    """The colour scale of verdicts in every chart (the ledger's colours, in the ledger's order)."""
    return alt.Scale(domain=list(VERDICT_COLOURS), range=list(VERDICT_COLOURS.values()))


def verdict_legend(**kwargs: Any) -> alt.Legend:
    """A legend of verdicts whose labels carry their marks ("✓ consistent")."""
    expr = "".join(f"datum.label == '{v}' ? '{m} {v}' : " for v, m in VERDICT_MARKS.items()) + "datum.label"
    return alt.Legend(labelExpr=expr, **kwargs)


def verdict_mark_expr(field: str) -> str:
    """A Vega expression giving the mark of the verdict in ``datum[field]``."""
    return "".join(f"datum['{field}'] == '{v}' ? '{m}' : " for v, m in VERDICT_MARKS.items()) + "''"


# Columns of the ledger in the order a reader scans them: the verdict first, then what was claimed
# and what we found; the lead's columns kind, holds and flips_if where the ledger has them.
LEDGER_ORDER = (
    "verdict",
    "direction",
    "id",
    "document",
    "section",
    "kind",
    "topic",
    "chapter",
    "claim",
    "stated",
    "recomputed",
    "reason",
    "holds",
    "flips_if",
    "margin",
)
# The colour of each verdict in either theme, once per table rather than on every cell.
VERDICT_STYLE = (
    "<style>"
    + "".join(f".verdict-{v}{{color:{c}}}" for v, c in VERDICT_COLOURS.items())
    + "".join(f"[data-theme=dark] .verdict-{v}{{color:{c}}}" for v, c in VERDICT_COLOURS_DARK.items())
    + "</style>"
)
LEDGER_LABELS = {"flips_if": "flips if", "id": "claim id", "section": "§", "document": "doc", "claim": "claim"}
# Which way a claim errs, as a word and a symbol (never colour alone): above the evidence, below it.
DIRECTION_SYMBOLS = {"overstates": "▲", "understates": "▼"}
DIRECTION_HELP = {
    "overstates": "the stated figure lies above what the evidence gives, or the claim credits more than it allows",
    "understates": "the stated figure lies below what the evidence gives",
}
MARGIN_HELP = (
    "how far the flip point lies from the assumption's central value, in units of its 90% range's half-width: "
    "below 1, inside the range"
)
VERDICT_RANK = {v: i for i, v in enumerate(VERDICT_COLOURS)}
# What a column measures, as its header's title (once per table: a page stays small on a phone).
COLUMN_HELP = {
    "direction": "; ".join(f"{DIRECTION_SYMBOLS[d]} {d}: {h}" for d, h in DIRECTION_HELP.items()),
    "margin": MARGIN_HELP,
}


# Shown inside the stated cell (under the English), not as a column of its own: the figures as the
# document writes them (data/claims.csv `written`), in Chinese, for a reader and for the search.
WRITTEN = "written"
# Shown inside the verdict cell, not as columns of their own: a verdict in doubt and what it depends on.
DOUBT_FIELDS = ("shown", "depends_on", "threshold", "above", "below")
FRAME = "frame"  # the buyer's frame a row judges in: its reason names it, the ledger page states it in full


def ledger_columns(ledger: pd.DataFrame, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The ledger's columns in :data:`LEDGER_ORDER`, any column it does not know at the end
    (:data:`WRITTEN` left out: :func:`ledger_cell` shows it with ``stated``)."""
    known = [c for c in LEDGER_ORDER if c in ledger.columns]
    others = [c for c in ledger.columns if c not in LEDGER_ORDER and c not in (WRITTEN, *DOUBT_FIELDS, FRAME)]
    return [c for c in known + others if c not in leave_out]


def short_document(name: str) -> str:
    """A document's short name as the book cites it: ``000`` for ``000_f164c1abc5db046d.txt``."""
    return str(name).split("_", 1)[0]


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == ""


DOUBT_MARK = "◐"  # a verdict in doubt: never a bare tick or cross (analyses.verdicts.robustness.Doubt)


def in_doubt(row: Mapping[str, Any]) -> bool:
    """Whether the ledger row's verdict is shown with what it depends on (its ``shown`` is not the bare verdict)."""
    shown = row.get("shown")
    return isinstance(shown, str) and bool(shown) and shown != str(row.get("verdict"))


def doubt_html(row: Mapping[str, Any]) -> str:
    """A verdict in doubt as HTML: the mark and "depends on <input>: <verdict> above X, <verdict> below", each
    verdict coloured and written out (the ledger's structured fields ``depends_on``, ``threshold``,
    ``above``, ``below``; its ``shown`` text where it has no threshold)."""
    above, below, threshold = (str(row.get(k) or "") for k in ("above", "below", "threshold"))
    if threshold and above in VERDICT_COLOURS and below in VERDICT_COLOURS:
        words = (
            f"depends on {html.escape(str(row.get('depends_on')))}: "
            f'<b class="verdict verdict-{above}">{above}</b> above {html.escape(threshold)}, '
            f'<b class="verdict verdict-{below}">{below}</b> below'
        )
    else:
        words = html.escape(str(row.get("shown")))
    return f'<span class="verdict-doubt"><span aria-hidden="true">{DOUBT_MARK}</span> {words}</span>'


def verdict_cell(row: Mapping[str, Any]) -> str:
    """A row's verdict as HTML: coloured and written out, or, in doubt, what it depends on
    (:func:`doubt_html`); either way one element with ``data-field="verdict"`` holding the verdict word,
    which the ledger's filter reads (hidden when the doubt is shown)."""
    v = html.escape(str(row.get("verdict")))
    if not in_doubt(row):
        return f'<b class="verdict verdict-{v}" data-field="verdict">{v}</b>'
    return f'{doubt_html(row)}<span data-field="verdict" hidden>{v}</span>'


def ledger_cell(
    column: str, row: Mapping[str, Any], written: frozenset[str] | None = None, base: str = ""
) -> tuple[str, str | None]:
    """One ledger value as ``(html, sort key)``, the key None where the value's text sorts right.

    The verdict is coloured; the stated figures carry the document's own spelling of them below
    (:data:`WRITTEN`, ``lang="zh-CN"``); the claim id links to the row of its check
    (``<chapter>.html#check-<id>``) when its chapter is ``written`` (all when None); holds is a
    percentage; text has its e-notation rewritten; ``base`` prefixes links (from a page outside
    ``book/``). Keys order verdicts as :data:`VERDICT_COLOURS` lists them, sections and numbers by value.
    """
    value = row.get(column)
    if column == "verdict":
        return verdict_cell(row), str(VERDICT_RANK.get(value, 9))
    if column == "id":
        cid, chapter = html.escape(str(value)), str(row.get("chapter", ""))
        code = f"<code>{cid}</code>"
        if written is None or chapter in written:
            return f'<a class="check-link" href="{base}{check_href(str(value), chapter)}">{code}</a>', None
        return code, None
    if column == "holds":
        if _blank(value):
            return "–", "-1"
        return share(float(value)), f"{float(value):.6f}"
    if column == "direction":
        if _blank(value):
            return "–", "~"
        word = html.escape(str(value))
        symbol = DIRECTION_SYMBOLS.get(str(value), "")
        # the word says it; what each word means is the column header's title (once per table, not per row)
        return (
            f'<span class="direction direction-{word}"><span aria-hidden="true">{symbol}</span> {word}</span>',
            word,
        )
    if column == "margin":
        if _blank(value):
            return "–", "999999"  # no flip point: sorts after every row that has one
        return f"{float(value):.2f}", f"{float(value):.6f}"  # what it measures: the header's title
    if column == "document":
        return html.escape(short_document(value)), None  # "000" sorts as the name
    if column == "section":
        parts = [int(p) if p.isdigit() else 0 for p in str(value).split(".")]
        return f"§{html.escape(str(value))}", ".".join(f"{p:04d}" for p in parts)
    if column == "chapter" and (written is None or value in written):
        name = html.escape(str(value))
        return f'<a href="{base}{name}.html">{name}</a>', None
    if column == "stated" and not _blank(row.get(WRITTEN)):
        shown = source_links(value, base) if not _blank(value) else "–"
        return f'{shown}<br><small lang="zh-CN">{html.escape(str(row[WRITTEN]))}</small>', None
    if _blank(value):
        return "–", ""
    if isinstance(value, float):
        return readable(value), f"{value:.6g}"
    return source_links(value, base), None


def _sort_attr(key: str | None) -> str:
    return "" if key is None else f' data-sort="{html.escape(key)}"'


def _field(column: str, row: Mapping[str, Any], written: frozenset[str] | None, base: str) -> str:
    """One value of the about cell as a single element carrying ``data-field`` (and its sort key):
    on the link or span :func:`ledger_cell` made, or on a span around plain text."""
    shown, key = ledger_cell(column, row, written, base)
    attrs = f' data-field="{column}"{_sort_attr(key)}'
    if shown.startswith(("<a ", "<span ")) and shown.count("<a ") + shown.count("<span ") == 1:
        tag = shown.split(" ", 1)[0]
        return f"{tag}{attrs} {shown[len(tag) + 1 :]}"
    return f"<span{attrs}>{shown}</span>"


# Short columns stacked in one "about" cell, each still sortable from its own header button: the
# id; document, section and kind; topic and chapter (labelled).
ABOUT_LINES = (("id",), ("document", "section", "kind"), ("topic", "chapter"))
ABOUT_LABELLED = ("topic", "chapter")
ABOUT = tuple(c for line in ABOUT_LINES for c in line)
CALCULATOR_PAGE = (
    "buy-or-rent"  # its calculator recomputes the payback claims at a reader's prices (a link, not a copy)
)


def filter_value(column: str, value: Any) -> str:
    """A row's value for a filter: the short document name ("000"), other values as text."""
    return short_document(value) if column == "document" else str(value)


def _about_cell(fields: list[str], row: Mapping[str, Any], written: frozenset[str] | None, base: str) -> str:
    """The stacked short columns of one claim, one line each of :data:`ABOUT_LINES` that has any."""
    lines = []
    for group in ABOUT_LINES:
        parts = [
            (f"<i>{LEDGER_LABELS.get(c, c)}</i> " if c in ABOUT_LABELLED else "") + _field(c, row, written, base)
            for c in group
            if c in fields
        ]
        if parts:
            lines.append(" ".join(parts))
    if "id" in fields and str(row.get("id")) in PAYBACK_CLAIMS and (written is None or CALCULATOR_PAGE in written):
        lines.append(f'<a href="{base}{CALCULATOR_PAGE}.html#{ELEMENT_ID}">recompute at your prices</a>')
    return "<br>".join(lines)


def ledger_table(
    ledger: pd.DataFrame,
    leave_out: tuple[str, ...] = (),
    written: frozenset[str] | None = None,
    base: str = "",
    anchors: bool = False,
    css: str = "ledger-table",
    buttons: bool = True,
) -> str:
    """The ledger as an HTML table, every column of ``ledger`` except ``leave_out``: the verdict
    first, then one cell stacking the short columns (:data:`ABOUT`), then the claim, the figures
    stated and recomputed, the reason, holds and flips_if, then any other column. Every column has
    a sort button (``_static/audit.js``), and its value a ``data-field`` element that the ledger
    page's filters read. ``anchors`` gives each row the id ``check-<claim id>``. Without
    ``buttons`` the headers are plain text (for print: browsers leave form controls out of the
    header rows they repeat on every page)."""
    cols = ledger_columns(ledger, leave_out)
    about = [c for c in cols if c in ABOUT]
    main = [c for c in cols if c not in ABOUT]
    layout: list[str | list[str]] = [*main[:1], *([about] if about else []), *main[1:]]

    def label(c: str) -> str:
        return LEDGER_LABELS.get(c, c).replace("_", " ")

    heads, cols_html = [], []
    for i, item in enumerate(layout):
        if not buttons:
            text = " · ".join(label(c) for c in item) if isinstance(item, list) else label(item)
            heads.append(f'<th scope="col">{text}</th>')
            cols_html.append(f'<col class="col-{"about" if isinstance(item, list) else item}">')
            continue
        if isinstance(item, list):
            buttons = " ".join(
                f'<button type="button" data-sort-col="{i}" data-sort-field="{c}">{label(c)}</button>' for c in item
            )
            heads.append(f'<th scope="col" class="about">{buttons}</th>')
            cols_html.append('<col class="col-about">')
        else:
            hint = f' title="{html.escape(COLUMN_HELP[item], quote=True)}"' if item in COLUMN_HELP else ""
            heads.append(f'<th scope="col"{hint}><button type="button" data-sort-col="{i}">{label(item)}</button></th>')
            cols_html.append(f'<col class="col-{item}">')
    rows = []
    for row in ledger.to_dict("records"):
        attrs = f' id="{check_anchor(str(row["id"]))}"' if anchors else ""
        cells = []
        for item in layout:
            if isinstance(item, list):
                cells.append(f'<td class="about">{_about_cell(item, row, written, base)}</td>')
            else:
                shown, key = ledger_cell(item, row, written, base)
                cells.append(f"<td{_sort_attr(key)}>{shown}</td>")
        rows.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    return (
        f'{VERDICT_STYLE}<table class="{css}"{" data-sortable" if buttons else ""}><colgroup>{"".join(cols_html)}</colgroup>'
        f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


class HtmlTable:
    """Prebuilt deterministic HTML (rows with ids and links) with a plain-text form for nbval."""

    def __init__(self, html_text: str, frame: pd.DataFrame):
        self._html, self._frame = html_text, frame

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        return self._frame.to_string(index=False, max_colwidth=60)


def verdict_table(ledger: pd.DataFrame) -> HtmlTable:
    """A chapter's summary of verdicts: one row per claim with the HTML id ``check-<claim id>``
    (the ledger page links there), the verdict first and coloured, then the claim id with its
    document, section and kind, the claim, the figures as stated and recomputed, the reason, and
    the ledger's holds and flips_if where present (see :func:`ledger_table`)."""
    text = ledger_table(ledger, leave_out=("topic", "chapter"), anchors=True, css="audit-verdicts")
    return HtmlTable(f'<div class="audit-table">{text}</div>', ledger[ledger_columns(ledger, ("topic", "chapter"))])


# The ledger table with its filters, on the ledger pages (one per document) and in the printable ledger.
LEDGER_FILTERS = ("verdict", "direction", "document", "chapter", "kind")  # a filter for each of these a ledger has


def ledger_html(
    frame: pd.DataFrame,
    written: frozenset[str] | None = None,
    base: str = "",
    buttons: bool = True,
    leave_out: tuple[str, ...] = (),
) -> str:
    """The ledger as a table (:func:`analyses.pages.ledger_html.ledger_table`): every column but
    ``leave_out``, verdict first; the claim id links to the row of its check in its chapter, every
    chapter a claim names being written unless ``written`` lists the ones that are (the data refuses a
    claim whose chapter is not in the book; ``base`` prefixes links)."""
    return ledger_table(frame, leave_out=leave_out, written=written, base=base, buttons=buttons)


class LedgerTable:
    """The ledger with filters (verdict, direction, document, chapter, kind), a text search and
    sortable columns (``_static/audit.js``), and a plain-text form for nbval. Columns in
    ``leave_out`` are neither shown nor filtered (the document, on the page of one document)."""

    def __init__(self, frame: pd.DataFrame, leave_out: tuple[str, ...] = ()):
        self.frame, self.leave_out = frame, leave_out

    def _controls(self) -> str:
        selects = []
        for col in LEDGER_FILTERS:
            if col not in self.frame.columns or col in self.leave_out:
                continue
            values = verdict_order(self.frame["verdict"]) if col == "verdict" else sorted(set(self.frame[col].astype(str)))
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
        return f'<div class="audit-ledger">{self._controls()}{ledger_html(self.frame, leave_out=self.leave_out)}</div>'

    def __repr__(self) -> str:
        return self.frame[[c for c in ("id", "verdict", "chapter") if c in self.frame.columns]].to_string(index=False)


def download_links() -> links.LinkList:
    """Links to the ledger's downloads and the printable page."""
    return links.links(
        [("ledger.csv", "ledger (CSV)"), ("ledger.json", "ledger (JSON)"), (links.PRINTABLE, "printable ledger")]
    )


def document_glued(page: Any) -> dict[str, str]:
    """Every number and phrase a document's ledger page glues (a
    :class:`~analyses.chapters.ledger.DocumentPage`): its title and its claims per verdict and direction."""
    counts = {f"n_{name}": fmt(n, sig=3) for name, n in {**page.counts, **page.directions}.items()}
    return {"title": page.title_en, **counts}
