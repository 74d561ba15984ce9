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
from analyses.pages.links import check_anchor, check_href, section_href, source_links
from analyses.units.formats import fmt, readable, share
from analyses.verdicts import verdict_order

# The verdict palette, chosen (by search over sRGB) so that each colour has a contrast of at least
# 4.5:1 as text on the theme's page, its zebra rows and the highlighted target row (light theme; the
# dark theme's on its own backgrounds: tests/site/test_screens.py computes the ratios), and any two
# stay at least 20 CAM02-UCS units apart for readers with red-green (protan, deutan) or blue-yellow
# (tritan) colour blindness, simulated at full severity (Machado et al. 2009): blue, orange, purple
# and grey, not the green and magenta a deutan reader confuses. Charts, drawn on white in either
# theme, use the light one; a verdict is always also written out or marked (✓ ✗ ! ?).
VERDICT_COLOURS = {
    "consistent": "#1a64b8",
    "inconsistent": "#b34f02",
    "implausible": "#570e5c",
    "unverifiable": "#6e6e6e",
}
VERDICT_COLOURS_DARK = {
    "consistent": "#7fc0ef",
    "inconsistent": "#fcbd77",
    "implausible": "#ee718e",
    "unverifiable": "#d9d9d9",
}
# Figures reuse two of them: orange for what a document states, blue for what the book recomputes.
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
# The columns the ledger pages filter on (a filter for each of these a ledger has).
LEDGER_FILTERS = ("verdict", "direction", "document", "chapter", "kind")
FILTER_VALUE_DIFFERS = ("direction",)  # a filtered column whose cell shows more than its value ("▲ overstates")
LEDGER_LABELS = {"flips_if": "flips if", "id": "claim id", "section": "§", "document": "doc", "claim": "claim"}
# Which way a claim errs, as a word and a symbol (never colour alone): above the evidence, below it.
DIRECTION_SYMBOLS = {"overstates": "▲", "understates": "▼"}
DIRECTION_HELP = {
    "overstates": "the stated figure is above what the evidence gives, or credits more than it allows",
    "understates": "below it",
}
MARGIN_HELP = "the flip point's distance from the assumption's central value in half-widths of its 90% range"
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
    (:func:`doubt_html`; the element that holds it carries the verdict word as ``data-value``, which the
    ledger's filter reads: :func:`_attrs`)."""
    v = html.escape(str(row.get("verdict")))
    return doubt_html(row) if in_doubt(row) else f'<b class="verdict verdict-{v}">{v}</b>'


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
            return f'<a href="{base}{check_href(str(value), chapter)}">{code}</a>', None
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
    return "" if not key else f' data-sort="{html.escape(key)}"'  # no key, or a blank's: its text sorts


def _attrs(column: str, row: Mapping[str, Any], key: str | None, interactive: bool = True) -> str:
    """The attributes a value carries for audit.js: ``data-field`` (what a filter or a sort button
    reads), its sort key, and for a filtered column ``data-value``, what the filter compares
    ("overstates", not "▲ overstates"; a verdict in doubt's word, not what it depends on); on a printed
    page only the field of a filtered or about column."""
    if not interactive:
        return f' data-field="{column}"' if column in (*LEDGER_FILTERS, *ABOUT) else ""
    out = f' data-field="{column}"{_sort_attr(key)}'
    if column == "verdict" and in_doubt(row):
        out += f' data-value="{html.escape(str(row.get(column)))}"'
    if column in FILTER_VALUE_DIFFERS:  # elsewhere the filter compares the value's text (audit.js)
        value = row.get(column)
        out += f' data-value="{html.escape("" if _blank(value) else filter_value(column, value))}"'
    return out


def _field(
    column: str, row: Mapping[str, Any], written: frozenset[str] | None, base: str, interactive: bool = True
) -> str:
    """One value of a line of several as a single element carrying :func:`_attrs`: on the link,
    span or bold word :func:`ledger_cell` made, or on a span around anything else."""
    shown, key = ledger_cell(column, row, written, base)
    attrs = _attrs(column, row, key, interactive)
    if not attrs:
        return shown
    if shown.startswith(("<a ", "<span ", "<b ")) and shown.count("<") == 2:  # one element, no child
        tag = shown.split(" ", 1)[0]
        return f"{tag}{attrs} {shown[len(tag) + 1 :]}"
    return f"<span{attrs}>{shown}</span>"


# The ledger's columns stacked into the five cells of a row, each a list of lines of columns, so that
# at a desk's width the long texts (the claim, what was recomputed and why) get the width they need
# and the short ones share a cell: the verdict and its direction; the id with its document, section,
# kind, topic and chapter; the claim with the figures it states; what the book recomputes and the
# reason; how robust the verdict is. Each column keeps its own sort button in the cell's header.
STACKS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("verdict", (("verdict",), ("direction",))),
    ("about", (("id",), ("document", "section", "kind"), ("topic", "chapter"))),
    ("claim", (("claim",), ("stated",))),
    ("finding", (("recomputed",), ("reason",))),
    ("robustness", (("holds", "margin"), ("flips_if",))),
)
ABOUT = tuple(c for name, lines in STACKS if name == "about" for line in lines for c in line)
# The printable ledger (a landscape page) keeps a column for each but the short ones of the about cell.
PRINT_STACKS = tuple((name, lines) for name, lines in STACKS if name == "about")
# Lines of a stack that name their column in the cell (the others speak for themselves: a verdict,
# a direction, an id, the document and section, the claim); audit.css writes the names on screen.
NAMED = ("kind", "topic", "chapter", "stated", "recomputed", "reason", "holds", "margin", "flips_if")
CALCULATOR_PAGE = (
    "buy-or-rent"  # its calculator recomputes the payback claims at a reader's prices (a link, not a copy)
)


def filter_value(column: str, value: Any) -> str:
    """A row's value for a filter: the short document name ("000"), other values as text."""
    return short_document(value) if column == "document" else str(value)


def _label(column: str) -> str:
    return LEDGER_LABELS.get(column, column).replace("_", " ")


def _line(
    line: list[str], row: Mapping[str, Any], written: frozenset[str] | None, base: str, named: bool, interactive: bool
) -> str:
    """One line of a stacked cell: a single column's value in a ``div`` that carries its attributes
    (:func:`_attrs`), several columns' each in its own element; a named column after its name."""
    # on a screen the stylesheet writes the name before the value (audit.css: [data-field]::before), in print
    # the page's own text does
    name = lambda c: f"<i>{_label(c)}</i> " if named and c in NAMED and not interactive else ""  # noqa: E731
    if len(line) == 1:
        shown, key = ledger_cell(line[0], row, written, base)
        return f"<div{_attrs(line[0], row, key, interactive)}>{name(line[0])}{shown}</div>"
    return "<div>" + " ".join(name(c) + _field(c, row, written, base, interactive) for c in line) + "</div>"


def _cell(
    stack: str,
    lines: list[list[str]],
    row: Mapping[str, Any],
    written: frozenset[str] | None,
    base: str,
    interactive: bool = True,
) -> str:
    """One cell of a row: its lines (:func:`_line`); a cell of one column, its value alone. The about
    cell ends, on a screen (``interactive``), with a link to the section of the claim's chapter that
    does its arithmetic and, for a payback claim, one to the calculator."""
    if len(lines) == 1 and len(lines[0]) == 1 and stack == lines[0][0]:
        shown, key = ledger_cell(stack, row, written, base)
        inner = _field(stack, row, written, base, interactive) if stack in LEDGER_FILTERS else shown
        return f"<td{_sort_attr(key) if interactive else ''}>{inner}</td>"
    out = [_line(line, row, written, base, len(lines) > 1, interactive) for line in lines]
    cid, chapter = str(row.get("id")), str(row.get("chapter", ""))
    if stack == "about" and interactive and chapter and (written is None or chapter in written):
        more = [f'<a href="{base}{section_href(cid, chapter)}">arithmetic</a>']
        if cid in PAYBACK_CLAIMS and (written is None or CALCULATOR_PAGE in written):
            more.append(f'<a href="{base}{CALCULATOR_PAGE}.html#{ELEMENT_ID}">recompute at your prices</a>')
        out[-1] = out[-1].removesuffix("</div>") + f'<br><span class="lk">{" · ".join(more)}</span></div>'
    return f'<td class="c-{stack}">{"".join(out)}</td>'


def ledger_layout(
    cols: list[str], stacks: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = STACKS
) -> list[tuple[str, list[list[str]]]]:
    """The cells of a row for the columns ``cols``: each of ``stacks`` with the lines it has any column
    of, then every other column in a cell of its own, as (cell name, lines of columns); the verdict
    first wherever it is."""
    layout: list[tuple[str, list[list[str]]]] = []
    for name, lines in stacks:
        present = [[c for c in line if c in cols] for line in lines]
        present = [line for line in present if line]
        if present:
            layout.append((name, present))
    stacked = {c for _, lines in layout for line in lines for c in line}
    layout += [(c, [[c]]) for c in cols if c not in stacked]
    return sorted(layout, key=lambda cell: cell[0] != "verdict" and "verdict" not in cell[1][0])


def ledger_table(
    ledger: pd.DataFrame,
    leave_out: tuple[str, ...] = (),
    written: frozenset[str] | None = None,
    base: str = "",
    anchors: bool = False,
    css: str = "ledger-table",
    buttons: bool = True,
    hints: bool = True,
) -> str:
    """The ledger as an HTML table, every column of ``ledger`` except ``leave_out``, stacked into five
    cells (:func:`ledger_layout`: verdict, about, claim, finding, robustness), any other column in a
    cell of its own after them. Every column has a sort button in its cell's header
    (``_static/audit.js``), and its value a ``data-field`` element that the ledger page's filters read;
    the about cell links to the section that does the claim's arithmetic. ``anchors`` gives each row
    the id ``check-<claim id>``. Without ``buttons`` (for print: browsers leave form controls out of
    the header rows they repeat on every page) the headers are plain text and only the about columns
    share a cell (:data:`PRINT_STACKS`: a landscape page has the width); ``hints`` puts what a column
    measures (:data:`COLUMN_HELP`) in its header's title."""
    layout = ledger_layout(ledger_columns(ledger, leave_out), STACKS if buttons else PRINT_STACKS)
    heads, cols_html = [], []
    for i, (name, lines) in enumerate(layout):
        fields = [c for line in lines for c in line]
        cols_html.append(f'<col class="col-{name}">')
        if not buttons:
            heads.append(f'<th scope="col">{" · ".join(_label(c) for c in fields)}</th>')
            continue
        helps = [COLUMN_HELP[c] for c in fields if c in COLUMN_HELP and hints]
        hint = f' title="{html.escape("; ".join(helps), quote=True)}"' if helps else ""
        sort = " ".join(
            f'<button type="button" data-sort-col="{i}" data-sort-field="{c}">{_label(c)}</button>' for c in fields
        )
        heads.append(f'<th scope="col" class="c-{name}"{hint}>{sort}</th>')
    rows = []
    for row in ledger.to_dict("records"):
        attrs = f' id="{check_anchor(str(row["id"]))}"' if anchors else ""
        cells = "".join(_cell(name, lines, row, written, base, buttons) for name, lines in layout)
        rows.append(f"<tr{attrs}>{cells}</tr>")
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
    # the columns' help is the ledger pages' (they say what a direction and a margin are)
    text = ledger_table(ledger, leave_out=("topic", "chapter"), anchors=True, css="audit-verdicts", hints=False)
    return HtmlTable(f'<div class="audit-table">{text}</div>', ledger[ledger_columns(ledger, ("topic", "chapter"))])


def ledger_html(
    frame: pd.DataFrame,
    written: frozenset[str] | None = None,
    base: str = "",
    buttons: bool = True,
    leave_out: tuple[str, ...] = (),
    anchors: bool = False,
) -> str:
    """The ledger as a table (:func:`analyses.pages.ledger_html.ledger_table`): every column but
    ``leave_out``, verdict first; the claim id links to the row of its check in its chapter, every
    chapter a claim names being written unless ``written`` lists the ones that are (the data refuses a
    claim whose chapter is not in the book; ``base`` prefixes links); ``anchors`` gives each row the id
    ``check-<claim id>`` (a ledger page's rows, which a chapter's evidence row leads back to)."""
    return ledger_table(frame, leave_out=leave_out, written=written, base=base, buttons=buttons, anchors=anchors)


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
            shown = [v for v in self.frame[col] if not _blank(v)]  # a blank value is "all" (no duplicate option)
            values = verdict_order(self.frame["verdict"]) if col == "verdict" else sorted(set(map(str, shown)))
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
        table = ledger_html(self.frame, leave_out=self.leave_out, anchors=True)
        return f'<div class="audit-ledger">{self._controls()}{table}</div>'

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
