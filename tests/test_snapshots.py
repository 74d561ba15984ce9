"""What the data and the scenario decide, pinned in one reviewed file (issue 37).

A claim's verdict at the defaults, the figure its check recomputes, the sentence that gives its reason
and what would flip it, and the numbers and phrases a chapter glues into its page all move when a row
of ``data/`` moves (a price, a GPU's figure, a published run). They are pinned here and nowhere else,
in ``tests/__snapshots__/test_snapshots.ambr`` (syrupy's amber format): a data edit fails this file
only, its diff shows what the edit changed, and ``make snapshots`` accepts it after review (a
snapshot no test reads any more fails too, and ``make snapshots`` deletes it).

The other tests assert what no data edit may move: published figures, closed forms, recorded
measurements, the verdict rules and what each check responds to.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest

from analyses import chapters

LEDGER_FIELDS = ("verdict", "shown", "direction", "holds", "recomputed", "flips_if", "reason")
"""A ledger row's pinned fields; ``holds`` (a share of Monte Carlo draws) to two decimals."""

GLUED_CHAPTERS = ("memory", "reliability", "tco")
"""Chapters whose glued numbers and phrases at their defaults are pinned (the cost chapter's move with
every price; the memory and reliability chapters' with their fits to recorded runs)."""


def _shown(value: Any) -> Any:
    """``value`` as the snapshot keeps it: a float to two decimals (none of its last bits), text as text."""
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 2)
    return str(value) if isinstance(value, str) else value


def test_the_ledger_at_the_defaults(whole_ledger, snapshot):
    """Every claim's verdict, direction, holds, recomputed figure, flip and reason at its chapter's defaults."""
    rows = {
        row["id"]: {field: _shown(row[field]) for field in LEDGER_FIELDS}
        for row in whole_ledger.to_dict(orient="records")
    }
    assert rows == snapshot


@pytest.mark.parametrize("slug", GLUED_CHAPTERS)
def test_a_chapters_glued_text_at_its_defaults(slug, snapshot):
    """Every number and phrase the chapter's page glues (``text.glued``) at its defaults."""
    module = chapters.module(slug)
    res = module.compute(chapters.spec(slug).defaults())
    text = importlib.import_module(f"{module.__name__}.text")
    assert {key: str(value) for key, value in text.glued(res).items()} == snapshot
