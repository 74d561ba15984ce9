"""Sentences of the front page, each read from a computed :class:`~analyses.chapters.intro.Result`, and
:func:`glued`, every number and phrase the page glues."""

from __future__ import annotations

from typing import Any

from analyses.chapters.intro import PURCHASE_RULE, Group, Result
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.units.formats import fmt, in_words, stated
from analyses.verdicts import VERDICTS

TITLES = {
    "right": "What they get right",
    "overstates": "What they overstate",
    "understates": "What they understate",
    "disagree": "Where the evidence disagrees",
}


def group_sentence(res: Result, group: Group) -> str:
    """One finding as a short sentence: how many claims, of how many, and what the examples are."""
    n, total = group.count, res.total
    among = ", among them:" if len(group.examples) else "."
    if group.key == "right":
        return f"{n} of {total} claims agree with the evidence{among}"
    if group.key == "overstates":
        return f"{n} of {total} claims state more than the evidence supports{among}"
    if group.key == "understates":
        return f"{n} of {total} claims state less than the evidence supports{among}"
    parts = " and ".join(f"{res.counts[v]} {v}" for v in VERDICTS[1:3] if res.counts[v])  # inconsistent, implausible
    return (
        f"{n} of {total} claims disagree with it ({parts}); which way each errs comes with the ledger's direction "
        f"column{among}"
    )


def lead(res: Result) -> str:
    """The sentence above the counts."""
    return (
        f"Two Chinese marketing articles about NVIDIA B300 training servers make {res.total} quantitative claims. "
        "The book recomputes each from public, sourced data and gives it a verdict:"
    )


def purchase_head(res: Result) -> str:
    """The heading of the purchase list."""
    n = len(res.purchase)
    return f"The {in_words(n)} claim{'s' if n != 1 else ''} that matter most to a purchase"


def purchase_rule(res: Result) -> str:
    """The rule that picks the purchase list, in words."""
    return f"Picked by a rule, not by hand: {PURCHASE_RULE}."


def _span(row: Any) -> str:
    lo, hi = float(row["low"]), float(row["high"])
    if str(row["source"]).startswith("the documents"):  # as the documents write them
        return f"{stated(lo)}-{stated(hi)}×"
    return fmt(lo, "x", 2) if round(lo, 1) == round(hi, 1) else f"{fmt(lo, sig=2)}-{fmt(hi, 'x', 2)}"


def speedup_sentence(res: Result) -> str:
    """The sentence that reconciles the three B300/A100 speed-ups the reader meets."""
    docs, calc, ledger = (res.speedups.iloc[i] for i in range(3))
    return (
        f"The reader meets three B300/A100 per-GPU speed-ups: the documents' {_span(docs)}, the buy-or-rent "
        f"page's {_span(calc)} and the ledger's {_span(ledger)}. They are one step-time model's answers at two "
        f"precisions beside the documents' unexplained figure: the buy-or-rent page trains both GPUs in BF16, the "
        "ledger gives B300 the FP8 both documents credit it with, and each row judges its own workload."
    )


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the front page glues, by name, formatted for the page."""
    return {
        "level": fmt(INTERVAL_LEVEL, pct=True, sig=2),
        "purchase_rule": purchase_rule(res),
        "speedup_sentence": speedup_sentence(res),
    }
