"""The peak-memory model fed from the data: measured runs against the model, the allocator overhead
fitted on the declared calibration runs, and the validation table of the memory chapter.

Each row of ``data/memory_measured.csv`` with its framework's row of
``data/memory_frameworks.csv`` becomes the bytes its busiest pipeline stage holds
(:func:`analyses.models.peak_memory.held_bytes`); the overhead ``f`` is fitted on the rows whose
``role`` is ``calibrate`` (:func:`analyses.models.peak_memory.fit_overhead`) and every other row is
predicted with it, out of sample. The scenario's ``memory_reserve_factor`` is ``1 + f`` with the
fit's 90% prediction band (:func:`reserve_range`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import memory
from analyses.models import peak_memory as pm
from analyses.models.uncertainty import Range
from analyses.units import GB, GIB

RESERVE = "memory_reserve_factor"
PARTS = ("weights", "gradients", "optimizer", "activations", "logits", "workspace")


@functools.cache
def _runs(data_dir: str) -> pd.DataFrame:
    measured = data.memory_measured()
    frameworks = data.memory_frameworks().set_index("framework")
    rows = []
    for r in measured.to_dict("records"):
        fw = frameworks.loc[r["framework"]].to_dict()
        held = pm.held_bytes(r, fw)
        rows.append(
            {
                "id": r["id"],
                "model": r["model"],
                "framework": r["framework"],
                "role": r["role"],
                "GPUs": r["n_gpus"],
                "layout": f"TP{r['tp']} PP{r['pp']} DP{r['dp']}" + (f" CP{r['cp']}" if r["cp"] > 1 else ""),
                "measured_bytes": float(r["measured_gib"]) * GIB,
                "held_bytes": held["total"],
                "context_bytes": pm.context_bytes(fw),
                **{f"{k}_bytes": held[k] for k in PARTS},
                "source": r["source"],
            }
        )
    return pd.DataFrame(rows)


def runs() -> pd.DataFrame:
    """Every measured run with the bytes the model says its busiest stage holds, by part."""
    return _runs(str(data.DATA_DIR)).copy()


def _fit(frame: pd.DataFrame) -> pm.OverheadFit:
    return pm.fit_overhead(frame["measured_bytes"], frame["held_bytes"], frame["context_bytes"])


@functools.cache
def _fit_cached(data_dir: str) -> pm.OverheadFit:
    frame = _runs(data_dir)
    return _fit(frame[frame["role"] == "calibrate"])


def fit() -> pm.OverheadFit:
    """The allocator overhead fitted on the calibration runs."""
    return _fit_cached(str(data.DATA_DIR))


def reserve_range() -> Range:
    """``1 + f`` and the fit's 90% prediction band: measured peak over bytes held, for a new run."""
    f = fit()
    lo, hi = f.band()
    c = 1.0 + f.fraction
    return Range(c * lo, c, c * hi)


def before_bytes(row: Mapping[str, Any], framework_memory_gb: float) -> float:
    """What the book's accounting predicted before issue 21 (the planner's call today): model states
    spread evenly over tp·pp, Korthikanti activations with sequence parallelism and flash attention,
    and the scenario's flat framework allowance; no vocabulary, logits, fp32 buffer or workspace."""
    k = pm.run_kwargs(row, data.memory_frameworks().set_index("framework").loc[row["framework"]].to_dict())
    old = {
        n: k[n]
        for n in (
            "n_params",
            "layers",
            "seq_len",
            "micro_batch",
            "hidden",
            "heads",
            "precision",
            "zero_stage",
            "dp",
            "tp",
            "pp",
        )
    }
    old["recompute"] = k["recompute"] if k["recompute"] in ("none", "selective", "full") else "selective"
    parts = memory.total_bytes_per_gpu(**old, overhead_bytes=framework_memory_gb * GB)
    return float(parts["total"])


def validation(framework_memory_gb: float) -> pd.DataFrame:
    """Every measured run: measured and predicted peak (GiB), error (predicted / measured − 1), 90% band and whether the
    measurement lies inside, out of sample (calibration runs by the fit without them), with what
    the accounting before issue 21 predicted (``framework_memory_gb``: the scenario's allowance)."""
    frame = runs()
    full = fit()
    cal = frame[frame["role"] == "calibrate"]
    measured = data.memory_measured().set_index("id")
    out = []
    for r in frame.to_dict("records"):
        f = _fit(cal[cal["id"] != r["id"]]) if r["role"] == "calibrate" and len(cal) > 2 else full
        if r["role"] == "calibrate" and len(cal) <= 2:
            f = None
        predicted = pm.predicted_peak(r["held_bytes"], r["context_bytes"], f.fraction) if f else np.nan
        lo, hi = f.band() if f else (np.nan, np.nan)
        before = before_bytes({"id": r["id"], **measured.loc[r["id"]].to_dict()}, framework_memory_gb)
        out.append(
            {
                **{k: r[k] for k in ("id", "model", "framework", "role", "GPUs", "layout")},
                "measured_gib": r["measured_bytes"] / GIB,
                "held_gib": r["held_bytes"] / GIB,
                "fitted_gib": float(pm.predicted_peak(r["held_bytes"], r["context_bytes"], full.fraction)) / GIB,
                "predicted_gib": float(predicted) / GIB,
                "error": float(predicted) / r["measured_bytes"] - 1,
                "band_low_gib": float(predicted) * lo / GIB,
                "band_high_gib": float(predicted) * hi / GIB,
                "inside": bool(predicted * lo <= r["measured_bytes"] <= predicted * hi) if f else np.nan,
                "before_gib": before / GIB,
                "before_error": before / r["measured_bytes"] - 1,
                **{f"{k}_gib": r[f"{k}_bytes"] / GIB for k in PARTS},
                "source": r["source"],
            }
        )
    return pd.DataFrame(out)
