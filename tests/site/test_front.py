"""Findings first (issue 23): at 1280 x 800 the front page shows its findings, linked to the ledger, and
every chapter its verdict box, without scrolling. The built site is the session's (``site``: built once,
nothing re-executed); one headless Chromium renders it (``browser``)."""

from __future__ import annotations

import json

import nbformat
import pytest

from analyses import data
from analyses.chapters import intro
from analyses.chapters import ledger as book_ledger
from analyses.data import REPO_ROOT
from analyses.pages import links, verdict_box
from analyses.units import formats

VIEWPORT = {"width": 1280, "height": 800}
BOX_GLUE = "```{glue} verdict-box"
REPLAYING = ("plan", "buy-or-rent")  # chapters without claims of their own that replay the documents' claims


def boxed_chapters() -> list[str]:
    """Every chapter that checks claims, and those that replay them."""
    return sorted({c.chapter for c in data.claims()} | set(REPLAYING))


def _first_screen(page, selector: str) -> list[dict]:
    """The elements matching ``selector`` that are visible and start inside the first screen."""
    return page.evaluate(
        """([sel, h]) => [...document.querySelectorAll(sel)].map(e => {
              const r = e.getBoundingClientRect();
              return {top: r.top, bottom: r.bottom, height: r.height, href: e.getAttribute('href') || '',
                      text: e.textContent.trim(), visible: e.offsetParent !== null && r.height > 0};
           }).filter(x => x.visible && x.top >= 0 && x.bottom <= h)""",
        [selector, VIEWPORT["height"]],
    )


@pytest.mark.parametrize("slug", boxed_chapters())
def test_the_box_is_glued_right_under_each_title(slug):
    nb = nbformat.read(REPO_ROOT / "book" / f"{slug}.ipynb", as_version=4)
    title = nb.cells[0].source
    assert title.startswith("# ") and BOX_GLUE in title.split("\n## ")[0], slug


def test_the_box_lists_each_claim_with_its_verdict_and_a_link_to_its_section():
    frame = book_ledger.ledger("memory")
    box = verdict_box.verdict_box(frame)
    html = box._repr_html_()
    for row in frame.to_dict("records"):
        assert f'href="#{verdict_box.section_anchor(row["id"])}"' in html
        assert f"verdict-{row['verdict']}" in html
    assert repr(box).count("\n") == len(frame)
    other = verdict_box.verdict_box(frame, page="plan")
    assert 'href="memory.html#sec-' in other._repr_html_()


def test_the_purchase_rule_picks_cost_claims_first_and_never_an_unverifiable_one(whole_assessments):
    rows = list(whole_assessments)
    picked = intro.purchase_ranking(rows, 5)
    assert len(picked) == 5
    assert all(intro.purchase_figures(a) and a.verdict != "unverifiable" for a in picked)
    kinds = [a.kind != "cost" for a in picked]
    assert kinds == sorted(kinds)  # every cost claim before any other
    checks = [book_ledger.checks(a.claim.chapter)[a.claim.id] for a in picked]
    assert len(set(checks)) == len(checks)  # one claim per check


def test_front_page_shows_findings_with_ledger_links_in_its_first_screen(site, tab, whole_ledger):
    page = tab(**VIEWPORT)
    page.goto((site / "book" / "intro.html").as_uri())
    shown = _first_screen(page, ".audit-findings a.ledger-link")
    assert len(shown) >= 5, shown
    ledger = whole_ledger.set_index("id")
    ids = set(ledger.index)
    for link in shown:
        page_name, _, anchor = link["href"].partition("#")
        cid = anchor.removeprefix("check-")
        assert cid in ids and link["href"] == links.check_href(cid, ledger.loc[cid, "chapter"]), link
    groups = [g["text"] for g in _first_screen(page, ".audit-findings .af-group")]
    assert any(g.startswith(("✓", "What they get right")) or "get right" in g for g in groups), groups
    assert any("overstate" in g or "disagree" in g for g in groups), groups
    lead = _first_screen(page, ".audit-findings .af-lead")
    assert lead and str(len(ids)) in lead[0]["text"]
    # the links land on the claim's ledger row in the chapter that checks it
    target = shown[0]["href"]
    page.goto((site / "book" / target.partition("#")[0]).as_uri() + "#" + target.partition("#")[2])
    assert page.locator(f'tr[id="{target.partition("#")[2]}"]').count() == 1


def test_front_page_shows_both_directions_in_its_first_screen(site, tab, whole_ledger):
    """The ledger's ``direction`` column (issue 22): overstated and understated claims apart, first screen."""
    assert verdict_box.has_direction(whole_ledger)
    page = tab(**VIEWPORT)
    page.goto((site / "book" / "intro.html").as_uri())
    groups = " ".join(g["text"] for g in _first_screen(page, ".audit-findings .af-group"))
    assert "overstate" in groups and "understate" in groups, groups
    marks = " ".join(d["text"] for d in _first_screen(page, ".audit-findings .direction"))
    assert "overstates" in marks and "understates" in marks


@pytest.mark.parametrize("slug", boxed_chapters())
def test_every_chapter_shows_its_verdict_box_without_scrolling(site, tab, slug):
    page = tab(**VIEWPORT)
    page.goto((site / "book" / f"{slug}.html").as_uri())
    box = page.locator(".audit-verdict-box")
    assert box.count() == 1, slug
    head = _first_screen(page, ".audit-verdict-box .vb-head")
    rows = _first_screen(page, ".audit-verdict-box li")
    assert head and rows, (slug, head, rows)
    # every link of the box resolves to a section of its page (or another chapter's)
    hrefs = page.evaluate("[...document.querySelectorAll('.audit-verdict-box a')].map(a => a.getAttribute('href'))")
    by_page: dict[str, list[str]] = {}
    for href in hrefs:
        other, _, anchor = href.partition("#")
        by_page.setdefault(other, []).append(anchor)
    for other in sorted(by_page):  # the page's own anchors ("") first, then each other page once
        if other:
            page.goto((site / "book" / other).as_uri())
        for anchor in by_page[other]:
            assert page.locator(f'[id="{anchor}"]').count() == 1, (slug, f"{other}#{anchor}")


def test_each_page_stays_under_150_kb(site):
    """No page of the site reaches 150 KB, shared scripts and stylesheets aside: the chapters, the
    ledger's overview and its page per document (one page for every claim passed 180 KB), the
    Chinese edition and the printable ledger."""
    sizes = {str(p.relative_to(site)): p.stat().st_size for p in site.rglob("*.html")}
    assert len(sizes) >= 20 and "book/claims-000.html" in sizes and "zh/ledger.html" in sizes
    big = {k: v for k, v in sizes.items() if v >= 150_000}
    assert big == {}, json.dumps(big)


def test_the_findings_split_by_direction(whole_ledger):
    """The front page's findings from the ledger's own direction column (issue 22): overstated and
    understated claims are separate findings, each row says its direction, and the counts are the
    ledger's."""
    from analyses.chapters.intro import figures

    res = intro.compute(intro.SPEC.validate({}))
    assert [g.key for g in res.groups] == ["right", "overstates", "understates"]
    ledger = whole_ledger
    counted = ledger[ledger["verdict"] != "consistent"]["direction"].value_counts()
    assert res.directions == {d: int(counted.get(d, 0)) for d in ("overstates", "understates")}
    html = figures.findings(res)._repr_html_()
    assert "What they overstate" in repr(figures.findings(res)) and "What they understate" in repr(
        figures.findings(res)
    )
    assert "direction-overstates" in html and "direction-understates" in html


def test_clip_cuts_at_a_word_and_says_so():
    assert verdict_box.clip("short enough", 20) == "short enough"
    assert verdict_box.clip("one two three four", 12) == "one two…"
    assert verdict_box.short_reason("The stated 2 agrees with the recomputed 2; because the check says so.") == (
        "Because the check says so."
    )
    assert verdict_box.short_reason("Nothing public recomputes this figure; a case.") == (
        "Nothing public recomputes this figure; a case."
    )


# --------------------------------------------------------------------------------------------
# The buyer's answer first (issue 35): the bottom line in the first screen of the front page and the
# buy-or-rent page, at a desk's and a phone's size; every chapter's takeaway above its first section
# --------------------------------------------------------------------------------------------

SCREENS = ({"width": 1280, "height": 800}, {"width": 390, "height": 844})


@pytest.fixture(scope="module")
def bottom_rows() -> list:
    """The bottom line's rows as the package computes them (the front page's own computation)."""
    from analyses.pages import bottom_line

    res = intro.compute(intro.SPEC.defaults())
    return bottom_line.answers(res.runs, res.workloads)


def test_the_bottom_line_names_the_cheapest_options_and_the_break_even(bottom_rows):
    """Four workloads (the documents' three and the reader's default run), each with a rented and an
    owned option and the busy share above which owning wins: the owned run's cost over the rented
    run's, below 1 at the scenario's prices, and the sentence gives its range."""
    from analyses.pages import bottom_line
    from analyses.scenario import buying

    assert [a.key for a in bottom_rows] == [*(k for k, _, _ in buying.WORKLOADS), buying.READER]
    for a in bottom_rows:
        assert a.rented["basis"] == "rented" and a.owned["basis"] == "owned"
        assert a.owning_wins_above == pytest.approx(a.owned["cost"] / a.rented["cost"])
        assert 0 < a.owning_wins_above < 1
    said = bottom_line.sentence(bottom_rows)
    shares = sorted({formats.percent(a.owning_wins_above) for a in bottom_rows})
    assert shares[0].removesuffix("%") in said and shares[-1] in said and "rent" in said
    never = [bottom_line.Answer(a.key, a.label, a.rented, a.owned, 1.2) for a in bottom_rows]
    assert "at any busy share" in bottom_line.sentence(never) or "however busy" in bottom_line.sentence(never)
    html = bottom_line.block(bottom_rows, "RMB")._repr_html_()
    assert html.count('class="bl-share"') == len(bottom_rows)


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s['width']}px")
@pytest.mark.parametrize("slug", ["intro", "buy-or-rent"])
def test_the_bottom_line_is_in_the_first_screen(site, tab, bottom_rows, slug, screen):
    """The sentence, and the cheapest rented and owned option with the break-even busy share of each
    workload, start and end inside the first screen (at 390 px the table is a block per workload)."""
    page = tab(**screen)
    page.goto((site / "book" / f"{slug}.html").as_uri())
    shown = page.evaluate(
        """h => [...document.querySelectorAll('.audit-bottom-line .bl-sentence, .audit-bottom-line tbody tr')].map(e => {
              const r = e.getBoundingClientRect();
              return {text: e.textContent, inside: r.height > 0 && r.top >= 0 && r.bottom <= h}; })""",
        screen["height"],
    )
    assert len(shown) == 1 + len(bottom_rows), shown
    assert all(s["inside"] for s in shown), [s for s in shown if not s["inside"]]
    sentence, rows = shown[0]["text"], [s["text"] for s in shown[1:]]
    assert "busy" in sentence and "%" in sentence
    for a, text in zip(bottom_rows, rows, strict=True):
        assert f"× {a.rented['gpu']}" in text and f"× {a.owned['gpu']}" in text, text
        assert formats.percent(a.owning_wins_above) in text, text


def _sections_and_takeaways(page) -> dict:
    return page.evaluate(
        """() => { const top = s => { const e = document.querySelector(s); return e ? e.getBoundingClientRect().top : null; };
                   return {takeaway: top('.bd-article .audit-takeaway, .bd-article .audit-bottom-line'),
                           section: top('.bd-article section section > h2'),
                           h1: document.querySelectorAll('h1').length}; }"""
    )


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s['width']}px")
def test_every_chapter_has_its_takeaway_above_its_first_section(site, tab, screen):
    page = tab(**screen)
    missing = {}
    for path in sorted((site / "book").glob("*.html")):
        page.goto(path.as_uri())
        where = _sections_and_takeaways(page)
        if where["takeaway"] is None or (where["section"] is not None and where["takeaway"] >= where["section"]):
            missing[path.name] = where
    assert missing == {}


def test_every_page_has_one_h1(site):
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts and "downloads" not in p.parts]
    counts = {str(p.relative_to(site)): p.read_text().count("<h1") for p in pages}
    redirects = {k for k, v in counts.items() if v == 0 and "http-equiv" in (site / k).read_text()}
    assert {k: v for k, v in counts.items() if v != 1 and k not in redirects} == {}
