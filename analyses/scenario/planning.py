"""The planner fed from the data and the scenario: hardware, calibration, price draws, and the plan.

:mod:`analyses.models.plan` is pure (a request, its hardware and a kernel efficiency in, layouts and
costs out). Here a request is built with the scenario's values (:func:`request`), the hardware of
every generation the planner can price and place (:func:`hardware`: a datasheet, an InfiniBand
cluster configuration in ``data/cluster_configs.csv``, a system price and a neocloud rent in the
scenario), the kernel efficiency calibrated on published runs (:mod:`analyses.scenario.calibration`),
and the price draws of :func:`analyses.scenario.sample`; :func:`plan`, :func:`intervals` and
:func:`sensitivity` run the planner end to end. A GPU added to the data with these rows is planned
without any code.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models import gpu_hour_cost, interruptions, layouts, memory, uncertainty
from analyses.models import plan as pl
from analyses.scenario import calibration, costs, generations

PlanError = pl.PlanError


# --------------------------------------------------------------------------------------------
# Facts read from data (once per data folder)
# --------------------------------------------------------------------------------------------


@functools.cache
def _shapes(data_dir: str) -> dict[str, pl.Shape]:
    """Every shape of ``data/model_shapes.csv`` at its own sequence length, by name (read once)."""
    return {
        r["name"]: pl.Shape(
            name=str(r["label"]),
            n_params=float(memory.shape_parameter_count(r)),
            layers=int(r["layers"]),
            hidden=int(r["hidden"]),
            heads=int(r["heads"]),
            seq_len=int(r["seq_len"]),
        )
        for _, r in data.model_shapes().iterrows()
    }


def shape(name: str, seq_len: int | None = None) -> pl.Shape:
    """A row of ``data/model_shapes.csv``; parameters counted from the shape (memory.shape_parameter_count)."""
    shapes = _shapes(str(data.DATA_DIR))
    if name not in shapes:
        raise PlanError("model_shape", f"unknown shape {name!r}; known: {', '.join(shapes)}")
    own = shapes[name]
    return own if not seq_len else replace(own, seq_len=int(seq_len))


@functools.cache
def _clusters(data_dir: str) -> dict[str, dict[str, Any]]:
    frame = data.table("cluster_configs")
    frame = frame[frame["network"] == "infiniband"].sort_values("nic_gbit_per_s_per_gpu", ascending=False)
    return {g: rows.iloc[0].to_dict() for g, rows in frame.groupby("gpu", sort=False)}


def cluster_config(gpu: str) -> dict[str, Any]:
    """The InfiniBand cluster configuration of a generation (the fastest NIC listed for it).

    Its NVLink figures and node size are used; its NIC share and latency give way to the scenario's.
    """
    rows = _clusters(str(data.DATA_DIR))
    if gpu not in rows:
        raise PlanError("gpus", f"no InfiniBand cluster configuration for {gpu} in data/cluster_configs.csv")
    return rows[gpu]


@functools.cache
def _supported(data_dir: str) -> tuple[str, ...]:
    clusters = _clusters(data_dir)
    return tuple(g for g in costs.priced() if g in clusters)


def supported_gpus() -> list[str]:
    """Generations with an InfiniBand cluster configuration, a system price and a neocloud rent."""
    return list(_supported(str(data.DATA_DIR)))


@functools.cache
def _hardware(data_dir: str) -> dict[str, pl.Hardware]:
    out = {}
    for g in _supported(data_dir):
        sheet = generations.gpu(g)
        out[g] = pl.Hardware(g, dict(sheet.peak_flops_dense), sheet.hbm_usable_bytes, sheet.tdp_w, cluster_config(g))
    return out


def hardware() -> dict[str, pl.Hardware]:
    """The planner's facts of every supported generation (:func:`supported_gpus`), by name."""
    return dict(_hardware(str(data.DATA_DIR)))


def request(shape: pl.Shape, tokens: float, deadline_days: float, **fields: Any) -> pl.Request:
    """A validated :class:`analyses.models.plan.Request` with the hardware of every supported
    generation; ``s`` defaults to the scenario's central values."""
    s = fields.pop("s", None)
    return pl.Request(
        shape=shape,
        tokens=tokens,
        deadline_days=deadline_days,
        s=scenario.values() if s is None else s,
        hardware=hardware(),
        **fields,
    ).validate()


# --------------------------------------------------------------------------------------------
# Calibration and price draws
# --------------------------------------------------------------------------------------------


def kernel_efficiency(req: pl.Request, gpu: str) -> tuple[float, str]:
    """The kernel efficiency of ``gpu`` for ``req`` and where it comes from (set, calibrated or borrowed)."""
    if req.compute_efficiency:
        return req.compute_efficiency, "set by the reader"
    return calibration.kernel_efficiency(gpu, req.precision, req.holdout_sources, req.s["dp_overlap"])


def validation_errors(req: pl.Request) -> np.ndarray:
    """The step-time model's errors on the published validation rows, calibrated as ``req`` is."""
    return calibration.validation_errors(req.holdout_sources, req.s["dp_overlap"])


def hourly_cost_draws(req: pl.Request, gpu: str) -> dict[str, np.ndarray]:
    """:func:`analyses.models.plan.hourly_cost` on ``req.mc_samples`` joint draws of its price
    assumptions (:func:`analyses.scenario.sample` seeded with ``req.seed``, around ``req.s``); a
    generation without a rent of ``req.rent_class`` gets NaN rents."""
    names = gpu_hour_cost.inputs(gpu, req.rent_class, req.electricity_region, req.s)
    return pl.hourly_cost(req, gpu, scenario.sample(names, req.mc_samples, req.seed, req.s))


# --------------------------------------------------------------------------------------------
# The planner end to end
# --------------------------------------------------------------------------------------------


def evaluate(req: pl.Request, gpu: str, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`analyses.models.plan.evaluate` at the calibrated kernel efficiency of ``gpu``."""
    req = req.validate()
    return pl.evaluate(req, gpu, kernel_efficiency(req, gpu)[0], frame)


def plan(req: pl.Request) -> pl.Plan:
    """Evaluate every layout on every generation of ``req`` and recommend one per generation."""
    req = req.validate()
    basis = {gpu: kernel_efficiency(req, gpu)[1] for gpu in req.gpus}
    return pl.assemble(req, {gpu: evaluate(req, gpu) for gpu in req.gpus}, basis)


def intervals(req: pl.Request, rows: pd.DataFrame, level: float = uncertainty.INTERVAL_LEVEL) -> pd.DataFrame:
    """:func:`analyses.models.plan.intervals` with the calibration's validation errors and the
    scenario's price draws of each generation in ``rows``."""
    draws = {gpu: hourly_cost_draws(req, gpu) for gpu in dict.fromkeys(rows["gpu"])} if len(rows) else {}
    return pl.intervals(req, rows, validation_errors(req), draws, level)


def sensitivity(req: pl.Request, row: pd.Series) -> pd.DataFrame:
    """What moves one layout's days and cost: each input at a low and a high value, the rest fixed.

    The kernel efficiency at the model's worst under- and over-prediction on the validation rows;
    the scenario's assumptions of :data:`analyses.models.plan.SENSITIVITY_ASSUMPTIONS` at the ends of their 90% ranges;
    the plan's own checkpoint bandwidth ÷4 and ×4; the price per GPU-hour at the 5th and 95th
    percentiles of its draws. Columns ``input, days_a, days_b, cost_a, cost_b, cost_swing``
    (a: the low end, b: the high end), largest cost swing first.
    """
    layout = pd.DataFrame([row[list(layouts.COLUMNS)]])
    gpu = row["gpu"]
    base_eff = kernel_efficiency(req, gpu)[0]
    err = validation_errors(req)
    ranges = scenario.ranges(req.s)
    bandwidth = req.checkpoint_gb_per_s_per_node
    variants: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
        "kernel efficiency (validation error range)": (
            {"compute_efficiency": base_eff * (1 + err.min())},
            {"compute_efficiency": base_eff * (1 + err.max())},
        ),
    }
    automated = (interruptions.RATE_ASSUMPTION["automated"], interruptions.RESTART_ASSUMPTION["automated"])
    mode_names = dict(zip(automated, req.reliability_assumptions, strict=True))
    for name in (mode_names.get(n, n) for n in pl.SENSITIVITY_ASSUMPTIONS):  # the rate and restart of the mode
        r = ranges[name]
        variants[f"{scenario.assumption(name).label} (90% range)"] = ({"s": {name: r.low}}, {"s": {name: r.high}})
    variants[f"checkpoint bandwidth ÷{pl.CHECKPOINT_BANDWIDTH_FACTOR:g} / ×{pl.CHECKPOINT_BANDWIDTH_FACTOR:g}"] = (
        {"checkpoint_gb_per_s_per_node": bandwidth / pl.CHECKPOINT_BANDWIDTH_FACTOR},
        {"checkpoint_gb_per_s_per_node": bandwidth * pl.CHECKPOINT_BANDWIDTH_FACTOR},
    )
    rows = []
    for name, (lo, hi) in variants.items():
        a = evaluate(req.with_(**lo), gpu, layout).iloc[0]
        b = evaluate(req.with_(**hi), gpu, layout).iloc[0]
        rows.append({"input": name, "days_a": a["days"], "days_b": b["days"], "cost_a": a["cost"], "cost_b": b["cost"]})
    p_lo, _, p_hi = uncertainty.interval(hourly_cost_draws(req, gpu)[req.cost_basis])
    central = float(pl.hourly_cost(req, gpu)[req.cost_basis])
    rows.append(
        {
            "input": f"price per GPU-hour ({req.cost_basis}, 5%-95%)",
            "days_a": row["days"],
            "days_b": row["days"],
            "cost_a": row["cost"] * p_lo / central,
            "cost_b": row["cost"] * p_hi / central,
        }
    )
    frame = pd.DataFrame(rows)
    frame["cost_swing"] = (frame["cost_b"] - frame["cost_a"]).abs()
    return frame.sort_values("cost_swing", ascending=False, kind="stable").reset_index(drop=True)
