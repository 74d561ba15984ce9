"""The ledger page: counts, rules per kind and flip points agree with the ledger itself."""

from __future__ import annotations

from analyses import data, verdicts
from analyses.chapters import claims as ch
from analyses.chapters import claims_000, claims_001
from analyses.chapters.claims import figures, text
from analyses.pages.ledger_html import LedgerTable, download_links
from analyses.units.formats import fmt


def test_counts_cover_every_claim_once(default):
    assert default.counts["all"] == len(data.claims()) == len(default.ledger)
    assert sum(default.counts[v] for v in verdicts.VERDICTS) == default.counts["all"]


def test_every_kind_has_its_rule_and_its_claims(default):
    assert list(default.rules["kind"]) == list(verdicts.RULES)
    assert default.rules["claims"].sum() == len(default.ledger)
    shown = default.rules.set_index("kind")["rule"]
    assert all(shown[k] == rule.text() for k, rule in verdicts.RULES.items())


def test_flip_points_are_the_ledgers_flips(default):
    # the chart shows the flips inside the 90% range (margin up to 1); flips_if names those beyond it too
    flipping = set(default.ledger.loc[default.ledger["margin"].le(1.0), "id"])
    assert flipping < set(default.ledger.loc[default.ledger["flips_if"].astype(bool), "id"])
    assert set(default.flips["claim"]) == flipping
    # a margin is shown at two figures, and one shown as 1.0 (up to 1.05 half-widths) counts as inside:
    # its flip lies between the 4th and 96th percentiles (z = 1.05 x 1.645 = 1.73)
    assert default.flips["percentile"].between(4, 96).all()
    row = default.flips.set_index("claim").loc["000-6-payback-6-12-months"]
    assert (row["verdict"], row["flips to"]) == ("implausible", "consistent")


def test_filters_narrow_every_table(result):
    cfg = ch.SPEC.validate({"verdict": "implausible", "document": "001_df9bc65650076e7a.txt"})
    default = result(**cfg)
    assert set(default.ledger["verdict"]) == {"implausible"} and set(default.ledger["document"]) == {cfg["document"]}
    assert default.counts["all"] == default.counts["implausible"] == len(default.ledger) > 0
    assert set(default.flips["claim"]) <= set(default.ledger["id"])


def test_summaries_chart_and_captions_follow_the_ledger(default, result):
    by_kind = ch.summary(default.ledger, "kind").set_index("kind")
    assert by_kind.loc["all", "total"] == len(default.ledger)
    assert by_kind.drop(index="all")["total"].sum() == len(default.ledger)
    view = figures.summary_view(default.ledger, "chapter")
    assert "<table" in view._repr_html_() and "total" in repr(view)
    chart = figures.verdict_chart(default.ledger).to_dict()
    counted = next(iter(chart["datasets"].values()))
    assert sum(r["claims"] for r in counted) == len(default.ledger)  # one bar segment per topic and verdict
    caption = text.flip_caption(default)
    assert f"The {len(default.flips)} claims" in caption and fmt(default.level, pct=True, sig=2) in caption
    empty = result(**{"verdict": "unverifiable"})
    assert empty.flips.empty or set(empty.flips["verdict"]) == {"unverifiable"}
    if empty.flips.empty:
        assert text.flip_caption(empty).startswith("No verdict")


def test_ledger_table_shows_every_column_and_filters_on_its_cells(default):
    page = LedgerTable(default.ledger)._repr_html_()
    printable = figures.printable_page(default.ledger)
    for col in ("verdict", "id", "document", "section", "kind", "topic", "chapter"):
        assert f'data-field="{col}"' in page and f'data-field="{col}"' in printable, col
    for cid in default.ledger["id"]:
        assert f'href="{default.ledger.set_index("id").loc[cid, "chapter"]}.html#check-{cid}"' in page
        assert f"../book/{default.ledger.set_index('id').loc[cid, 'chapter']}.html#check-{cid}" in printable
    # the document filter's values are the short names the cells show, titled with the file name
    assert '<option value="000" title="000_f164c1abc5db046d.txt">' in page
    assert '<span data-field="document">000</span>' in page  # the file name once, in the filter, not on 80 rows
    # a blank value is the "all" option already: no second, empty option (a consistent claim has no direction)
    assert '<option value="" title=""></option>' not in page
    assert repr(LedgerTable(default.ledger)).count("\n") == len(default.ledger)  # header + one line a claim
    assert [link for link, _ in download_links().items][-1].endswith("ledger-print.html")


def test_the_ledger_pages_split_the_ledger_by_document(default):
    """Each claim is on the page of its document, once, with the verdict and reason of the whole
    ledger; the overview links each page with its counts, and a page's verdict filter keeps its rows."""
    pages = [m.compute(m.SPEC.defaults()) for m in (claims_000, claims_001)]
    assert sum(len(p.ledger) for p in pages) == len(default.ledger)
    for page in pages:
        whole = default.ledger[default.ledger["document"] == page.document].reset_index(drop=True)
        assert page.ledger.reset_index(drop=True).equals(whole), page.code
        assert page.counts == {**{v: int((whole["verdict"] == v).sum()) for v in verdicts.VERDICTS}, "all": len(whole)}
        assert sum(page.directions.values()) == int(whole["direction"].isin(verdicts.DIRECTIONS).sum())
        assert page.title_en == data.documents().set_index("document").loc[page.document, "title_en"]
        listed = figures.document_pages(default.ledger)._repr_html_()
        assert f'href="claims-{page.code}.html"' in listed and f"{len(whole)} claims" in listed
    kept = claims_001.compute(claims_001.SPEC.validate({"verdict": "implausible"}))
    assert set(kept.ledger["verdict"]) == {"implausible"} and kept.counts["all"] == len(kept.ledger) > 0


def test_directions_are_counted_and_shown_with_their_symbols(default):
    """The claims page counts the claims per verdict and direction, and heads each direction with its symbol
    and word (not colour alone)."""
    table = ch.direction_summary(default.ledger).set_index("verdict")
    with_direction = default.ledger[default.ledger["direction"] != ""]
    assert table.loc["all", "total"] == len(with_direction) == sum(default.directions.values())
    assert "consistent" not in table.index
    html = figures.direction_view(default.ledger)._repr_html_()
    assert "▲ overstates" in html and "▼ understates" in html
