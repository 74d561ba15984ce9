"""The Chinese ledger (issue 24 item 1): every English ledger row has its Chinese row with the same
verdict and the same figures, in the Chinese words data/terms_zh.csv defines, with a reason
generated from the same assessment; and the Chinese number formats."""

from __future__ import annotations

import functools
import math
import re

import pandas as pd
import pytest

from analyses import data
from analyses.chapters import ledger, ledger_zh
from analyses.units import zh

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?(?:万|亿)?")
SUPER = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def value_of(token: str) -> float:
    """A printed figure's value: 7,580 -> 7580; 1.64×10²⁰ -> 1.64e20; 4.2万 -> 42000."""
    scale = {"万": 1e4, "亿": 1e8}.get(token[-1], 1.0)
    token = token.rstrip("万亿").replace(",", "")
    if "×10" in token:
        mantissa, exponent = token.split("×10")
        return float(mantissa) * 10 ** int(exponent.translate(SUPER)) * scale
    return float(token) * scale


@functools.cache
def both() -> tuple[pd.DataFrame, pd.DataFrame]:
    return ledger.ledger(), ledger_zh.ledger_zh()


def test_every_english_row_has_its_chinese_row_with_the_same_verdict():
    en, cn = both()
    assert list(cn["id"]) == list(en["id"])
    words = data.terms_zh("verdict")
    for (_, e), (_, c) in zip(en.iterrows(), cn.iterrows(), strict=True):
        assert c["verdict"] == e["verdict"], e["id"]
        assert c["verdict_zh"] == words[e["verdict"]], e["id"]
        assert c["kind"] == e["kind"] and c["holds"] == e["holds"], e["id"]
        if "direction" in en.columns:
            assert c["direction"] == e["direction"], e["id"]
            assert c["direction_zh"] == data.terms_zh("direction").get(e["direction"], ""), e["id"]


def test_every_chinese_row_carries_the_figures_as_written_and_the_english_recomputed_figure():
    en, cn = both()
    claims = data.table("claims").set_index("id")
    figures = claims["written"] if "written" in claims.columns else claims["stated"]
    checked = 0
    for (_, e), (_, c) in zip(en.iterrows(), cn.iterrows(), strict=True):
        assert c["written"] == figures[e["id"]]
        if c["recomputed_zh"].startswith("无"):
            # no figure recomputed: nothing public can check it, or a source decides without a figure
            assert c["verdict"] == "unverifiable" or "矛盾" in c["reason_zh"], e["id"]
            assert c["recomputed_zh"].startswith("无（没有") == (c["verdict"] == "unverifiable"), e["id"]
            continue
        # the Chinese recomputed figure is a figure the English reason or recomputation prints
        first = value_of(NUMBER.search(c["recomputed_zh"]).group())
        text = e["reason"] + " " + e["recomputed"]
        english = [value_of(t) for t in NUMBER.findall(text)]
        # "4.3 million RMB", "4.3–4.6 million RMB": the English words' scale (the Chinese writes 430万元)
        english += [value_of(t) * 1e6 for t in re.findall(rf"({NUMBER.pattern})(?=(?:–[\d.,]+)? million)", text)]
        english += [value_of(t) * 1e6 for t in re.findall(rf"({NUMBER.pattern})–[\d.,]+ million", text)]
        assert any(math.isclose(first, x, rel_tol=5e-3) for x in english), (e["id"], c["recomputed_zh"], e["reason"])
        checked += 1
    assert checked >= 50


def test_chinese_reasons_are_chinese_sentences_that_name_the_rule_step():
    _, cn = both()
    kinds = data.terms_zh("kind")
    for row in cn.itertuples():
        # Chinese words; Latin only in units (GB/s, FLOP, token) and assumption names (checkpoint_write_s)
        latin = re.sub(r"若假设 \S+ |token", "", row.reason_zh)
        assert row.reason_zh.endswith("。") and not re.search(r"(?<![A-Za-z])[a-z]{3,}", latin), row.id
        if (
            row.verdict in ("inconsistent", "implausible")
            and "相矛盾" not in row.reason_zh
            and "推算" not in row.reason_zh
        ):
            assert f"超出{kinds[row.kind]}类说法" in row.reason_zh, row.id
        if row.verdict == "unverifiable":  # nothing public recomputes it, or the kind's rule cannot
            assert "没有公开" in row.reason_zh or "无法据此核实" in row.reason_zh, row.id


def test_a_claim_without_its_chinese_row_is_named(monkeypatch):
    rows = ledger.assessments(chapter="memory")
    zh_rows = data.claims_zh()
    monkeypatch.setattr(data, "claims_zh", lambda: zh_rows[zh_rows["id"] != rows[0].claim.id])
    with pytest.raises(LookupError, match=f"no Chinese row for 1 claim.*{re.escape(rows[0].claim.id)}"):
        ledger_zh.frame(rows)


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (7580.3, "years", "7,580年"),
        (0.453, "fraction", "45.3%"),
        (2.34, "x", "2.34倍"),
        (42000.0, "RMB/month", "4.2万元/月"),
        (1.75e11, "parameters", "1,750亿参数"),
        (1.2e24, "FLOP", "1.20×10²⁴ FLOP"),
        (900.0, "GB/s", "900GB/s"),
        (40.0, "s", "40.0秒"),
    ],
)
def test_chinese_numbers_keep_the_english_digits_with_chinese_units(value, unit, shown):
    assert zh.number(value, unit) == shown


def test_chinese_intervals_as_written():
    assert zh.interval(2.5, 3, "x", written=True) == "2.5–3倍"
    assert zh.interval(0.9, math.inf, "fraction", written=True) == "≥90%"
    assert zh.interval(-math.inf, 50, "%", written=True) == "≤50%"
    assert zh.interval(200, 900, "years", written=True) == "200–900年"
    assert zh.as_written(80000, "RMB/month") == "8万元/月"
    assert zh.as_written(16.6904, "days") == "16.7天"  # an implied figure keeps three figures


def test_sizes_and_token_counts_from_a_trillion_in_wan_yi():
    assert zh.wan_yi_large(2e12, 2) == "2万亿"
    assert zh.wan_yi_large(1.01219e11, 3) == "1,010亿"
    assert zh.wan_yi_large(5.5296e7, 2) == "5,500万"
    assert zh.wan_yi_large(8750, 3) == "8,750"
