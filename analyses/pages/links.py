"""Links in the book's pages: source ids to their entry on the sources page, claims to the row of
their check, and the site's downloads (written by :mod:`analyses.site.downloads`)."""

from __future__ import annotations

import functools
import html
import math
import re
from collections.abc import Iterable
from typing import Any

from docutils.nodes import make_id

from analyses import data
from analyses.units.formats import readable_text

DOWNLOADS = "downloads"  # folder under the site root
ZH_DIR = "zh"  # the Chinese edition's folder under the site root (and its sources' folder)
PRINTABLE = "ledger-print.html"
FROM_BOOK = f"../{DOWNLOADS}/"  # a chapter page (book/<slug>.html) to the downloads folder

SOURCES_PAGE = "sources.html"


def source_anchor(source_id: str) -> str:
    """The HTML id of a source's entry on the sources page."""
    return f"source-{source_id}"


def check_anchor(claim_id: str) -> str:
    """The HTML id of a claim's row in its chapter's summary verdict table."""
    return f"check-{claim_id}"


SECTION_PREFIX = "sec-"


def section_label(claim_id: str) -> str:
    """The MyST label a chapter puts above the heading of the section that checks ``claim_id``."""
    return f"{SECTION_PREFIX}{claim_id}"


def section_anchor(claim_id: str) -> str:
    """The HTML id Sphinx gives :func:`section_label` (docutils ids: lower case, runs of characters
    other than letters and digits as one hyphen: ``sec-000-2-1-per-gpu-2-3x``)."""
    return make_id(section_label(claim_id))


def section_href(claim_id: str, chapter: str, page: str | None = None) -> str:
    """Link to the section of ``chapter`` that checks ``claim_id`` (its arithmetic), from the page
    ``page`` (a chapter slug; None: any page of the book)."""
    anchor = section_anchor(claim_id)
    return f"#{anchor}" if page == chapter else f"{chapter}.html#{anchor}"


def source_href(source_id: str) -> str:
    """Relative link from a book page to a source's entry on the sources page."""
    return f"{SOURCES_PAGE}#{source_anchor(source_id)}"


def check_href(claim_id: str, chapter: str) -> str:
    """Relative link from a book page to the row of the chapter that checks ``claim_id``."""
    return f"{chapter}.html#{check_anchor(claim_id)}"


def _source_ids() -> frozenset[str]:
    return _source_ids_in(str(data.DATA_DIR))


@functools.lru_cache(maxsize=4)
def _source_ids_in(data_dir: str) -> frozenset[str]:
    return frozenset(data.sources()["id"])


_TOKEN = re.compile(r"[a-z0-9][a-z0-9.-]*[a-z0-9]|[a-z0-9]")


def source_links(value: Any, base: str = "") -> str:
    """Text for an HTML cell: each known source id in it (``aiwiki-dgx-b300;v2pseo-gpu-tco-2026``,
    ``id, Table 2``, an id named in a note) becomes a link to its entry on the sources page; the rest
    is escaped, its e-notation rewritten and ``;`` lists spaced. ``base`` prefixes the links (from a
    page outside ``book/``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text, known = str(value), _source_ids()

    def plain(segment: str) -> str:
        return html.escape(readable_text(re.sub(r"\s*;\s*", "; ", segment)), quote=False)

    out, pos = [], 0
    for m in _TOKEN.finditer(text):
        if m.group(0) in known:
            out += [
                plain(text[pos : m.start()]),
                f'<a class="source-link" href="{base}{source_href(m.group(0))}">{m.group(0)}</a>',
            ]
            pos = m.end()
    out.append(plain(text[pos:]))
    return "".join(out)


def links(items: Iterable[tuple[str, str]], prefix: str = FROM_BOOK) -> LinkList:
    """A line of download links, ``items`` as (file under downloads/, label)."""
    return LinkList([(prefix + path, label) for path, label in items])


class LinkList:
    """A short line of links for a notebook's output (HTML, with a plain-text form)."""

    def __init__(self, items: list[tuple[str, str]]):
        self.items = items

    def _repr_html_(self) -> str:
        parts = " · ".join(f'<a href="{html.escape(h)}">{html.escape(label)}</a>' for h, label in self.items)
        return f'<p class="audit-downloads"><span>Download:</span> {parts}</p>'

    def __repr__(self) -> str:
        return "Download: " + ", ".join(label for _, label in self.items)
