"""Verdicts: one written rule per kind of claim, applied to what a check recomputes, and how robust it is.

A check (one per claim, defined in its chapter's package and marked with :func:`check`) recomputes
the claim's figure from sourced data and the scenario (:mod:`analyses.scenario`) and returns a
:class:`Finding`: the stated figure as an interval in some unit (the most charitable reasonable
reading of the document's words), the recomputed value in the same unit, and the words that
explain it. It never decides a verdict: the rule of the claim's kind does (:data:`RULES`), with the
kind's tolerance, in this order:

1. nothing public recomputes the figure (``value=None``): ``unverifiable``;
2. an authoritative fact contradicts the claim (``contradiction``): ``inconsistent``;
3. an internal figure of the claim fails its own arithmetic (``arithmetic``): ``inconsistent``;
4. a ``business`` claim that survives 1-3: ``unverifiable`` (nothing public links it to hardware);
5. otherwise the stated interval is compared with the recomputed interval widened by the kind's
   relative tolerance: overlapping is ``consistent``; a stated figure above it gets the kind's
   ``above`` verdict, one below it the kind's ``below`` verdict.

Robustness (:func:`analyses.verdicts.robustness.assess`): the verdict at the scenario's central values is the ledger's verdict;
``holds`` is the share of joint draws of the scenario's ranges (the inputs the check reads) in
which the same rule gives the same verdict, and ``flips_if`` names the single input, varied alone
within its 90% range, whose smallest change flips it, and the threshold. Checks are written with
numpy so that one call evaluates the central scenario, the draws and every one-input grid at once.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from analyses import data
from analyses.scenario import speedups
from analyses.units import settle
from analyses.units.formats import fmt, is_money, stated, stated_amount

VERDICTS = ("consistent", "inconsistent", "implausible", "unverifiable")
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

    @property
    def one_sided(self) -> bool:
        return self.below == "consistent" or self.above == "consistent"

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
            "consistent",
            lambda: (
                f"the same {fmt(MODEL_TOLERANCE, pct=True, sig=2)} as for capability, since an anecdote is compared "
                "with what the hardware can deliver"
            ),
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
# What a check returns
# --------------------------------------------------------------------------------------------

Number = float | np.ndarray


class Interval(NamedTuple):
    """A stated figure read as an interval [lo, hi] (``shown``: how the document wrote it)."""

    lo: float
    hi: float
    shown: float | None = None  # a rounded figure's own value, printed instead of the interval


def exactly(x: float) -> Interval:
    """A stated figure read exactly."""
    return Interval(float(x), float(x))


def between(low: float, high: float) -> Interval:
    """A stated range ("2.5-3x")."""
    return Interval(float(low), float(high))


def at_least(x: float) -> Interval:
    """A stated lower bound ("more than 90%", "over 8 TB/s")."""
    return Interval(float(x), math.inf)


def at_most(x: float) -> Interval:
    """A stated upper bound ("below 50%")."""
    return Interval(-math.inf, float(x))


def rounded(x: float, step: float = 1.0) -> Interval:
    """A stated figure as the interval its rounding covers: "4" experiments is 3.5-4.5, "61%" 60.5-61.5%."""
    return Interval(float(x) - step / 2.0, float(x) + step / 2.0, float(x))


@dataclass(frozen=True)
class Arithmetic:
    """An internal figure of a claim (stated) against its recomputation from the claim's own figures."""

    label: str
    stated: Interval
    value: Number


@dataclass(frozen=True)
class Finding:
    """What a check recomputes for its claim (see the module docstring for how a verdict follows).

    ``value``, ``low``, ``high`` and the arithmetic values may be floats or arrays (one element per
    scenario draw). ``low``/``high`` are an intrinsic span around ``value`` that does not come from
    the scenario (a fit's confidence interval, the span of published figures); they default to
    ``value``. ``recomputed`` and ``context`` are strings or zero/one-argument callables evaluated
    only at the central scenario (``context`` receives the verdict). ``strict`` is the stated
    interval under the strictest reasonable reading of a vague word, and ``reading`` says which
    reading ``stated`` took.
    """

    stated: Interval
    value: Number | None
    unit: str = ""
    recomputed: str | Callable[[], str] = ""
    context: str | Callable[[str], str] = ""
    low: Number | None = None
    high: Number | None = None
    arithmetic: tuple[Arithmetic, ...] = ()
    contradiction: str | None = None
    reading: str = ""
    strict: Interval | None = None
    sig: int = 3  # significant figures of the figures the reason prints


CheckFn = Callable[[data.Claim, Mapping[str, Any], Mapping[str, Any]], Finding]


def check(*claim_ids: str, vectorised: bool = True) -> Callable[[CheckFn], CheckFn]:
    """Mark ``fn(claim, s, cfg) -> Finding`` as the check of ``claim_ids``.

    ``s`` maps every scenario assumption to its value (floats, or arrays of draws), ``cfg`` is the
    chapter's validated configuration. One function may check several claims that need the same
    reasoning; it reads each claim's own stated values. Nothing is registered: the ledger finds
    checks in the chapter packages listed in :data:`analyses.chapters.CHAPTERS`. A check whose
    models are not vectorised says ``vectorised=False`` and is evaluated draw by draw on fewer draws.
    """

    def mark(fn: CheckFn) -> CheckFn:
        fn.claim_ids = tuple(claim_ids)  # type: ignore[attr-defined]
        fn.vectorised = vectorised  # type: ignore[attr-defined]
        return fn

    return mark


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
    out = np.full(lo.shape, _CODE["consistent"])
    out = np.where(above, _CODE[rule.above], out)
    return np.where(below, _CODE[rule.below], out)


def _arith_ok(a: Arithmetic, n: int) -> np.ndarray:
    v = as_array(a.value, n)
    return _compare(a.stated, v, v, RULES["arithmetic"]) == _CODE["consistent"]


def verdict_codes(f: Finding, rule: Rule, n: int, stated: Interval | None = None) -> np.ndarray:
    """The rule applied to ``f`` at each of ``n`` scenario points (codes into :data:`VERDICTS`)."""
    if f.value is None:
        return np.full(n, _CODE["unverifiable"])
    if f.contradiction:
        return np.full(n, _CODE["inconsistent"])
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


def show(x: float, unit: str, sig: int = 3) -> str:
    """One figure with its unit as the ledger prints it."""
    if unit in ("%", "pct"):
        return str(fmt(x / 100.0, pct=True, sig=sig))
    if unit == "fraction":
        return str(fmt(x, pct=True, sig=sig))
    return str(fmt(x, unit, sig=sig))


def show_stated(x: float, unit: str) -> str:
    """A stated figure as a document writes it (shortest form, with the unit); a figure derived
    from stated ones (an implied ratio) keeps three significant figures."""
    if unit == "fraction":
        x, unit = 100 * x, "%"
    x = settle(x)  # a stated 2e6 one ulp away still reads "2 million" (the determinism test moves every float)
    if is_money(unit) and x.is_integer():
        return stated_amount(x, unit)  # "3 million RMB", "42,000 RMB": money is never a power of ten
    short = f"{x:g}"
    if len(short.replace("-", "").replace(".", "").lstrip("0")) > 4:
        return show(x / 100 if unit in ("%", "pct") else x, "fraction" if unit in ("%", "pct") else unit, 3)
    if unit in ("%", "pct"):
        return f"{stated(x)}%"
    if unit in ("x", "×"):
        return f"{stated(x)}×"
    return f"{stated(x)} {unit}".strip()


def show_interval(iv: Interval, unit: str, sig: int = 3, as_stated: bool = False) -> str:
    """An interval in words: "2.5–3×", "≥ 90%", "≤ 50%", "64" (``as_stated``: figures as written)."""
    one = (lambda x: show_stated(x, unit)) if as_stated else (lambda x: show(x, unit, sig))
    lo, hi = iv[0], iv[1]
    shown = iv.shown if isinstance(iv, Interval) else None
    if shown is not None:
        return one(shown)
    if math.isinf(hi) and math.isinf(lo):
        return "any value"
    if math.isinf(hi):
        return f"≥ {one(lo)}"
    if math.isinf(lo):
        return f"≤ {one(hi)}"
    if lo == hi:
        return one(lo)
    a, b = one(lo), one(hi)
    number = re.match(r"^[-−]?[\d.,]+(?:×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?", b)
    suffix = b[number.end() :] if number else ""
    if suffix and a.endswith(suffix):
        a = a[: -len(suffix)].rstrip()
    return f"{a}–{b}"


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
    if f.value is None:
        if rule.kind == "business":
            return "a business result of an unnamed company, which nothing public links to its hardware"
        return "nothing public recomputes this figure"
    if f.contradiction:
        return f.contradiction
    for a in f.arithmetic:
        if not bool(_arith_ok(a, 1)[0]):
            return (
                f"by the documents' own figures {a.label} is {show(float(np.asarray(a.value)), '', f.sig)}, "
                f"not the stated {show_interval(a.stated, '', f.sig, as_stated=True)}"
            )
    if rule.kind == "business":
        return "a business result of an unnamed company, which nothing public links to its hardware"
    value = float(np.asarray(f.value))
    lo = float(np.asarray(f.low)) if f.low is not None else value
    hi = float(np.asarray(f.high)) if f.high is not None else value
    recomputed = recomputed_figure(f)
    said = show_interval(f.stated, f.unit, f.sig, as_stated=True)
    tol = fmt(rule.tolerance, pct=True, sig=2)
    if verdict == "consistent":
        if f.stated[1] < min(lo, value) / (1 + rule.tolerance) and rule.below == "consistent":
            what = "an anecdote may fall short of" if rule.kind == "anecdote" else "the advice needs no more than"
            return f"the stated {said} is below the recomputed {recomputed}, and {what} what the hardware delivers"
        return f"the stated {said} agrees with the recomputed {recomputed} within the {rule.kind} tolerance of {tol}"
    side = "above" if f.stated[0] > max(hi, value) else "below"
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
    code = f"{_CODE[rule.below]} if {below} else ({_CODE[rule.above]} if {above} else {_CODE['consistent']})"
    side = f"-1 if {below} else (1 if {above} else 0)"
    return code, side, {lo: float(stated[0]), hi: float(stated[1]), tol: float(rule.tolerance)}
