"""The book on any screen and for every reader (issue 24): search that finds the documents' own
spellings of their figures, a shipped CJK font, no sideways scrolling at 390 px, colours with
enough contrast, no encoding by colour alone, charts that say what they show, visible focus.

Unit tests need nothing built; the browser tests share the built site and headless Chromium of
tests/site/conftest.py (``site``, ``browser``).
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
import urllib.parse
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from analyses import data
from analyses.data import REPO_ROOT
from analyses.pages import encodings, ledger_html
from analyses.site import build, figure_search, theme_assets

SEEDS = REPO_ROOT.parent / "shared" / "seeds"
FONTS = REPO_ROOT / "_static" / "fonts"
WIDTHS = (390, 1280)


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*.html") if not {"_static", "_sources", "downloads"} & set(p.relative_to(root).parts)
    )


# --------------------------------------------------------------------------------------------
# Search: one term for a figure however it is written
# --------------------------------------------------------------------------------------------

# (how a document or a reader writes it, how the book's English pages write it)
SAME_FIGURE = [
    ("900GB/s", "NVLink-C2C 900 GB/s between cards"),
    ("９００ＧＢ／ｓ", "900 GB/s"),
    ("900 GB/s", "900GB/s"),
    ("6~12个月", "payback typically 6-12 months"),
    ("6至12个月", "6–12 months"),
    ("6~12", "6-12 months"),
    ("300万", ">3M RMB saved per year"),
    ("3百万", "3,000,000"),
    ("300万元", "3M RMB"),
    ("8万元", "~80k RMB/month"),
    ("4.2万元", "42k RMB/month"),
    ("2.5~3倍", "~2.5-3x vs A100"),
    ("60%~70%", "training time -60% to -70%"),
    ("35%～45%", "35%-45%"),
    ("千亿参数", "100B-parameter model"),
    ("百亿", "10B-param risk model"),
    ("1750亿", "GPT-3; 175B params"),
    ("700亿", "LLaMA-70B"),
    ("5天", "every 5 days"),
    ("30小时", ">30 h recovery time saved"),
    ("15分钟", "every 15 min"),
    ("8TB/s", "HBM3e bandwidth >8 TB/s"),
    ("200Gbps", ">=200 Gbps"),
    ("4~8节点", "4-8 nodes"),
]


@pytest.mark.parametrize(("written", "book"), SAME_FIGURE)
def test_a_figure_written_either_way_finds_the_other(written, book):
    """Every term of the query is (part of) a term the index holds for the book's text, as
    Sphinx's search matches a query term inside an index term."""
    indexed = set(figure_search.index_terms(book))
    query = figure_search.query_terms(written)
    assert query, written
    assert all(any(q in t for t in indexed) for q in query), (query, sorted(indexed))


@pytest.mark.parametrize(
    ("number", "exponent", "term"),
    [("300", 4, "3e6"), ("3,000,000", 0, "3e6"), ("2.5", 0, "2p5"), ("900", 0, "900"), ("1.1", 8, "11e7"),
     ("0.5", 0, "0p5"), ("175", 9, "175e9"), ("1750", 8, "175e9"), ("0", 3, "0"), ("4.2", 4, "42e3")],
)  # fmt: skip
def test_number_terms(number, exponent, term):
    assert figure_search.number_term(number, exponent) == term


def test_different_figures_stay_apart():
    """Bits are not bytes, a range is not its ends, a unit is not another."""
    assert figure_search.query_terms("200Gbps") != figure_search.query_terms("200GB/s")
    assert figure_search.query_terms("6~12个月") != figure_search.query_terms("6~12天")
    assert figure_search.query_terms("300万") != figure_search.query_terms("30万")
    assert "b300" in figure_search.query_terms("B300 服务器")  # a model name is not a figure


def test_chinese_queries_match_inside_longer_runs():
    indexed = set(figure_search.index_terms("百亿参数; 风控模型"))
    assert "风控" in indexed and "模型" in indexed
    assert figure_search.query_terms("风控模型") == ["风控", "控模", "模型"]


def test_every_claim_has_written_figures_from_its_document():
    """`written` holds short pieces (figures and terms, never a sentence), each verbatim from the
    claim's document when the documents are beside the repository."""
    claims = data.claims()
    assert all(c.written for c in claims)
    pieces = {
        c.id: [p.strip() for p in re.split(r"; |, | → |→| \+ | × | \(|\)", c.written) if p.strip()] for c in claims
    }
    too_long = [(cid, p) for cid, ps in pieces.items() for p in ps if len(re.findall(r"[\u4e00-\u9fff]", p)) > 8]
    assert too_long == []
    if not SEEDS.is_dir():
        pytest.skip(f"the audited documents are not at {SEEDS}")
    texts = {p.name: p.read_text() for p in SEEDS.glob("*.txt")}
    missing = [(c.id, p) for c in claims for p in pieces[c.id] if p not in texts[c.document]]
    assert missing == []


# --------------------------------------------------------------------------------------------
# Colours, encodings, descriptions
# --------------------------------------------------------------------------------------------


def _luminance(colour: str) -> float:
    rgb = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# The backgrounds verdict words sit on: pydata-sphinx-theme's page and surface (zebra rows) in
# each theme, and audit.css's highlighted target row (checked against the built CSS below).
LIGHT = {"page": "#ffffff", "surface": "#f3f4f5", "target row": "#fff3bf"}
DARK = {"page": "#14181e", "surface": "#29313d", "target row": "#352c00"}


def test_contrast_ratio_matches_wcag_examples():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


PALETTES = sorted(n for n in dir(ledger_html) if re.fullmatch(r"[A-Z_]+_COLOURS(_DARK)?", n))


@pytest.mark.parametrize("palette", PALETTES)
def test_palette_colours_read_at_4_5_to_1(palette):
    """Every colour map of the palette module (verdicts now, directions when they come: any
    ``*_COLOURS`` for the light theme, ``*_COLOURS_DARK`` for the dark) has 4.5:1 against each
    background of its theme."""
    colours = getattr(ledger_html, palette)
    backgrounds = DARK if palette.endswith("_DARK") else LIGHT
    ratios = {(v, bg): round(contrast(c, h), 2) for v, c in colours.items() for bg, h in backgrounds.items()}
    assert min(ratios.values()) >= 4.5, ratios


def test_every_palette_has_both_themes_and_marks():
    assert {"VERDICT_COLOURS", "VERDICT_COLOURS_DARK"} <= set(PALETTES)
    for name in PALETTES:
        if not name.endswith("_DARK"):
            assert set(getattr(ledger_html, name)) == set(getattr(ledger_html, name + "_DARK")), name
    assert set(ledger_html.VERDICT_COLOURS) == set(ledger_html.VERDICT_MARKS)


def test_the_backgrounds_are_the_themes():
    import pydata_sphinx_theme

    styles = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / "styles"
    css = (styles / "pydata-sphinx-theme.css").read_text()
    for name, colour in [
        ("background", "#fff"),
        ("surface", "#f3f4f5"),
        ("background", "#14181e"),
        ("surface", "#29313d"),
    ]:
        assert f"--pst-color-{name}:{colour};" in css, (name, colour)
    ours = (REPO_ROOT / "_static" / "audit.css").read_text()
    assert "#fff3bf" in ours and "#352c00" in ours


def test_category_colours_are_visible_on_white():
    assert min(contrast(c, "#ffffff") for c in encodings.CATEGORY_COLOURS) >= 3.0
    assert len(set(encodings.CATEGORY_COLOURS)) == len(encodings.CATEGORY_COLOURS)


def test_spread_keeps_labels_apart_and_in_order():
    out = encodings.spread([0.1, 0.11, 0.12, 0.5], gap=0.05, lower=0.0)
    assert list(out) == sorted(out) and min(b - a for a, b in zip(out, out[1:], strict=False)) >= 0.05 - 1e-12
    assert out[3] == pytest.approx(0.5, abs=0.05)


def test_stack_labels_sit_in_the_middle_of_their_segments():
    frame = pd.DataFrame({"bar": ["a", "a", "a"], "part": ["x", "y", "z"], "v": [10.0, 1.0, 9.0]})
    out = encodings.stack_labels(frame, "bar", "part", "v", ["x", "y", "z"], min_share=0.1)
    assert list(out["part"]) == ["x", "z"] and list(out["mid"]) == [5.0, 15.5]  # y too thin to name


def _charts(path: Path) -> list[dict]:
    """The Vega-Lite spec of every chart a committed notebook shows."""
    nb = nbformat.read(path, as_version=4)
    specs = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            shown = out.get("data", {})  # a chart a cell shows, or one it glues (papermill's record)
            text = shown.get("text/html") or shown.get("application/papermill.record/text/html") or ""
            text = "".join(text) if isinstance(text, list) else text
            for m in re.finditer(r"\}\)\((\{.*\})\);\s*</script>", text, flags=re.S):
                specs.append(json.loads(m.group(1)))
    return specs


@pytest.mark.parametrize("path", build.notebooks(), ids=lambda p: p.name)
def test_every_chart_says_what_it_shows(path):
    specs = _charts(path)
    for spec in specs:
        description = spec.get("description", "")
        assert len(description) >= 60 and "Vega visualization" not in description, description


def _mark(view: dict) -> str:
    mark = view.get("mark", "")
    return mark.get("type", "") if isinstance(mark, dict) else mark


def _colour_only(spec: dict) -> list[tuple[str, str]]:
    """(field, mark) of each view (of a spec, its layers, facets and concatenations) that encodes a
    field by colour and by no other channel of the same view (shape, dash, position, text)."""
    out = []
    views = [spec]
    while views:
        v = views.pop()
        for key in ("layer", "hconcat", "vconcat", "concat"):
            views.extend(v.get(key, []))
        if "spec" in v:
            views.append(v["spec"])
        enc = v.get("encoding", {})
        colour = enc.get("color", {}).get("field")
        if not colour:
            continue
        others = {
            e.get("field") for k, e in enc.items() if k not in ("color", "tooltip", "order") and isinstance(e, dict)
        }
        if colour not in others:
            out.append((colour, _mark(v)))
    return out


# Views that encode a field by colour alone, each told apart by a layer drawn beside it.
LABELLED_BY_ANOTHER_LAYER = {
    ("verdict", "bar"): "the verdict's mark (✓ ✗ ! ?) at the end of its segment",
    ("verdict", "rect"): "slider strips: each run of a verdict carries its mark and name",
    ("verdict", "text"): "the text writes the verdict out",
    ("flips to", "point"): "each diamond is labelled with the verdict's mark and the threshold",
    ("part", "bar"): "segments named where they fit; the legend lists the parts in the stack's order",
    ("component", "bar"): "segments named where they fit; the legend lists the parts in the stack's order",
    ("tier", "bar"): "each bar carries its tier's number",
    ("precision", "point"): "each point is labelled with its precision",
    ("series", "line"): "solid or dashed by kind, each line named at its end",
    ("series", "point"): "the points of the named lines",
    ("gpu", "rule"): "the error bars of the Pareto points, which have a shape per GPU",
    ("role", "point"): "calibration rows filled, validation rows open, a layer each",
}


@pytest.mark.parametrize("path", build.notebooks(), ids=lambda p: p.name)
def test_no_chart_tells_a_field_by_colour_alone(path):
    problems = [view for spec in _charts(path) for view in _colour_only(spec) if view not in LABELLED_BY_ANOTHER_LAYER]
    assert problems == []


# --------------------------------------------------------------------------------------------
# The font and the page assets
# --------------------------------------------------------------------------------------------


def _font_chars() -> dict[int, set[int]]:
    from fontTools.ttLib import TTFont

    return {w: set(TTFont(FONTS / f"noto-sans-sc-{w}.woff2").getBestCmap()) for w in (400, 700)}


def test_the_font_holds_every_cjk_character_of_the_sources():
    """Fails when Chinese text is added without rerunning tools/subset_font.py."""
    tool = _tool("subset_font")
    wanted = tool.wanted_characters() - tool.ALWAYS
    for weight, chars in _font_chars().items():
        assert "".join(sorted(map(chr, wanted - chars))) == "", f"rerun tools/subset_font.py ({weight})"
    css = (FONTS / "noto-sans-sc.css").read_text()
    assert css.count("@font-face") == 2 and tool.FAMILY in css and (FONTS / "OFL.txt").exists()
    for rule in re.findall(r"unicode-range: ([^;]+);", css):
        assert wanted <= tool.unicode_ranges(rule)


def test_the_font_holds_every_cjk_character_of_the_built_pages(site):
    tool = _tool("subset_font")
    chars = _font_chars()[400]
    missing = {}
    for path in _pages(site):
        lacking = tool.cjk_in(html.unescape(path.read_text())) - chars
        if lacking:
            missing[path.name] = "".join(sorted(map(chr, lacking)))
    assert missing == {}, "rerun tools/subset_font.py"


def test_pages_load_no_font_awesome_script_and_keep_their_icons(site):
    theme_css = (site / "_static" / "styles" / "pydata-sphinx-theme.css").read_text()
    for path in _pages(site):
        text = path.read_text()
        assert "fontawesome.js" not in text, path.name
        for icon in set(re.findall(r'class="[^"]*\bfa-solid\b[^"]*\b(fa-[a-z-]+)', text)) - {"fa-lg"}:
            assert f".{icon}:before" in theme_css, (path.name, icon)  # drawn by the theme's web font


def test_blank_lines_collapse_outside_pre_and_scripts():
    page = "<div>\n    <p>a  b</p>\n\n  <pre>x\n   y</pre>\n  <script>\n  var a;\n</script> <b>x</b>\n"
    assert (
        theme_assets.collapse_blank_lines(page)
        == "<div>\n<p>a  b</p>\n<pre>x\n   y</pre>\n<script>\n  var a;\n</script> <b>x</b>\n"
    )


def test_a_marked_inline_script_moves_to_a_static_file_named_by_its_text():
    """The calculator's script (``data-static``) leaves the page for _static/, loaded where it stood; an
    unmarked script stays; another text gets another name (a browser never runs a stale cached copy)."""
    written: dict[str, str] = {}
    page = '<div id="c"></div><script data-static="calculator">run(1);</script><script>keep();</script>'
    out = theme_assets.externalise(page, written.__setitem__, lambda name: f"../_static/{name}")
    ((name, text),) = written.items()
    assert re.fullmatch(r"calculator-[0-9a-f]{12}\.js", name) and text == "run(1);"
    assert out == f'<div id="c"></div><script src="../_static/{name}"></script><script>keep();</script>'
    theme_assets.externalise(page.replace("run(1)", "run(2)"), written.__setitem__, str)
    assert len(written) == 2


def test_a_glued_number_is_written_alone():
    prose = '<p>costs <span class="output text_plain">126,000 RMB</span> a month</p>'
    assert theme_assets.unwrap_glued(prose) == "<p>costs 126,000 RMB a month</p>"
    block = '<div class="cell_output"><span class="output text_plain"><b>x</b></span></div>'
    assert theme_assets.unwrap_glued(block) == block  # not plain text: kept as it is


def test_the_calculator_pages_load_its_script_from_static(site):
    """Both editions' buy-or-rent pages carry the calculator's script as a file of _static/, which exists."""
    for page in (site / "book" / "buy-or-rent.html", site / "zh" / "buy-or-rent.html"):
        text = page.read_text(encoding="utf-8")
        found = re.findall(r'<script src="(_static/calculator-[0-9a-f]{12}\.js|\.\./_static/calculator-[0-9a-f]{12}\.js)"', text)
        assert len(found) == 1 and (page.parent / found[0]).is_file(), page
        assert "data-static" not in text


# --------------------------------------------------------------------------------------------
# In a browser: every page at 390 and 1280 px
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_scrolls_sideways_and_every_chart_is_named(site, page_visits, width):
    """Every page at ``width`` (visited once for every browser test: tests/site/conftest.py,
    ``page_visits``), once its charts are drawn: no wider than the window, every chart named."""
    problems, charts = [], 0
    shown = set(_pages(site))
    visits = [v for v in page_visits[width] if v.path in shown]
    assert {v.path for v in visits} == shown
    for v in visits:
        if v.embedded < v.expected:
            problems.append(f"{v.path.name}: {v.embedded} of {v.expected} charts drawn at {width}")
        if v.scroll > v.inner:
            problems.append(f"{v.path.name}: {v.scroll} px wide at {width}")
        charts += len(v.names)
        problems += [
            f"{v.path.name}: chart named {n[:40]!r}" for n in v.names if len(n) < 60 or "Vega visualization" in n
        ]
    assert problems == [] and charts >= 40


def test_chinese_renders_with_the_shipped_font(site, browser):
    """The CJK characters of the ledger are drawn by the book's own font (Chromium's record of the
    fonts it used for each text node), whatever the machine has installed."""
    page = browser.new_page(viewport={"width": 390, "height": 800})
    page.goto((site / "book" / "claims-000.html").as_uri())
    page.evaluate("document.fonts.ready")
    count = page.evaluate(
        """() => { let i = 0; const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); let n;
                   while ((n = w.nextNode())) { if (/[\\u4e00-\\u9fff]/.test(n.textContent) && n.parentElement.offsetParent !== null)
                     n.parentElement.setAttribute('data-cjk', i++); } return i; }"""
    )
    written = [
        c.written
        for c in data.claims()
        if c.document.startswith("000_") and re.search("[\u4e00-\u9fff]", c.written or "")
    ]
    assert count >= len(written) > 20  # the figures as document 000 writes them, at least
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    wrong = []
    for i in range(0, count, 7):
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": f'[data-cjk="{i}"]'})["nodeId"]
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        cjk = [f for f in fonts if f["familyName"].startswith("Noto Sans SC")]
        if not cjk or not all(f["isCustomFont"] for f in cjk):
            wrong.append(fonts)
    loaded = page.evaluate(
        "[...document.fonts].filter(f => f.family.includes('Noto Sans SC Subset') && f.status === 'loaded').length"
    )
    page.close()
    assert wrong == [] and loaded >= 1


# The documents' own spellings of figures (each verbatim in a document), and claims they must find.
DOCUMENT_SPELLINGS = {
    "900GB/s": "000-2.2-nvlink-c2c-900",
    "6~12个月": "000-6-payback-6-12-months",
    "6~12": "001-6-payback-6-12-months",
    "300万": "000-4-monthly-cost-47pct-3m-rmb",
    "风控": "000-2.4-fintech-crash-every-5-days",
    "2.5~3倍": "001-2.1-throughput-2p5-3x",
    "8万元": "001-4-rental-80k-rmb-month",
    "4.2万元": "001-4-own-42k-vs-rent-80k",
    "60%~80%": "001-2.2-gds-latency-60-80pct",
    "8TB/s": "001-2.2-hbm-over-8tbs",
}


def test_search_finds_claims_by_the_documents_spellings(site, tab):
    page = tab()
    found = {}
    for query, claim in DOCUMENT_SPELLINGS.items():
        page.goto((site / "search.html").as_uri() + "?q=" + urllib.parse.quote(query))
        page.wait_for_selector("#search-results .search-summary:not(:empty)", timeout=10_000)
        hits = page.eval_on_selector_all("#search-results ul.search li a", "as => as.map(a => a.getAttribute('href'))")
        chapter = data.claim(claim).chapter
        ledger_page = f"book/claims-{data.claim(claim).document[:3]}.html"  # the ledger page of its document
        found[query] = ledger_page in hits and f"book/{chapter}.html" in hits
    assert sum(found.values()) >= 5 and all(found.values()), found


def test_the_javascript_normaliser_gives_the_pythons_terms(site, tab):
    texts = [t for c in data.claims() for t in (c.stated, c.written, c.claim)] + [
        w for pair in SAME_FIGURE for w in pair
    ]
    page = tab()
    page.goto((site / "book" / "claims-000.html").as_uri())  # a ledger page: its text filter uses it
    js = page.evaluate("texts => texts.map(t => [auditSearch.queryTerms(t), auditSearch.indexTerms(t)])", texts)
    py = [[figure_search.query_terms(t), figure_search.index_terms(t)] for t in texts]
    assert js == py


def test_ledger_as_cards_with_filters_at_390_px(site, tab, whole_ledger):
    ledger = whole_ledger
    ledger = ledger[ledger["document"].str.startswith("000_")]
    page = tab(390, 844)
    page.goto((site / "book" / "claims-000.html").as_uri())
    page.wait_for_selector(".ledger-controls:not([hidden])")
    shape = page.evaluate(
        """() => { const tr = document.querySelector('.audit-ledger tbody tr'),
                         td = tr.querySelector('td.c-claim'), stated = td.querySelector('[data-field="stated"]');
                   return [getComputedStyle(tr).display, getComputedStyle(td).display,
                           getComputedStyle(stated, '::before').content, tr.getBoundingClientRect().right]; }"""
    )
    assert shape[0] == "block" and shape[1] == "block" and shape[2] == '"stated "' and shape[3] <= 390
    # issue 22's direction: on the card's first line beside a bare verdict, as word and symbol (a verdict in
    # doubt, data-value on its field, is a phrase that fills the line: its direction follows on the next)
    first = page.evaluate(
        """() => [...document.querySelectorAll('.audit-ledger tbody tr')].map(tr => {
                   const v = tr.querySelector('[data-field="verdict"]'), d = tr.querySelector('[data-field="direction"]');
                   return [d.textContent.trim(), Math.round(v.getBoundingClientRect().top) === Math.round(d.getBoundingClientRect().top),
                           d.getBoundingClientRect().left - v.getBoundingClientRect().right, v.hasAttribute('data-value')]; })
                 .filter(x => x[0] !== '–' && !x[3])[0]"""
    )
    assert first[0].endswith(("overstates", "understates")) and first[1] and first[2] >= 6, first
    rows = ".audit-ledger tbody tr"
    page.select_option('select[data-filter="verdict"]', "inconsistent")
    shown = page.eval_on_selector_all(rows, "rs => rs.filter(r => r.offsetParent !== null).length")
    assert shown == (ledger["verdict"] == "inconsistent").sum()
    page.select_option('select[data-filter="verdict"]', "")
    for query in ("900GB/s", "９００ ＧＢ/s", "900 GB/s"):
        page.fill("input[data-filter-text]", query)
        ids = page.eval_on_selector_all(
            rows,
            "rs => rs.filter(r => r.offsetParent !== null).map(r => r.querySelector('[data-field=id]').textContent)",
        )
        assert {"000-2.2-nvlink-c2c-900", "000-2.3-nvswitch-900-any-pair", "000-3-table-bandwidth"} <= set(ids), query


def test_verdict_colours_follow_the_theme(site, tab):
    """Each theme's verdict colour on the background the table really has there (the dark theme
    paints other HTML outputs light; the book's tables keep the page's)."""
    page = tab()
    page.goto((site / "book" / "claims-000.html").as_uri())
    rgb = "b.verdict-consistent"
    script = """e => { let b = e; while (b && getComputedStyle(b).backgroundColor === 'rgba(0, 0, 0, 0)') b = b.parentElement;
                      return [getComputedStyle(e).color, b ? getComputedStyle(b).backgroundColor : 'rgb(255, 255, 255)']; }"""
    light, light_bg = page.eval_on_selector(rgb, script)
    page.evaluate("document.documentElement.dataset.theme = 'dark'")
    dark, dark_bg = page.eval_on_selector(rgb, script)

    def hexed(colour: str) -> str:
        return "#" + "".join(f"{int(c):02x}" for c in re.findall(r"\d+", colour)[:3])

    assert hexed(light) == ledger_html.VERDICT_COLOURS["consistent"]
    assert hexed(dark) == ledger_html.VERDICT_COLOURS_DARK["consistent"]
    assert contrast(hexed(light), hexed(light_bg)) >= 4.5 and contrast(hexed(dark), hexed(dark_bg)) >= 4.5


def test_keyboard_focus_is_visible(site, tab):
    page = tab(1280, 800)
    page.goto((site / "book" / "claims-000.html").as_uri())
    page.wait_for_selector(".ledger-controls:not([hidden])")
    styles = {}
    for _ in range(150):
        page.keyboard.press("Tab")
        tag = page.evaluate(
            """() => { const e = document.activeElement, s = getComputedStyle(e);
                       const kind = e.matches('th button') ? 'sort button' : e.matches('select') ? 'select'
                                  : e.matches('.bd-article a') ? 'link' : null;
                       return [kind, s.outlineStyle, parseFloat(s.outlineWidth)]; }"""
        )
        if tag[0] and tag[0] not in styles:
            styles[tag[0]] = tag[1:]
        if len(styles) == 3:
            break
    assert set(styles) == {"sort button", "select", "link"}, styles
    assert all(style != "none" and width >= 2 for style, width in styles.values()), styles


def test_print_hides_the_controls(site, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto((site / "book" / "claims-001.html").as_uri())
    page.wait_for_selector(".ledger-controls:not([hidden])")
    page.emulate_media(media="print")
    hidden = page.evaluate(
        "['.ledger-controls', '.bd-sidebar-primary', '.bd-header'].map(s => getComputedStyle(document.querySelector(s)).display)"
    )
    page.close()
    assert hidden == ["none", "none", "none"]


# --------------------------------------------------------------------------------------------
# Evidence that reads on a desk, the ledger's direction filter, a buyer's words in search (issue 35)
# --------------------------------------------------------------------------------------------

# A cell holds a sentence when its text has this many words or more.
SENTENCE_WORDS = 6


def test_no_sentence_cell_is_narrower_than_12_characters_at_1280_px(site, tab):
    """Every table cell of every page of either edition that holds a sentence is at least 12
    characters of its own font wide (the width of "0" twelve times, measured in that font) at 1280 px:
    the ledger-style tables once gave "recomputed" 46 px, 3-4 letters a line."""
    page = tab(1280, 800)
    narrow = {}
    for path in _pages(site):
        if "http-equiv" in path.read_text():
            continue  # a redirect (index.html): measured where it lands
        page.goto(path.as_uri())
        found = page.evaluate(
            """n => { const ctx = document.createElement('canvas').getContext('2d'), out = [];
                      for (const td of document.querySelectorAll('.bd-article td')) {
                        if (td.offsetParent === null || td.textContent.trim().split(/\\s+/).length < n) continue;
                        const s = getComputedStyle(td);
                        ctx.font = s.font;
                        const twelve = ctx.measureText('0'.repeat(12)).width;
                        const inner = td.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
                        if (inner < twelve) out.push([td.textContent.trim().slice(0, 40), Math.round(inner), Math.round(twelve)]);
                      }
                      return out; }""",
            SENTENCE_WORDS,
        )
        if found:
            narrow[str(path.relative_to(site))] = found[:3]
    assert narrow == {}


@pytest.mark.parametrize("doc", ["000", "001"])
def test_the_direction_filter_returns_the_rows_of_each_direction(site, tab, whole_ledger, doc):
    """Each direction of the ledger page's filter keeps exactly the claims of that direction (it once
    kept none: the cell's text is "▲ overstates"), and its options are each direction once."""
    ledger = whole_ledger[whole_ledger["document"].str.startswith(doc)]
    page = tab(1280, 800)
    page.goto((site / "book" / f"claims-{doc}.html").as_uri())
    page.wait_for_selector(".ledger-controls:not([hidden])")
    options = page.eval_on_selector_all('select[data-filter="direction"] option', "os => os.map(o => o.value)")
    assert options == ["", "overstates", "understates"]
    for direction in ("overstates", "understates"):
        page.select_option('select[data-filter="direction"]', direction)
        ids = page.eval_on_selector_all(
            ".audit-ledger tbody tr",
            "rs => rs.filter(r => r.offsetParent !== null).map(r => r.querySelector('[data-field=id]').textContent.trim())",
        )
        expected = ledger.loc[ledger["direction"] == direction, "id"]
        assert sorted(ids) == sorted(expected) and ids, direction
        assert page.inner_text(".ledger-count") == f"{len(ids)} of {len(ledger)} claims"
    page.select_option('select[data-filter="direction"]', "")


def test_an_evidence_row_links_to_its_arithmetic_and_back(site, browser):
    """A chapter's evidence row links to the section that does its arithmetic; arrived at from the
    front page, it offers the way back there."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto((site / "book" / "intro.html").as_uri())
    link = page.locator(".audit-findings a.ledger-link").first
    href = link.get_attribute("href")
    link.click()
    page.wait_for_load_state()
    row = page.locator(f'tr[id="{href.partition("#")[2]}"]')
    arithmetic = row.locator('a[href*="#sec-"]').first.get_attribute("href")
    assert page.locator(f'[id="{arithmetic.partition("#")[2]}"]').count() == 1
    back = row.locator("a.back-link")
    assert back.count() == 1
    back.click()
    page.wait_for_load_state()
    assert page.url.split("#")[0].endswith("book/intro.html")
    page.close()


def test_a_buyers_words_find_each_other(site):
    """回本 (the everyday word for payback) is indexed wherever payback is, in either edition, and so
    are 租/租用 with rent and 自建/自购 with owned (:data:`analyses.site.figure_search.SYNONYMS`)."""
    assert set(figure_search.query_terms("回本")) <= set(figure_search.synonym_terms("the upgrade pays back in months"))
    assert set(figure_search.query_terms("payback")) <= set(figure_search.synonym_terms("回收期≤12个月"))
    assert set(figure_search.query_terms("rent")) <= set(figure_search.synonym_terms("租用A100"))
    assert set(figure_search.query_terms("自建")) <= set(figure_search.synonym_terms("an owned cluster"))
    assert figure_search.synonym_terms("our own words") == []  # "own" alone is not owning


@pytest.mark.parametrize(
    ("edition", "pages"),
    [("", ["book/tco.html", "book/buy-or-rent.html"]), ("zh/", ["chapters/tco.html", "buy-or-rent.html"])],
)
@pytest.mark.parametrize("query", ["回本", "回收期", "payback"])
def test_payback_words_find_the_payback_pages(site, tab, edition, pages, query):
    page = tab()
    page.goto((site / edition / "search.html").as_uri() + "?q=" + urllib.parse.quote(query))
    page.wait_for_selector("#search-results .search-summary:not(:empty)", timeout=10_000)
    hits = page.eval_on_selector_all("#search-results ul.search li a", "as => as.map(a => a.getAttribute('href'))")
    assert set(pages) <= {h.split("#")[0].split("?")[0] for h in hits}, hits


# --------------------------------------------------------------------------------------------
# Charts for every reader: colours that stay apart in colour blindness (issue 35)
# --------------------------------------------------------------------------------------------

# Full dichromacy of each kind, simulated with Machado, Oliveira & Fernandes (2009) as colorspacious
# implements it; distances in CAM02-UCS (Luo et al. 2006), where about 1 is a just noticeable difference.
VISIONS = (None, "protanomaly", "deuteranomaly", "tritanomaly")
VERDICT_DISTANCE = 20  # the verdict colours of either theme, and a chart's stated and recomputed pair
SERIES_DISTANCE = {8: 16, 10: 13}  # the first 8 category colours, and all of them


def _cvd_distance(colours: list[str]) -> dict[str, float]:
    """The smallest CAM02-UCS distance between any two of ``colours`` as a reader with normal vision
    and one with each full dichromacy sees them."""
    import itertools

    import numpy as np
    from colorspacious import cspace_convert, deltaE

    named = {"black": "#000000", "white": "#ffffff", "grey": "#808080", "gray": "#808080"}
    rgb = np.array([[int(named.get(c, c)[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in colours])
    out = {}
    for vision in VISIONS:
        seen = rgb
        if vision:
            space = {"name": "sRGB1+CVD", "cvd_type": vision, "severity": 100}
            seen = np.clip(cspace_convert(rgb, space, "sRGB1"), 0, 1)
        ucs = cspace_convert(seen, "sRGB1", "CAM02-UCS")
        pairs = itertools.combinations(range(len(colours)), 2)
        out[vision or "normal"] = min(float(deltaE(ucs[i], ucs[j], input_space="CAM02-UCS")) for i, j in pairs)
    return out


def test_the_simulation_tells_red_from_green_only_with_colour_vision():
    """The check can fail: pure red and green are far apart to normal vision and close for a deutan."""
    d = _cvd_distance(["#d62728", "#2ca02c"])
    assert d["normal"] > 30 and d["deuteranomaly"] < 10


@pytest.mark.parametrize("palette", ["VERDICT_COLOURS", "VERDICT_COLOURS_DARK"])
def test_verdict_colours_stay_apart_in_colour_blindness(palette):
    distances = _cvd_distance(list(getattr(ledger_html, palette).values()))
    assert min(distances.values()) >= VERDICT_DISTANCE, distances
    pair = _cvd_distance([ledger_html.STATED_COLOUR, ledger_html.RECOMPUTED_COLOUR])
    assert min(pair.values()) >= VERDICT_DISTANCE, pair


def test_category_colours_stay_apart_in_colour_blindness():
    for n, floor in SERIES_DISTANCE.items():
        distances = _cvd_distance(list(encodings.CATEGORY_COLOURS[:n]))
        assert min(distances.values()) >= floor, (n, distances)


def _series_colours(spec: dict) -> list[list[str]]:
    """The colours of each view of ``spec`` that encodes a field by colour: its scale's range, or the
    first of the book's category colours, one per value the field takes in the chart's data."""
    out = []
    views = [spec]
    data = [row for rows in (spec.get("datasets") or {}).values() for row in rows]
    while views:
        v = views.pop()
        for key in ("layer", "hconcat", "vconcat", "concat"):
            views.extend(v.get(key, []))
        if "spec" in v:
            views.append(v["spec"])
        colour = v.get("encoding", {}).get("color")
        if not isinstance(colour, dict) or not colour.get("field"):
            continue
        scale = colour.get("scale") or {}
        if isinstance(scale.get("range"), list):
            out.append(scale["range"])
            continue
        values = {row[colour["field"]] for row in data if colour["field"] in row}
        domain = scale.get("domain") if isinstance(scale.get("domain"), list) else sorted(values, key=str)
        out.append(list(encodings.CATEGORY_COLOURS[: min(len(domain), len(encodings.CATEGORY_COLOURS))]))
    return out


@pytest.mark.parametrize("path", build.notebooks(), ids=lambda p: p.name)
def test_every_charts_palette_stays_apart_in_colour_blindness(path):
    """Every chart's colours for the series it tells apart, to a reader with each full dichromacy:
    no two closer than the palette's floor (a chart of more series than the palette has colours names
    or dashes each of them: test_no_chart_tells_a_field_by_colour_alone)."""
    problems = []
    for spec in _charts(path):
        for colours in _series_colours(spec):
            distinct = list(dict.fromkeys(colours))
            if len(distinct) < 2:
                continue
            floor = SERIES_DISTANCE[8] if len(distinct) <= 8 else SERIES_DISTANCE[10]
            if distinct[0] in ledger_html.VERDICT_COLOURS.values():
                floor = VERDICT_DISTANCE
            d = _cvd_distance(distinct)
            if min(d.values()) < floor:
                problems.append((distinct, {k: round(x, 1) for k, x in d.items()}))
    assert problems == []


def test_chart_text_is_at_least_10_px_on_a_phone(site, tab):
    """At 390 px every chart's smallest text is drawn at 10 px or more: a chart scales down to its
    column only as far as that allows (audit.js) and scrolls sideways in its own box beyond; it was
    7 px (every chart scaled to 70%)."""
    page = tab(390, 844)
    small = {}
    for path in sorted((site / "book").glob("*.html")):
        n = len(set(re.findall(r'id="(altair-viz-[0-9a-f]+)"', path.read_text())))
        if not n:
            continue
        page.goto(path.as_uri())
        page.wait_for_function(f"document.querySelectorAll('.vega-embed .marks').length >= {n}", timeout=20_000)
        least = page.evaluate(
            """() => [...document.querySelectorAll('.vega-embed > svg.marks')].map(svg => {
                  const scale = svg.getBoundingClientRect().width / parseFloat(svg.getAttribute('width'));
                  const sizes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
                      .map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
                  return Math.min(...sizes); })"""
        )
        if min(least) < 10 - 1e-6:
            small[path.name] = [round(x, 1) for x in least]
    assert small == {}


def test_a_page_loads_the_chart_library_only_with_a_chart_and_the_search_index_only_to_search(site):
    """The chart library (vega-offline.js, about 0.9 MB) loads on a page that has a chart and nowhere
    else; the search index (searchindex.js, about 170 KB) and Sphinx's search script on the search
    pages only (the search box of every page opens them); the figure normaliser where a ledger's text
    filter uses it. ``make bench`` reports what each page loads in all (tools/bench.py)."""
    problems = []
    pages = _pages(site)
    for path in pages:
        text = path.read_text()
        charts = "altair-viz-" in text
        if ("vega-offline.js" in text) != charts:
            problems.append((path.name, "chart library", charts))
        searching = path.name == "search.html"
        for script in ("searchindex.js", "searchtools.js"):
            if (script in text) != searching:
                problems.append((path.name, script, searching))
        if "language_data.js" in text and not searching and "audit-ledger" not in text:
            problems.append((path.name, "language_data.js", False))
    assert problems == [] and sum("altair-viz-" in p.read_text() for p in pages) >= 10
