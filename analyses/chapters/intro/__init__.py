"""The front page (``book/intro.ipynb``): what the two documents get right, what they overstate and
understate, the counts by verdict and direction, and the claims that matter most to a purchase.

Everything is read from the ledger (:func:`analyses.chapters.ledger.assessments`, every claim at its
chapter's defaults), so a rerun or a changed verdict changes the page. Which way a claim errs comes
from the ledger's ``direction`` column (``overstates``, ``understates``; empty for consistent rows);
while the ledger has no such column the page groups the claims it disagrees with instead, and says so.

The claims that matter most to a purchase are picked by :func:`purchase_ranking`, a rule stated on the
page (:data:`PURCHASE_RULE`): a buy-or-rent decision turns on what a GPU-hour costs and how much work
it does, so a claim matters the more of those figures its check combines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyses import scenario, verdicts
from analyses.chapters import ledger
from analyses.scenario import cases, generations, speedups
from analyses.scenario.generations import NEW, NEW_PRECISION, OLD, OLD_PRECISION, SPEEDUP
from analyses.scenario.params import ChapterSpec, Config, Param
from analyses.verdicts import robustness

SLUG = "intro"
DIRECTIONS = ("overstates", "understates")
DISAGREE = ("inconsistent", "implausible")

SPEC = ChapterSpec(
    slug=SLUG,
    title="Auditing the B300 training claims",
    params=(
        Param("purchase_claims", "int", 5, "claims", "how many claims that matter to a purchase to list", 1, 12),
        Param("examples", "int", 2, "claims", "example claims under each finding", 1, 5),
    ),
)

PURCHASE_RULE = (
    "a buy-or-rent decision turns on what a GPU-hour costs and how much work it does, so the claims listed are "
    "those whose check reads a GPU's price or rent or the per-GPU speed-up: claims about money (kind cost) "
    "first, then by how many of those figures the check combines (the more, the closer the claim is to the bill "
    "of a run), then a verdict that disagrees with the documents before one that agrees, then the less robust "
    "(lower holds); one claim per check, and none the book cannot check (unverifiable)"
)


def is_purchase_figure(name: str) -> bool:
    """Whether assumption ``name`` is a figure a purchase turns on: a GPU's system price or rent (an
    amount per GPU or per GPU-hour) or a per-GPU speed-up."""
    unit = scenario.assumption(name).unit
    return name == SPEEDUP or name.startswith("speedup_") or unit.endswith(("per GPU", "per GPU-hour"))


def purchase_figures(a: robustness.Assessment) -> tuple[str, ...]:
    """The purchase figures (:func:`is_purchase_figure`) the check of ``a`` reads."""
    return tuple(n for n in a.inputs if is_purchase_figure(n))


def _check_of(a: robustness.Assessment) -> object:
    return ledger.checks(a.claim.chapter)[a.claim.id]


def rank(rows: Sequence[robustness.Assessment]) -> list[robustness.Assessment]:
    """``rows`` in the purchase order of :data:`PURCHASE_RULE`: cost claims first, then most purchase
    figures, then a verdict that disagrees with the documents, then lower holds, then ledger order."""
    order = {a.claim.id: i for i, a in enumerate(rows)}
    return sorted(
        rows,
        key=lambda a: (
            a.kind != "cost",
            -len(purchase_figures(a)),
            a.verdict == "consistent",
            a.holds,
            order[a.claim.id],
        ),
    )


def purchase_ranking(rows: Sequence[robustness.Assessment], n: int) -> list[robustness.Assessment]:
    """The ``n`` claims that matter most to a purchase (:data:`PURCHASE_RULE`)."""
    candidates = [a for a in rows if purchase_figures(a) and a.verdict != "unverifiable"]
    out, seen = [], set()
    for a in rank(candidates):
        check = _check_of(a)
        if check in seen:
            continue
        seen.add(check)
        out.append(a)
    return out[:n]


def figures_frame(rows: Sequence[robustness.Assessment], frame: pd.DataFrame) -> pd.DataFrame:
    """The ledger rows of ``rows`` (in their order) with the stated and recomputed figures in words
    (``stated figure``, ``recomputed figure``: as the ledger's reasons print them)."""
    by_id = frame.set_index("id", drop=False)
    out = by_id.loc[[a.claim.id for a in rows]].reset_index(drop=True)
    out["stated figure"] = [stated_words(a) for a in rows]
    out["recomputed figure"] = [recomputed_words(a) for a in rows]
    out["90% range"] = [range_words(a) for a in rows]
    out["purchase figures"] = [len(purchase_figures(a)) for a in rows]
    return out


def stated_words(a: robustness.Assessment) -> str:
    """The stated figure as the ledger reads it ("≤ 12 months"), or "" when none was read."""
    if a.stated is None:
        return ""
    return verdicts.show_interval(a.stated, a.unit, a.sig, as_stated=True)


def recomputed_words(a: robustness.Assessment) -> str:
    """The recomputed figure as the claim's reason prints it, or "" when nothing recomputes it."""
    return a.figure


def range_words(a: robustness.Assessment) -> str:
    """The recomputed figure's 90% range over the scenario's joint draws ("" when it has none)."""
    if a.value is None or a.value_range is None or not all(np.isfinite(a.value_range)):
        return ""
    lo, hi = a.value_range
    return "" if lo == hi else verdicts.show_interval((lo, hi), a.unit, a.sig)


# The workloads whose B300/A100 speed-ups the reader meets in the ledger's rows and on the buy-or-rent page
SPEEDUP_WORKLOADS = ("pretrain", "pretrain-13b", "pretrain-7b", "finetune", "recommender")
STATED_SPEEDUPS = ("000-2.1-per-gpu-2-3x", "000-3-table-throughput", "001-2.1-throughput-2p5-3x")


def speedup_table(s: dict[str, float] | None = None) -> pd.DataFrame:
    """The three B300/A100 per-GPU speed-ups a reader meets, which workload and precision each is, and its
    source: the documents' own (as stated), the buy-or-rent page's (the step-time model with both GPUs in
    BF16, on the documents' workloads), and the ledger's (the same model, B300 in FP8 against A100 in BF16,
    the precision the documents credit: analyses/scenario/frame.py), each a range over the workloads."""
    s = scenario.values() if s is None else s
    stated = [cases.stated_speedup(c) for c in STATED_SPEEDUPS]
    ref = speedups.reference(s)
    models = [generations.model_workload(w) or ref for w in SPEEDUP_WORKLOADS]
    fp8 = [float(generations.speedup(s, m)) for m in models]
    bf16 = [float(generations.speedup(s, speedups.with_(m, new_precision=OLD_PRECISION))) for m in models]
    where = "; ".join(f"{c[:3]} §{c.split('-')[1]}" for c in STATED_SPEEDUPS)
    return pd.DataFrame(
        [
            {
                "where the reader meets it": f"the documents ({where})",
                "low": min(lo for lo, _ in stated),
                "high": max(hi for _, hi in stated),
                "workload": "none named",
                "precision": f"{NEW} in FP8 with sparsity (as stated), {OLD} unstated",
                "source": "the documents' own figure",
            },
            {
                "where the reader meets it": "the buy-or-rent page and its calculator",
                "low": min(bf16),
                "high": max(bf16),
                "workload": "the documents' workloads: 7B-100B pretraining, the 13B fine-tune, the recommender",
                "precision": f"both in {OLD_PRECISION.upper()}",
                "source": "the book's step-time model, calibrated on published runs",
            },
            {
                "where the reader meets it": "the ledger and the chapters",
                "low": min(fp8),
                "high": max(fp8),
                "workload": f"each claim's own; {float(generations.speedup(s, None)):.3g}× on the reference 100B pretraining",
                "precision": f"{NEW} in {NEW_PRECISION.upper()}, {OLD} in {OLD_PRECISION.upper()} (no FP8)",
                "source": "the same model, at the precision the documents credit",
            },
        ]
    )


@dataclass(frozen=True)
class Group:
    """One finding: a group of claims (right, overstated, understated, or disagreed with), how many,
    and the examples shown for it."""

    key: str  # "right", "overstates", "understates" or "disagree"
    count: int
    examples: pd.DataFrame  # :func:`figures_frame` rows


@dataclass(frozen=True)
class Result:
    """Everything the front page shows, computed once from the ledger."""

    cfg: Config
    ledger: pd.DataFrame  # every claim (the ledger's columns)
    counts: dict[str, int]  # claims per verdict (every verdict, zero where none)
    directions: dict[str, int] | None  # claims per direction; None while the ledger has no direction
    purchase: pd.DataFrame  # the claims that matter most to a purchase (:func:`figures_frame`)
    speedups: pd.DataFrame  # the three B300/A100 speed-ups the reader meets (:func:`speedup_table`)
    groups: tuple[Group, ...]  # right, then overstated and understated (or disagreed with)

    @property
    def total(self) -> int:
        return len(self.ledger)

    @property
    def has_direction(self) -> bool:
        return self.directions is not None


def _group(key: str, rows: list[robustness.Assessment], frame: pd.DataFrame, shown: set[object], n: int) -> Group:
    """A finding's group: every claim in ``rows``, its examples the first ``n`` in purchase order whose
    check is not one of ``shown`` (the checks of the purchase list, already on the page)."""
    examples = [a for a in rank(rows) if _check_of(a) not in shown][:n]
    return Group(key, len(rows), figures_frame(examples, frame))


def compute(cfg: Config) -> Result:
    """The front page from every claim's assessment."""
    rows = ledger.assessments()
    frame = ledger.frame(rows)
    direction = dict(zip(frame["id"], frame["direction"], strict=True)) if "direction" in frame.columns else None
    purchase = purchase_ranking(rows, cfg["purchase_claims"])
    shown = {_check_of(a) for a in purchase}
    n = cfg["examples"]
    groups = [_group("right", [a for a in rows if a.verdict == "consistent"], frame, shown, n)]
    if direction is not None:
        for d in DIRECTIONS:
            groups.append(_group(d, [a for a in rows if direction[a.claim.id] == d], frame, shown, n))
    else:
        groups.append(_group("disagree", [a for a in rows if a.verdict in DISAGREE], frame, shown, n))
    return Result(
        cfg=cfg,
        ledger=frame,
        counts={v: int((frame["verdict"] == v).sum()) for v in verdicts.VERDICTS},
        directions=None
        if direction is None
        else {d: int(sum(1 for v in direction.values() if v == d)) for d in DIRECTIONS},
        purchase=figures_frame(purchase, frame),
        speedups=speedup_table(),
        groups=tuple(groups),
    )
