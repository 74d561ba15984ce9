"""Evaluate llm-analysis and MLSys·im beside our models; write data/measurements/peer_comparison.csv.

Usage (the peers are the pyproject ``bench`` extra)::

    .venv/bin/pip install llm-analysis==0.2.2 mlsysim==0.3.0
    .venv/bin/python tools/peer_compare.py            # rewrite the table
    .venv/bin/python tools/peer_compare.py --check    # only verify the committed table reproduces
    .venv/bin/python tools/peer_compare.py --ours     # rewrite only our column (after a change of our models;
                                                      # needs no peer: their figures are kept as recorded)

Each row holds one quantity of one configuration: our value and the peer's (see
``analyses/models/peers.py`` for the grid, the wrappers and the conventions). The peer's version is
checked before anything runs, so a table is never written from another version than its source
row names.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyses import data  # noqa: E402
from analyses.chapters.peers import step_model  # noqa: E402
from analyses.models import peers  # noqa: E402

OUT = data.DATA_DIR / "measurements" / "peer_comparison.csv"
COLUMNS = [
    "config", "kind", "shape", "gpu", "tp", "pp", "dp", "zero_stage", "micro_batch", "seq_len",
    "global_batch", "quantity", "unit", "ours", "tool", "peer", "source",
]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed table instead of writing it")
    ap.add_argument("--ours", action="store_true", help="recompute only our column of the committed table")
    args = ap.parse_args(argv)
    if args.ours:
        table = data.measurements("peer_comparison")
        table["ours"] = peers.recompute_ours(table, data.model_shapes(), step_model())
        table[COLUMNS].to_csv(OUT, index=False, float_format="%.10g")
        print(f"rewrote our column of {len(table)} rows in {OUT.relative_to(data.REPO_ROOT)}")
        return 0
    for tool, version in peers.TOOLS.items():
        installed = importlib.metadata.version(tool)
        if installed != version:
            print(f"error: {tool} {installed} is installed; the table is for {version}", file=sys.stderr)
            return 2
    table = peers.compare(data.model_shapes(), step_model())[COLUMNS]
    if args.check:
        committed = data.measurements("peer_comparison")
        same = len(committed) == len(table) and all(
            np.allclose(committed[c].astype(float), table[c].astype(float), rtol=1e-9, equal_nan=True)
            for c in ("ours", "peer")
        )
        print("the committed table reproduces" if same else "the committed table differs from a fresh run")
        return 0 if same else 1
    table.to_csv(OUT, index=False, float_format="%.10g")
    print(f"wrote {len(table)} rows to {OUT.relative_to(data.REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
