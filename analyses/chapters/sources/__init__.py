"""Page ``sources``: every source with what cites it, and where sources disagree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Param

SPEC = ChapterSpec(
    slug="sources",
    title="Data sources",
    params=(
        Param(
            "table",
            "str",
            "all",
            "-",
            "list only the sources cited by this data table",
            choices=lambda: ["all", *data.table_names()],
        ),
    ),
)


def citations() -> pd.DataFrame:
    """Which tables cite each source id, and how many rows."""
    rows = []
    for name in data.table_names():
        frame = data.table(name)
        for col in frame.attrs["schema"].columns:
            if col.type not in ("source", "sources"):
                continue
            for value in frame[col.name].dropna():
                for sid in data.SOURCE_SPLIT.split(value):
                    rows.append({"id": sid, "table": name})
    frame = pd.DataFrame(rows, columns=["id", "table"])
    return (
        frame.groupby("id")["table"]
        .agg(lambda t: ", ".join(f"{k} ({v})" for k, v in t.value_counts().sort_index().items()))
        .reset_index(name="cited by (rows)")
    )


def sources_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """The sources table with citing tables, optionally only those cited by one table."""
    frame = data.sources().merge(citations(), on="id", how="left").fillna({"cited by (rows)": "-"})
    if cfg["table"] != "all":
        frame = frame[frame["cited by (rows)"].str.contains(cfg["table"] + " (", regex=False)]
    return (
        frame[["id", "title", "publisher", "date", "reference", "locator", "conventions", "cited by (rows)"]]
        .sort_values("id")
        .reset_index(drop=True)
    )
