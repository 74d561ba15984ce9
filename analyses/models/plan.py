"""Plan a training run: from a model, its tokens and a deadline to GPUs, layout, time, goodput and cost.

The planner chains the book's models without changing them, every shared assumption read from the
request's scenario ``req.s`` and every fact about a generation from ``req.hardware``: the layouts
searched (:func:`analyses.models.layouts.candidates`: tensor, pipeline, context, expert and data
parallelism, ZeRO, micro-batch, recomputation); memory per GPU
(:func:`analyses.models.memory.total_bytes_per_gpu`, Korthikanti et al. 2022 activations, ZeRO
sharding) with the framework memory; step time (:func:`analyses.models.performance.step_time`, the
calibrated model, its coefficients passed in) on the generation's InfiniBand cluster with the
scenario's RDMA NIC share, latency and data-parallel overlap, whose out-of-sample errors on
published runs are the time uncertainty; the data-loading stall
(:func:`analyses.models.pipeline.step_time_s`, a prefetching loader) at the bytes per input token;
failures at the interruptions per GPU-year, the optimal checkpoint interval and the goodput with
the restart time, both of the request's ``operations`` mode (:mod:`analyses.models.reliability`);
the cost per GPU-hour, rented or owned, and its draws, passed in as numbers
(:func:`analyses.scenario.costs.per_gpu_hour`: NaN where the scenario has no price). :mod:`analyses.scenario.planning` resolves the calibration, the hardware and the
draws from the data and the scenario and runs the planner end to end (``planning.plan(req)``).

Every candidate layout of one GPU generation is evaluated in one vectorised pass (numpy arrays
over layouts). Units: seconds, bytes, FLOP/s and USD unless a name says otherwise; ``days`` are
wall-clock days of the run, ``gpu_hours`` are GPUs × wall-clock hours.

Conventions and simplifications (stated once): the global batch is fixed for the whole run
(no batch ramp); interleaved pipeline stages change the bubble but not the stored activations; a
rented GPU is billed for every wall-clock hour of the run, and an owned GPU is charged its full
calendar-hour cost (capital, energy at full power, hosting, staff) for the same hours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from analyses.models import (
    flops,
    interruptions,
    layouts,
    memory,
    performance,
    pipeline,
    reliability,
    uncertainty,
)
from analyses.models.plan_inputs import coefficients_for, memory_bytes, recompute_modes, step_inputs
from analyses.models.tco import COST_BASES
from analyses.models.training_run import (
    ATTENTION_KERNELS,
    CHECKPOINT_METHODS,
    HEAD_SIZE,
    MEMORY_RECIPE,
    OPERATIONS,
    PIN_FIELDS,
    PRECISIONS,
    RECOMPUTE_PINS,
    REQUEST_FIELDS,
    TIME_ASSUMPTIONS,
    Hardware,
    PlanError,
    Request,
    Shape,
)
from analyses.units import GB, HOURS_PER_DAY, SECONDS_PER_DAY, SECONDS_PER_HOUR

__all__ = [
    "ATTENTION_KERNELS",
    "CHECKPOINT_METHODS",
    "HEAD_SIZE",
    "PIN_FIELDS",
    "RECOMPUTE_PINS",
    "OPERATIONS",
    "PRECISIONS",
    "REQUEST_FIELDS",
    "TIME_ASSUMPTIONS",
    "Hardware",
    "Plan",
    "PlanError",
    "Request",
    "Shape",
    "assemble",
    "breakdown",
    "candidates",
    "evaluate",
    "evaluate_variants",
    "intervals",
    "pareto_front",
    "recommend",
]

TIME_PARTS = (
    "compute",
    "recompute",
    "pipeline bubble",
    "tensor-parallel comms",
    "pipeline sends",
    "exposed data-parallel comms",
    "expert all-to-all",
    "context-parallel ring",
    "training stack",
    "data-loading stall",
    "checkpoints, failures and campaign overhead",
)
STEP_PARTS = (
    "compute_s",
    "recompute_s",
    "bubble_s",
    "tp_s",
    "pp_s",
    "dp_exposed_s",
    "ep_s",
    "cp_s",
    "stack_s",
    "stall_s",
)
SENSITIVITY_ASSUMPTIONS = ("interruptions_per_gpu_year", "restart_s", "dp_overlap", "rdma_nic_share", "rdma_latency_us")
CHECKPOINT_BANDWIDTH_FACTOR = 4.0  # the sensitivity moves the plan's own checkpoint bandwidth ÷4 and ×4


# --------------------------------------------------------------------------------------------
# Layouts and their evaluation
# --------------------------------------------------------------------------------------------


def candidates(req: Request, gpu: str) -> pd.DataFrame:
    """Every layout of ``req`` on ``gpu`` (:func:`analyses.models.layouts.candidates`), the request's
    pinned parts kept; :class:`PlanError` names the pins when none is left."""
    s = req.shape
    frame = layouts.candidates(
        gpu,
        layers=s.layers,
        heads=s.heads,
        sequences_per_step=req.global_batch_tokens / s.seq_len,
        min_gpus=req.min_gpus,
        max_gpus=req.max_gpus,
        domain_gpus=int(req.hardware[gpu].cluster["gpus_per_node"]),  # one NVLink domain per node (72 for NVL72)
        seq_len=s.seq_len,
        n_experts=s.n_experts,
        pinned=req.pins,
        zero_stages=req.zero_stages,
        model_parallel=req.model_parallel,
        recompute=req.recompute_searched,
        micro_batches=req.micro_batches,
    )
    if frame.empty and req.pins:
        pins = ", ".join(f"{k} {v}" for k, v in req.pinned)
        raise PlanError(
            next(iter(req.pins)),
            f"no layout of {req.min_gpus:,}-{req.max_gpus:,} {gpu} GPUs has {pins} "
            f"(tp·pp·cp·dp must be the GPU count, dp·micro_batch at most the batch's sequences)",
        )
    return frame


Hourly = Mapping[str, float]  # cost of one GPU-hour (USD) by basis of COST_BASES; a missing basis is NaN


def evaluate(
    req: Request,
    gpu: str,
    coef: performance.Coefficients,
    frame: pd.DataFrame | None = None,
    hourly: Hourly | None = None,
) -> pd.DataFrame:
    """Memory, step time, goodput, time to train and central cost of every layout (one pass), with the
    calibrated step-time coefficients ``coef`` (:func:`analyses.models.plan_inputs.coefficients_for` applies the request's) and
    ``hourly``, the cost of one GPU-hour of ``gpu`` by basis (USD; None: not priced, costs NaN).

    ``frame`` holds layouts (:data:`analyses.models.layouts.COLUMNS`); every candidate by default.
    Adds columns: ``mem_bytes`` (busiest GPU), ``fits``, ``kernel_efficiency`` (the GEMM efficiency
    of the layout), ``step_s`` (with stall), the time parts per step (:data:`STEP_PARTS`), ``mfu``
    (model FLOPs, :mod:`analyses.models.flops`), ``hfu`` (with recomputation), ``checkpoint_s``,
    ``mtbf_s`` (cluster), ``interval_s``, ``goodput``, ``days``, ``gpu_hours``, ``cost_rented``,
    ``cost_owned``, ``cost`` (``req.cost_basis``) and ``meets_deadline``.
    """
    req = req.validate()
    layouts_ = candidates(req, gpu) if frame is None else frame.reset_index(drop=True).copy()
    return _evaluate(req, gpu, coef, layouts_, hourly or {})


# What a variant of :func:`evaluate_variants` may change: the request's checkpoint bandwidth and these
# scenario values, which :func:`evaluate` reads only in element-wise arithmetic (so one value per layout
# gives each layout what a request of its own would).
VARIANT_ASSUMPTIONS = (
    *SENSITIVITY_ASSUMPTIONS,
    *(interruptions.RATE_ASSUMPTION.values()),
    *(interruptions.RESTART_ASSUMPTION.values()),
)
VARIANT_FIELDS = ("checkpoint_gb_per_s_per_node",)


def evaluate_variants(
    req: Request,
    gpu: str,
    coef: performance.Coefficients,
    layout: pd.DataFrame,
    changes: Sequence[Mapping[str, Any]],
    hourly: Hourly | None = None,
) -> pd.DataFrame:
    """:func:`evaluate` of the one layout in ``layout`` under each variant ``req.with_(**change)`` of
    ``changes``, in one vectorised pass: row ``i`` is ``evaluate(req.with_(**changes[i]), gpu, coef,
    layout)``'s row, value for value (every variant validated as :meth:`Request.with_` does).

    A change may set :data:`VARIANT_FIELDS` and the scenario values of :data:`VARIANT_ASSUMPTIONS`
    (``{"s": {name: value}}``); anything else raises ``ValueError`` naming it.
    """
    if len(layout) != 1:
        raise ValueError(f"layout must hold one layout, got {len(layout)} rows")
    variants = [req.with_(**change) for change in changes]
    names: dict[str, None] = {}
    fields_: dict[str, None] = {}
    for change in changes:
        for key in change:
            if key == "s":
                names |= dict.fromkeys(change["s"])
            else:
                fields_[key] = None
    bad = [n for n in names if n not in VARIANT_ASSUMPTIONS] + [f for f in fields_ if f not in VARIANT_FIELDS]
    if bad:
        raise ValueError(
            f"a variant may change only {', '.join(VARIANT_FIELDS + VARIANT_ASSUMPTIONS)}; got {', '.join(bad)}"
        )
    stacked = replace(
        req.validate(),
        s=dict(req.s) | {n: np.array([v.s[n] for v in variants], float) for n in names},
        **{f: np.array([getattr(v, f) for v in variants], float) for f in fields_},
    )
    frame = layout.iloc[np.zeros(len(variants), dtype=int)].reset_index(drop=True)
    return _evaluate(stacked, gpu, coef, frame, hourly or {})


def _evaluate(
    req: Request, gpu: str, coef: performance.Coefficients, frame: pd.DataFrame, hourly: Hourly
) -> pd.DataFrame:
    """:func:`evaluate` of a validated request on the layouts of ``frame`` (its own copy, index 0..n-1)."""
    for col, default in (("cp", 1), ("ep", 1)):
        if col not in frame:
            frame[col] = default
    s, sc = req.shape, req.s
    hw = req.hardware[gpu]
    cfg = hw.cluster
    peak = hw.peak_flops(req.precision)
    n = frame["n_gpus"].to_numpy(float)

    recompute = recompute_modes(frame)
    mem = memory_bytes(req, frame, recompute)
    st = performance.step_time(coefficients_for(req, gpu, coef), **step_inputs(req, gpu, frame, recompute))
    nodes = np.ceil(n / cfg["gpus_per_node"])
    load_s = pipeline.load_time_s(
        req.global_batch_tokens * sc["input_bytes_per_token"], req.loader_gb_per_s_per_node * GB * nodes
    )
    step = pipeline.step_time_s(st.step_s, load_s, overlap=1.0)
    steps = req.tokens / req.global_batch_tokens

    states = memory.model_state_bytes_by_part(s.n_params, precision=MEMORY_RECIPE[req.precision])
    checkpoint_bytes = float(states["weights"] + states["optimizer"])
    checkpoint_s = checkpoint_bytes / (req.checkpoint_gb_per_s_per_node * GB * nodes)
    rate_name, restart_name = req.reliability_assumptions  # the cluster's operations mode
    mtbf = reliability.cluster_mtbf_s(n, reliability.per_gpu_mtbf_from_rate_s(sc[rate_name]))
    interval = reliability.checkpoint_interval(checkpoint_s, mtbf, method=req.checkpoint_method)
    good = reliability.goodput(interval, checkpoint_s, mtbf, sc[restart_name])
    steady_s = steps * step  # the tokens at steady-state throughput
    wall_s = steady_s / good * (1.0 + req.campaign_overhead)

    gpu_hours = n * wall_s / SECONDS_PER_HOUR
    days = wall_s / SECONDS_PER_DAY
    costs = {f"cost_{b}": gpu_hours * float(hourly.get(b, np.nan)) for b in COST_BASES}
    span = flops.attention_span(s.seq_len, s.window)
    model_flops = flops.model_flops_per_token(s.params_active, s.layers, s.attention_width, span)
    hardware_flops = flops.hardware_flops_per_token(recompute, s.params_active, s.layers, s.attention_width, span)
    rate = req.global_batch_tokens / (step * n * peak)  # tokens per second per unit of peak
    columns = {
        "mem_bytes": mem,
        "fits": mem <= hw.hbm_usable_bytes,
        "kernel_efficiency": st.kernel_efficiency,
        "step_s": step,
        "compute_s": st.compute_s - st.recompute_s,
        "recompute_s": st.recompute_s,
        "bubble_s": st.bubble_s,
        "tp_s": st.tp_s,
        "pp_s": st.pp_s,
        "dp_exposed_s": st.dp_exposed_s,
        "ep_s": st.ep_s,
        "cp_s": st.cp_s,
        "stack_s": st.stack_s,
        "stall_s": step - st.step_s,
        "tokens_per_s_per_gpu": req.global_batch_tokens / (step * n),
        "mfu": model_flops * rate,
        "hfu": hardware_flops * rate,
        "checkpoint_s": checkpoint_s,
        "mtbf_s": mtbf,
        "interval_s": interval,
        "goodput": good,
        "campaign_overhead": req.campaign_overhead,
        "steady_gpu_hours": n * steady_s / SECONDS_PER_HOUR,
        "days": days,
        "gpu_hours": gpu_hours,
        **costs,
        "cost": costs[f"cost_{req.cost_basis}"],
        "meets_deadline": days <= req.deadline_days,
    }
    shape = (len(frame),)
    added = pd.DataFrame({k: np.broadcast_to(np.asarray(v), shape) for k, v in columns.items()}, index=frame.index)
    return pd.concat([frame, added], axis=1)


def _order(frame: pd.DataFrame, by: list[str], rows: np.ndarray | None = None) -> np.ndarray:
    """Positions of ``frame``'s rows (of those at positions ``rows``, all by default) sorted by the
    numeric columns ``by``: ``sort_values(by, kind="stable")``'s order (NaN last, ties in row
    order), found with a stable ``np.lexsort`` on those columns alone rather than by moving every column."""
    keys = [frame[c].to_numpy() if rows is None else frame[c].to_numpy()[rows] for c in reversed(by)]
    order = np.lexsort(keys)
    return order if rows is None else rows[order]


def pareto_front(frame: pd.DataFrame, x: str = "days", y: str = "cost") -> pd.DataFrame:
    """Rows not beaten on both ``x`` and ``y`` (lower is better), sorted by ``x``."""
    order = _order(frame, [x, y])
    ys = frame[y].to_numpy()[order]
    best = np.minimum.accumulate(ys)
    prev = np.concatenate([[np.inf], best[:-1]])
    return frame.take(order[ys < prev]).reset_index(drop=True)


def recommend(frame: pd.DataFrame) -> pd.Series:
    """The cheapest layout that meets the deadline, else the fastest (ties: fewer GPUs).

    A generation the scenario does not price (no rent of the request's class) has NaN costs: its
    cheapest layout is then the one of fewest GPU-hours, what any price multiplies.
    """
    ok = np.flatnonzero(frame["meets_deadline"].to_numpy(bool))
    if len(ok):
        return frame.iloc[_order(frame, ["cost", "gpu_hours", "days", "n_gpus"], ok)[0]]
    return frame.iloc[_order(frame, ["days", "cost", "n_gpus"])[0]]


@dataclass(frozen=True)
class Plan:
    """The planner's answer: every fitting layout, the fronts and the recommendation per generation."""

    request: Request
    layouts: pd.DataFrame
    front: pd.DataFrame
    recommended: pd.DataFrame
    efficiency_basis: dict[str, str]
    no_fit: tuple[str, ...]
    n_candidates: int

    @property
    def best(self) -> pd.Series | None:
        """The cheapest recommendation that meets the deadline over all generations (else the fastest)."""
        rec = self.recommended
        if rec.empty:
            return None
        ok = rec[rec["meets_deadline"]]
        return ok.sort_values("cost", kind="stable").iloc[0] if not ok.empty else rec.sort_values("days").iloc[0]


def assemble(req: Request, evaluated: Mapping[str, pd.DataFrame], basis: Mapping[str, str]) -> Plan:
    """The plan of ``req`` from every generation's evaluated layouts (:func:`evaluate`) and where each
    kernel efficiency came from: the fitting layouts, each generation's front and recommendation."""
    fitting, fronts, recs, no_fit, n = [], [], [], [], 0
    for gpu in req.gpus:
        ev = evaluated[gpu]
        n += len(ev)
        ok = ev[ev["fits"]]
        if ok.empty:
            no_fit.append(gpu)
            continue
        fitting.append(ok)
        fronts.append(pareto_front(ok))
        recs.append(recommend(ok))
    return Plan(
        request=req,
        layouts=pd.concat(fitting, ignore_index=True) if fitting else pd.DataFrame(),
        front=pd.concat(fronts, ignore_index=True) if fronts else pd.DataFrame(),
        recommended=pd.DataFrame(recs).reset_index(drop=True) if recs else pd.DataFrame(),
        efficiency_basis=dict(basis),
        no_fit=tuple(no_fit),
        n_candidates=n,
    )


# --------------------------------------------------------------------------------------------
# Uncertainty, breakdown and sensitivity
# --------------------------------------------------------------------------------------------


def intervals(
    req: Request,
    rows: pd.DataFrame,
    errors: np.ndarray,
    draws: Mapping[str, Mapping[str, np.ndarray]],
    level: float = uncertainty.INTERVAL_LEVEL,
    steady_errors: np.ndarray | None = None,
) -> pd.DataFrame:
    """Intervals (90% by default) of the steady state, the whole run and both costs for ``rows``
    (layouts of any generations).

    Time: ``errors``, ``ln(published time / predicted time)`` of published whole runs the model did
    not see (grouped cross-validation), and ``steady_errors`` (``errors`` if None) of published
    steady-state throughputs: the true time of a plan is ``planned × exp(error)`` (a model that
    predicted 25% more tokens per second than a run reached makes that run's time 1.25 × the planned
    one, never 1/1.25). The band of each is the split-conformal band of its errors
    (:func:`analyses.models.uncertainty.error_band`): ``tokens_per_s_per_gpu``, ``mfu``, ``step_s`` and
    ``steady_gpu_hours`` take the steady band, ``days`` and ``gpu_hours`` the whole run's (columns
    ``<name>_lo`` and ``<name>_hi``). Costs: the whole run's errors resampled by one generator seeded
    ``req.seed + 1`` (the same draws for every generation). Cost: GPU-hours at that time × cost per GPU-hour on the scenario's
    draws of its prices (``draws[gpu]``: the cost of a GPU-hour on ``req.mc_samples`` joint draws). Every layout of a
    generation scales the same draws, so its quantiles are the generation's scaled. Adds
    For each basis in :data:`COST_BASES`, ``cost_<basis>_lo``/``_med``/``_hi``;
    ``cost_lo``/``cost_med``/``cost_hi`` repeat ``req.cost_basis``.
    """
    out = rows.copy()
    n = len(out)
    whole = np.exp(uncertainty.error_band(np.asarray(errors, float), level))
    steady = np.exp(
        uncertainty.error_band(np.asarray(errors if steady_errors is None else steady_errors, float), level)
    )
    for name, (lo_f, hi_f) in (("days", whole), ("gpu_hours", whole), ("step_s", steady), ("steady_gpu_hours", steady)):
        if name in out:
            out[f"{name}_lo"], out[f"{name}_hi"] = out[name] * lo_f, out[name] * hi_f
    for name in ("tokens_per_s_per_gpu", "mfu"):  # rates: the slower time is the lower rate
        if name in out:
            out[f"{name}_lo"], out[f"{name}_hi"] = out[name] / steady[1], out[name] / steady[0]
    cols = [f"cost_{b}_{q}" for b in COST_BASES for q in ("lo", "med", "hi")]
    values = {col: np.full(n, np.nan) for col in cols}
    gpus = out["gpu"].to_numpy()
    all_days, all_gpus = out["days"].to_numpy(float), out["n_gpus"].to_numpy(float)
    if n:  # one draw of the time factors for every generation (each was once seeded alike)
        rng = np.random.default_rng(req.seed + 1)
        factor = np.exp(rng.choice(np.asarray(errors, float), size=req.mc_samples))
    for gpu in sorted(set(gpus)):
        at = np.flatnonzero(gpus == gpu)
        hourly = draws[gpu]
        days = all_days[at]
        gpu_days = all_gpus[at] * days
        for basis in COST_BASES:
            per_gpu_day = factor * HOURS_PER_DAY * hourly[basis]
            q = uncertainty.interval(per_gpu_day, level) if np.isfinite(per_gpu_day).all() else (np.nan,) * 3
            for name, value in zip(("lo", "med", "hi"), q, strict=True):
                values[f"cost_{basis}_{name}"][at] = gpu_days * value
    for col in cols:
        out[col] = values[col]
    for q in ("lo", "med", "hi"):
        out[f"cost_{q}"] = out[f"cost_{req.cost_basis}_{q}"]
    return out


def breakdown(row: pd.Series, req: Request) -> pd.DataFrame:
    """Where the wall-clock time of one layout goes, in days per part (:data:`TIME_PARTS`)."""
    steps = req.tokens / req.global_batch_tokens
    days = [steps * row[c] / SECONDS_PER_DAY for c in STEP_PARTS]
    days.append(row["days"] - sum(days))
    return pd.DataFrame({"part": TIME_PARTS, "days": days, "share": np.asarray(days) / row["days"]})
