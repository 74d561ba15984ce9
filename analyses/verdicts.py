"""Claim checks: one function per claim id, each returning a recomputed value, a verdict and a reason.

A check is registered with :func:`check` and receives the validated configuration of the chapter
that owns its claim (see :mod:`analyses.chapters`), so a reader who changes a chapter's
parameters changes the check's inputs. Verdicts:

``consistent``
    the arithmetic holds and the figures agree with public facts (an anecdote whose arithmetic
    holds is consistent; the reason says the anecdote itself cannot be checked);
``inconsistent``
    contradicted by its own arithmetic, by the other document, or by authoritative facts;
``implausible``
    can only hold with inputs far outside public ranges (the reason names the input and range);
``unverifiable``
    nothing public can check it;
``pending``
    only until the chapter that checks it exists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analyses import chapters, data

VERDICTS = ("consistent", "inconsistent", "implausible", "unverifiable")
PENDING = "pending"
LEDGER_COLUMNS = ["id", "document", "section", "topic", "claim", "stated", "recomputed", "verdict", "reason", "chapter"]


@dataclass(frozen=True)
class Verdict:
    """What a check returns: the recomputed figure(s) with units, a verdict and a one-sentence reason."""

    recomputed: str
    verdict: str
    reason: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if not self.reason.strip():
            raise ValueError("a verdict needs a reason")


CheckFn = Callable[[data.Claim, Mapping[str, Any]], Verdict]
_CHECKS: dict[str, CheckFn] = {}


def check(*claim_ids: str) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn(claim, cfg) -> Verdict`` as the one check of each of ``claim_ids``.

    One function may check several claims that need the same reasoning (the same figure stated
    in both documents, say); it reads each claim's own stated values.
    """

    def register(fn: CheckFn) -> CheckFn:
        for claim_id in claim_ids:
            if claim_id in _CHECKS:
                raise ValueError(f"claim {claim_id} already has a check: {_CHECKS[claim_id].__module__}")
            _CHECKS[claim_id] = fn
        return fn

    return register


def registered_checks() -> dict[str, CheckFn]:
    """Every registered check by claim id (importing every chapter first)."""
    for slug in chapters.CHAPTERS:
        chapters.module(slug)
    return dict(_CHECKS)


def evaluate(claim_id: str, cfg: Mapping[str, Any] | None = None) -> Verdict | None:
    """Run the check of ``claim_id`` with ``cfg`` (the owning chapter's defaults when None).

    Returns None when the claim's chapter is not written yet (verdict pending).
    """
    claim = data.claim(claim_id)
    if claim.chapter in chapters.CHAPTERS:
        chapters.module(claim.chapter)  # its chapter's package defines its checks
    checks = _CHECKS
    if claim_id not in checks:
        if claim.chapter in chapters.CHAPTERS:
            raise LookupError(f"claim {claim_id} belongs to chapter {claim.chapter}, which has no check for it")
        return None
    if cfg is None:
        cfg = chapters.spec(claim.chapter).defaults()
    return checks[claim_id](claim, cfg)


def ledger(
    chapter: str | None = None, cfg: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None
) -> pd.DataFrame:
    """The claims ledger with recomputed values, verdicts and reasons.

    Parameters
    ----------
    chapter
        Only this chapter's claims (all claims when None).
    cfg
        The chapter's validated configuration (defaults when None); only with ``chapter``.
    ids
        Only these claims (each at its own chapter's defaults unless ``chapter`` and ``cfg`` say).
    """
    rows = []
    for claim in data.claims():
        if chapter is not None and claim.chapter != chapter:
            continue
        if ids is not None and claim.id not in ids:
            continue
        result = evaluate(claim.id, cfg if chapter is not None else None)
        row = {k: getattr(claim, k) for k in data.CLAIM_COLUMNS}
        if result is None:
            row |= {"recomputed": "", "verdict": PENDING, "reason": f"the {claim.chapter} chapter is not written yet"}
        else:
            row |= {"recomputed": result.recomputed, "verdict": result.verdict, "reason": result.reason}
        rows.append(row)
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS)
