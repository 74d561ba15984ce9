"""The sources page's glued numbers: :func:`glued` maps every name its page glues to text formatted
through :mod:`analyses.units.formats` (the page has no sentences of its own to compute)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analyses import data
from analyses.units.formats import fmt


def glued(frame: pd.DataFrame) -> dict[str, Any]:
    """The counts the page glues, for ``frame``, the sources it lists (:func:`~analyses.chapters.sources.sources_table`)."""
    return {"n_sources": fmt(len(frame), sig=3), "n_tables": fmt(len(data.table_names()), sig=2)}
