"""The ledger: every claim has exactly one check, and the ledger has every column for every row."""

from __future__ import annotations

import re

from analyses import chapters, data, verdicts
from analyses.chapters import ledger


def test_every_check_has_a_claim_of_its_chapter():
    claims = {c.id: c for c in data.claims()}
    for slug in chapters.CHAPTERS:
        for claim_id in ledger.checks(slug):
            assert claim_id in claims, f"{slug} checks unknown claim {claim_id}"
            assert claims[claim_id].chapter == slug, f"{claim_id} is checked in {slug}, not its chapter"


def test_every_claim_has_a_check():
    checks = ledger.all_checks()
    assert [c.id for c in data.claims() if c.id not in checks] == []


def test_ledger_columns_and_verdicts():
    frame = ledger.ledger()
    assert list(frame.columns) == ledger.LEDGER_COLUMNS
    assert len(frame) == len(data.claims())
    assert set(frame["verdict"]) <= set(verdicts.VERDICTS)
    assert set(frame["kind"]) <= set(verdicts.RULES)
    assert frame["holds"].between(0, 1).all()
    assert (frame["reason"].str.len() > 10).all() and (frame["recomputed"].str.len() > 0).all()


def test_a_chapter_ledger_at_its_defaults_equals_the_book_ledger(whole_ledger):
    book = whole_ledger.set_index("id")
    for slug in ("throughput",):
        own = ledger.ledger(slug, chapters.spec(slug).defaults()).set_index("id")
        assert own.equals(book.loc[own.index]), slug


def test_slider_flip_marks_agree_with_the_ledgers_flips_if(whole_assessments):
    """A flip the ledger names (its input, its threshold) is marked at the same value by the slider
    over that input, to the two significant figures the ledger shows."""
    import pytest

    flips = {a.claim.id: a.flip for a in whole_assessments if a.flip}
    compared = 0
    for slug in chapters.chapter_slugs():
        module = chapters.module(slug)
        if not hasattr(module, "compute"):
            continue
        for s in getattr(module.compute(chapters.spec(slug).defaults()), "sliders", ()):
            for row in s.flips.itertuples():
                flip = flips.get(row.claim)
                if flip is None or flip["input"] != s.input:
                    continue
                near = min(s.flips[s.flips["claim"] == row.claim]["x"], key=lambda x: abs(x - flip["threshold"]))
                assert near == pytest.approx(flip["threshold"], rel=0.02), (row.claim, s.input)
                compared += 1
    assert compared >= 5


def test_the_ledger_writes_money_in_the_documents_rmb():
    """A flip threshold on a USD price reads in RMB, as every other amount of the ledger (one currency
    per page: the ledger's and the cost chapter's money is the documents')."""
    from analyses import scenario
    from analyses.verdicts import robustness

    s = scenario.values()
    assert robustness.in_ledger_currency(12_000, "USD per GPU", s) == (12_000 * s["usd_cny"], "RMB per GPU")
    assert robustness.in_ledger_currency(8.6, "CNY per GPU-hour", s) == (8.6, "RMB per GPU-hour")
    assert robustness.in_ledger_currency(7.1, "CNY per USD", s) == (7.1, "CNY per USD")  # the rate itself
    assert robustness.in_ledger_currency(3.0, "ratio", s) == (3.0, "ratio")
    text = " ".join(ledger.ledger("tco")[["reason", "flips_if", "recomputed"]].fillna("").to_numpy().ravel())
    assert "RMB" in text and not re.search(r"\d(?: million| billion)? USD\b", text)
