"""A verdict in doubt (issue 34, "doubt on show"): one that holds in fewer than half of the scenario's
draws, or whose flip point lies inside its input's 90% range, is never shown bare: every page, box and
download shows what it depends on instead ("depends on <input>: <verdict> above X, <verdict> below").

:func:`doubt_of` decides it from an assessment's holds, flip point and readings
(:mod:`analyses.verdicts.robustness` computes them); :class:`Doubt` carries what the pages show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyses.units.formats import fmt

DOUBT_HOLDS = 0.5  # a verdict that holds in fewer draws than this is shown with what it depends on


@dataclass(frozen=True)
class Doubt:
    """A verdict in doubt: it holds in fewer than :data:`DOUBT_HOLDS` of the draws, or its flip point lies
    inside its input's 90% range. ``depends_on`` names the input (its label; ``input`` its scenario
    name, "" for a reading or the joint draws), ``threshold`` the flip point (``threshold_text`` as
    the ledger writes it), ``above`` and ``below`` the verdicts on each side of it; without a flip
    point on one input, ``above`` is the verdict and ``below`` the other verdict, and the text says
    how often each holds."""

    depends_on: str
    input: str
    threshold: float | None
    threshold_text: str
    above: str
    below: str
    holds: float

    def text(self) -> str:
        """ "depends on <input>: consistent above X, implausible below"."""
        if self.threshold is None:
            return (
                f"depends on {self.depends_on}: {self.above} in {fmt(self.holds, pct=True, sig=2)} of the draws, "
                f"{self.below} in the rest"
            )
        return f"depends on {self.depends_on}: {self.above} above {self.threshold_text}, {self.below} below"


def doubt_of(verdict: str, holds: float, margin: float | None, flip: dict[str, Any] | None, others: tuple) -> Doubt | None:
    """The :class:`Doubt` of a verdict that holds in fewer than :data:`DOUBT_HOLDS` of the draws or whose
    flip point (``flip``, ``margin`` in units of the 90% range's half-width) lies inside its input's
    90% range; None for a verdict that may be shown bare."""
    inside = margin is not None and margin <= 1.0
    if holds >= DOUBT_HOLDS and not inside:
        return None
    other = next((v for _, v in others if v != verdict), None)
    if flip is not None and (inside or other is None):  # a flip point inside the range, or nothing else to name
        beyond = flip["verdict"]
        above, below = (verdict, beyond) if flip["side"] == "below" else (beyond, verdict)
        return Doubt(flip["label"], flip["input"], float(flip["threshold"]), flip["threshold_text"], above, below, holds)
    if other is not None:  # the readings of a vague word split the verdict
        label = next(label for label, v in others if v != verdict)
        return Doubt(f"the reading ({label})", "", None, "", verdict, other, holds)
    return Doubt("the scenario's inputs taken together", "", None, "", verdict, "another verdict", holds)
