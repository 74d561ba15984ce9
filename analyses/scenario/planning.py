"""The planner fed from the data and the scenario: hardware, calibration, price draws, and the plan.

:mod:`analyses.models.plan` is pure (a request, its hardware and the step-time coefficients in,
layouts and costs out). Here a request is built with the scenario's values (:func:`request`), the
hardware of every generation the planner can place (:func:`hardware`: a datasheet and an InfiniBand
cluster configuration in ``data/cluster_configs.csv``; its system price and rents where the
scenario has them, NaN costs where it does not), the step-time model calibrated on published runs
(:mod:`analyses.scenario.calibration`), and the price draws of :func:`analyses.scenario.sample`;
:func:`plan`, :func:`intervals` and :func:`sensitivity` run the planner end to end. A GPU added to
the data with these rows is planned without any code.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models import interruptions, layouts, performance, uncertainty
from analyses.models import plan as pl
from analyses.scenario import bands, calibration, clusters, costs, generations, stacks, whole_run

PlanError = pl.PlanError


# --------------------------------------------------------------------------------------------
# Facts read from data (once per data folder)
# --------------------------------------------------------------------------------------------


def shape(name: str, seq_len: int | None = None) -> pl.Shape:
    """A row of ``data/model_shapes.csv`` (:func:`analyses.scenario.calibration.shape`)."""
    try:
        return calibration.shape(name, seq_len)
    except KeyError as err:
        raise PlanError("model_shape", str(err.args[0])) from None


def cluster_config(gpu: str) -> dict[str, Any]:
    """The InfiniBand cluster configuration of a generation (the fastest NIC listed for it,
    :func:`analyses.scenario.clusters.cluster`).

    Its NVLink figures and node size are used; its NIC share and latency give way to the scenario's.
    """
    if not clusters.has_cluster(gpu):
        raise PlanError("gpus", f"no InfiniBand cluster configuration for {gpu} in data/cluster_configs.csv")
    return clusters.cluster(gpu)


@functools.cache
def _supported(data_dir: str) -> tuple[str, ...]:
    return tuple(g for g in generations.names() if clusters.has_cluster(g))


def supported_gpus() -> list[str]:
    """Generations the planner can place: those with an InfiniBand cluster configuration in
    ``data/cluster_configs.csv``, priced or not (a price the scenario lacks is NaN, and said so)."""
    return list(_supported(str(data.DATA_DIR)))


def priced_gpus() -> list[str]:
    """The supported generations the scenario prices both ways (:func:`analyses.scenario.costs.priced`):
    the planner's default list."""
    return [g for g in costs.priced() if g in _supported(str(data.DATA_DIR))]


def priced_bases(gpu: str, s: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The cost bases the scenario prices ``gpu`` for: ``rented`` with a neocloud rent, ``owned`` with a
    system price."""
    names = scenario.assumptions() if s is None else s
    out = []
    if costs.rent_name(gpu) in names:
        out.append("rented")
    if costs.server_name(gpu) in names:
        out.append("owned")
    return tuple(out)


@functools.cache
def _hardware(data_dir: str) -> dict[str, pl.Hardware]:
    return {g: clusters.plan_hardware(g) for g in _supported(data_dir)}


def hardware() -> dict[str, pl.Hardware]:
    """The planner's facts of every supported generation (:func:`supported_gpus`), by name."""
    return dict(_hardware(str(data.DATA_DIR)))


def request(shape: pl.Shape, tokens: float, deadline_days: float, **fields: Any) -> pl.Request:
    """A validated :class:`analyses.models.plan.Request` with the hardware of every supported
    generation; ``s`` defaults to the scenario's central values. The training stack (``stack``, an id
    or alias of ``data/training_stacks.csv``; ``unspecified`` by default) sets what the search may use
    and the fitted terms of a real run (:func:`analyses.scenario.whole_run.terms`: the stack's
    efficiency and the campaign overhead), each unless given."""
    s = fields.pop("s", None)
    try:
        terms = whole_run.terms(fields.get("stack", stacks.POOLED_STACK), tuple(fields.get("holdout_sources", ())))
    except KeyError as err:
        raise PlanError("stack", str(err.args[0])) from None
    fields = terms | fields | {"stack": terms["stack"]}
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


def coefficients(req: pl.Request) -> performance.Coefficients:
    """The step-time model's coefficients for ``req``: calibrated on the published runs without those
    citing ``req.holdout_sources`` (:func:`analyses.scenario.calibration.fit`)."""
    return calibration.coefficients(req.holdout_sources)


def efficiency_basis(req: pl.Request, gpu: str) -> str:
    """Where the GEMM efficiency ceiling of ``gpu``'s die comes from, in words (read once per data
    folder, generation, reader's ceiling and held-out sources: all it depends on)."""
    return _efficiency_basis(str(data.DATA_DIR), gpu, req.compute_efficiency, tuple(req.holdout_sources))


@functools.lru_cache(maxsize=256)
def _efficiency_basis(data_dir: str, gpu: str, compute_efficiency: float, holdout_sources: tuple[str, ...]) -> str:
    die = clusters.die(gpu)
    if compute_efficiency:
        return f"set by the reader ({compute_efficiency:.2f} for the {die} die)"
    rows = calibration.step_time_rows()
    cal = rows[(rows["role"] == "calibrate") & (rows["die"] == die)]
    if holdout_sources:
        cal = cal[~cal["source"].isin(holdout_sources)]
    fitted = getattr(calibration.coefficients(holdout_sources), f"e_max_{die.lower()}")
    own = f"the {die} die" if die == gpu else f"the {die} die it is a variant of"
    if cal.empty:
        return (
            f"calibrated: {fitted:.2f} for {own}, no calibration row of its own (its anchor and the other dies' rows)"
        )
    return f"calibrated: {fitted:.2f} for {own}, fitted with {', '.join(cal['id'])} and the other calibration rows"


def plan_class(req: pl.Request, gpu: str) -> bands.Path:
    """The class of ``req`` on ``gpu`` its bands are sized on (:func:`analyses.scenario.bands.path`: dense or
    MoE, size, the GPU's architecture)."""
    return bands.path(req.shape.n_experts > 0, req.shape.n_params, gpu)


def _kind(req: pl.Request) -> tuple[bool, bool]:
    return req.layout_pinned, req.stack != stacks.POOLED_STACK


def validation_errors(req: pl.Request, gpu: str) -> np.ndarray:
    """The errors a plan's whole-run figures on ``gpu`` are banded by, ``ln(published / predicted time)`` by
    grouped cross-validation: the steady-state errors of the plan's class and kind combined with the campaign
    overhead's spread among the published campaigns of its class (:func:`analyses.scenario.bands.whole_errors`)."""
    return bands.whole_errors(plan_class(req, gpu), *_kind(req))


def steady_errors(req: pl.Request, gpu: str) -> np.ndarray:
    """The errors a plan's steady-state figures on ``gpu`` are banded by: the grouped cross-validation errors
    of the published runs of its class (:func:`plan_class`) at printed layouts when ``req`` pins its tensor
    and pipeline sizes, else at the planner's pick; at each run's stack when ``req`` names one
    (:func:`analyses.scenario.bands.steady_errors`)."""
    return bands.steady_errors(plan_class(req, gpu), *_kind(req))[0]


def band_class(req: pl.Request, gpu: str) -> str:
    """The class of published runs the steady-state band of ``req`` on ``gpu`` comes from, in words (the plan's
    own class, or the parent it pools into: :func:`analyses.scenario.bands.steady_errors`)."""
    return bands.label(bands.steady_errors(plan_class(req, gpu), *_kind(req))[1])


def hourly_cost(req: pl.Request, gpu: str, s: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Cost of one GPU-hour of ``gpu`` (USD), rented and owned, at the scenario ``s`` (``req.s`` by
    default), the request's rent class and electricity region
    (:func:`analyses.scenario.costs.per_gpu_hour`); NaN for a basis the scenario does not price."""
    return costs.per_gpu_hour(
        req.s if s is None else s, gpu, req.hardware[gpu].tdp_w, req.rent_class, req.electricity_region
    )


def hourly_cost_draws(req: pl.Request, gpu: str) -> dict[str, np.ndarray]:
    """:func:`hourly_cost` on ``req.mc_samples`` joint draws of its price
    assumptions (:func:`analyses.scenario.sample` seeded with ``req.seed``, around ``req.s``); a
    generation without a rent of ``req.rent_class`` gets NaN rents.

    Drawn once per data folder and everything the draws read (the generation, its TDP, the rent
    class, the region, the sample count, the seed and every scenario value: a range moves with any
    override); each call gets its own copy of the arrays."""
    key = (
        str(data.DATA_DIR),
        gpu,
        float(req.hardware[gpu].tdp_w),
        req.rent_class,
        req.electricity_region,
        req.mc_samples,
        req.seed,
        frozenset(req.s.items()),
    )
    draws = _DRAWS.pop(key, None)
    if draws is None:
        names = costs.inputs(gpu, req.rent_class, req.electricity_region, req.s)
        draws = hourly_cost(req, gpu, scenario.sample(names, req.mc_samples, req.seed, req.s))
    _DRAWS[key] = draws  # most recent last
    while len(_DRAWS) > _DRAWS_KEPT:
        del _DRAWS[next(iter(_DRAWS))]
    return {basis: np.array(v, copy=True) for basis, v in draws.items()}


_DRAWS: dict[tuple[Any, ...], dict[str, np.ndarray]] = {}  # hourly_cost_draws' cache, least recent first
_DRAWS_KEPT = 32


# --------------------------------------------------------------------------------------------
# The planner end to end
# --------------------------------------------------------------------------------------------


def evaluate(req: pl.Request, gpu: str, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`analyses.models.plan.evaluate` with the calibrated step-time coefficients."""
    req = req.validate()
    return pl.evaluate(req, gpu, coefficients(req), frame, hourly_cost(req, gpu))


def plan(req: pl.Request) -> pl.Plan:
    """Evaluate every layout on every generation of ``req`` and recommend one per generation."""
    req = req.validate()
    basis = {gpu: efficiency_basis(req, gpu) for gpu in req.gpus}
    return pl.assemble(req, {gpu: evaluate(req, gpu) for gpu in req.gpus}, basis)


def intervals(req: pl.Request, rows: pd.DataFrame, level: float = uncertainty.INTERVAL_LEVEL) -> pd.DataFrame:
    """:func:`analyses.models.plan.intervals` with the validation errors of the plan's class on each
    generation in ``rows`` (:func:`steady_errors`, :func:`validation_errors`) and the scenario's price draws."""
    if not len(rows):
        return pl.intervals(req, rows, np.zeros(1), {}, level)
    gpus = rows["gpu"].to_numpy()
    parts, order = [], []
    for gpu in dict.fromkeys(gpus):  # each generation at the bands of its class
        at = np.flatnonzero(gpus == gpu)
        draws = {gpu: hourly_cost_draws(req, gpu)}
        errors = (validation_errors(req, gpu), steady_errors(req, gpu))
        parts.append(pl.intervals(req, rows.iloc[at], errors[0], draws, level, errors[1]))
        order.extend(at)
    return pd.concat(parts).iloc[np.argsort(order, kind="stable")]


def sensitivity(req: pl.Request, row: pd.Series) -> pd.DataFrame:
    """What moves one layout's days and cost: each input at a low and a high value, the rest fixed.

    The step-time model's own error: the plan's time × the 5th and 95th percentiles of
    ``exp(error)`` over its out-of-sample errors (the true time is ``planned × exp(error)``:
    :func:`analyses.models.plan.intervals`); the scenario's assumptions of
    :data:`analyses.models.plan.SENSITIVITY_ASSUMPTIONS` at the ends of their 90% ranges; the plan's
    own checkpoint bandwidth ÷4 and ×4; the price per GPU-hour at the 5th and 95th percentiles of its
    draws. Columns ``input, days_a, days_b, cost_a, cost_b, cost_swing`` (a: the low end, b: the high
    end), largest cost swing first.
    """
    layout = pd.DataFrame([row[list(layouts.COLUMNS)]])
    gpu = row["gpu"]
    lo, hi = calibration.band(uncertainty.INTERVAL_LEVEL, validation_errors(req, gpu))
    rows = [
        {
            "input": "model error on published whole runs (grouped cross-validation, 90% band)",
            "days_a": row["days"] * lo,
            "days_b": row["days"] * hi,
            "cost_a": row["cost"] * lo,
            "cost_b": row["cost"] * hi,
        }
    ]
    ranges = scenario.ranges(req.s)
    bandwidth = req.checkpoint_gb_per_s_per_node
    variants: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    automated = (interruptions.RATE_ASSUMPTION["automated"], interruptions.RESTART_ASSUMPTION["automated"])
    mode_names = dict(zip(automated, req.reliability_assumptions, strict=True))
    for name in (mode_names.get(n, n) for n in pl.SENSITIVITY_ASSUMPTIONS):  # the rate and restart of the mode
        r = ranges[name]
        variants[f"{scenario.assumption(name).label} (90% range)"] = ({"s": {name: r.low}}, {"s": {name: r.high}})
    variants[f"checkpoint bandwidth ÷{pl.CHECKPOINT_BANDWIDTH_FACTOR:g} / ×{pl.CHECKPOINT_BANDWIDTH_FACTOR:g}"] = (
        {"checkpoint_gb_per_s_per_node": bandwidth / pl.CHECKPOINT_BANDWIDTH_FACTOR},
        {"checkpoint_gb_per_s_per_node": bandwidth * pl.CHECKPOINT_BANDWIDTH_FACTOR},
    )
    # every variant of the layout in one pass: rows 2i and 2i+1 are variant i's low and high ends
    changes = [c for pair in variants.values() for c in pair]
    ends = pl.evaluate_variants(req, gpu, coefficients(req), layout, changes, hourly_cost(req, gpu))
    days, cost = ends["days"].to_numpy(), ends["cost"].to_numpy()
    for i, name in enumerate(variants):
        a, b = 2 * i, 2 * i + 1
        rows.append({"input": name, "days_a": days[a], "days_b": days[b], "cost_a": cost[a], "cost_b": cost[b]})
    p_lo, _, p_hi = uncertainty.interval(hourly_cost_draws(req, gpu)[req.cost_basis])
    central = float(hourly_cost(req, gpu)[req.cost_basis])
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
