"""Page ``sources``: every source with what cites it, where sources disagree, and the data files.

Each source has an entry with the HTML id ``source-<id>`` (every source id shown elsewhere in the
book links there), and the entry links to the source itself where its ``reference`` names a URL,
an arXiv id or a DOI; a reference without one (this project's own measurements, a vendor listing
cited second-hand) says so rather than inventing an address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from analyses import data
from analyses.scenario.params import ChapterSpec, Param

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
        for col in data.schema(name).columns:
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


# A reference names the source by URL, arXiv id or DOI (several separated by ";"); anything else
# (a file of this repository, a site named without an address) has no link.
_ARXIV = re.compile(r"^arxiv:\s*(\d{4}\.\d{4,5}(?:v\d+)?)$", re.I)
_DOI = re.compile(r"^(?:doi:\s*|https?://doi\.org/)(10\.\d{4,9}/\S+)$", re.I)
_URL = re.compile(r"^https?://\S+$")
REPOSITORY_DIRS = ("tools/", "analyses/", "data/")


def reference_links(reference: str) -> list[tuple[str, str | None]]:
    """Each part of a ``reference`` as ``(text, url)``: URLs as they are, ``arXiv:ID`` as
    ``https://arxiv.org/abs/ID``, ``doi:10.x/y`` as ``https://doi.org/10.x/y``; ``url`` is None for a
    part that names no address."""
    out: list[tuple[str, str | None]] = []
    for part in (p.strip() for p in str(reference).split(";")):
        if not part:
            continue
        if _URL.match(part) and not _DOI.match(part):
            out.append((part, part))
        elif m := _ARXIV.match(part):
            out.append((f"arXiv:{m.group(1)}", f"https://arxiv.org/abs/{m.group(1)}"))
        elif m := _DOI.match(part):
            out.append((f"doi:{m.group(1)}", f"https://doi.org/{m.group(1)}"))
        else:
            out.append((part, None))
    return out


def has_link(reference: str) -> bool:
    """Whether a reference names at least one address (URL, arXiv id or DOI)."""
    return any(url for _, url in reference_links(reference))


def data_files() -> pd.DataFrame:
    """Every data table offered for download: its name, rows, file(s) under ``data/``, schema and
    description (a table stored as several files, like ``sources``, lists each)."""
    rows = []
    root = Path(data.DATA_DIR)
    for name in data.table_names():
        single = root / f"{name}.csv"
        files = [single] if single.is_file() else sorted((root / name).glob("*.csv"))
        rows.append(
            {
                "table": name,
                "rows": len(data.table(name)),
                "files": [p.relative_to(root).as_posix() for p in files],
                "schema": f"{name}.schema.yaml",
                "description": data.schema(name).description,
            }
        )
    return pd.DataFrame(rows, columns=["table", "rows", "files", "schema", "description"])
