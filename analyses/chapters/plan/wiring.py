"""The plan chapter's wiring: its presets (``data/plan_presets.csv``: published runs and the documents'
scenarios) and the page's tables built from one planner run.

A preset's numeric fields are expressions (:func:`resolve`): numbers, or products of references to
figures held elsewhere (a claim's stated value, a published model's row, a benchmark row, an
assumption of the scenario), so no figure is typed twice. :func:`merged` fills a chapter
configuration with its preset's values wherever the reader left a field at its default. The tables
(:func:`recommended_table` and the rest) only arrange a run's results: the planning is
:func:`analyses.chapters.plan.run`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models import gpu_hour_cost, layouts
from analyses.models import plan as pl
from analyses.scenario import planning
from analyses.units import GIB, MB

# --------------------------------------------------------------------------------------------
# Presets
# --------------------------------------------------------------------------------------------

NONE = "none"
PUBLISHED_RUN, DOCUMENT_SCENARIO = "published-run", "document-scenario"
PUBLISHED_WITH_THROUGHPUT = "llama3-405b"  # the published run whose throughput rows are in the data

# Chapter parameters a preset sets, where the reader left them at their defaults (the batch is
# the preset's ``global_batch_tokens`` in millions)
FIELDS = (
    "model_shape",
    "n_params",
    "active_params",  # a preset's model is dense: the reader's mixture of experts is not carried into it
    "n_experts",
    "experts_active",
    "seq_len",
    "tokens",
    "gpus",
    "min_gpus",
    "max_gpus",
    "deadline_days",
    "precision",
    "batch_million_tokens",
)


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


def merged(cfg: Mapping[str, Any], s: Mapping[str, float], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``cfg`` with its preset's values filled in wherever a field equals its default in ``defaults``,
    plus ``holdout_sources`` (the preset's, else none)."""
    out = dict(cfg)
    out["holdout_sources"] = []
    if cfg["preset"] != NONE:
        p = preset(cfg["preset"], s)
        for name in FIELDS:
            if name in p and cfg[name] == defaults[name]:
                out[name] = p[name]
        out["holdout_sources"] = p["holdout_sources"]
    return out


def related_claims(s: Mapping[str, float]) -> list[str]:
    """Claim ids the presets replay, in table order."""
    out: list[str] = []
    for pid in preset_ids():
        out += [c for c in preset(pid, s)["claims"] if c not in out]
    return out


def published_layout(s: Mapping[str, float]) -> str:
    """Tensor and pipeline sizes of the published run's largest throughput row (Llama 3 Table 4)."""
    bench = data.table("scaling_benchmarks")
    held = preset(PUBLISHED_WITH_THROUGHPUT, s)["holdout_sources"]
    row = bench[bench["source"].isin(held)].sort_values("n_gpus").iloc[-1]
    return f"TP{row['tp']} PP{row['pp']}"


# --------------------------------------------------------------------------------------------
# The page's tables
# --------------------------------------------------------------------------------------------


def _range_m(lo: float, hi: float) -> str:
    return f"{lo / MB:.2f}-{hi / MB:.2f}" if np.isfinite(lo) else "n/a"


def _basis_word(basis: str) -> str:
    """'calibrated' or 'set' from a GEMM-ceiling basis (:func:`analyses.scenario.planning.efficiency_basis`)."""
    return next(w for w in ("calibrated", "set") if basis.startswith(w))


def recommended_table(recommended: pd.DataFrame, basis: Mapping[str, str]) -> pd.DataFrame:
    """The recommended layout per generation (with :func:`analyses.models.plan.intervals`' columns) and
    the 90% intervals of its days and costs; ``basis`` says where each GEMM efficiency ceiling comes from."""
    rows = []
    for _, x in recommended.iterrows():
        rows.append(
            {
                "GPU": x["gpu"],
                "GPUs": int(x["n_gpus"]),
                "TP·PP·DP ZeRO": layouts.short_label(x),
                "micro-batch": int(x["micro_batch"]),
                "interleave": int(x["virtual_stages"]),
                "recompute": x["recompute"],
                "memory (GiB)": x["mem_bytes"] / GIB,
                "MFU": x["mfu"],
                "goodput": x["goodput"],
                "days": x["days"],
                "days 5-95%": f"{x['days_lo']:.1f}-{x['days_hi']:.1f}",
                "rented (M USD)": x["cost_rented"] / MB,
                "rented 5-95%": _range_m(x["cost_rented_lo"], x["cost_rented_hi"]),
                "owned (M USD)": x["cost_owned"] / MB,
                "owned 5-95%": _range_m(x["cost_owned_lo"], x["cost_owned_hi"]),
                "meets": bool(x["meets_deadline"]),
                "GEMM eff.": x["kernel_efficiency"],
                "eff. from": _basis_word(basis[x["gpu"]]),
            }
        )
    return pd.DataFrame(rows)


# Assumptions only the presets read (the fine-tune of document 001's case)
PRESET_ASSUMPTIONS = ("finetune_tokens_per_sample", "finetune_epochs")


def assumptions_table(cfg: Mapping[str, Any], req: pl.Request) -> pd.DataFrame:
    """The scenario's assumptions the page reads (:func:`analyses.scenario.table` at ``cfg``): the
    batch, tokens per parameter, the time model's, the prices of the generations planned under the
    rent class and region chosen, and those the presets read."""
    prices = [n for g in req.gpus for n in gpu_hour_cost.inputs(g, req.rent_class, req.electricity_region, req.s)]
    own = {n for g in req.gpus for n in (gpu_hour_cost.server_name(g), gpu_hour_cost.rent_name(g, req.rent_class))}
    shared = [n for n in dict.fromkeys(prices) if n not in own]
    names = ["batch_million_tokens", "tokens_per_param", *pl.TIME_ASSUMPTIONS]
    names += [n for n in prices if n in own] + shared + list(PRESET_ASSUMPTIONS)
    return scenario.table(cfg).set_index("name").loc[names].reset_index()


def efficiency_table(p: pl.Plan) -> pd.DataFrame:
    """Where each generation's GEMM efficiency ceiling comes from."""
    return pd.DataFrame({"GPU": list(p.efficiency_basis), "GEMM efficiency ceiling": list(p.efficiency_basis.values())})


def breakdown_table(p: pl.Plan) -> pd.DataFrame:
    """Days per part of the recommended layout of each generation (long form)."""
    frames = [pl.breakdown(r, p.request).assign(gpu=r["gpu"]) for _, r in p.recommended.iterrows()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["part", "days", "share", "gpu"])


def out_of_sample(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`published_comparison` that exclude the run's own throughput."""
    return frame[frame["run's own throughput"] != "in the calibration"].reset_index(drop=True)


def front_table(p: pl.Plan) -> pd.DataFrame:
    """Each generation's Pareto front with its intervals and a ``layout`` label."""
    if p.front.empty:
        return p.front
    front = planning.intervals(p.request, p.front)
    return front.assign(layout=[layouts.label(x) for _, x in front.iterrows()])


def cloud_table(p: pl.Plan) -> pd.DataFrame:
    """One dot per generation and GPU count (its cheapest layout) up to four deadlines or fronts out."""
    if p.layouts.empty:
        return pd.DataFrame(columns=["gpu", "days", "cost"])
    sample = p.layouts.sort_values("cost", kind="stable").drop_duplicates(["gpu", "n_gpus"])
    limit = 4 * max(p.request.deadline_days, p.front["days"].min())
    return sample.loc[sample["days"] <= limit, ["gpu", "n_gpus", "days", "cost"]].reset_index(drop=True)
