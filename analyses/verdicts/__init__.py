"""Verdicts: one written rule per kind of claim, applied to what a check recomputes, and how robust it is.

A check (one per claim, defined in its chapter's package and marked with :func:`check`) recomputes
the claim's figure from sourced data and the scenario (:mod:`analyses.scenario`) and returns a
:class:`Finding`: the stated figure as an interval in some unit (the most charitable reasonable
reading of the document's words), the recomputed value in the same unit, and the words that
explain it. It never decides a verdict: the rule of the claim's kind does (:data:`RULES`), with the
kind's tolerance, in this order:

1. an authoritative fact contradicts the claim (``contradiction``, or a credited feature the
   compared generation already had): ``inconsistent``;
2. nothing public recomputes the figure (``value=None``): ``unverifiable``;
3. an internal figure of the claim fails its own arithmetic (``arithmetic``): ``inconsistent``;
4. a ``business`` claim that survives 1-3: ``unverifiable`` (nothing public links it to hardware);
5. otherwise the stated interval is compared with the recomputed interval widened by the kind's
   relative tolerance: overlapping gets the kind's ``agree`` verdict (``consistent``, except for an
   anecdote, which nothing public can confirm: ``unverifiable``, called plausible); a stated figure
   above it gets the kind's ``above`` verdict, one below it the kind's ``below`` verdict.

A claim credited to B300 for a feature an older generation already had is judged by one rule
(:class:`Credit`): where the claim or its comparison column says the older GPU lacks it, the
datasheet contradicts it (step 2); elsewhere the reason names the generation that had it first.

Every verdict other than ``consistent`` and ``unverifiable`` has a direction (:func:`direction`):
``overstates`` when the stated figure lies above what the evidence gives (or the claim credits
more than the evidence allows), ``understates`` when it lies below.

A vague word or a window choice is an input too: a check names the reading it takes (``taken``)
and each reasonable alternative (:class:`Reading`), and ``holds`` counts them with the scenario.

Robustness (:func:`analyses.verdicts.robustness.assess`): the verdict at the scenario's central values is the ledger's verdict;
``holds`` is the share of (reading x joint draw of the scenario's ranges) in which the same rule
gives the same verdict, and ``flips_if`` names the single input, varied alone, whose smallest
change flips it, and the threshold, even where that lies outside the input's 90% range
(``margin``: how far, in units of that range's half-width). Checks are written with
numpy so that one call evaluates the central scenario, the draws and every one-input grid at once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from analyses.scenario import speedups
from analyses.units.formats import fmt
from analyses.verdicts.findings import (
    Arithmetic,
    CheckFn,
    Credit,
    Finding,
    Interval,
    Number,
    Reading,
    at_least,
    at_most,
    between,
    check,
    exactly,
    rounded,
    show,
    show_interval,
    show_stated,
)

# the public names: this module's rules and words, and what a check returns (analyses.verdicts.findings)
__all__ = [
    "Arithmetic",
    "as_array",
    "at_least",
    "at_most",
    "between",
    "check",
    "CheckFn",
    "Credit",
    "direction",
    "DIRECTIONS",
    "exactly",
    "Finding",
    "Interval",
    "MODEL_TOLERANCE",
    "Number",
    "Reading",
    "recomputed_figure",
    "rounded",
    "Rule",
    "rule_clause",
    "rule_formula",
    "RULES",
    "rules_table",
    "sentence",
    "show",
    "show_interval",
    "show_stated",
    "step_time_basis",
    "verdict_codes",
    "verdict_order",
    "VERDICTS",
]

VERDICTS = ("consistent", "inconsistent", "implausible", "unverifiable")


def verdict_order(values: Iterable[str]) -> list[str]:
    """The verdicts among ``values`` in the ledger's fixed order (:data:`VERDICTS`), each once."""
    present = set(values)
    return [v for v in VERDICTS if v in present]


_CODE = {v: i for i, v in enumerate(VERDICTS)}

# --------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """The verdict rule of one kind of claim."""

    kind: str
    covers: str  # what claims of this kind assert
    tolerance: float  # relative: the recomputed interval is widened to [lo / (1 + t), hi * (1 + t)]
    above: str  # verdict when the stated figure lies above the widened interval
    below: str  # verdict when it lies below
    basis: str | Callable[[], str]  # why this tolerance (a callable where the reason is computed)
    agree: str = "consistent"  # verdict when the stated figure overlaps the widened interval

    @property
    def one_sided(self) -> bool:
        return self.below == self.agree or self.above == self.agree

    def basis_text(self) -> str:
        return self.basis() if callable(self.basis) else self.basis

    def text(self) -> str:
        """The rule in words, for the ledger page."""
        if self.kind == "business":
            return (
                f"{self.covers}. Unverifiable unless its own arithmetic fails (then inconsistent): nothing public links "
                "a company's business result to its hardware."
            )
        sides = (
            f"above it, {self.above}; below it, {self.below}"
            if self.above != self.below
            else f"outside it on either side, {self.above}"
        )
        if self.agree == "unverifiable":
            return (
                f"{self.covers}. Nothing public records the deployment, so it is unverifiable: plausible when the stated "
                f"figure overlaps or falls short of what the hardware delivers, widened by "
                f"{fmt(self.tolerance, pct=True, sig=2)}; above it, {self.above}. Tolerance: {self.basis_text()}."
            )
        return (
            f"{self.covers}. Consistent when the stated figure overlaps the recomputed one widened by "
            f"{fmt(self.tolerance, pct=True, sig=2)}; {sides}. Tolerance: {self.basis_text()}."
        )


# The tolerance of claims about what hardware delivers (a speed-up, a scaling efficiency, a gain: a
# ratio of two throughputs): at least the step-time model's 90% band on published same-recipe ratios
# it did not see (the Megatron-Bridge cross-generation and MosaicML A100/H100 pairs), rounded up to
# the next 5% with a margin (tests/core/test_verdicts.py recomputes the band and checks the cover).
MODEL_TOLERANCE = 0.25


def step_time_basis(tolerance: float) -> str:
    """Why ``tolerance``: the step-time model's out-of-sample 90% band on published speed-up ratios."""
    lo, hi, n = speedups.band("dense")
    return (
        f"{fmt(tolerance, pct=True, sig=2)} covers the 90% band of the book's step-time model on {n} published "
        f"same-recipe speed-ups it was not fitted on ({fmt(lo - 1, pct=True, sig=2)} to +{fmt(hi - 1, pct=True, sig=2)})"
    )


RULES: dict[str, Rule] = {
    r.kind: r
    for r in (
        Rule(
            "fact",
            "A statement about the world that public records settle: a datasheet figure, a published model or "
            "run, a measured trend, what a technology is",
            0.10,
            "inconsistent",
            "inconsistent",
            "10% covers rounding in prose and the 7.4% between GB and GiB",
        ),
        Rule(
            "capability",
            "What B300 hardware or its software delivers: speed-up, scaling, reliability and utilisation gains",
            MODEL_TOLERANCE,
            "implausible",
            "inconsistent",
            lambda: step_time_basis(MODEL_TOLERANCE),
        ),
        Rule(
            "anecdote",
            "An outcome one unnamed deployment reports; it may fall short of what the hardware could do, but "
            "not exceed it",
            MODEL_TOLERANCE,
            "implausible",
            "unverifiable",
            lambda: (
                f"the same {fmt(MODEL_TOLERANCE, pct=True, sig=2)} as for capability, since an anecdote is compared "
                "with what the hardware can deliver"
            ),
            agree="unverifiable",
        ),
        Rule(
            "arithmetic",
            "A figure derived from the documents' own figures (a percentage, a ratio, a count)",
            0.05,
            "inconsistent",
            "inconsistent",
            "5% on top of the stated figure's own rounding, which the check reads as an interval",
        ),
        Rule(
            "cost",
            "A money figure: a price, a bill, a saving, a cost ratio or a payback time",
            0.15,
            "implausible",
            "implausible",
            "15% for cost items the model leaves out (software, spares, insurance, financing fees)",
        ),
        Rule(
            "recommendation",
            "Advice whose purpose can be measured: the stated figure is what the advice needs or promises, the "
            "recomputed one what following it achieves",
            0.05,
            "inconsistent",
            "consistent",
            "5%: advice that comes within 5% of its purpose serves it",
        ),
        Rule(
            "business",
            "A business result of an unnamed company (revenue, procurement, R&D efficiency)",
            0.0,
            "unverifiable",
            "unverifiable",
            "none",
        ),
    )
}

# --------------------------------------------------------------------------------------------
# Applying a rule
# --------------------------------------------------------------------------------------------


def as_array(x: Number | None, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, dtype=float), (n,))


def _compare(stated: Interval, lo: np.ndarray, hi: np.ndarray, rule: Rule) -> np.ndarray:
    """Verdict codes of ``stated`` against [lo, hi] widened by the rule's tolerance."""
    t = 1.0 + rule.tolerance
    wlo = np.where(lo >= 0, lo / t, lo * t)
    whi = np.where(hi >= 0, hi * t, hi / t)
    above = stated[0] > whi
    below = stated[1] < wlo
    out = np.full(lo.shape, _CODE[rule.agree])
    out = np.where(above, _CODE[rule.above], out)
    return np.where(below, _CODE[rule.below], out)


def _arith_ok(a: Arithmetic, n: int) -> np.ndarray:
    v = as_array(a.value, n)
    return _compare(a.stated, v, v, RULES["arithmetic"]) == _CODE[RULES["arithmetic"].agree]


def verdict_codes(f: Finding, rule: Rule, n: int, stated: Interval | None = None) -> np.ndarray:
    """The rule applied to ``f`` at each of ``n`` scenario points (codes into :data:`VERDICTS`)."""
    if f.contradiction or f.contradicting_credit is not None:
        return np.full(n, _CODE["inconsistent"])
    if f.value is None:
        return np.full(n, _CODE["unverifiable"])
    arith = np.ones(n, dtype=bool)
    for a in f.arithmetic:
        arith &= _arith_ok(a, n)
    if rule.kind == "business":
        main = np.full(n, _CODE["unverifiable"])
    else:
        value = as_array(f.value, n)
        lo = as_array(f.low if f.low is not None else f.value, n)
        hi = as_array(f.high if f.high is not None else f.value, n)
        lo, hi = np.minimum(lo, value), np.maximum(hi, value)
        main = _compare(stated or f.stated, lo, hi, rule)
    return np.where(arith, main, _CODE["inconsistent"])


# --------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------


def _side(stated: Interval, lo: float, hi: float, rule: Rule) -> str:
    """ "above" or "below" where ``stated`` lies outside [lo, hi] widened by the rule's tolerance, else ""."""
    t = 1.0 + rule.tolerance
    whi = hi * t if hi >= 0 else hi / t
    wlo = lo / t if lo >= 0 else lo * t
    if stated[0] > whi:
        return "above"
    if stated[1] < wlo:
        return "below"
    return ""


def _span(f: Finding) -> tuple[float, float, float]:
    """(value, low, high) of a finding at the central scenario."""
    value = float(np.asarray(f.value))
    lo = float(np.asarray(f.low)) if f.low is not None else value
    hi = float(np.asarray(f.high)) if f.high is not None else value
    return value, min(lo, value), max(hi, value)


DIRECTIONS = ("overstates", "understates")


def direction(f: Finding, rule: Rule, verdict: str) -> str:
    """Which way the claim errs against the evidence: ``overstates`` (the stated figure lies above
    what the evidence gives, or the claim credits more than it allows), ``understates`` (below), or
    "" for a ``consistent`` or ``unverifiable`` verdict. A check names it (``direction``) where the
    figures alone cannot: a claim an authoritative fact contradicts.

    An ``unverifiable`` anecdote whose figure lies on one side of what the hardware delivers, beyond the
    tolerance, carries that side too (most fall short: ``understates``), so a reader sees which way the
    documents' unchecked stories lean; one with nothing to compare it with has none."""
    if verdict == "consistent":
        return ""
    if verdict == "unverifiable":
        if rule.kind != "anecdote" or f.value is None or f.contradiction or f.contradicting_credit is not None:
            return ""
        _, lo, hi = _span(f)
        return {"above": "overstates", "below": "understates"}.get(_side(f.stated, lo, hi, rule), "")
    if f.direction:
        if f.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {f.direction!r}")
        return f.direction
    if f.contradicting_credit is not None:
        return "overstates"
    for a in f.arithmetic:
        if not bool(_arith_ok(a, 1)[0]):
            v = float(np.asarray(a.value))
            side = _side(a.stated, v, v, RULES["arithmetic"])
            return {"above": "overstates", "below": "understates"}.get(side, "")
    if f.value is None or f.contradiction:
        return ""
    value, lo, hi = _span(f)
    return {"above": "overstates", "below": "understates"}.get(_side(f.stated, lo, hi, rule), "")


def recomputed_figure(f: Finding) -> str:
    """The recomputed figure as a reason prints it: the value at the scenario's central values, or the
    span the check gives with it ("5.7 months", "57,000 RMB–12 million RMB"); "" when there is none."""
    if f.value is None:
        return ""
    value = float(np.asarray(f.value))
    lo = float(np.asarray(f.low)) if f.low is not None else value
    hi = float(np.asarray(f.high)) if f.high is not None else value
    return show(value, f.unit, f.sig) if lo == hi else show_interval((min(lo, value), max(hi, value)), f.unit, f.sig)


def rule_clause(f: Finding, rule: Rule, verdict: str) -> str:
    """The rule's part of a reason: which comparison decided the verdict."""
    if f.contradicting_credit is not None:
        return f.contradicting_credit.clause()
    if f.contradiction:
        return f.contradiction
    if f.value is None:
        if rule.kind == "business":
            return "a business result of an unnamed company, which nothing public links to its hardware"
        return "nothing public recomputes this figure"
    for a in f.arithmetic:
        if not bool(_arith_ok(a, 1)[0]):
            label, unit = (a.label[: -len(" (%)")], "%") if a.label.endswith(" (%)") else (a.label, "")
            return (
                f"by the documents' own figures {label} is {show(float(np.asarray(a.value)), '', f.sig)}{unit}, "
                f"not the stated {show_interval(a.stated, '', f.sig, as_stated=True)}{unit}"
            )
    if rule.kind == "business":
        return "a business result of an unnamed company, which nothing public links to its hardware"
    value = float(np.asarray(f.value))
    lo = float(np.asarray(f.low)) if f.low is not None else value
    hi = float(np.asarray(f.high)) if f.high is not None else value
    recomputed = recomputed_figure(f)
    said = show_interval(f.stated, f.unit, f.sig, as_stated=True)
    if f.promise:  # a figure the document never gives: the advice's purpose, which the check reads as ``said``
        said = f"purpose ({f.promise}: read as {said})"
    tol = fmt(rule.tolerance, pct=True, sig=2)
    if verdict == rule.agree:
        short = f.stated[1] < lo / (1 + rule.tolerance) and rule.below == rule.agree
        if rule.agree == "unverifiable":
            fits = (
                f"falls short of the recomputed {recomputed}, as a deployment may"
                if short
                else f"agrees with the recomputed {recomputed} within the {rule.kind} tolerance of {tol}"
            )
            return f"plausible: the stated {said} {fits}, but nothing public records this deployment"
        if short:
            what = "an anecdote may fall short of" if rule.kind == "anecdote" else "the advice needs no more than"
            return f"the stated {said} is below the recomputed {recomputed}, and {what} what the hardware delivers"
        return f"the stated {said} agrees with the recomputed {recomputed} within the {rule.kind} tolerance of {tol}"
    side = "above" if f.stated[0] > hi else "below"
    return f"the stated {said} lies {side} the recomputed {recomputed} by more than the {rule.kind} tolerance of {tol}"


def sentence(*parts: str) -> str:
    text = "; ".join(p.strip().rstrip(".") for p in parts if p and p.strip())
    return (text[:1].upper() + text[1:] + ".") if text else ""


# --------------------------------------------------------------------------------------------
# The rules in words
# --------------------------------------------------------------------------------------------


@functools.cache
def rules_table() -> tuple[tuple[str, str], ...]:
    """(kind, rule in words) for every kind, for the ledger page."""
    return tuple((kind, rule.text()) for kind, rule in RULES.items())


# --------------------------------------------------------------------------------------------
# A rule in the formula language (the in-page calculator applies it to the reader's inputs)
# --------------------------------------------------------------------------------------------


def rule_formula(rule: Rule, stated: Interval, value: str) -> tuple[str, str, dict[str, float]]:
    """:func:`_compare` for one claim as two expressions of :mod:`analyses.models.formula` over the
    formula ``value`` (the recomputed figure): the verdict's index in :data:`VERDICTS`, and the side
    (+1 the stated figure lies above the widened value, -1 below, 0 within), with the constants they
    read (the stated bounds, which may be infinite, and the tolerance). The order of the tests is
    :func:`_compare`'s: below wins over above."""
    key = re.sub(r"\W", "_", value).upper()
    lo, hi, tol = f"STATED_LO_{key}", f"STATED_HI_{key}", f"TOLERANCE_{key}"
    wlo = f"({value} / (1 + {tol}) if {value} >= 0 else {value} * (1 + {tol}))"
    whi = f"({value} * (1 + {tol}) if {value} >= 0 else {value} / (1 + {tol}))"
    below, above = f"{hi} < {wlo}", f"{lo} > {whi}"
    code = f"{_CODE[rule.below]} if {below} else ({_CODE[rule.above]} if {above} else {_CODE[rule.agree]})"
    side = f"-1 if {below} else (1 if {above} else 0)"
    return code, side, {lo: float(stated[0]), hi: float(stated[1]), tol: float(rule.tolerance)}
