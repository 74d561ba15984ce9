"""The ledger page: counts, rules per kind and flip points agree with the ledger itself."""

from __future__ import annotations

import pytest

from analyses import data, verdicts
from analyses.chapters import claims as ch


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
