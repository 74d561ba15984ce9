"""Plausibility warnings: a figure inside its schema bounds but far from its neighbours (a typo).

The schemas bound each figure physically; a typo can still sit inside those bounds (a TDP of
110 W for 1,100, ``params=1e14`` for 1e11) and move verdicts. Each GPU's figures are set beside
the other GPUs of its generation (the same NVLink generation): its dense 16-bit FLOP/s per watt,
its TDP and its HBM bandwidth; each parameter count a claim states beside the models of
``data/models.csv``. A figure more than :data:`FACTOR` off its neighbours' median (or outside
their span by that factor) is a warning naming file, row and column. The build prints them;
``tests/test_plausibility.py`` keeps the shipped data free of them.
"""

from __future__ import annotations

import numpy as np

from analyses import data

FACTOR = 1.5  # how far off its family's median a figure may be before it is worth a second look


def _off(value: float, others: list[float]) -> float:
    """How many times ``value`` is off the median of ``others`` (>= 1)."""
    mid = float(np.median(others))
    return max(value / mid, mid / value)


def gpu_warnings() -> list[str]:
    """GPUs whose FLOP/s per watt, TDP or HBM bandwidth is more than x1.5 off their generation's median."""
    frame = data.table("gpus")
    peak = frame["peak_tflops_dense_bf16"].fillna(frame["peak_tflops_dense_fp16"])
    figures = {
        "tdp_w": ("TFLOP/s per W (dense 16-bit)", peak / frame["tdp_w"]),
        "hbm_bandwidth_tb_per_s": ("TB/s of HBM", frame["hbm_bandwidth_tb_per_s"]),
    }
    out = []
    rows = data.load_table("gpus", data.DATA_DIR.resolve())
    for i, gen in enumerate(frame["nvlink_generation"]):
        peers = [j for j, g in enumerate(frame["nvlink_generation"]) if g == gen and j != i]
        if not peers:
            continue
        for column, (what, series) in figures.items():
            off = _off(float(series.iloc[i]), [float(series.iloc[j]) for j in peers])
            if off > FACTOR:
                names = ", ".join(frame["name"].iloc[j] for j in peers)
                out.append(
                    f"{rows['_file'].iloc[i]}, row {rows['_row'].iloc[i]}, column '{column}': {frame['name'].iloc[i]} "
                    f"has {float(series.iloc[i]):.3g} {what}, x{off:.1f} off its generation's ({names}); a typo?"
                )
    return out


def claim_warnings() -> list[str]:
    """Claims whose stated parameter counts lie more than x1.5 beyond the span of data/models.csv."""
    params = data.table("models")["params"].dropna()
    lo, hi = float(params.min()) / FACTOR, float(params.max()) * FACTOR
    out = []
    for claim in data.claims():
        for name, value in claim.values.items():
            if name.startswith("params") and not lo <= value <= hi:
                out.append(
                    f"{claim.file}, row {claim.row}, column 'values': {name}={value:g} lies beyond x{FACTOR} the span "
                    f"of the models in data/models.csv ({lo * FACTOR:.3g} to {hi / FACTOR:.3g}); a typo?"
                )
    return out


def warnings() -> list[str]:
    """Every plausibility warning of the data in use."""
    return gpu_warnings() + claim_warnings()
