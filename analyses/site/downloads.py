"""Downloads generated into the built site: the ledger as CSV and JSON, every data table as CSV,
and a printable page of the verdicts.

Nothing here is committed: :func:`write_downloads` runs at the end of every ``python -m analyses
build`` and writes ``_build/html/downloads/``. The ledger files are byte for byte what
``python -m analyses verdicts --format csv|json`` prints (both call :func:`ledger_text`); the
data files are copies of ``data/``. The book's pages link here with :func:`links`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from analyses import data
from analyses.pages.links import DOWNLOADS, PRINTABLE


def ledger_text(frame: pd.DataFrame, fmt: str) -> str:
    """The ledger as the CLI prints it: ``csv`` (pandas, no index) or ``json`` (records, one
    space indent, UTF-8 kept, a final newline)."""
    if fmt == "csv":
        return frame.to_csv(index=False)
    if fmt == "json":
        return json.dumps(frame.to_dict("records"), indent=1, ensure_ascii=False) + "\n"
    raise ValueError(f"format must be csv or json, got {fmt!r}")


def data_files(data_dir: Path | None = None) -> list[Path]:
    """Every data table (CSV), its schema and the data package that lists them (a reader's
    ``frictionless validate downloads/data/datapackage.json`` works), relative to ``data/``, sorted."""
    root = Path(data_dir or data.DATA_DIR)
    return sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and (p.name.endswith((".csv", ".schema.yaml")) or p.name == "datapackage.json")
    )


def _write(path: Path, content: bytes) -> bool:
    """Write ``content`` unless the file already holds it (keeps mtimes stable); True if written."""
    if path.is_file() and path.read_bytes() == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(content)
    tmp.replace(path)
    return True


def write_downloads(html_dir: Path, ledger: pd.DataFrame, printable: str) -> list[Path]:
    """Write ``ledger`` (CSV, JSON), the ``printable`` page (HTML, see
    :func:`analyses.chapters.claims.figures.printable_page`) and a copy of every data file under
    ``html_dir/downloads``; stale files left by an earlier build are removed. Returns what it wrote."""
    out = Path(html_dir) / DOWNLOADS
    wanted: dict[Path, bytes] = {
        out / "ledger.csv": ledger_text(ledger, "csv").encode(),
        out / "ledger.json": ledger_text(ledger, "json").encode(),
        out / PRINTABLE: printable.encode(),
    }
    for rel in data_files():
        wanted[out / "data" / rel] = (Path(data.DATA_DIR) / rel).read_bytes()
    written = [p for p, content in wanted.items() if _write(p, content)]
    for old in [p for p in out.rglob("*") if p.is_file() and p not in wanted]:
        old.unlink()
    for folder in sorted((p for p in out.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            shutil.rmtree(folder)
    return written


def publish(html_dir: Path) -> list[Path]:
    """Write the site's downloads into ``html_dir`` from the ledger as it is now (:func:`write_downloads`),
    saying how many files changed; after every HTML build (the Sphinx hook) and when the build skips
    Sphinx but the ledger or the data changed."""
    from analyses.chapters import ledger  # heavy (every chapter's checks): a build that writes no download skips it
    from analyses.chapters.claims import figures as claims_page  # heavy, with the ledger above

    frame = ledger.ledger()
    written = write_downloads(html_dir, frame, claims_page.printable_page(frame))
    if written:
        print(f"Wrote {len(written)} download(s) under {DOWNLOADS}/.", flush=True)
    return written
