"""The ledger page: counts, rules per kind and flip points agree with the ledger itself."""

from __future__ import annotations

import pytest

from analyses import data, verdicts
from analyses.chapters import claims as ch
from analyses.site.notebook import fmt


@pytest.fixture(scope="module")
def res() -> ch.Result:
    return ch.compute(ch.SPEC.defaults())


def test_counts_cover_every_claim_once(res):
    assert res.counts["all"] == len(data.claims()) == len(res.ledger)
    assert sum(res.counts[v] for v in verdicts.VERDICTS) == res.counts["all"]


def test_every_kind_has_its_rule_and_its_claims(res):
    assert list(res.rules["kind"]) == list(verdicts.RULES)
    assert res.rules["claims"].sum() == len(res.ledger)
    shown = res.rules.set_index("kind")["rule"]
    assert all(shown[k] == rule.text() for k, rule in verdicts.RULES.items())


def test_flip_points_are_the_ledgers_flips(res):
    flipping = set(res.ledger.loc[res.ledger["flips_if"].astype(bool), "id"])
    assert set(res.flips["claim"]) == flipping
    assert res.flips["percentile"].between(5, 95).all()
    row = res.flips.set_index("claim").loc["000-3-table-tco"]
    assert (row["verdict"], row["flips to"]) == ("consistent", "implausible")


def test_filters_narrow_every_table():
    cfg = ch.SPEC.validate({"verdict": "implausible", "document": "000_f164c1abc5db046d.txt"})
    res = ch.compute(cfg)
    assert set(res.ledger["verdict"]) == {"implausible"} and set(res.ledger["document"]) == {cfg["document"]}
    assert res.counts["all"] == res.counts["implausible"] == len(res.ledger) > 0
    assert set(res.flips["claim"]) <= set(res.ledger["id"])


def test_summaries_chart_and_captions_follow_the_ledger(res):
    by_kind = ch.summary(res.ledger, "kind").set_index("kind")
    assert by_kind.loc["all", "total"] == len(res.ledger)
    assert by_kind.drop(index="all")["total"].sum() == len(res.ledger)
    view = ch.summary_view(res.ledger, "chapter")
    assert "<table" in view._repr_html_() and "total" in repr(view)
    chart = ch.verdict_chart(res.ledger).to_dict()
    counted = next(iter(chart["datasets"].values()))
    assert sum(r["claims"] for r in counted) == len(res.ledger)  # one bar segment per topic and verdict
    caption = ch.flip_caption(res)
    assert f"The {len(res.flips)} claims" in caption and fmt(res.level, pct=True, sig=2) in caption
    empty = ch.compute(ch.SPEC.validate({"verdict": "unverifiable"}))
    assert empty.flips.empty or set(empty.flips["verdict"]) == {"unverifiable"}
    if empty.flips.empty:
        assert ch.flip_caption(empty).startswith("No verdict")


def test_ledger_table_shows_every_column_and_filters_on_its_cells(res):
    page = ch.LedgerTable(res.ledger)._repr_html_()
    printable = ch.printable_page(res.ledger)
    for col in ("verdict", "id", "document", "section", "kind", "topic", "chapter"):
        assert f'data-field="{col}"' in page and f'data-field="{col}"' in printable, col
    for cid in res.ledger["id"]:
        assert f'href="{res.ledger.set_index("id").loc[cid, "chapter"]}.html#check-{cid}"' in page
        assert f"../book/{res.ledger.set_index('id').loc[cid, 'chapter']}.html#check-{cid}" in printable
    # the document filter's values are the short names the cells show, titled with the file name
    assert '<option value="000" title="000_f164c1abc5db046d.txt">' in page
    assert '<span data-field="document">000</span>' in page  # the file name once, in the filter, not on 80 rows
    assert repr(ch.LedgerTable(res.ledger)).count("\n") == len(res.ledger)  # header + one line a claim
    assert [link for link, _ in ch.download_links().items][-1].endswith("ledger-print.html")
