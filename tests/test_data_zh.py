"""The Chinese edition's data (issue 24 item 1): one Chinese row per claim and back, our own
wording with a locator, the figures as the documents write them taken from claims.csv, and the
Chinese words for verdicts, directions and kinds defined once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyses import data
from analyses.verdicts import RULES, VERDICTS

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_claim_has_exactly_one_chinese_row_and_back():
    ids = [c.id for c in data.claims()]
    zh = data.claims_zh()
    assert list(zh["id"]) == ids  # the same claims, in ledger order, each once
    assert zh["id"].is_unique


def test_chinese_rows_are_chinese_with_a_locator_and_the_written_figures():
    zh = data.claims_zh().set_index("id")
    claims = data.table("claims").set_index("id")
    figures = claims["written"] if "written" in claims.columns else claims["stated"]
    for cid, row in zh.iterrows():
        assert len(CJK.findall(row["claim_zh"])) >= 10, cid  # a sentence in Chinese, not a label
        assert re.match(r"^(开篇|第[一二三四五六]部分)", row["locator_zh"]), (cid, row["locator_zh"])
        # the part named by the locator is the claim's section: 开篇 is "0", 第二部分 is "2.x"
        section = claims.loc[cid, "section"].split(".")[0]
        part = "开篇" if section == "0" else f"第{'〇一二三四五六'[int(section)]}部分"
        assert row["locator_zh"].startswith(part), (cid, section, row["locator_zh"])
        assert row["written"] == figures[cid]  # carried from claims.csv, never retyped


def test_documents_are_both_cited_files_with_their_titles():
    docs = data.documents().set_index("document")
    assert set(docs.index) == {c.document for c in data.claims()}
    for name, row in docs.iterrows():
        assert name.startswith(row["code"] + "_")
        assert CJK.search(row["title_zh"]) and not CJK.search(row["title_en"])


def test_chinese_words_cover_every_verdict_direction_and_kind_once():
    verdicts = data.terms_zh("verdict")
    assert set(verdicts) == set(VERDICTS)
    assert set(data.terms_zh("kind")) == set(RULES)
    assert set(data.terms_zh("direction")) == {"overstates", "understates"}
    words = [*verdicts.values(), *data.terms_zh("kind").values(), *data.terms_zh("direction").values()]
    assert len(words) == len(set(words))  # no word means two things
    with pytest.raises(KeyError, match="groups: direction, feature, input, kind, verdict"):
        data.terms_zh("verdicts")


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the audited documents are kept beside the repository")
def test_chinese_paraphrases_are_our_own_words():
    """No paraphrase repeats a run of the original's Chinese prose: figures, product names and
    short terms (ASCII runs) aside, no common run of more than seven Chinese characters."""
    original = "".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("0*.txt")))
    runs = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]{8,}")
    for row in data.claims_zh().itertuples():
        for run in runs.findall(row.claim_zh):
            for i in range(len(run) - 7):
                assert run[i : i + 8] not in original, (row.id, run[i : i + 8])
