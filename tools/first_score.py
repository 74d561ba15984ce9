"""Score new published runs with the model as it stands, then add them to ``data/published_runs.csv``.

Issue 33's prospective record: each row added to the table is scored before any refit can see it,
and that first score stays in the row (``first_score_error``, ``first_scored``) whatever later fits
do. The rows come in a CSV with the table's columns (sources already in ``data/sources/``):

    .venv/bin/python tools/first_score.py new_rows.csv            # print the first scores
    .venv/bin/python tools/first_score.py new_rows.csv --append   # ... and append the rows with them

``first_scored`` records the date and the commit of the model that scored the rows.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
from pathlib import Path

import pandas as pd
import yaml

from analyses import data
from analyses.scenario import whole_run

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=Path, help="CSV of new rows in data/published_runs.csv's columns")
    parser.add_argument("--append", action="store_true", help="append the scored rows to data/published_runs.csv")
    args = parser.parse_args()
    table = data.DATA_DIR / "published_runs.csv"
    columns = list(pd.read_csv(table, nrows=0).columns)
    rows = pd.read_csv(args.rows)
    missing = [c for c in columns if c not in rows]
    if missing:
        raise SystemExit(f"{args.rows}: missing columns {', '.join(missing)}")
    scores = whole_run.first_scores(rows[columns])
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    stamp = f"{datetime.date.today().isoformat()} (model at commit {commit})"
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(scores.to_string(index=False, float_format=lambda x: f"{x:,.4g}"))
    if args.append:
        rows = rows[columns].copy()
        schema = yaml.safe_load((data.DATA_DIR / "published_runs.schema.yaml").read_text(encoding="utf-8"))
        for field in schema["fields"]:
            if field.get("type") == "integer":  # 32, not 32.0, where a float column holds whole numbers
                rows[field["name"]] = rows[field["name"]].astype("Int64")
        rows["first_score_error"] = scores["first_score_error"].round(4).to_numpy()
        rows["first_scored"] = stamp
        with table.open("a", encoding="utf-8", newline="") as f:
            rows.to_csv(f, header=False, index=False, lineterminator="\n")
        print(f"appended {len(rows)} rows to {table} (first scored {stamp})")


if __name__ == "__main__":
    main()
