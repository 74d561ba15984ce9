"""Plan a training run: from a model, its tokens and a deadline to GPUs, layout, time, goodput and cost.

The planner chains the book's models without changing them, every shared assumption read from the
request's scenario ``req.s`` and every fact about a generation from ``req.hardware``: the layouts searched (:func:`analyses.models.layouts.candidates`);
memory per GPU (:func:`analyses.models.memory.total_bytes_per_gpu`, Korthikanti et al. 2022
activations, ZeRO sharding) with the framework memory; step time
(:func:`analyses.models.scaling.step_time`) on the generation's InfiniBand cluster with the RDMA NIC
share, latency and data-parallel overlap, and the kernel efficiency calibrated on published
throughput (:mod:`analyses.models.kernel_efficiency`, passed in), whose errors on the published
validation rows are the time uncertainty; the data-loading stall (:func:`analyses.models.pipeline.step_time_s`,
a prefetching loader) at the bytes per input token; failures at the interruptions per GPU-year, the
optimal checkpoint interval and the goodput with the restart time, both of the request's
``operations`` mode (:mod:`analyses.models.reliability`); the cost per GPU-hour, rented or owned, from the prices
(:func:`analyses.models.gpu_hour_cost.per_gpu_hour`), and its draws (passed in).
:mod:`analyses.scenario.planning` resolves the calibration, the hardware and the draws from the data
and the scenario and runs the planner end to end (``planning.plan(req)``).

Every candidate layout of one GPU generation is evaluated in one vectorised pass (numpy arrays
over layouts). Units: seconds, bytes, FLOP/s and USD unless a name says otherwise; ``days`` are
wall-clock days of the run, ``gpu_hours`` are GPUs × wall-clock hours.

Conventions and simplifications (stated once): the global batch is fixed for the whole run
(no batch ramp); interleaved pipeline stages change the bubble but not the stored activations; a
rented GPU is billed for every wall-clock hour of the run, and an owned GPU is charged its full
calendar-hour cost (capital, energy at full power, hosting, staff) for the same hours.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses.models import gpu_hour_cost, layouts, memory, pipeline, reliability, scaling, uncertainty
from analyses.models.flops import training_flops
from analyses.models.gpu_hour_cost import COST_BASES
from analyses.models.training_run import (
    CHECKPOINT_METHODS,
    MEMORY_RECIPE,
    OPERATIONS,
    PRECISIONS,
    REQUEST_FIELDS,
    TIME_ASSUMPTIONS,
    Hardware,
    PlanError,
    Request,
    Shape,
)
from analyses.units import GB, HOURS_PER_DAY, SECONDS_PER_DAY, SECONDS_PER_HOUR

__all__ = [
    "CHECKPOINT_METHODS",
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
    "hourly_cost",
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
    "data-loading stall",
    "checkpoints and failures",
)
STEP_PARTS = ("compute_s", "recompute_s", "bubble_s", "tp_s", "pp_s", "dp_exposed_s", "stall_s")
SENSITIVITY_ASSUMPTIONS = ("interruptions_per_gpu_year", "restart_s", "dp_overlap", "rdma_nic_share", "rdma_latency_us")
CHECKPOINT_BANDWIDTH_FACTOR = 4.0  # the sensitivity moves the plan's own checkpoint bandwidth ÷4 and ×4


# --------------------------------------------------------------------------------------------
# Layouts and their evaluation
# --------------------------------------------------------------------------------------------


def candidates(req: Request, gpu: str) -> pd.DataFrame:
    """Every layout of ``req`` on ``gpu`` (:func:`analyses.models.layouts.candidates`)."""
    s = req.shape
    return layouts.candidates(
        gpu,
        layers=s.layers,
        heads=s.heads,
        sequences_per_step=req.global_batch_tokens / s.seq_len,
        min_gpus=req.min_gpus,
        max_gpus=req.max_gpus,
        domain_gpus=int(req.hardware[gpu].cluster["gpus_per_node"]),  # one NVLink domain per node (72 for NVL72)
    )


def hourly_cost(req: Request, gpu: str, s: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Cost of one GPU-hour of ``gpu`` (USD), rented and owned, at the scenario ``s`` (``req.s`` by default)."""
    return gpu_hour_cost.per_gpu_hour(
        req.s if s is None else s, gpu, req.hardware[gpu].tdp_w, req.rent_class, req.electricity_region
    )


def evaluate(req: Request, gpu: str, efficiency: float, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Memory, step time, goodput, time to train and central cost of every layout (one pass), at
    kernel ``efficiency`` (the share of the dense peak the GPU's matrix kernels reach).

    ``frame`` holds layouts (:data:`analyses.models.layouts.COLUMNS`); every candidate by default.
    Adds columns: ``mem_bytes`` (busiest GPU), ``fits``, ``kernel_efficiency``, ``step_s`` (with
    stall), the time parts per step (:data:`STEP_PARTS`), ``mfu``, ``checkpoint_s``, ``mtbf_s``
    (cluster), ``interval_s``, ``goodput``, ``days``, ``gpu_hours``, ``cost_rented``, ``cost_owned``,
    ``cost`` (``req.cost_basis``) and ``meets_deadline``.
    """
    req = req.validate()
    frame = candidates(req, gpu) if frame is None else frame.reset_index(drop=True).copy()
    s, sc = req.shape, req.s
    hw = req.hardware[gpu]
    cfg = hw.cluster
    peak = hw.peak_flops(req.precision)
    eff = efficiency
    tp, pp, dp = (frame[c].to_numpy(float) for c in ("tp", "pp", "dp"))
    z, mb, v = (frame[c].to_numpy() for c in ("zero_stage", "micro_batch", "virtual_stages"))
    n = frame["n_gpus"].to_numpy(float)
    rc = frame["recompute"].to_numpy()

    mem = np.zeros(len(frame))
    for mode in layouts.RECOMPUTE:
        m = rc == mode
        if m.any():
            mem[m] = memory.total_bytes_per_gpu(
                s.n_params,
                s.layers,
                s.seq_len,
                mb[m],
                s.hidden,
                s.heads,
                precision=MEMORY_RECIPE[req.precision],
                zero_stage=z[m],
                dp=dp[m],
                tp=tp[m],
                pp=pp[m],
                sequence_parallel=True,
                recompute=mode,
                flash=True,
                overhead_bytes=sc["framework_memory_gb"] * GB,
            )["total"]

    factor = layouts.recompute_factor(rc, s.seq_len, s.hidden)
    st = scaling.step_time(
        params=s.n_params,
        tokens_per_step=req.global_batch_tokens,
        n_gpus=n,
        compute_efficiency=eff / factor,
        tp=tp,
        pp=pp,
        virtual_stages=v,
        microbatch_tokens=mb * s.seq_len,
        n_layers=s.layers,
        d_model=s.hidden,
        overlap=sc["dp_overlap"],
        dp_volume=np.where(z == 3, 1.5, 1.0),  # ZeRO-3 moves 3Ψ against an all-reduce's 2Ψ (ZeRO Sec. 7.2.2)
        **scaling.cluster_kwargs(cfg, peak, nic_share=sc["rdma_nic_share"], latency_us=sc["rdma_latency_us"]),
    )
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
    wall_s = steps * step / good

    hourly = hourly_cost(req, gpu)
    gpu_hours = n * wall_s / SECONDS_PER_HOUR
    days = wall_s / SECONDS_PER_DAY
    costs = {f"cost_{b}": gpu_hours * float(hourly[b]) for b in COST_BASES}
    columns = {
        "mem_bytes": mem,
        "fits": mem <= hw.hbm_usable_bytes,
        "kernel_efficiency": np.full(len(frame), eff),
        "step_s": step,
        "compute_s": st.compute_s / factor,
        "recompute_s": st.compute_s * (1.0 - 1.0 / factor),
        "bubble_s": st.bubble_s,
        "tp_s": st.tensor_parallel_s,
        "pp_s": st.pipeline_p2p_s,
        "dp_exposed_s": st.data_parallel_exposed_s,
        "stall_s": step - st.step_s,
        "mfu": training_flops(s.n_params, req.global_batch_tokens) / (step * n * peak),
        "checkpoint_s": checkpoint_s,
        "mtbf_s": mtbf,
        "interval_s": interval,
        "goodput": good,
        "days": days,
        "gpu_hours": gpu_hours,
        **costs,
        "cost": costs[f"cost_{req.cost_basis}"],
        "meets_deadline": days <= req.deadline_days,
    }
    shape = (len(frame),)
    added = pd.DataFrame({k: np.broadcast_to(np.asarray(v), shape) for k, v in columns.items()}, index=frame.index)
    return pd.concat([frame, added], axis=1)


def pareto_front(frame: pd.DataFrame, x: str = "days", y: str = "cost") -> pd.DataFrame:
    """Rows not beaten on both ``x`` and ``y`` (lower is better), sorted by ``x``."""
    ordered = frame.sort_values([x, y], kind="stable")
    best = np.minimum.accumulate(ordered[y].to_numpy())
    prev = np.concatenate([[np.inf], best[:-1]])
    return ordered[ordered[y].to_numpy() < prev].reset_index(drop=True)


def recommend(frame: pd.DataFrame) -> pd.Series:
    """The cheapest layout that meets the deadline, else the fastest (ties: fewer GPUs).

    A generation the scenario does not price (no rent of the request's class) has NaN costs: its
    cheapest layout is then the one of fewest GPU-hours, what any price multiplies.
    """
    ok = frame[frame["meets_deadline"]]
    if not ok.empty:
        return ok.sort_values(["cost", "gpu_hours", "days", "n_gpus"], kind="stable").iloc[0]
    return frame.sort_values(["days", "cost", "n_gpus"], kind="stable").iloc[0]


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
) -> pd.DataFrame:
    """Intervals (90% by default) of days and of both costs for ``rows`` (layouts of any generations).

    Time: the step-time model's published validation ``errors``, resampled (true time = planned /
    (1 + error)), one generator seeded ``req.seed + 1`` per generation. Cost: GPU-hours at that time
    × cost per GPU-hour on the scenario's draws of its prices (``draws[gpu]``: :func:`hourly_cost`
    on ``req.mc_samples`` joint draws). Every
    layout of a generation scales the same draws, so its quantiles are the generation's scaled.
    Adds ``days_lo``/``days_hi`` and, for each basis in :data:`COST_BASES`,
    ``cost_<basis>_lo``/``_med``/``_hi``; ``cost_lo``/``cost_med``/``cost_hi`` repeat ``req.cost_basis``.
    """
    out = rows.copy()
    cols = ["days_lo", "days_hi"] + [f"cost_{b}_{q}" for b in COST_BASES for q in ("lo", "med", "hi")]
    for col in cols:
        out[col] = np.nan
    for gpu, idx in out.groupby("gpu").groups.items():
        hourly = draws[gpu]
        rng = np.random.default_rng(req.seed + 1)
        factor = 1.0 / (1.0 + rng.choice(errors, size=req.mc_samples))
        days = out.loc[idx, "days"].to_numpy(float)
        lo, _, hi = uncertainty.interval(factor, level)
        out.loc[idx, "days_lo"], out.loc[idx, "days_hi"] = days * lo, days * hi
        gpu_days = out.loc[idx, "n_gpus"].to_numpy(float) * days
        for basis in COST_BASES:
            per_gpu_day = factor * HOURS_PER_DAY * hourly[basis]
            q = uncertainty.interval(per_gpu_day, level) if np.isfinite(per_gpu_day).all() else (np.nan,) * 3
            for name, value in zip(("lo", "med", "hi"), q, strict=True):
                out.loc[idx, f"cost_{basis}_{name}"] = gpu_days * value
    for q in ("lo", "med", "hi"):
        out[f"cost_{q}"] = out[f"cost_{req.cost_basis}_{q}"]
    return out


def breakdown(row: pd.Series, req: Request) -> pd.DataFrame:
    """Where the wall-clock time of one layout goes, in days per part (:data:`TIME_PARTS`)."""
    steps = req.tokens / req.global_batch_tokens
    days = [steps * row[c] / SECONDS_PER_DAY for c in STEP_PARTS]
    days.append(row["days"] - sum(days))
    return pd.DataFrame({"part": TIME_PARTS, "days": days, "share": np.asarray(days) / row["days"]})
