"""The Chinese edition as a reader meets it (issue 24 item 1): built by the book's build beside the
English one under _build/html/zh/, every page in zh-CN, linked both ways with the English pages,
every ledger row with the English verdict, each chapter's claims on its Chinese page, and no page
that scrolls sideways on a phone (390 px) or a desktop (1280 px)."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

import pytest

from analyses import data
from analyses.data import REPO_ROOT
from analyses.pages.verdict_box import section_anchor
from analyses.site import stamps, zh_site
from analyses.units.zh import punctuate, unbalanced

CHAPTER_PAGES = [f"chapters/{slug}" for slug in (*zh_site.zh_chapters(), *zh_site.OTHER_CHAPTERS)]
ZH_PAGES = ["index", "buy-or-rent", "ledger", "ledger-000", "ledger-001", "sources", *CHAPTER_PAGES]


class _Page(HTMLParser):
    """The lang of <html>, the edition link, and each card or box item with its verdict."""

    def __init__(self) -> None:
        super().__init__()
        self.lang = None
        self.edition: str | None = None
        self.cards: dict[str, str] = {}
        self.items: list[str] = []
        self._in_edition = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.lang = a.get("lang")
        if tag == "p" and a.get("class") == "edition-link":
            self._in_edition = True
        if tag == "a" and self._in_edition and self.edition is None:
            self.edition = a.get("href")
        if tag == "article" and a.get("class") == "zh-claim":
            self.cards[a["id"].removeprefix("zh-")] = a["data-verdict"]
        if tag == "li" and (a.get("id") or "").startswith("zh-"):
            self.items.append(a["id"].removeprefix("zh-"))

    def handle_endtag(self, tag):
        if tag == "p":
            self._in_edition = False


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _resolve(page: Path, href: str) -> Path:
    return (page.parent / unquote(urlparse(href).path)).resolve()


def test_every_chinese_page_is_built_in_zh_cn(site):
    for name in ZH_PAGES:
        path = site / "zh" / f"{name}.html"
        assert path.exists(), name
        assert parse(path).lang == "zh-CN", name
    english = parse(site / "book" / "claims.html")
    assert english.lang == "en"


def test_the_chinese_ledger_lists_every_claim_with_the_english_verdict(site, whole_ledger):
    ledger = whole_ledger
    page = site / "zh" / "ledger.html"
    cards = parse(page).cards
    assert list(cards) == list(ledger["id"])  # every row, once, in ledger order
    assert cards == dict(zip(ledger["id"], ledger["verdict"], strict=True))
    text = page.read_text(encoding="utf-8")
    for word in data.terms_zh("verdict").values():
        assert word in text
    for row in data.claims_zh().itertuples():  # the Chinese wording and the figures as written
        assert html.escape(row.claim_zh) in text and html.escape(punctuate(row.written)) in text, row.id


def test_each_chinese_chapter_page_lists_its_claims(site, whole_ledger):
    ledger = whole_ledger
    for slug in zh_site.zh_chapters():
        items = parse(site / "zh" / "chapters" / f"{slug}.html").items
        assert items == list(ledger.loc[ledger["chapter"] == slug, "id"]), slug


def test_every_page_links_to_its_counterpart_in_the_other_edition(site):
    english = sorted((site / "book").glob("*.html"))
    assert len(english) >= 12
    for path in english:
        link = parse(path).edition
        assert link is not None, path.name
        target = _resolve(path, link)
        assert target.is_file() and target.is_relative_to(site / "zh"), (path.name, link)
        if path.stem in zh_site.zh_chapters():
            assert target == site / "zh" / "chapters" / path.name
    for english, chinese in (("claims", "ledger"), ("claims-000", "ledger-000"), ("claims-001", "ledger-001")):
        path = site / "book" / f"{english}.html"  # the English ledger and its per-document pages
        assert _resolve(path, parse(path).edition) == site / "zh" / f"{chinese}.html", english
    for name in ZH_PAGES:
        path = site / "zh" / f"{name}.html"
        target = _resolve(path, parse(path).edition)
        assert target.is_file() and target.is_relative_to(site / "book"), name
    assert (
        _resolve(site / "zh" / "index.html", parse(site / "zh" / "index.html").edition) == site / "book" / "intro.html"
    )


def visible_text(page: Path) -> str:
    """What a reader sees on a built Chinese page, as text: no scripts or styles, no names set as
    code (claim ids, source files), and not the calculator's form, whose inputs and messages the
    calculator's own tests check (tests/site/test_zh_calculator.py)."""
    from analyses.pages import calculator

    text = page.read_text(encoding="utf-8")
    text = re.sub(rf'<div [^>]*id="{calculator.ELEMENT_ID}".*?</form>', " ", text, flags=re.S)
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    text = re.sub(r"<code\b[^>]*>.*?</code>", " ", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "\n", text))


def test_every_chinese_page_keeps_the_style_sheet(site):
    """Issue 36: on every built Chinese page no parameter name, no pointer to the English reason,
    balanced brackets, no half-width punctuation between Chinese characters, no thousands separator
    before 万/亿, ranges with ～, dates as 2026年12月7日, the style sheet's terms (notes/zh-style.md)."""
    from analyses.units import zh

    pages = [
        p for p in (site / "zh").rglob("*.html") if "_static" not in p.parts and p.stem not in ("search", "genindex")
    ]
    assert len(pages) >= len(ZH_PAGES)
    faults = {p.relative_to(site).as_posix(): zh.style_faults(visible_text(p)) for p in pages}
    assert {k: v for k, v in faults.items() if v} == {}


def test_every_chinese_chapter_page_has_its_charts_in_chinese(site):
    """Each chapter page draws the English chapter's own chart (the same figure function on the same
    result) with Chinese titles, axes, legends and description, and a Chinese caption."""
    from analyses.site import zh_charts

    for name in CHAPTER_PAGES:
        text = (site / "zh" / f"{name}.html").read_text(encoding="utf-8")
        figures = re.findall(r'<figure class="zh-figure">(.*?)<figcaption>(.*?)</figcaption>', text, flags=re.S)
        assert figures, name
        for body, caption in figures:
            spec = json.loads(re.search(r"\}\)\((\{.*\})\);\s*</script>", body, flags=re.S).group(1))
            assert re.search(r"[\u4e00-\u9fff]", spec["description"]) and re.search(r"[\u4e00-\u9fff]", caption), name
            assert not re.search(r"\b[a-z]{3,} [a-z]{3,}\b", spec["description"]), (name, spec["description"])
    for items in zh_charts.CHARTS.values():
        for slug, function in items:
            assert zh_charts.untranslated(slug, function) == [], (slug, function)


def test_the_chinese_edition_has_a_page_for_each_english_chapter(site):
    """Every chapter of the English table of contents, the per-document ledgers included, has its
    Chinese page, and its edition link lands there."""
    import yaml

    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text())
    english = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    for docname in english:
        target = site / zh_site.counterpart("en", docname)
        assert target.is_file() and target.name != "index.html", docname


def test_the_buyers_answer_is_in_the_first_screen_on_a_phone(site, tab):
    """The Chinese front page and 买还是租 open with the English page's bottom line (cheapest to rent
    and to buy, the busy share above which buying wins), in 元, within 390x844."""
    from analyses.chapters import buy_or_rent as ch
    from analyses.chapters import config
    from analyses.pages import bottom_line
    from analyses.units import zh

    res = ch.compute(config("buy-or-rent"))
    # the English bottom line's break-even: the cheapest owned option against the cheapest rental
    shares = {zh.percent(a.owning_wins_above) for a in bottom_line.answers(res.runs, res.workloads)}
    page = tab(390, 844)
    for name in ("index", "buy-or-rent"):
        page.goto((site / "zh" / f"{name}.html").as_uri())
        box = page.eval_on_selector(".zh-bottom-line", "e => e.getBoundingClientRect().bottom")
        text = page.inner_text(".zh-bottom-line")
        assert box <= 844, (name, box)
        assert "租用" in text and "自购" in text and any(s in text for s in shares), text
        assert "美元" not in text and "USD" not in text


def test_the_chinese_theme_speaks_chinese(site):
    text = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert "Search..." not in text and "Color mode" not in text and "The audit-book team" not in text
    assert re.search(r"最后更新：\d{4}年[1-9]\d?月[1-9]\d?日", text)


def test_chapter_boxes_link_each_claim_to_the_english_section_that_checks_it(site, whole_ledger):
    """Each item of a Chinese verdict box links to the section of the English chapter that checks the
    claim (the English verdict box's own target), which exists, and gives a one-line reason and the
    chapter's takeaway."""
    ledger = whole_ledger
    for slug in zh_site.zh_chapters():
        page = site / "zh" / "chapters" / f"{slug}.html"
        text = page.read_text(encoding="utf-8")
        hrefs = re.findall(r'<a href="([^"]+)" hreflang="en" title="英文版中核查这条说法的一节">', text)
        ids = list(ledger.loc[ledger["chapter"] == slug, "id"])
        assert len(hrefs) == len(ids), slug
        for href, cid in zip(hrefs, ids, strict=True):
            fragment = urlparse(href).fragment
            assert fragment == section_anchor(cid)
            target = _resolve(page, href)
            assert target == site / "book" / f"{slug}.html" and f'id="{fragment}"' in target.read_text(encoding="utf-8")
        assert '<p class="zh-takeaway">要点：' in text, slug
        reasons = re.findall(r'<span class="zh-reason">([^<]*)</span>', text)
        # the reason's first sentence: one 。 at its end, every bracket and quote closed
        assert reasons and all(r.endswith("。") and r.count("。") == 1 and not unbalanced(r) for r in reasons), slug


def test_the_chinese_buy_or_rent_page_gives_the_english_pages_answer_in_rmb(site):
    """The zh buy-or-rent page and the front page show the chapter's own cheapest answers (the English
    page's function), in 万/亿元, with the calculator; the front page links to it first."""
    from analyses.chapters import buy_or_rent as ch
    from analyses.chapters import config
    from analyses.pages import calculator, zh_buy

    res = ch.compute(config("buy-or-rent"))
    page = (site / "zh" / "buy-or-rent.html").read_text(encoding="utf-8")
    front = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert f'id="{calculator.ELEMENT_ID}"' in page and 'data-param="n_params"' in page and 'lang="zh"' in page
    for w in res.workloads:
        section = page.split(f'id="zh-buy-{w.key}"', 1)[1].split("</section>", 1)[0]
        for basis in ("rented", "owned"):
            r = res.cheapest(w.key, basis)
            said = f"{int(r['n_gpus']):,}张{r['gpu']}，"
            assert said in section and html.escape(zh_buy.money(res, r["cost"])) in section, (w.key, basis)
            assert said in front
        assert section.count("★ 最省") == 2, w.key
        # money in 元, never the English "million" or "RMB"
        assert re.search(r"[\d.,]+[万亿]?元", section) and "million" not in section and "RMB" not in section
    assert re.search(r"[\d.,]+万元", page) and re.search(r"[\d.,]+万元", front)  # large sums in 万 (or 亿)
    body = front.split('<article class="bd-article"', 1)[1] if '<article class="bd-article"' in front else front
    first = re.search(r'<a class="reference internal" href="([^"#]+)', body)
    assert first and first.group(1) == "buy-or-rent.html", first
    assert (site / "zh" / "buy-or-rent.html").stat().st_size < 150_000


def test_the_built_chinese_calculator_runs_offline_on_a_phone(site, browser):
    """The calculator on the built zh page computes in the page (nothing loaded from elsewhere) and
    shows the Python model's figures at its defaults, in Chinese, on a 390 px phone."""
    from analyses.chapters import buy_or_rent as ch
    from analyses.chapters import config
    from analyses.pages import calculator

    system = calculator.buy_or_rent_system(ch.compute(config("buy-or-rent")))[0]
    page = browser.new_page(viewport={"width": 390, "height": 844})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((site / "zh" / "buy-or-rent.html").as_uri())
    page.wait_for_selector(f'#{calculator.ELEMENT_ID}[data-state="ok"]')
    # what the page read from its fields (in 元 per server, 万 written as Chinese writes it), in the formulas' units
    expected = system.evaluate(page.evaluate(f"document.getElementById('{calculator.ELEMENT_ID}').calcInputs"))
    got = page.eval_on_selector_all(
        "[data-result]", "els => Object.fromEntries(els.map(e => [e.dataset.result, e.dataset.value]))"
    )
    for name in ("cost_owned_b300", "cost_rented_b300", "days_a100", "payback_b300_vs_rent_a100"):
        assert float(got[name]) == pytest.approx(float(expected[name]), rel=5e-5), name
    assert page.inner_text(f"#{calculator.ELEMENT_ID} caption").startswith("一次训练")
    assert [u for u in requests if not u.startswith("file:")] == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()


def test_chinese_links_to_english_checks_land_on_their_rows(site, whole_ledger):
    """Each card's id links to the row of its check in the English chapter, which exists."""
    page = site / "zh" / "ledger.html"
    text = page.read_text(encoding="utf-8")
    hrefs = re.findall(r'<a href="([^"]+)" hreflang="en" title="英文版核查">', text)
    assert len(hrefs) == len(whole_ledger)
    for href in hrefs:
        target = _resolve(page, href)
        fragment = urlparse(href).fragment
        assert f'id="{fragment}"' in target.read_text(encoding="utf-8"), href


# --------------------------------------------------------------------------------------------
# In a browser
# --------------------------------------------------------------------------------------------


def test_no_chinese_page_scrolls_sideways(site, page_visits):
    """Every Chinese page at a phone's and a laptop's width (the site's one sweep, tests/site/conftest.py):
    nothing wider than the window, the page in Chinese, no script error."""
    for width, visits in page_visits.items():
        shown = {
            v.path.relative_to(site / "zh").with_suffix("").as_posix(): v
            for v in visits
            if v.path.is_relative_to(site / "zh")
        }
        assert set(ZH_PAGES) <= set(shown), sorted(set(ZH_PAGES) - set(shown))
        for name in ZH_PAGES:
            v = shown[name]
            assert v.scroll <= v.inner and v.lang == "zh-CN" and v.errors == [], (name, width, v)


def test_the_chinese_ledger_filters_on_a_phone_and_links_both_ways(site, tab, whole_ledger):
    ledger = whole_ledger
    page = tab(390, 844)
    page.goto((site / "zh" / "ledger.html").as_uri())
    page.wait_for_selector(".zh-controls:not([hidden])")
    visible = "() => [...document.querySelectorAll('article.zh-claim')].filter(c => !c.hidden).map(c => c.id)"
    assert len(page.evaluate(visible)) == len(ledger)
    page.select_option("select[data-zh-filter]", "inconsistent")
    shown = page.evaluate(visible)
    assert shown == [f"zh-{i}" for i in ledger.loc[ledger["verdict"] == "inconsistent", "id"]]
    assert page.inner_text(".zh-count") == f"{len(shown)}条"
    page.select_option("select[data-zh-filter]", "")
    page.fill("input[data-zh-text]", "９００ＧＢ／ｓ")  # full-width, as a Chinese keyboard may type it
    found = page.evaluate(visible)
    assert "zh-000-2.3-nvswitch-900-any-pair" in found and len(found) < len(ledger)
    page.fill("input[data-zh-text]", "")
    page.click("p.edition-link a")
    page.wait_for_load_state()
    assert page.url.endswith("book/claims.html") and page.evaluate("document.documentElement.lang") == "en"
    page.click("p.edition-link a")
    page.wait_for_load_state()
    assert page.url.endswith("zh/ledger.html")


def test_chinese_pages_stay_under_150_kb(site):
    sizes = {name: (site / "zh" / f"{name}.html").stat().st_size for name in ZH_PAGES}
    assert max(sizes.values()) < 150_000, sizes


# The documents' own spellings of figures and words, and the claim each must find in the Chinese edition.
DOCUMENT_SPELLINGS = {
    "900GB/s": "000-2.2-nvlink-c2c-900",
    "6~12个月": "000-6-payback-6-12-months",
    "300万元": "000-4-monthly-cost-47pct-3m-rmb",
    "风控": "000-2.4-fintech-crash-every-5-days",
    "2.5~3倍": "001-2.1-throughput-2p5-3x",
    "4.2万元": "001-4-own-42k-vs-rent-80k",
    "60%~80%": "001-2.2-gds-latency-60-80pct",
    "回本": "000-6-payback-6-12-months",  # the words a buyer types
    "回收期": "001-6-payback-6-12-months",
    "自购": "001-4-own-42k-vs-rent-80k",
    "租用": "001-4-rental-80k-rmb-month",
}


def test_chinese_search_finds_claims_by_the_documents_spellings(site, tab):
    page = tab()
    found = {}
    for query, claim in DOCUMENT_SPELLINGS.items():
        page.goto((site / "zh" / "search.html").as_uri() + "?q=" + quote(query))
        page.wait_for_selector("#search-results .search-summary:not(:empty)", timeout=10_000)
        hits = page.eval_on_selector_all("#search-results ul.search li a", "as => as.map(a => a.getAttribute('href'))")
        chapter = data.claim(claim).chapter
        found[query] = "ledger.html" in hits and f"chapters/{chapter}.html" in hits
    assert all(found.values()), found


def test_a_build_with_nothing_changed_skips_the_chinese_edition(site):
    proc = subprocess.run([sys.executable, "-m", "analyses", "build"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "The Chinese edition is current; skipping it." in proc.stdout
    assert stamps.ZH.current()
