"""The memory chapter's evidence that its formulas are right: parameter counts, printed figures and
recorded measurements beside the model (:mod:`analyses.models.memory`), with the errors."""

from __future__ import annotations

import pandas as pd

from analyses import data
from analyses.models import memory, memory_figures


def param_count_table() -> pd.DataFrame:
    """Every preset's recomputed parameter count beside its published count, with the error."""
    rows = []
    for r in data.model_shapes().to_dict("records"):
        count = memory.shape_parameter_count(r)
        pub = r["published_params"]
        rows.append(
            {
                "model": r["label"],
                "recomputed (B)": count / 1e9,
                "published (B)": pub / 1e9 if pub == pub else float("nan"),
                "error": count / pub - 1 if pub == pub else float("nan"),
                "source": r["source"],
            }
        )
    return pd.DataFrame(rows)


def published_table() -> pd.DataFrame:
    """Printed ZeRO, ml-engineering and Korthikanti et al. figures beside the model's value and the error."""
    rows = []
    for r in data.memory_published().to_dict("records"):
        got = memory_figures.published_figure(r)
        rows.append(
            {
                "figure": r["description"],
                "printed": r["value"],
                "model": got,
                "unit": r["unit"],
                "error": got / r["value"] - 1,
                "within print": abs(got - r["value"]) <= r["resolution"] / 2,
                "source": f"{r['source']}, {r['locator']}",
            }
        )
    return pd.DataFrame(rows)


def measured_table() -> pd.DataFrame:
    """Recorded CPU measurements beside the model's predictions and the relative errors."""
    m = data.measurements("memory_cpu_torch").copy()
    m.attrs = {}  # pandas deep-copies attrs (the table's schema) on every operation
    pred = memory_figures.measured_predictions(m)
    for col, measured in (
        ("states", "state_bytes"),
        ("activations_torch", "activation_bytes"),
        ("activations_megatron", "activation_bytes"),
    ):
        m[f"{col}_model_bytes"] = pred[col]
        m[f"{col}_error"] = pred[col] / m[measured] - 1
    return m


ACCOUNTINGS = (
    ("model states", "states_error"),
    ("activations: PyTorch block", "activations_torch_error"),
    ("activations: Korthikanti et al.", "activations_megatron_error"),
)


def measured_error_table(m: pd.DataFrame) -> pd.DataFrame:
    """Smallest and largest relative error of each accounting over the measured grid, by precision."""
    rows = [
        {
            "precision": dtype,
            "accounting": name,
            "configs": len(g),
            "min error": g[col].min(),
            "max error": g[col].max(),
        }
        for dtype, g in m.groupby("dtype", sort=False)
        for name, col in ACCOUNTINGS
    ]
    return pd.DataFrame(rows)
