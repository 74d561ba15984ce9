"""The claims ledger in Chinese: every claim's own Chinese wording and locator, its figures as the
document writes them, and the verdict, direction, recomputed value and reason of the very same
assessment the English ledger prints (:func:`analyses.chapters.ledger.assessments`).

Nothing here decides a verdict or retypes a number. The Chinese reason says what the English one
says, part by part (:func:`analyses.verdicts.robustness.assess` builds the English from the same
parts):

1. the rule's step, generated from the check's :class:`~analyses.verdicts.Finding`: the stated and
   recomputed figures in plain words, what the figure is (``quantity_zh``), which way it errs and
   the kind's allowance (or the credited feature an older GPU already had, the documents' own
   arithmetic, or why nothing public recomputes it);
2. the features the claim credits, from the feature rows' Chinese words (``data/terms_zh.csv``);
3. the check's explanation, the reading it took and the other readings, as reviewed Chinese
   translations (``data/reasons_zh.csv``) of the check's English, kept under the English sentence
   with its figures replaced by slots: the figures are put back from the English of this very run
   (:func:`analyses.units.zh.fill`), and an English sentence that changed has no translation until
   someone reviews it (:func:`translate` names it);
4. the verdict at the documents' own speed-up, how often it holds over the scenario's draws, the
   flip point of each input in 元 with the input's Chinese label, and how far it lies (margin).

The words for verdicts, directions, kinds, features and the scenario's inputs come from
``data/terms_zh.csv``; how each vague word was read, in Chinese, from ``data/claims_zh.csv``.
"""

from __future__ import annotations

import csv
import functools
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from analyses import chapters, data, scenario
from analyses.chapters import ledger
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.scenario.generations import NEW
from analyses.units import zh
from analyses.units.formats import fmt
from analyses.verdicts import RULES, Finding, Interval, Rule, robustness, verdict_codes

ZH_COLUMNS = [
    "id",
    "document",
    "section",
    "chapter",
    "kind",
    "kind_zh",
    "claim_zh",
    "locator_zh",
    "written",
    "quantity_zh",
    "reading_zh",
    "verdict",
    "verdict_zh",
    "shown_zh",
    "direction",
    "direction_zh",
    "recomputed_zh",
    "holds",
    "margin",
    "robust_zh",
    "reason_zh",
    "inputs",
]
SIDE_ZH = {"above": "高于", "below": "低于"}
LEVEL = zh.percent(INTERVAL_LEVEL)  # "90%"
REASONS = "data/reasons_zh.csv"


def finding(claim: data.Claim, cfg: Any = None) -> Finding:
    """The check's finding for ``claim`` at the central scenario (its chapter's defaults)."""
    cfg = chapters.defaults(claim.chapter) if cfg is None else cfg
    fn = ledger.checks(claim.chapter)[claim.id]
    return fn(claim, scenario.values(cfg), cfg)


def _central(x: Any) -> float:
    return float(np.asarray(x))


def _span(f: Finding) -> tuple[float, float, float]:
    value = _central(f.value)
    lo = min(_central(f.low), value) if f.low is not None else value
    hi = max(_central(f.high), value) if f.high is not None else value
    return value, lo, hi


def figure(f: Finding) -> str:
    """The recomputed figure (or its intrinsic span) in Chinese, "" when there is none."""
    if f.value is None:
        return ""
    value, lo, hi = _span(f)
    return zh.number(value, f.unit, f.sig) if lo == hi else zh.interval(lo, hi, f.unit, f.sig)


def recomputed(f: Finding, a: robustness.Assessment) -> str:
    """The recomputed figure in Chinese with its 90% range over the scenario, or 无 with why."""
    if f.value is None:
        if a.verdict == "unverifiable":
            return "无（没有可重算的公开数据）"
        return "无（由公开资料直接判定，见理由）"
    text = figure(f)
    span = a.value_range
    if span is not None and span[0] < span[1]:
        shown = zh.interval(span[0], span[1], f.unit, f.sig)
        text += "" if shown == text else f"（情景{LEVEL}区间：{shown}）"
    return text


def said(f: Finding, stated: Interval | None = None, unit: str | None = None) -> str:
    """A stated figure in prose, as the document writes it: 2.5～3倍, 至少90%, 不超过12个月."""
    iv = f.stated if stated is None else stated
    unit = f.unit if unit is None else unit
    if isinstance(iv, Interval) and iv.shown is not None:
        return zh.as_written(iv.shown, unit)
    return zh.interval(iv[0], iv[1], unit, written=True, words=True)


# --------------------------------------------------------------------------------------------
# Reviewed translations of the checks' English (data/reasons_zh.csv)
# --------------------------------------------------------------------------------------------


@functools.cache
def _translations() -> dict[tuple[str, str, str], str]:
    frame = data.table("reasons_zh")
    return {(r.id, r.part, r.en): r.zh for r in frame.itertuples()}


class MissingTranslation(LookupError):
    """An English sentence of a check with no reviewed Chinese in data/reasons_zh.csv."""


def translate(claim_id: str, part: str, english: str) -> str:
    """The reviewed Chinese of ``english`` (a check's ``part``: context, taken, reading,
    contradiction, arithmetic) with the English figures in its slots; "" for no English."""
    english = english.strip().rstrip(".")
    if not english:
        return ""
    key = zh.skeleton(english)
    found = _translations().get((claim_id, part, key))
    if found is None:
        raise MissingTranslation(
            f"{REASONS} has no Chinese for claim {claim_id}, part '{part}', English: {key!r}; add a row "
            "(id, part, en, zh) whose en is that text and whose zh puts its figures back with the same slots"
        )
    return zh.fill(found, zh.figures(english), f"{REASONS}, claim {claim_id}, part '{part}'").rstrip("。")


# --------------------------------------------------------------------------------------------
# The reason, part by part
# --------------------------------------------------------------------------------------------


def words() -> dict[str, dict[str, str]]:
    """The Chinese words of every verdict, direction, kind, feature and scenario input (``data/terms_zh.csv``)."""
    return {group: data.terms_zh(group) for group in ("verdict", "direction", "kind", "feature", "input")}


def _feature(feature: str) -> tuple[str, str]:
    table = data.table("terms_zh")
    row = table[(table["group"] == "feature") & (table["term"] == feature)]
    if row.empty:
        raise LookupError(
            f"data/terms_zh.csv has no row (group feature, term {feature}) for data/features.csv's '{feature}'"
        )
    return str(row["zh"].iloc[0]), str(row["explain_zh"].iloc[0])


def credit_clause(c: Any) -> str:
    """A credited feature in Chinese (:meth:`analyses.verdicts.Credit.clause`'s three cases)."""
    name, evidence = _feature(c.feature)
    if c.contradicts:
        return f"{c.older}早已具备{name}：{evidence}；文中却把{c.older}已有的功能算作{NEW}的进步"
    if c.older_had_it:
        return f"{name}并非{NEW}的新功能：{evidence}"
    return f"{name}随{c.row['first_gpu']}于{str(c.row['available'])[:4]}年推出，晚于{c.older}"


def _failed_arithmetic(f: Finding):
    rule = RULES["arithmetic"]
    for a in f.arithmetic:
        if verdict_codes(Finding(stated=a.stated, value=a.value), rule, 1)[0] != 0:
            return a
    return None


def _quantity(q: str) -> str:
    return f"{q}" if q else "这一数字"


def said_as(f: Finding, advice: bool = False) -> str:
    """The stated figure as a predicate: 为2.5～3倍, 不低于90%, 不超过12个月 (``advice``: what a
    recommendation needs, 至少要达到1次/月, 要达到100%)."""
    iv = f.stated
    lo, hi = float(iv[0]), float(iv[1])
    shown = iv.shown if isinstance(iv, Interval) else None
    if shown is None and np.isinf(hi) and not np.isinf(lo):
        bound = zh.as_written(lo, f.unit)
        return f"至少要达到{bound}" if advice else f"不低于{bound}"
    if shown is None and np.isinf(lo) and not np.isinf(hi):
        bound = zh.as_written(hi, f.unit)
        return f"不能超过{bound}" if advice else f"不超过{bound}"
    return f"要达到{said(f)}" if advice else f"为{said(f)}"


def rule_clause(f: Finding, rule: Rule, verdict: str, w: dict[str, dict[str, str]], claim_id: str, q: str = "") -> str:
    """The rule's step in plain Chinese (the English :func:`analyses.verdicts.rule_clause` explains the
    same finding): what the document says, what the book recomputes, whether it fits the kind's
    allowance and which way it errs."""
    kind = w["kind"][rule.kind]
    business = "这是未具名企业的经营结果，没有公开资料能把它与所用硬件联系起来"
    if f.contradicting_credit is not None:
        return credit_clause(f.contradicting_credit)
    if f.contradiction:
        return translate(claim_id, "contradiction", f.contradiction)
    if f.value is None:
        return business if rule.kind == "business" else "没有公开数据能重算这一数字"
    failed = _failed_arithmetic(f)
    if failed is not None:
        label = failed.label
        unit = "%" if label.endswith(" (%)") else ""
        name = translate(claim_id, "arithmetic", label.removesuffix(" (%)"))
        value = zh.plain(_central(failed.value), f.sig)
        return f"按文中自己的数字，{name}应为{value}{unit}，而文中写的是{said(f, failed.stated, '')}{unit}"
    if rule.kind == "business":
        return business
    again = figure(f)
    value, lo, hi = _span(f)
    what = _quantity(q)
    tol = zh.tolerance(rule.tolerance)
    allow = f"{kind}类说法允许{tol}的出入"
    if verdict == rule.agree:
        short = f.stated[1] < lo / (1 + rule.tolerance) and rule.below == rule.agree
        if rule.agree == "unverifiable":
            fits = (
                f"低于本书按硬件能力重算的{again}，个案结果可以不及硬件所能"
                if short
                else f"与本书重算的{again}相符（{allow}）"
            )
            return f"看来可信：文中{what}{said_as(f)}，{fits}；但这一部署没有公开记录，无法核实"
        if rule.kind == "recommendation":
            return f"照此建议，{what}{said_as(f, advice=True)}；按本书测算可达到{again}，满足"
        return f"文中{what}{said_as(f)}，本书重算为{again}，两者相符（{allow}）"
    side = "above" if f.stated[0] > hi else "below"
    word = w["direction"]["overstates" if side == "above" else "understates"]
    return f"文中{what}{said_as(f)}，本书重算为{again}：文中数字{word}，超出{allow}"


def reading_clause(f: Finding, a: robustness.Assessment, w: dict[str, dict[str, str]], claim_id: str) -> str:
    """The reading taken and each other reading under which the verdict would differ."""
    if not a.readings:
        return ""
    if f.taken:
        taken = translate(claim_id, "taken", f.taken)
    else:
        taken = f"从宽理解为{said(f)}"
    turns = []
    for label, verdict in a.readings:
        if verdict == a.verdict:
            continue
        if label.startswith("strictly"):
            turns.append(f"按最严格的读法（{said(f, f.strict)}），判定将是“{w['verdict'][verdict]}”")
        else:
            turns.append(f"若理解为{translate(claim_id, 'reading', label)}，判定将是“{w['verdict'][verdict]}”")
    return "；".join([f"本书的读法：{taken}", *turns])


def documents_clause(f: Finding, rule: Rule, w: dict[str, dict[str, str]]) -> str:
    """The verdict at the documents' own per-GPU speed-up (their 2.5～3倍)."""
    if not f.documents:
        return ""
    parts = []
    for r in f.documents:
        x = zh.figures(r.label)[0]
        verdict = w["verdict"][robustness.VERDICTS[int(verdict_codes(r.apply(f), rule, 1)[0])]]
        parts.append(f"{zh.slot(x, None)}倍时为“{verdict}”")
    return "若按文章自己的单卡加速比计算，" + "，".join(parts)


def threshold_text(x: float, unit: str, s: dict[str, Any]) -> str:
    """A flip point's threshold in 元 (a USD price at the scenario's exchange rate), at two figures."""
    x, unit = robustness.in_ledger_currency(x, unit, s)
    if unit == "million tokens":
        return zh.number(x * 1e6, "tokens", 2)
    return zh.number(x, unit, 2)


def input_label(name: str, w: dict[str, dict[str, str]]) -> str:
    """The Chinese label of a scenario input (``data/terms_zh.csv``, group ``input``)."""
    if name not in w["input"]:
        raise LookupError(f"data/terms_zh.csv has no row (group input, term {name}) for data/scenario.csv's '{name}'")
    return w["input"][name]


def flip_clause(flip: dict[str, Any], w: dict[str, dict[str, str]], s: dict[str, Any]) -> str:
    """One flip point: the input's label, the side, the threshold in 元, the verdict beyond it and
    whether it lies inside the input's 90% range."""
    a = scenario.assumption(flip["input"])
    label = input_label(flip["input"], w)
    text = (
        f"若{label}{SIDE_ZH[flip['side']]}{threshold_text(flip['threshold'], a.unit, s)}，"
        f"判定将变为“{w['verdict'][flip['verdict']]}”"
    )
    low, high = a.range.low, a.range.high
    shown = zh.join_range(threshold_text(low, a.unit, s), threshold_text(high, a.unit, s), _unit_in_rmb(a.unit))
    where = f"在该假设的{LEVEL}范围（{shown}）之内" if flip["inside"] else f"超出该假设的{LEVEL}范围（{shown}）"
    return f"{text}，这一翻转点{where}"


def _unit_in_rmb(unit: str) -> str:
    if unit == "million tokens":
        return "tokens"
    return robustness.in_ledger_currency(1.0, unit, {"usd_cny": 1.0})[1]


def robust_clause(a: robustness.Assessment, w: dict[str, dict[str, str]], s: dict[str, Any]) -> str:
    """How robust the verdict is: the share of draws it holds in, each flip point, and (where no
    speed-up flips it) the span of speed-ups searched."""
    parts = []
    if a.inputs and a.value is not None:
        parts.append(f"各项假设在其{LEVEL}范围内一起变动时，这一判定在{zh.percent(a.holds)}的情形下不变")
    elif a.holds < 1:
        parts.append(f"在本书考虑的各种读法中，这一判定在{zh.percent(a.holds)}的情形下成立")
    flip = a.flip
    if flip and "verdict" in flip:
        for one in (flip, *flip.get("also", ())):
            parts.append(flip_clause(one, w, s))
    steady = flip["steady"]["text"] if flip and "steady" in flip else a.flips_if if flip is None else ""
    if steady and steady.startswith("no ") and robustness.KEY_INPUT in a.inputs:
        figs = zh.figures(steady)
        span = zh.join_range(f"{zh.slot(figs[0], None)}倍", f"{zh.slot(figs[1], None)}倍", "x")
        parts.append(f"{input_label(robustness.KEY_INPUT, w)}在{span}之间任意取值都不会改变判定")
    return "；".join(parts)


def reason(f: Finding, a: robustness.Assessment, w: dict[str, dict[str, str]], q: str = "") -> str:
    """The Chinese reason: each part of the English reason as a sentence ending in 。"""
    claim_id = a.claim.id
    rule = RULES[a.kind]
    context = f.context(a.verdict) if callable(f.context) else f.context
    s = scenario.values(chapters.defaults(a.claim.chapter))
    clauses = [
        rule_clause(f, rule, a.verdict, w, claim_id, q),
        "；".join(credit_clause(c) for c in f.credits if c is not f.contradicting_credit),
        translate(claim_id, "context", context or ""),
        reading_clause(f, a, w, claim_id),
        documents_clause(f, rule, w),
        robust_clause(a, w, s),
    ]
    return "".join(f"{c}。" for c in clauses if c)


def shown(a: robustness.Assessment, w: dict[str, dict[str, str]], s: dict[str, Any]) -> str:
    """A verdict in doubt in Chinese (the English ledger's ``shown``: it holds in fewer than half the draws
    or its flip point lies inside its input's 90% range): 取决于<input>：在X以上为…，以下为…; "" for a
    verdict shown bare."""
    d = a.doubt
    if d is None:
        return ""
    v = w["verdict"]
    if d.threshold is not None:
        x = threshold_text(d.threshold, scenario.assumption(d.input).unit, s)
        return f"取决于{input_label(d.input, w)}：在{x}以上为“{v[d.above]}”，以下为“{v[d.below]}”"
    return f"判定不确定：在{fmt(d.holds, pct=True, sig=2)}的抽样中为“{v[d.above]}”，其余为“{v.get(d.below, '其他判定')}”"


def robust_text(a: robustness.Assessment, w: dict[str, dict[str, str]], chapter: str) -> str:
    """The card's robustness line: holds, flip point and margin."""
    s = scenario.values(chapters.defaults(chapter))
    if a.value is None:
        return "没有重算的数字，任何假设都改变不了这一判定"
    text = robust_clause(a, w, s) or "这一判定不依赖情景假设"
    if a.margin is not None and not np.isnan(a.margin):
        text += f"；余量{zh.plain(a.margin, 2)}"
    return text


def frame(rows: Sequence[robustness.Assessment]) -> pd.DataFrame:
    """Assessments as the Chinese ledger (:data:`ZH_COLUMNS`), in ledger order."""
    w = words()
    text = data.claims_zh().set_index("id")
    missing = [a.claim.id for a in rows if a.claim.id not in text.index]
    if missing:
        raise LookupError(
            f"data/claims_zh.csv has no Chinese row for {len(missing)} claim(s) of data/claims.csv: "
            f"{', '.join(missing)}; add each with claim_zh (our own Chinese wording) and locator_zh"
        )
    records = []
    for a in rows:
        c = a.claim
        f = finding(c)
        row = text.loc[c.id]
        q = str(row.get("quantity_zh", "") or "")
        direction = str(a.direction or "")
        records.append(
            {
                "id": c.id,
                "document": c.document,
                "section": c.section,
                "chapter": c.chapter,
                "kind": a.kind,
                "kind_zh": w["kind"][a.kind],
                "claim_zh": row["claim_zh"],
                "locator_zh": row["locator_zh"],
                "written": zh.punctuate(row["written"]),
                "quantity_zh": q,
                "reading_zh": str(row.get("reading_zh", "") or ""),
                "verdict": a.verdict,
                "verdict_zh": w["verdict"][a.verdict],
                "shown_zh": shown(a, w, scenario.values(chapters.defaults(c.chapter))),
                "direction": direction,
                "direction_zh": w["direction"].get(direction, ""),
                "recomputed_zh": recomputed(f, a),
                "holds": a.holds,
                "margin": a.margin,
                "robust_zh": robust_text(a, w, c.chapter),
                "reason_zh": reason(f, a, w, q),
                "inputs": tuple(a.inputs),
            }
        )
    return pd.DataFrame(records, columns=ZH_COLUMNS)


def assumptions(names: Sequence[str]) -> pd.DataFrame:
    """The scenario's inputs ``names`` as a Chinese page states its assumptions: the Chinese label,
    the central value and the 90% range in 元 (a USD price at the scenario's exchange rate), and what
    the input means (``data/terms_zh.csv``)."""
    w = words()
    table = data.table("terms_zh")
    explain = dict(
        zip(
            table.loc[table["group"] == "input", "term"],
            table.loc[table["group"] == "input", "explain_zh"],
            strict=True,
        )
    )
    s = scenario.values({})
    rows = []
    for name in names:
        a = scenario.assumption(name)
        unit = _unit_in_rmb(a.unit)
        rows.append(
            {
                "name": name,
                "label_zh": input_label(name, w),
                "central_zh": threshold_text(a.central, a.unit, s),
                "range_zh": zh.join_range(
                    threshold_text(a.range.low, a.unit, s), threshold_text(a.range.high, a.unit, s), unit
                ),
                "explain_zh": explain.get(name, ""),
            }
        )
    return pd.DataFrame(rows, columns=["name", "label_zh", "central_zh", "range_zh", "explain_zh"])


def ledger_zh(chapter: str | None = None) -> pd.DataFrame:
    """The Chinese ledger of every claim (or one chapter's), at each chapter's defaults."""
    return frame(ledger.assessments(chapter))


def english_parts(rows: Sequence[robustness.Assessment]) -> list[tuple[str, str, str]]:
    """(id, part, English skeleton) of every sentence the Chinese reasons translate: what
    ``data/reasons_zh.csv`` must hold (``python -m analyses.chapters.ledger_zh`` lists the missing)."""
    out = []
    for a in rows:
        f = finding(a.claim)
        context = f.context(a.verdict) if callable(f.context) else f.context
        items = [("context", context or "")]
        if f.contradiction and f.contradicting_credit is None:
            items.append(("contradiction", f.contradiction))
        failed = _failed_arithmetic(f)
        if failed is not None and f.contradicting_credit is None and not f.contradiction and f.value is not None:
            items.append(("arithmetic", failed.label.removesuffix(" (%)")))
        if a.readings:
            if f.taken:
                items.append(("taken", f.taken))
            for label, verdict in a.readings:
                if verdict != a.verdict and not label.startswith("strictly"):
                    items.append(("reading", label))
        for part, en in items:
            en = en.strip().rstrip(".")
            if en:
                out.append((a.claim.id, part, zh.skeleton(en)))
    return out


if __name__ == "__main__":  # list the English sentences data/reasons_zh.csv lacks
    have = set(_translations())
    writer = csv.writer(sys.stdout)
    for key in english_parts(ledger.assessments()):
        if key not in have:
            writer.writerow([*key, ""])
