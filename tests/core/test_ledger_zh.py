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
        assert c["written"] == zh.punctuate(figures[e["id"]])  # the figures as written, full-width separators
        if c["recomputed_zh"].startswith("无"):
            # no figure recomputed: nothing public can check it, or a source decides without a figure
            # (or a source contradicts it outright: 001 §2.3's MIG oversubscription, issue 34)
            contradicted = bool(ledger_zh.finding(data.claim(e["id"])).contradiction)
            assert c["verdict"] == "unverifiable" or "早已具备" in c["reason_zh"] or contradicted, e["id"]
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
        # Chinese sentences: Latin only in names and units (NVLink, GPUDirect Storage, gdsio, token),
        # never two English words in a row, never a parameter name
        assert row.reason_zh.endswith("。") and not re.search(r"\b[a-z]{2,} [a-z]{2,}\b", row.reason_zh), row.id
        assert "_" not in row.reason_zh and "英文版" not in row.reason_zh, row.id
        if (
            row.verdict in ("inconsistent", "implausible")
            and "早已具备" not in row.reason_zh
            and "按文中自己的数字" not in row.reason_zh
            and not ledger_zh.finding(data.claim(row.id)).contradiction  # a source settles it, no tolerance
        ):
            assert f"超出{kinds[row.kind]}类说法允许" in row.reason_zh, row.id
        if row.verdict == "unverifiable":  # nothing public recomputes it, or an anecdote nothing public records
            assert "没有公开" in row.reason_zh or "无法核实" in row.reason_zh, row.id


def test_chinese_reasons_carry_what_the_english_reason_says():
    """Each part of the English reason has its Chinese: the features an older GPU already had, the
    reading taken and the readings that would turn it, the documents' own speed-up, the flip point
    with the input's Chinese label and its threshold in 元, how often it holds."""
    en, cn = both()
    inputs = data.terms_zh("input")
    for (_, e), (_, c) in zip(en.iterrows(), cn.iterrows(), strict=True):
        reason = c["reason_zh"]
        if "not new with B300" in e["reason"]:
            assert "并非B300的新功能" in reason, e["id"]
        if "already has" in e["reason"]:
            assert "早已具备" in reason, e["id"]
        if "reading taken" in e["reason"]:
            assert "本书的读法：" in reason, e["id"]
        if "at the documents' own" in e["reason"]:
            assert "若按文章自己的单卡加速比计算" in reason, e["id"]
        for label in re.findall(r"it would turn \w+ if (.+?) (?:below|above) ", e["reason"]):
            assert any(inputs[name] in reason for name in inputs if label.startswith(scenario_label(name))), (
                e["id"],
                label,
            )
        if "USD" in reason or "美元" in reason:
            raise AssertionError(f"{e['id']}: a threshold in USD: {reason}")
        if c["holds"] < 1 and "判定在" not in reason:
            raise AssertionError(f"{e['id']}: holds {c['holds']} not said")


def scenario_label(name: str) -> str:
    from analyses import scenario

    return scenario.assumption(name).label


def test_the_generator_bugs_stay_fixed():
    """No unclosed bracket in a reason or its first sentence (the box's short reason), a percent sign
    where the English has one (2.50%, not 2.50), ranges with ～, no parameter name anywhere."""
    from analyses.pages import zh as pages_zh

    _, cn = both()
    for row in cn.itertuples():
        for text in (row.reason_zh, pages_zh.short_reason(row.reason_zh), row.recomputed_zh, row.robust_zh):
            assert zh.style_faults(text) == [], (row.id, zh.style_faults(text))
    rd = cn.set_index("id").loc["001-2.4-rd-efficiency-18pct", "reason_zh"]
    assert re.search(r"应为2\.56%，而文中写的是18%", rd), rd


def test_every_input_and_feature_has_its_chinese_word_and_every_translation_is_used():
    from analyses import scenario

    inputs = data.terms_zh("input")
    assert set(inputs) == set(scenario.assumptions()), set(inputs) ^ set(scenario.assumptions())
    assert set(data.terms_zh("feature")) == set(data.table("features")["feature"])
    needed = set(ledger_zh.english_parts(ledger.assessments()))
    kept = {(r.id, r.part, r.en) for r in data.table("reasons_zh").itertuples()}
    assert kept == needed, {"stale": sorted(kept - needed)[:3], "missing": sorted(needed - kept)[:3]}


def test_a_changed_english_sentence_has_no_translation_until_reviewed():
    with pytest.raises(
        ledger_zh.MissingTranslation, match=r"000-0-centuries, part 'context', English: 'a new \{1\} sentence'"
    ):
        ledger_zh.translate("000-0-centuries", "context", "a new 12 sentence")
    # the figures of the English of this run go into the reviewed Chinese, written as the style sheet says
    found = zh.figures("at today's price 2.4 million RMB to 2.6 million RMB; 1,540-16,400 GPUs")
    assert zh.fill("{1}～{2}元，{3}～{4}张GPU", found) == "240万～260万元，1540～16400张GPU"


def test_a_claim_without_its_chinese_row_is_named(monkeypatch):
    rows = ledger.assessments(chapter="memory")
    zh_rows = data.claims_zh()
    monkeypatch.setattr(data, "claims_zh", lambda: zh_rows[zh_rows["id"] != rows[0].claim.id])
    with pytest.raises(LookupError, match=f"no Chinese row for 1 claim.*{re.escape(rows[0].claim.id)}"):
        ledger_zh.frame(rows)


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (7580.3, "years", "7580年"),
        (29500.0, "years", "2.95万年"),
        (0.453, "fraction", "45.3%"),
        (2.34, "x", "2.34倍"),
        (42000.0, "RMB/month", "4.2万元/月"),
        (1.34e7, "RMB", "1340万元"),
        (1.75e11, "parameters", "1750亿参数"),
        (1.2e24, "FLOP", "1.20×10²⁴ FLOP"),
        (900.0, "GB/s", "900GB/s"),
        (1800.0, "GB/s", "1800GB/s"),
        (40.0, "s", "40.0秒"),
        (69000.0, "RMB per GPU", "6.9万元/卡"),
    ],
)
def test_chinese_numbers_keep_the_english_digits_with_chinese_units(value, unit, shown):
    assert zh.number(value, unit) == shown


def test_chinese_intervals_as_written():
    assert zh.interval(2.5, 3, "x", written=True) == "2.5～3倍"
    assert zh.interval(0.9, math.inf, "fraction", written=True) == "≥90%"
    assert zh.interval(0.9, math.inf, "fraction", written=True, words=True) == "至少90%"
    assert zh.interval(-math.inf, 50, "%", written=True) == "≤50%"
    assert zh.interval(200, 900, "years", written=True) == "200～900年"
    assert zh.interval(0.6, 0.8, "fraction", written=True) == "60%～80%"
    assert zh.as_written(80000, "RMB/month") == "8万元/月"
    assert zh.as_written(16.6904, "days") == "16.7天"  # an implied figure keeps three figures
    assert zh.tolerance(0.05) == "5%" and zh.tolerance(0.1) == "10%"


def test_sizes_and_token_counts_from_a_trillion_in_wan_yi():
    assert zh.wan_yi_large(2e12, 2) == "2万亿"
    assert zh.wan_yi_large(1.01219e11, 3) == "1010亿"
    assert zh.wan_yi_large(5.5296e7, 2) == "5500万"
    assert zh.wan_yi_large(8750, 3) == "8750"


def test_dates_and_the_style_sheet_checks():
    import datetime

    assert zh.date(datetime.date(2026, 12, 7)) == "2026年12月7日"
    bad = {
        "1,340万元": "thousands separator before 万",
        "见英文版理由": "pointer to the English reason",
        "若假设 tokens_per_param 低于2.6": "underscore",
        "训练；回本; 自购": "half-width punctuation",
        "（本书重算：83.0%。": "unbalanced",
        "0.5729倍": "more figures",
        "2026 年 12 月 07 日": "date",
        "租金（新兴云）": "term",
        "在构建时插入": "build or developer note",
        "2.5–3倍": "en dash",
    }
    for text, rule in bad.items():
        assert any(rule in f for f in zh.style_faults(text)), (text, zh.style_faults(text))
    assert zh.style_faults("文中要求每月至少一次；按本书测算可完成11.9～23.6次，满足。1340万元或1.34亿元") == []
