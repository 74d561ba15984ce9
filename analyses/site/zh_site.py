"""The two editions, linked both ways, and the Chinese edition's computed parts: a Sphinx extension.

Both books load it (``_config.yml`` and ``zh/_config.yml``: ``extra_extensions``); ``audit_edition``
says which book is building (``en``, the default, or ``zh``).

- Every page of either edition opens with a link to its counterpart in the other (the English
  chapter and its Chinese verdict box, the claims ledger and 说法台账, the front pages; an English
  page without a Chinese counterpart links to the Chinese front page), its language in the link's
  ``hreflang``; :func:`counterpart` is the mapping.
- In the Chinese book, directives insert what :mod:`analyses.pages.zh` renders from the Chinese
  ledger (:func:`analyses.chapters.ledger_zh.ledger_zh`, computed once per build): ``zh-ledger``,
  ``zh-terms``, ``zh-documents``, ``zh-counts``, ``zh-findings`` and ``zh-chapter <slug>``. Sphinx's
  search indexes their text (raw HTML is indexed with its tags stripped).
- The Chinese book uses the English book's ``_static/`` (stylesheets, scripts, fonts): it is added to
  its static path and its CSS and JavaScript files loaded as Jupyter Book does for its own folder
  (``zh/_static/``, which holds what only the Chinese pages need: ``zh.css``, ``zh.js``).
"""

from __future__ import annotations

import functools
import html
import posixpath
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from docutils import nodes
from docutils.parsers.rst import Directive, directives

from analyses import chapters, data
from analyses.chapters import buy_or_rent, ledger_zh
from analyses.data import REPO_ROOT
from analyses.pages import calculator, zh, zh_buy
from analyses.pages.links import ZH_DIR, check_href
from analyses.site import sphinx_hooks, zh_charts

STATIC = REPO_ROOT / "_static"
EN_DIR = "book"  # the English pages' folder under the site root

# Chinese pages and their English counterparts (docnames of each book); the chapters' pages map
# by slug (zh: chapters/<slug>, en: book/<slug>).
PAGES = {
    "index": "book/intro",
    "ledger": "book/claims",
    "ledger-000": "book/claims-000",
    "ledger-001": "book/claims-001",
    "sources": "book/sources",
    "buy-or-rent": "book/buy-or-rent",
}
CHAPTER_DIR = "chapters"
# Chapters without claims of their own that have a Chinese page too (their charts, method and answers).
OTHER_CHAPTERS = ("plan", "validation", "peers")


def zh_chapters() -> tuple[str, ...]:
    """The chapters with a Chinese page: every chapter that checks a claim, in ledger order."""
    seen: dict[str, None] = {}
    for claim in data.claims():
        seen.setdefault(claim.chapter, None)
    return tuple(seen)


def counterpart(edition: str, docname: str) -> str:
    """The site path (from the site root) of the other edition's page for ``docname``."""
    if edition == "zh":
        if docname in PAGES:
            return f"{PAGES[docname]}.html"
        if docname.startswith(CHAPTER_DIR + "/"):
            return f"{EN_DIR}/{docname.split('/', 1)[1]}.html"
        return f"{PAGES['index']}.html"
    inverse = {v: k for k, v in PAGES.items()}
    if docname in inverse:
        return f"{ZH_DIR}/{inverse[docname]}.html"
    if docname.startswith(PAGES["ledger"] + "-"):  # another English ledger page: the Chinese ledger
        return f"{ZH_DIR}/ledger.html"
    slug = docname.rsplit("/", 1)[-1]
    if docname.startswith(EN_DIR + "/") and (slug in zh_chapters() or slug in OTHER_CHAPTERS):
        return f"{ZH_DIR}/{CHAPTER_DIR}/{slug}.html"
    return f"{ZH_DIR}/index.html"


def site_path(edition: str, docname: str) -> str:
    """Where a page of ``edition`` lies from the site root."""
    return f"{ZH_DIR}/{docname}.html" if edition == "zh" else f"{docname}.html"


def relative(edition: str, docname: str, target: str) -> str:
    """The relative link from page ``docname`` of ``edition`` to ``target`` (a site path)."""
    here = posixpath.dirname(site_path(edition, docname)) or "."
    return posixpath.relpath(target, here)


LINK_TEXT = {"zh": ("English", "en"), "en": ("中文版", "zh-CN")}


def edition_link(edition: str, docname: str) -> str:
    """The visible link to the other edition for a page, its language in ``hreflang`` (the link's
    text names the edition, so it carries no title; no ``<link rel="alternate">`` either: the
    English pages closest to their 150 KB budget have no bytes to spare for a second copy)."""
    href = html.escape(relative(edition, docname, counterpart(edition, docname)))
    text, lang = LINK_TEXT[edition]
    return f'<p class="edition-link"><a href="{href}" hreflang="{lang}" lang="{lang}">{text}</a></p>'


def _page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if doctree is None or "body" not in context:
        return
    context["body"] = edition_link(app.config.audit_edition, pagename) + context["body"]


# --------------------------------------------------------------------------------------------
# The Chinese book's computed parts
# --------------------------------------------------------------------------------------------


@functools.cache
def ledger_frame() -> Any:
    """The Chinese ledger, computed once per build."""
    return ledger_zh.ledger_zh()


@functools.cache
def buy_or_rent_result() -> Any:
    """The buy-or-rent chapter's result at its defaults: the English page's very figures
    (:func:`analyses.scenario.buying.buy_or_rent` through the chapter), computed once per build."""
    return buy_or_rent.compute(chapters.config(buy_or_rent.SLUG))


def _english_base(docname: str) -> str:
    """From a Chinese page to the English book's folder (``../book/`` from ``zh/index.html``)."""
    return relative("zh", docname, f"{EN_DIR}/x.html")[: -len("x.html")]


def _ledger_link(docname: str) -> str:
    return relative("zh", docname, f"{ZH_DIR}/ledger.html")


class _ZhDirective(Directive):
    has_content = False
    optional_arguments = 1

    def html(self, docname: str) -> str:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        docname = self.state.document.settings.env.docname
        return [nodes.raw("", self.html(docname), format="html")]


class ZhLedger(_ZhDirective):
    """Every claim's card, or (argument: a document's code, 000) one document's."""

    def html(self, docname: str) -> str:
        frame = ledger_frame()
        if self.arguments:
            code = self.arguments[0]
            files = {c: f for f, c in zh.codes().items()}
            if code not in files:
                raise self.error(f"zh-ledger: '{code}' is no document code; codes: {', '.join(files)}")
            frame = frame[frame["document"] == files[code]]
        return zh.ledger_cards(frame, _english_base(docname), full=bool(self.arguments))


class ZhTerms(_ZhDirective):
    def html(self, docname: str) -> str:
        return zh.terms_table()


class ZhDocuments(_ZhDirective):
    def html(self, docname: str) -> str:
        return zh.documents_table()


class ZhChina(_ZhDirective):
    def html(self, docname: str) -> str:
        return zh.china_section("../" * docname.count("/"))


class ZhCounts(_ZhDirective):
    def html(self, docname: str) -> str:
        frame = ledger_frame()
        if self.arguments:
            files = {c: f for f, c in zh.codes().items()}
            frame = frame[frame["document"] == files.get(self.arguments[0], "")]
        return zh.counts_table(frame)


class ZhFindings(_ZhDirective):
    """The front page's findings; an argument ``summary`` or ``details`` gives one part of them."""

    def html(self, docname: str) -> str:
        part = self.arguments[0] if self.arguments else "all"
        if part not in zh.FINDINGS_PARTS:
            raise self.error(f"zh-findings: '{part}' is not one of {', '.join(zh.FINDINGS_PARTS)}")
        chapter = relative("zh", docname, f"{ZH_DIR}/{CHAPTER_DIR}/tco.html")
        return zh.findings(ledger_frame(), _ledger_link(docname), part, chapter)


class ZhChapter(_ZhDirective):
    required_arguments = 1
    optional_arguments = 0
    option_spec = {"class": directives.unchanged}

    def html(self, docname: str) -> str:
        slug = self.arguments[0]
        if slug not in zh_chapters():
            raise self.error(f"zh-chapter: '{slug}' checks no claim; chapters with claims: {', '.join(zh_chapters())}")
        return zh.chapter_box(ledger_frame(), slug, _english_base(docname), _ledger_link(docname))


class ZhBuyOrRent(_ZhDirective):
    """The buy-or-rent answer: the convention, then every workload's sentence and table."""

    def html(self, docname: str) -> str:
        res = buy_or_rent_result()
        return zh_buy.basis(res) + zh_buy.workloads(res, zh_buy.finetune_note(res, ledger_frame()))


class ZhBuySummary(_ZhDirective):
    """The cheapest rented and owned answer of every workload (the front page's and the page's own)."""

    def html(self, docname: str) -> str:
        page = "" if docname == "buy-or-rent" else relative("zh", docname, f"{ZH_DIR}/buy-or-rent.html")
        return zh_buy.summary_table(buy_or_rent_result(), page)


class ZhCalculator(_ZhDirective):
    """The in-page calculator with the Chinese words (the English page's fragment and formulas)."""

    def html(self, docname: str) -> str:
        en = _english_base(docname)
        links = {c: f"{en}{check_href(c, calculator.PAYBACK_CHAPTER)}" for c in calculator.PAYBACK_CLAIMS}
        return calculator.buy_or_rent(buy_or_rent_result(), calculator.Words.zh(), links).data


class ZhBottomLine(_ZhDirective):
    """The buyer's answer in two sentences (cheapest to rent and to buy, and when owning wins)."""

    def html(self, docname: str) -> str:
        return zh_buy.bottom_line(buy_or_rent_result())


class ZhChart(Directive):
    """A chapter's chart in Chinese (:mod:`analyses.site.zh_charts`): arguments the chapter's slug and
    its figure function; the directive's content is the caption."""

    required_arguments = 2
    has_content = True

    def run(self) -> list[nodes.Node]:
        slug, function = self.arguments
        if (slug, function) not in {c for items in zh_charts.CHARTS.values() for c in items}:
            raise self.error(f"zh-chart: {slug} {function} is not among analyses/site/zh_charts.py's CHARTS")
        caption = html.escape(" ".join(self.content).strip())
        body = f'<figure class="zh-figure">{zh_charts.html(slug, function)}<figcaption>{caption}</figcaption></figure>'
        return [nodes.raw("", body, format="html")]


class ZhCards(_ZhDirective):
    """A chapter's claims with their full reasons (one card each)."""

    required_arguments = 1
    optional_arguments = 0

    def html(self, docname: str) -> str:
        return zh.chapter_cards(ledger_frame(), self.arguments[0], _english_base(docname))


class ZhSources(_ZhDirective):
    def html(self, docname: str) -> str:
        return zh.sources_table()


class ZhAssumptions(_ZhDirective):
    """The scenario inputs a chapter's checks read, with their central values and ranges in 元."""

    required_arguments = 1
    optional_arguments = 0

    def html(self, docname: str) -> str:
        frame = ledger_frame()
        rows = frame[frame["chapter"] == self.arguments[0]]
        names = list(dict.fromkeys(n for inputs in rows["inputs"] for n in inputs))
        return zh.assumptions_table(ledger_zh.assumptions(names))


class ZhRelated(_ZhDirective):
    """The verdicts of the claims the documents' workloads replay (the English page's box)."""

    def html(self, docname: str) -> str:
        ids = list(buy_or_rent_result().related["id"])
        return zh.claims_box(ledger_frame(), ids, _english_base(docname), _ledger_link(docname))


DIRECTIVES = {
    "zh-buy-or-rent": ZhBuyOrRent,
    "zh-buy-summary": ZhBuySummary,
    "zh-calculator": ZhCalculator,
    "zh-related": ZhRelated,
    "zh-bottom-line": ZhBottomLine,
    "zh-chart": ZhChart,
    "zh-assumptions": ZhAssumptions,
    "zh-cards": ZhCards,
    "zh-sources": ZhSources,
    "zh-ledger": ZhLedger,
    "zh-terms": ZhTerms,
    "zh-documents": ZhDocuments,
    "zh-counts": ZhCounts,
    "zh-china": ZhChina,
    "zh-findings": ZhFindings,
    "zh-chapter": ZhChapter,
}


def _shared_static(app: Any, config: Any) -> None:
    """The Chinese book loads the English book's ``_static/`` (its CSS and JS, as Jupyter Book
    loads a book's own folder), and keeps one of each script as the English book does
    (:mod:`analyses.site.sphinx_hooks`, whose downloads belong to the English site only)."""
    if config.audit_edition != "zh" or str(STATIC) in map(str, config.html_static_path):
        return
    app.connect("html-page-context", sphinx_hooks._drop_repeated_scripts, priority=900)
    config.html_static_path.append(str(STATIC))
    for path in sorted(STATIC.rglob("*.css")):
        config.html_css_files.append(path.relative_to(STATIC).as_posix())
    for path in sorted(STATIC.rglob("*.js")):
        config.html_js_files.append(path.relative_to(STATIC).as_posix())


THEME_WORDS = REPO_ROOT / ZH_DIR / "theme-words.po"  # the themes' interface words in Chinese
THEME_DOMAINS = ("sphinx", "booktheme")  # the message catalogs of Sphinx, pydata-sphinx-theme, sphinx-book-theme


def _theme_words(app: Any) -> None:
    """Compile ``zh/theme-words.po`` and add it behind the themes' own catalogs: gettext falls back to
    it for every interface word they leave in English (the search box, the colour-mode switch)."""
    language = str(app.config.language or "")
    folder = Path(app.doctreedir).parent / "zh-locale"
    target = folder / language / "LC_MESSAGES"
    target.mkdir(parents=True, exist_ok=True)
    with THEME_WORDS.open("rb") as f:
        catalog = read_po(f, locale=language)
    for domain in THEME_DOMAINS:
        with (target / f"{domain}.mo").open("wb") as f:
            write_mo(f, catalog)
        app.add_message_catalog(domain, str(folder))


def setup(app: Any) -> dict[str, Any]:
    if str(app.config.language or "").startswith("zh"):
        _theme_words(app)
    app.add_config_value("audit_edition", "en", "html")
    app.connect("config-inited", _shared_static)
    app.connect("html-page-context", _page_context)
    for name, directive in DIRECTIVES.items():
        app.add_directive(name, directive)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
