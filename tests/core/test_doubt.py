"""Doubt on show (issue 34 item 3): a verdict that holds in fewer than half of the scenario's draws, or
whose flip point lies inside its input's 90% range, is never shown as a bare verdict: every page, box
and download that shows it reads "depends on <input>: <verdict> above X, <verdict> below" (or its
Chinese). These tests render each place from the ledger and read the row of every claim in doubt; a
built site, where there is one, is read too (tests/site builds it for the full suite)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from analyses.chapters import ledger, ledger_zh
from analyses.chapters.claims.figures import printable_page
from analyses.pages import zh
from analyses.pages.ledger_html import ledger_html
from analyses.pages.verdict_box import verdict_box
from analyses.site.downloads import ledger_text
from analyses.verdicts import robustness

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def doubtful(whole_assessments) -> list[robustness.Assessment]:
    rows = [
        a for a in whole_assessments if a.holds < robustness.DOUBT_HOLDS or (a.margin is not None and a.margin <= 1)
    ]
    assert rows, "no verdict in doubt: the test would check nothing"
    return rows


def test_doubt_is_exactly_the_rule(whole_assessments, doubtful):
    ids = {a.claim.id for a in doubtful}
    for a in whole_assessments:
        assert (a.doubt is not None) == (a.claim.id in ids), a.claim.id
        if a.doubt is None:
            assert a.shown == a.verdict
            continue
        assert a.shown.startswith("depends on ") and a.shown != a.verdict
        if a.doubt.threshold is not None:  # the two sides of its flip point, the verdict on the scenario's side
            assert {a.doubt.above, a.doubt.below} == {a.verdict, a.flip["verdict"]}
            assert f"{a.doubt.above} above {a.doubt.threshold_text}, {a.doubt.below} below" in a.shown


def test_the_doubt_rule_on_made_up_rows():
    flip = {
        "label": "GPU utilisation",
        "input": "utilisation",
        "threshold": 0.55,
        "threshold_text": "55%",
        "side": "above",
        "verdict": "inconsistent",
    }
    d = robustness.doubt_of("consistent", 0.53, 0.62, flip, ())
    assert d.text() == "depends on GPU utilisation: inconsistent above 55%, consistent below"
    assert robustness.doubt_of("consistent", 0.9, 1.4, flip, ()) is None  # robust: shown bare
    low = robustness.doubt_of("consistent", 0.3, None, None, (("strictly, 6-12 months", "implausible"),))
    assert low.text().startswith("depends on the reading (strictly, 6-12 months): consistent in 30%")


def _row_html(page: str, claim_id: str, tag: str = "tr") -> str:
    """The HTML of the element (row, list item, card) that carries ``claim_id``."""
    pattern = rf"<{tag}\b(?:(?!</?{tag}\b).)*{re.escape(claim_id)}(?:(?!</{tag}>).)*</{tag}>"
    found = re.findall(pattern, page, flags=re.S)
    assert found, f"{claim_id} not found in the page"
    return "".join(found)


def test_no_bare_verdict_in_the_ledger_the_boxes_and_the_printable_page(whole_assessments, doubtful):
    frame = ledger.frame(whole_assessments)
    table = ledger_html(frame)
    printable = printable_page(frame)
    for a in doubtful:
        for page in (table, printable):
            row = _row_html(page, f"<code>{a.claim.id}</code>")
            assert "depends on" in row and "◐" in row, a.claim.id
        box = verdict_box(frame[frame["chapter"] == a.claim.chapter], page=a.claim.chapter)
        item = _row_html(box._repr_html_(), f"#sec-{a.claim.id.replace('.', '-')}", "li")
        assert "depends on" in item, a.claim.id
        assert f"depends on {a.doubt.depends_on}" in repr(box)


def test_the_downloads_carry_the_doubt(whole_assessments, doubtful):
    frame = ledger.frame(whole_assessments)
    csv = pd.read_csv(__import__("io").StringIO(ledger_text(frame, "csv")))
    records = {r["id"]: r for r in json.loads(ledger_text(frame, "json"))}
    for a in doubtful:
        row = csv.set_index("id").loc[a.claim.id]
        assert row["shown"] == a.shown and row["depends_on"] == a.doubt.depends_on
        assert records[a.claim.id]["shown"] == a.shown


def test_no_bare_verdict_in_the_chinese_edition(doubtful):
    frame = ledger_zh.ledger_zh()
    cards = zh.ledger_cards(frame, "../")
    for a in doubtful:
        row = frame.set_index("id").loc[a.claim.id]
        assert row["shown_zh"].startswith(("取决于", "判定不确定")), a.claim.id
        card = _row_html(cards, f'id="{zh.anchor(a.claim.id)}"', "article")
        assert row["shown_zh"].split("：")[0] in card
    chapter = doubtful[0].claim.chapter
    items = zh.box_items(frame[frame["chapter"] == chapter], "../", "ledger.html")
    assert "取决于" in items or "判定不确定" in items


def test_a_built_site_shows_no_bare_verdict_in_doubt(doubtful):
    """Where the book has been built, its downloads and pages carry the doubt too."""
    site = ROOT / "_build" / "html"
    if not (site / "downloads" / "ledger.csv").is_file():
        pytest.skip("no built site (make book)")
    csv = pd.read_csv(site / "downloads" / "ledger.csv").set_index("id")
    printable = (site / "downloads" / "ledger-print.html").read_text()
    for a in doubtful:
        if "shown" not in csv.columns:
            pytest.fail("the built ledger.csv has no shown column: rebuild the book")
        assert csv.loc[a.claim.id, "shown"].startswith("depends on")
        assert "depends on" in _row_html(printable, f"<code>{a.claim.id}</code>")
        page = (site / "book" / f"{a.claim.chapter}.html").read_text()
        assert "depends on" in _row_html(page, f"sec-{a.claim.id.replace('.', '-')}", "li")
