"""Page ``claims``: the whole ledger with verdicts, counts by document, chapter and kind, the rules,
and where verdicts flip.

:func:`compute` assesses every claim once (:func:`analyses.chapters.ledger.assessments`) and keeps
those the page's filters select; the page's charts, tables and printable summary are
:mod:`analyses.chapters.claims.figures`, its captions :mod:`analyses.chapters.claims.text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analyses import verdicts
from analyses.chapters import ledger
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.scenario.params import ChapterSpec, Config, Param
from analyses.verdicts import robustness, sweeps

DOCUMENTS = ("all", "000_f164c1abc5db046d.txt", "001_df9bc65650076e7a.txt")

SPEC = ChapterSpec(
    slug="claims",
    title="The claims ledger",
    params=(
        Param("document", "str", "all", "-", "show claims of one document, or all", choices=DOCUMENTS),
        Param(
            "verdict",
            "str",
            "all",
            "-",
            "show only claims with this verdict",
            choices=("all", *verdicts.VERDICTS),
        ),
    ),
)


def _keep(cfg: Mapping[str, Any], document: str, verdict: str) -> bool:
    return cfg["document"] in ("all", document) and cfg["verdict"] in ("all", verdict)


@dataclass(frozen=True)
class Result:
    """Everything the ledger page shows, computed once."""

    cfg: Config
    ledger: pd.DataFrame  # the ledger rows the filters keep
    counts: dict[str, int]  # claims per verdict (every verdict, zero where none), and "all"
    directions: dict[str, int]  # claims per direction (overstates, understates) among those kept
    rules: pd.DataFrame  # kind, claims of that kind, the rule in words
    flips: pd.DataFrame  # :func:`analyses.pages.sliders.flip_points` of the kept rows
    draws: int = robustness.DRAWS  # joint scenario draws behind ``holds``
    level: float = INTERVAL_LEVEL  # two-sided level of every range the checks recompute


def rules_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Each kind of claim with how many of ``frame``'s claims are of it and its verdict rule in words."""
    per_kind = frame["kind"].value_counts()
    return pd.DataFrame(
        [(kind, int(per_kind.get(kind, 0)), rule) for kind, rule in verdicts.rules_table()],
        columns=["kind", "claims", "rule"],
    )


def compute(cfg: Config) -> Result:
    """Assess every claim once, keep those the filters select, and derive the page's tables."""
    rows = [a for a in ledger.assessments() if _keep(cfg, a.claim.document, a.verdict)]
    frame = ledger.frame(rows)
    return Result(
        cfg,
        frame,
        ledger.verdict_counts(frame),
        ledger.direction_counts(frame),
        rules_frame(frame),
        sweeps.flip_points(rows),
    )


def verdict_order(frame: pd.DataFrame) -> list[str]:
    """The verdicts in the ledger's fixed order, those present in ``frame`` only."""
    return verdicts.verdict_order(frame["verdict"])


def direction_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims with a direction per verdict (inconsistent, implausible, and unverifiable anecdotes that
    lean one way) and direction, with totals."""
    erring = frame[frame["direction"].isin(verdicts.DIRECTIONS)]
    out = (
        erring.groupby("verdict")["direction"]
        .value_counts()
        .unstack(fill_value=0)
        .reindex(columns=list(verdicts.DIRECTIONS), fill_value=0)
    )
    out["total"] = out.sum(axis=1)
    out.loc["all"] = out.sum()
    return out.reset_index().rename_axis(columns=None)


def summary(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    """Claims per value of ``by`` (document, chapter, kind) and verdict, with totals."""
    order = verdict_order(frame)
    out = frame.groupby(by)["verdict"].value_counts().unstack(fill_value=0).reindex(columns=order, fill_value=0)
    out["total"] = out.sum(axis=1)
    out.loc["all"] = out.sum()
    return out.reset_index().rename(columns={by: by}).rename_axis(columns=None)
