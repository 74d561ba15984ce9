"""The planning presets (``data/plan_presets.csv``): published runs and the documents' scenarios, each a
model, its tokens, GPUs, deadline, precision and batch.

A preset's numeric fields are expressions (:func:`resolve`): numbers, or products of references to
figures held elsewhere (a claim's stated value, a published model's row, a benchmark row, an
assumption of the scenario), so no figure is typed twice. The planner chapter reads its presets here,
and so does every page that plans the documents' workloads (:mod:`analyses.scenario.buying`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import data
from analyses.models import plan as pl
from analyses.units import MB

NONE = "none"
PUBLISHED_RUN, DOCUMENT_SCENARIO = "published-run", "document-scenario"


@functools.cache
def _reference(kind: str, rest: str, data_dir: str) -> float:
    """A figure held in ``data/``: a claim's stated value, a published model's column or a benchmark's."""
    if kind == "claim":
        cid, _, name = rest.partition(":")
        return data.claim(cid).value(name)
    if kind == "model":
        name, _, col = rest.rpartition(":")
        return float(data.model(name)[col])
    bid, _, col = rest.partition(":")
    row = data.table("scaling_benchmarks").set_index("id").loc[bid]
    parts = data.schema("scaling_benchmarks").derived.get(col, (col,))  # global_batch_tokens = seqs x length
    return float(np.prod([float(row[p]) for p in parts]))


def _bounded(value: float, preset_id: str, column: str) -> float:
    """A resolved preset field inside its column's bounds (data/plan_presets.schema.yaml), or a
    DataError naming the preset's row: a reference may resolve to a figure the planner cannot use."""
    col = next(c for c in data.schema("plan_presets").columns if c.name == column)
    if (col.min is None or value >= col.min) and (col.max is None or value <= col.max):
        return value
    file, row = data.where("plan_presets", "id", preset_id)
    side = (
        f"below the minimum {col.min:g}"
        if col.min is not None and value < col.min
        else f"above the maximum {col.max:g}"
    )
    raise data.DataError(file, f"resolves to {value:g}, {side} {col.unit or ''}".rstrip(), row, column)


def resolve(expr: Any, s: Mapping[str, float], where: str = "expression") -> float:
    """The value of a preset expression: a number, or factors joined by ``*``, each a number or a
    reference ``claim:<id>:<value>``, ``model:<name>:<column>``, ``benchmark:<id>:<column>`` or
    ``scenario:<assumption>`` (its value in ``s``).
    """
    if isinstance(expr, int | float) and not isinstance(expr, bool):
        return float(expr)
    total = 1.0
    for factor in str(expr).split(" * "):
        factor = factor.strip()
        kind, _, rest = factor.partition(":")
        try:
            if kind in ("claim", "model", "benchmark"):
                total *= _reference(kind, rest, str(data.DATA_DIR))
            elif kind == "scenario":
                total *= float(s[rest])
            else:
                total *= float(factor)
        except (KeyError, ValueError) as err:
            raise pl.PlanError(where, f"cannot resolve {factor!r}: {err}") from None
    return total


@functools.cache
def _rows(data_dir: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in data.table("plan_presets").to_dict("records")}


def preset_ids() -> list[str]:
    """Ids of the planning presets, in table order."""
    return list(_rows(str(data.DATA_DIR)))


def _split(value: Any) -> tuple[str, ...]:
    if not isinstance(value, str):
        return ()
    return tuple(v.strip() for v in value.split(";") if v.strip())


def _given(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def preset(preset_id: str, s: Mapping[str, float]) -> dict[str, Any]:
    """One preset as chapter parameters (``model_shape`` or ``n_params``, tokens, GPUs, deadline,
    batch in million tokens where the preset sets one, ...) plus ``holdout_sources``, ``label``,
    ``kind``, ``notes``, ``claims`` and ``compare_gpu_hours`` (NaN when none). ``s`` is the scenario
    its ``scenario:`` references read."""
    rows = _rows(str(data.DATA_DIR))
    if preset_id not in rows:
        raise pl.PlanError("preset", f"expected one of {', '.join(rows)}, got {preset_id!r}")
    r = rows[preset_id]
    shape = r["model_shape"] if _given(r["model_shape"]) else "generic"

    def field(column: str) -> float:
        return _bounded(resolve(r[column], s, column), preset_id, column)

    out: dict[str, Any] = {
        "model_shape": shape,
        "seq_len": 0,  # the shape's own
        "tokens": field("tokens"),
        "gpus": list(_split(r["gpus"])),
        "min_gpus": int(field("min_gpus")),
        "max_gpus": int(field("max_gpus")),
        "deadline_days": field("deadline_days"),
        "precision": r["precision"],
        "holdout_sources": list(_split(r["holdout_sources"])),
    }
    if _given(r["stack"]):
        out["stack"] = r["stack"]
    if _given(r["global_batch_tokens"]):
        out["batch_million_tokens"] = field("global_batch_tokens") / MB
    if shape == "generic":
        out["n_params"] = field("n_params")
    compare = r["compare_gpu_hours"]
    return out | {
        "label": r["label"],
        "kind": r["kind"],
        "notes": r["notes"],
        "claims": list(_split(r["claims"])),
        "compare_gpu_hours": resolve(compare, s) if _given(compare) else float("nan"),
    }


def of_kind(kind: str, s: Mapping[str, float]) -> list[str]:
    """Ids of the presets of one kind (:data:`PUBLISHED_RUN` or :data:`DOCUMENT_SCENARIO`), in table order."""
    return [pid for pid in preset_ids() if preset(pid, s)["kind"] == kind]
