"""The claims ledger in Chinese: every claim's own Chinese wording and locator, its figures as the
document writes them, and the verdict, direction, recomputed value and reason of the very same
assessment the English ledger prints (:func:`analyses.chapters.ledger.assessments`).

Nothing here decides a verdict or retypes a number. The Chinese reason is generated from the
assessment's structured fields and the check's :class:`~analyses.verdicts.Finding` at the central
scenario: which step of the kind's rule decided (no public figure, an authoritative contradiction,
the documents' own arithmetic, the comparison with the kind's tolerance), the stated and
recomputed figures (:mod:`analyses.units.zh`: the English pages' digits with Chinese units), how
often the verdict holds over the scenario's draws, and the single input that would flip it. The
words for verdicts, directions and kinds come from ``data/terms_zh.csv`` (:func:`analyses.data.terms_zh`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from analyses import chapters, data, scenario
from analyses.chapters import ledger
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.units import zh
from analyses.units.formats import fmt
from analyses.verdicts import RULES, Finding, Rule, robustness, verdict_codes

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
    "verdict",
    "verdict_zh",
    "shown_zh",
    "direction",
    "direction_zh",
    "recomputed_zh",
    "holds",
    "reason_zh",
]
SIDE_ZH = {"above": "高于", "below": "低于"}


def finding(claim: data.Claim, cfg: Any = None) -> Finding:
    """The check's finding for ``claim`` at the central scenario (its chapter's defaults)."""
    cfg = chapters.defaults(claim.chapter) if cfg is None else cfg
    fn = ledger.checks(claim.chapter)[claim.id]
    return fn(claim, scenario.values(cfg), cfg)


def _central(x: Any) -> float:
    return float(np.asarray(x))


def recomputed(f: Finding, a: robustness.Assessment) -> str:
    """The recomputed figure in Chinese: the value (or its intrinsic span) and the 90% range over
    the scenario, or 无 when the check recomputes no figure (nothing public recomputes it, or a
    source or the claim's own figures decide without one: its reason says which)."""
    if f.value is None:
        if a.verdict == "unverifiable":
            return "无（没有可重算的公开数据）"
        return "无（判定不依赖重算的数字，见理由）"
    value = _central(f.value)
    lo = min(_central(f.low), value) if f.low is not None else value
    hi = max(_central(f.high), value) if f.high is not None else value
    text = zh.number(value, f.unit, f.sig) if lo == hi else zh.interval(lo, hi, f.unit, f.sig)
    span = a.value_range
    if span is not None and span[0] < span[1]:
        level = fmt(INTERVAL_LEVEL, pct=True, sig=2)
        shown = zh.interval(span[0], span[1], f.unit, f.sig)
        text += "" if shown == text else f"（情景{level}区间：{shown}）"
    return text


def rule_clause(f: Finding, rule: Rule, verdict: str, words: dict[str, str]) -> str:
    """Why the verdict, in Chinese, led by the verdict itself (the English ledger's
    :func:`analyses.verdicts.rule_clause` explains the same finding): for ``unverifiable``, that
    nothing public recomputes the figure (or that it is a business result); for ``consistent``, the
    stated and recomputed figures within the kind's tolerance; otherwise the documents' own
    arithmetic, an authoritative contradiction, or the side and the tolerance the figure misses."""
    kind = words["kind"][rule.kind]
    business = "这是未具名企业的经营结果，没有公开资料能把它与所用硬件联系起来"
    if f.value is None:
        if verdict == "unverifiable":
            return business if rule.kind == "business" else "没有公开数据能重算这一数字"
        return "权威公开资料与这一说法相矛盾（详见英文版理由）"
    value = _central(f.value)
    lo = min(_central(f.low), value) if f.low is not None else value
    hi = max(_central(f.high), value) if f.high is not None else value
    again = zh.number(value, f.unit, f.sig) if lo == hi else zh.interval(lo, hi, f.unit, f.sig)
    said = (
        zh.as_written(f.stated.shown, f.unit)
        if f.stated.shown is not None
        else zh.interval(f.stated[0], f.stated[1], f.unit, written=True)
    )
    if f.promise:  # a figure the document never gives: the advice's purpose, read as ``said``
        said = f"建议的目标（本书读作{said}）"
    tol = fmt(rule.tolerance, pct=True, sig=2)
    if verdict == "unverifiable":
        if rule.kind == "business":
            return business
        return f"本书重算为{again}，但按{kind}类说法的规则，文中的{said}无法据此核实"
    if verdict == "consistent":
        if f.stated[1] < lo / (1 + rule.tolerance) and rule.below == "consistent":
            why = "个案结果可以不及硬件所能" if rule.kind == "anecdote" else "照此建议所需的不超过硬件所能"
            return f"文中的{said}低于本书重算的{again}，而{why}"
        return f"文中的{said}与本书重算的{again}在{kind}类说法{tol}的容差内相符"
    failed = _arithmetic_fails(f)
    if failed is not None:
        shown = (
            zh.as_written(failed.stated.shown, "")
            if failed.stated.shown is not None
            else zh.interval(failed.stated[0], failed.stated[1], "", written=True)
        )
        return f"按文中自己的数字推算，应为{zh.number(_central(failed.value), '', f.sig)}，而文中写的是{shown}"
    t = 1 + rule.tolerance
    if f.contradiction is None and f.stated[0] > (hi * t if hi >= 0 else hi / t):
        side = "above"
    elif f.contradiction is None and f.stated[1] < (lo / t if lo >= 0 else lo * t):
        side = "below"
    else:  # another step of the rule decided: a fact (or a feature the older GPU had) contradicts it
        return f"权威公开资料与这一说法相矛盾（本书重算：{again}；详见英文版理由）"
    return f"文中的{said}{SIDE_ZH[side]}本书重算的{again}，超出{kind}类说法{tol}的容差"


def _arithmetic_fails(f: Finding):
    rule = RULES["arithmetic"]
    for a in f.arithmetic:
        probe = Finding(stated=a.stated, value=a.value)
        if verdict_codes(probe, rule, 1)[0] != 0:
            return a
    return None


def side(f: Finding, rule: Rule, verdict: str) -> str:
    """Which way a claim errs (``overstates``/``understates``), by the rule's own comparison: the
    stated figure above or below the recomputed one (or the documents' own arithmetic); "" for a
    consistent or unverifiable verdict and for a contradicted claim, whose figures say no side."""
    if verdict in ("consistent", "unverifiable") or f.value is None:
        return ""
    failed = _arithmetic_fails(f)
    if failed is not None:
        value = _central(failed.value)
        return "overstates" if failed.stated[0] > value else "understates" if failed.stated[1] < value else ""
    if f.contradiction:
        return ""
    value = _central(f.value)
    lo = min(_central(f.low), value) if f.low is not None else value
    hi = max(_central(f.high), value) if f.high is not None else value
    if f.stated[0] > hi:
        return "overstates"
    return "understates" if f.stated[1] < lo else ""


def robustness_clause(a: robustness.Assessment, words: dict[str, str]) -> str:
    """How robust the verdict is, in Chinese: the share of the scenario's draws in which it holds
    and the single input that would flip it."""
    parts = []
    if a.inputs and a.value is not None:
        parts.append(f"在情景假设的联合抽样中，这一判定成立的比例为{fmt(a.holds, pct=True, sig=2)}")
    flip = a.flip
    if flip:
        threshold = zh.number(flip["threshold"], scenario.assumption(flip["input"]).unit, 2)
        side = SIDE_ZH[flip["side"]]
        parts.append(f"若假设 {flip['input']} {side}{threshold}，判定将变为“{words['verdict'][flip['verdict']]}”")
    return "；".join(parts)


def _in_yuan(x: float, unit: str) -> tuple[float, str]:
    """An amount in an assumption's unit with money in 元 (a USD price at the scenario's exchange rate)."""
    if unit.startswith("USD") and not unit.startswith("USD per USD"):
        cny = "CNY" + unit[3:]
        if zh.unit_word(cny).strip() != cny:  # a unit the Chinese edition writes in 元; else in 美元 as given
            return x * float(scenario.values()["usd_cny"]), cny
    return x, unit


def shown(a: robustness.Assessment, words: dict[str, dict[str, str]]) -> str:
    """A verdict in doubt in Chinese (the English ledger's ``shown``: it holds in fewer than half the draws
    or its flip point lies inside its input's 90% range): 取决于<input>：在X以上为<verdict>，以下为<verdict>;
    "" for a verdict shown bare."""
    d = a.doubt
    if d is None:
        return ""
    w = words["verdict"]
    if d.threshold is not None:
        x = zh.number(*_in_yuan(d.threshold, scenario.assumption(d.input).unit), 2)
        return f"取决于假设 {d.input}：在{x}以上为“{w[d.above]}”，以下为“{w[d.below]}”"
    other = w.get(d.below, "其他判定")
    return f"判定不确定：在{fmt(d.holds, pct=True, sig=2)}的抽样中为“{w[d.above]}”，其余为“{other}”"


def reason(f: Finding, a: robustness.Assessment, words: dict[str, str]) -> str:
    """The Chinese reason: the rule's clause, then robustness, as one sentence ending in 。"""
    clauses = [rule_clause(f, RULES[a.kind], a.verdict, words), robustness_clause(a, words)]
    return "；".join(c for c in clauses if c) + "。"


def words() -> dict[str, dict[str, str]]:
    """The Chinese words of every verdict, direction and kind (``data/terms_zh.csv``)."""
    return {group: data.terms_zh(group) for group in ("verdict", "direction", "kind")}


def has_direction() -> bool:
    """Whether the English ledger has a ``direction`` column; until it does, the Chinese ledger
    derives the direction from the finding (:func:`side`)."""
    return "direction" in ledger.LEDGER_COLUMNS


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
        # the ledger's own direction where it has one, else the same comparison made here
        direction = str(a.direction or "") if has_direction() else side(f, RULES[a.kind], a.verdict)
        records.append(
            {
                "id": c.id,
                "document": c.document,
                "section": c.section,
                "chapter": c.chapter,
                "kind": a.kind,
                "kind_zh": w["kind"][a.kind],
                "claim_zh": text.loc[c.id, "claim_zh"],
                "locator_zh": text.loc[c.id, "locator_zh"],
                "written": text.loc[c.id, "written"],
                "verdict": a.verdict,
                "verdict_zh": w["verdict"][a.verdict],
                "shown_zh": shown(a, w),
                "direction": direction,
                "direction_zh": w["direction"].get(direction, ""),
                "recomputed_zh": recomputed(f, a),
                "holds": a.holds,
                "reason_zh": reason(f, a, w),
            }
        )
    return pd.DataFrame(records, columns=ZH_COLUMNS)


def ledger_zh(chapter: str | None = None) -> pd.DataFrame:
    """The Chinese ledger of every claim (or one chapter's), at each chapter's defaults."""
    return frame(ledger.assessments(chapter))
