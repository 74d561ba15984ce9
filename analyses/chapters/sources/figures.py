"""Tables of the sources page: every source with a link where its reference names an address, and the
data files linked to their copies in the site's downloads."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd

from analyses.chapters.sources import REPOSITORY_DIRS, data_files, has_link, reference_links
from analyses.pages import links
from analyses.pages.ledger_html import HtmlTable
from analyses.pages.links import source_anchor, source_links
from analyses.units.formats import readable_text

SHOWN_ADDRESS_CHARS = 48  # an address written out as a link's text is cut here (the link holds all of it)


def shown_address(text: str, url: str) -> str:
    """A link's text: the reference's own words, or where they are the bare address, the address
    without its scheme and ``www.``, cut to :data:`SHOWN_ADDRESS_CHARS` with an ellipsis (the sources
    page lists about 150 of them; the full address is the link's target and in ``sources.csv``)."""
    if text != url:
        return text
    short = url.split("://", 1)[-1].removeprefix("www.")
    return short if len(short) <= SHOWN_ADDRESS_CHARS else short[: SHOWN_ADDRESS_CHARS - 1] + "…"


def _reference_html(reference: str) -> str:
    parts = []
    for text, url in reference_links(reference):
        if url:
            parts.append(f'<a href="{html.escape(url)}">{html.escape(shown_address(text, url))}</a>')
        else:
            parts.append(html.escape(text, quote=False))
    if not has_link(reference):
        where = "this repository" if str(reference).startswith(REPOSITORY_DIRS) else "no public address recorded"
        parts.append(f'<span class="no-url">({where})</span>')
    return "; ".join(parts)


def sources_html(frame: pd.DataFrame) -> str:
    """The sources as a table, one row per source with the id ``source-<id>``: the source (id,
    title, publisher, date, reference with its link), where in it, its conventions, who cites it."""
    rows = []
    for r in frame.to_dict("records"):
        sid = html.escape(r["id"])
        source = (
            f"<code>{sid}</code><br><b>{html.escape(r['title'])}</b><br>"
            f"{html.escape(r['publisher'])}, {html.escape(str(r['date']))}<br>{_reference_html(r['reference'])}"
        )
        cells = [source, r["locator"], r["conventions"], r["cited by (rows)"]]
        shown = [cells[0], *(source_links(c) for c in cells[1:])]
        rows.append(f'<tr id="{source_anchor(r["id"])}">' + "".join(f"<td>{c}</td>" for c in shown) + "</tr>")
    head = "".join(
        f'<th scope="col"><button type="button">{h}</button></th>'
        for h in ("source", "where in it", "conventions", "cited by (rows)")
    )
    return (
        '<table class="sources-table" data-sortable>'
        '<colgroup><col style="width:34%"><col style="width:22%"><col style="width:30%"><col style="width:14%"></colgroup>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def sources_view(frame: pd.DataFrame) -> HtmlTable:
    """:func:`sources_html` for a notebook."""
    return HtmlTable(f'<div class="audit-sources">{sources_html(frame)}</div>', frame)


# A description's first sentence ends at a full stop after a word, a figure or a bracket, before a capital
# or a column name in backticks (not inside "e.g. x" or "1.5 GB").
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]%])\.\s+(?=[A-Z`])")


def first_sentence(text: str) -> str:
    """The first sentence of a table's description (its schema, linked beside it, has the rest)."""
    first = _SENTENCE_END.split(str(text).strip(), maxsplit=1)[0].rstrip(".")
    return f"{first}."


def data_files_view() -> HtmlTable:
    """:func:`data_files` with each file and schema linked to its copy in the site's downloads, and
    what each table holds in its description's first sentence (the page lists about forty tables)."""
    frame = data_files()
    prefix = links.FROM_BOOK + "data/"

    def link(rel: str, label: str | None = None) -> str:
        return f'<a href="{prefix}{html.escape(rel)}">{html.escape(label or rel)}</a>'

    rows = []
    for r in frame.to_dict("records"):
        files = ", ".join(link(f, Path(f).name if len(r["files"]) > 1 else f) for f in r["files"])
        rows.append(
            f"<tr><td><code>{html.escape(r['table'])}</code></td><td>{r['rows']:,}</td>"
            f"<td>{files} · {link(r['schema'], 'schema')}</td>"
            f"<td>{html.escape(readable_text(first_sentence(r['description'])), quote=False)}</td></tr>"
        )
    head = "".join(
        f'<th scope="col"><button type="button">{h}</button></th>' for h in ("table", "rows", "CSV", "what it holds")
    )
    body = "".join(rows)
    widths = "".join(f'<col style="width:{w}%">' for w in (22, 6, 30, 42))
    text = (
        f'<table class="data-files" data-sortable><colgroup>{widths}</colgroup>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )
    return HtmlTable(f'<div class="audit-sources">{text}</div>', frame.drop(columns=["files"]))


def download_links() -> links.LinkList:
    """Links to the ledger's downloads (the data files are listed in their own table)."""
    return links.links([("ledger.csv", "ledger (CSV)"), ("ledger.json", "ledger (JSON)")])
