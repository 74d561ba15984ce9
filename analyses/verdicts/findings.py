"""What a check returns: the stated figure as an interval, the recomputed value, and the words.

A check (one per claim, marked with :func:`check`) returns a :class:`Finding`; the rule of its
claim's kind (:mod:`analyses.verdicts`) decides the verdict. Here are the pieces a finding is made
of (:class:`Interval` and its readings of a stated figure, :class:`Arithmetic`, :class:`Reading`,
:class:`Credit`) and how a figure or an interval is written in a reason (:func:`show`,
:func:`show_stated`, :func:`show_interval`). Everything here is re-exported by
:mod:`analyses.verdicts`, where checks import it from.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from analyses import data
from analyses.scenario.generations import NEW, OLD
from analyses.units import settle
from analyses.units.formats import fmt, is_money, stated, stated_amount

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


_KEEP: Any = type("Keep", (), {"__repr__": lambda self: "KEEP"})()  # a Reading leaves this field as the check gave it


@dataclass(frozen=True)
class Reading:
    """Another reasonable reading of a claim's vague word or window choice, as what it changes.

    ``label`` says it in a few words ("数小时 as 2-9 hours", "the 2015-2020 window"); the other
    fields replace the finding's own under this reading (floats or arrays like the finding's).
    ``holds`` counts every reading with the reading taken, each as likely, and the reason names
    each reading under which the verdict would differ.
    """

    label: str
    stated: Interval | None = None
    value: Any = _KEEP
    low: Any = _KEEP
    high: Any = _KEEP
    contradiction: Any = _KEEP
    arithmetic: Any = _KEEP
    credits: Any = _KEEP

    def apply(self, f: Finding) -> Finding:
        """The finding as this reading makes it."""
        changes = {k: getattr(self, k) for k in ("value", "low", "high", "contradiction", "arithmetic", "credits")}
        changes = {k: v for k, v in changes.items() if v is not _KEEP}
        if self.stated is not None:
            changes["stated"] = self.stated
        if "value" in changes and "low" not in changes:
            changes["low"] = None
        if "value" in changes and "high" not in changes:
            changes["high"] = None
        return dataclasses.replace(f, readings=(), strict=None, **changes)


@dataclass(frozen=True)
class Credit:
    """A feature (a row of ``data/features.csv``) that a claim credits to the new generation.

    One rule for every such row: where the claim says, or its comparison column implies, that the
    generation it compares with (``against``, the documents' A100 unless given) lacks the feature,
    and that generation's datasheet or user guide shows it, the claim is contradicted
    (``inconsistent``, overstating); where it only says the new generation has the feature, the
    kind's rule judges the stated effect and the reason names the generation that had it first.
    """

    feature: str
    compared: bool = False
    against: str = ""

    @functools.cached_property
    def row(self) -> dict[str, Any]:
        table = data.table("features").set_index("feature")
        if self.feature not in table.index:
            raise KeyError(f"feature '{self.feature}' is not in data/features.csv; it has: {', '.join(table.index)}")
        return table.loc[self.feature].to_dict()

    @property
    def older(self) -> str:
        return self.against or OLD

    @property
    def older_had_it(self) -> bool:
        """Whether the generation compared with already had the feature (launch order of data/gpus.csv)."""
        ladder = data.gpu_names()
        return ladder.index(str(self.row["first_gpu"])) <= ladder.index(self.older)

    @property
    def contradicts(self) -> bool:
        return self.compared and self.older_had_it

    def first_text(self) -> str:
        row = self.row
        when = str(row["available"])[:4]
        return f"{row['name']} came with {row['first_gpu']} ({when})"

    def clause(self) -> str:
        """The rule's words for this row."""
        row = self.row
        if self.contradicts:
            return f"{self.older} already has {row['name']} ({row['evidence']}): the claim credits {NEW} with what {self.older} had"
        if self.older_had_it:
            return f"not new with {NEW}: {row['name']} ({row['evidence']})"
        return f"{self.first_text()}, after {self.older}"


@dataclass(frozen=True)
class Finding:
    """What a check recomputes for its claim (see the module docstring for how a verdict follows).

    ``value``, ``low``, ``high`` and the arithmetic values may be floats or arrays (one element per
    scenario draw). ``low``/``high`` are an intrinsic span around ``value`` that does not come from
    the scenario (a fit's confidence interval, the span of published figures); they default to
    ``value``. ``recomputed`` and ``context`` are strings or zero/one-argument callables evaluated
    only at the central scenario (``context`` receives the verdict). ``reading`` says in full which
    reading of the claim's vague words ``stated`` took, ``taken`` names it in a few words for the
    reason, and ``readings`` are the other reasonable ones (:class:`Reading`); ``strict`` is the
    stated interval under the strictest reading, a reading of its own. ``direction`` names the
    claim's error where the figures alone do not (a contradicted claim); ``credits`` are the
    features the claim credits to the new generation (:class:`Credit`).
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
    taken: str = ""
    readings: tuple[Reading, ...] = ()
    direction: str = ""
    credits: tuple[Credit, ...] = ()
    documents: tuple[Reading, ...] = ()  # the claim at the documents' own figure (said in the reason, not counted)
    promise: str = ""  # a recommendation's purpose in words, where the document gives it no figure ("the throughput an unlimited network gives")

    @property
    def contradicting_credit(self) -> Credit | None:
        """The first credited feature the compared generation already had, where the claim says it lacks it."""
        return next((c for c in self.credits if c.contradicts), None)

    def alternatives(self) -> tuple[tuple[str, Finding], ...]:
        """(label, finding) under each other reading, the strict one included."""
        out = [(r.label, r.apply(self)) for r in self.readings]
        if self.strict is not None:
            label = f"strictly, {show_interval(self.strict, self.unit, self.sig, as_stated=True)}"
            out.append((label, dataclasses.replace(self, strict=None, readings=(), stated=self.strict)))
        return tuple(out)


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
# How a figure is written in a reason
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
