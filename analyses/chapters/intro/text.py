"""Sentences of the front page, each read from a computed :class:`~analyses.chapters.intro.Result`, and
:func:`glued`, every number and phrase the page glues."""

from __future__ import annotations

from typing import Any

from analyses.chapters.intro import PURCHASE_RULE, Group, Result
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.scenario import buying
from analyses.units.formats import billions, fmt, in_words
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


def reader_run(w: buying.Workload) -> str:
    """The buy-or-rent page's default run in words ("7B parameters, 140B tokens, within 30 days")."""
    return f"{billions(w.shape.n_params)} parameters, {billions(w.tokens)} tokens, within {fmt(w.deadline_days, 'days', 2)}"


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the front page glues, by name, formatted for the page."""
    return {"level": fmt(INTERVAL_LEVEL, pct=True, sig=2), "purchase_rule": purchase_rule(res)}
