"""Plan a training run: from a model, its tokens and a deadline to GPUs, layout, time, goodput and cost.

The planner chains the book's models without changing them:

* memory per GPU of every candidate layout: :func:`analyses.models.memory.total_bytes_per_gpu`
  (Korthikanti et al. 2022 activations, ZeRO sharding of the model states);
* step time: :func:`analyses.models.scaling.step_time`, with the single-GPU kernel efficiency calibrated
  on published throughput by :func:`analyses.models.scaling.model_vs_measurement`; the model's errors on
  the published validation rows become the time uncertainty;
* data-loading stall: :func:`analyses.models.pipeline.step_time_s` (a prefetching loader, overlap 1);
* failures: a per-GPU MTBF from a published interruption log
  (:func:`analyses.models.reliability.per_gpu_mtbf_s`), the optimal checkpoint interval
  (:func:`analyses.models.reliability.checkpoint_interval`) and the expected goodput
  (:func:`analyses.models.reliability.goodput`);
* cost per GPU-hour, rented or owned: :func:`analyses.models.tco.rented_cost_per_gpu_hour`,
  :func:`analyses.models.tco.owned_cost_per_gpu_hour`, with prices drawn from their ranges by
  :func:`analyses.models.uncertainty.sample_range`.

Every candidate layout of one GPU generation is evaluated in one vectorised pass (numpy arrays
over layouts). Units: seconds, bytes, FLOP/s and USD unless a name says otherwise; ``days`` are
wall-clock days of the run, ``gpu_hours`` are GPUs × wall-clock hours.

Conventions and simplifications (stated once): the global batch is fixed for the whole run
(no batch ramp); a layout's GPU count is ``tp · pp · dp`` with power-of-two tp and pp and a data-parallel size of
2^k or 3·2^k; interleaved
pipeline stages change the bubble but not the stored activations; a rented GPU is billed for
every wall-clock hour of the run, and an owned GPU is charged its full calendar-hour cost (capital,
energy at full power, hosting, staff) for the same hours.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import memory, pipeline, reliability, scaling, tco, uncertainty
from analyses.models.units import SECONDS_PER_DAY

PRECISIONS = ("bf16", "fp8")
MEMORY_RECIPE = {"bf16": "bf16-mixed", "fp8": "fp8"}
TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
ZERO_STAGES = (0, 1, 2, 3)
MICRO_BATCHES = (1, 2, 4)
VIRTUAL_STAGES = (1, 2)
RECOMPUTE = ("selective", "full")
COST_BASES = ("rented", "owned")
RENT_CLASSES = ("neocloud", "hyperscaler")
ELECTRICITY_REGIONS = ("us", "china")
CHECKPOINT_METHODS = ("young", "daly")
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


class PlanError(ValueError):
    """A planning input is wrong; ``field`` names it."""

    def __init__(self, field_name: str, message: str):
        self.field = field_name
        super().__init__(f"plan field '{field_name}': {message}")


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A dense transformer's shape: parameters, layers, width, heads and sequence length."""

    name: str
    n_params: float
    layers: int
    hidden: int
    heads: int
    seq_len: int

    @classmethod
    def from_table(cls, name: str, seq_len: int | None = None) -> Shape:
        """A row of ``data/model_shapes.csv``; parameters counted from the shape (memory.shape_parameter_count)."""
        frame = data.model_shapes()
        hit = frame[frame["name"] == name]
        if hit.empty:
            raise PlanError("model_shape", f"unknown shape {name!r}; known: {', '.join(frame['name'])}")
        row = hit.iloc[0]
        return cls(
            name=str(row["label"]),
            n_params=float(memory.shape_parameter_count(row)),
            layers=int(row["layers"]),
            hidden=int(row["hidden"]),
            heads=int(row["heads"]),
            seq_len=int(seq_len or row["seq_len"]),
        )

    @classmethod
    def from_params(cls, n_params: float, seq_len: int = 4096) -> Shape:
        """A GPT-style shape for ``n_params``: :func:`analyses.models.scaling.default_shape`, the rule the
        step-time model uses when no shape is given, with layers rounded and heads of width 128.
        The shape's own count then differs by a few percent; ``n_params`` is kept as given.
        """
        if not n_params > 0:
            raise PlanError("n_params", f"expected a positive number, got {n_params!r}")
        layers = max(2, int(round(float(scaling.default_shape(n_params)[0]))))
        hidden = int(scaling.ASPECT) * layers
        return cls(f"{n_params / 1e9:g}B (generic)", float(n_params), layers, hidden, hidden // 128, int(seq_len))


@dataclass(frozen=True)
class Request:
    """Everything the planner needs; :meth:`validate` names the first wrong field."""

    shape: Shape
    tokens: float
    deadline_days: float
    precision: str = "bf16"
    gpus: tuple[str, ...] = ("A100", "H100", "B200", "B300")
    global_batch_tokens: float = 4 * 2**20
    min_gpus: int = 8
    max_gpus: int = 4096
    mtbf_source: str = "llama3-405b-unexpected"
    checkpoint_gb_per_s_per_node: float = 1.0
    checkpoint_method: str = "daly"
    restart_min: float = 10.0
    loader_gb_per_s_per_node: float = 1.0
    bytes_per_token: float = 4.0
    overlap: float = 0.5
    overhead_gib: float = 5.0
    compute_efficiency: float = 0.0
    holdout_sources: tuple[str, ...] = ()
    rent_class: str = "neocloud"
    electricity_region: str = "us"
    depreciation_years: float = 4.0
    cost_of_capital: float = 0.08
    cost_basis: str = "rented"
    mc_samples: int = 20_000
    seed: int = 2026

    def validate(self) -> Request:
        """Return self, or raise :class:`PlanError` naming the field and what is allowed."""

        def positive(name: str) -> None:
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
                raise PlanError(name, f"expected a positive number, got {value!r}")

        for name in ("tokens", "deadline_days", "global_batch_tokens", "checkpoint_gb_per_s_per_node"):
            positive(name)
        for name in ("loader_gb_per_s_per_node", "bytes_per_token", "depreciation_years"):
            positive(name)
        if self.precision not in PRECISIONS:
            raise PlanError("precision", f"expected one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        known = supported_gpus()
        if not self.gpus or any(g not in known for g in self.gpus):
            raise PlanError("gpus", f"expected a non-empty list from {', '.join(known)}, got {list(self.gpus)!r}")
        for g in self.gpus:
            try:
                data.gpu(g).peak_flops(self.precision)
            except ValueError:
                raise PlanError("precision", f"{g} has no dense {self.precision} peak in data/gpus.csv") from None
        if not (
            isinstance(self.min_gpus, int) and isinstance(self.max_gpus, int) and 1 <= self.min_gpus <= self.max_gpus
        ):
            raise PlanError(
                "max_gpus", f"expected integers 1 <= min_gpus <= max_gpus, got {self.min_gpus!r}, {self.max_gpus!r}"
            )
        if self.max_gpus > 2**17:
            raise PlanError("max_gpus", f"expected at most {2**17}, got {self.max_gpus}")
        logs = failure_log_ids()
        if self.mtbf_source not in logs:
            raise PlanError("mtbf_source", f"expected one of {', '.join(logs)}, got {self.mtbf_source!r}")
        choices = {
            "checkpoint_method": CHECKPOINT_METHODS,
            "rent_class": RENT_CLASSES,
            "electricity_region": ELECTRICITY_REGIONS,
            "cost_basis": COST_BASES,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise PlanError(name, f"expected one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        for name in ("overlap", "cost_of_capital"):
            if not 0 <= getattr(self, name) <= 1:
                raise PlanError(name, f"expected a number from 0 to 1, got {getattr(self, name)!r}")
        if not 0 <= self.compute_efficiency <= 1:
            raise PlanError(
                "compute_efficiency", f"expected 0 (calibrated) or a fraction up to 1, got {self.compute_efficiency!r}"
            )
        for name in ("restart_min", "overhead_gib"):
            if getattr(self, name) < 0:
                raise PlanError(name, f"expected a number >= 0, got {getattr(self, name)!r}")
        if self.global_batch_tokens < self.shape.seq_len:
            raise PlanError("global_batch_tokens", f"expected at least one sequence ({self.shape.seq_len} tokens)")
        if not (isinstance(self.mc_samples, int) and 100 <= self.mc_samples <= 1_000_000):
            raise PlanError("mc_samples", f"expected an integer from 100 to 1000000, got {self.mc_samples!r}")
        return self

    def with_(self, **changes: Any) -> Request:
        """A copy with some fields changed (validated)."""
        return replace(self, **changes).validate()


REQUEST_FIELDS = tuple(f.name for f in fields(Request))


# --------------------------------------------------------------------------------------------
# Facts read from data
# --------------------------------------------------------------------------------------------


def failure_log_ids() -> list[str]:
    """Ids of the interruption logs a per-GPU MTBF can be taken from."""
    return list(data.failure_logs()["id"])


def per_gpu_mtbf_s(log_id: str) -> float:
    """Per-GPU mean time between job interruptions (s) implied by one published log."""
    logs = data.failure_logs().set_index("id")
    if log_id not in logs.index:
        raise PlanError("mtbf_source", f"expected one of {', '.join(logs.index)}, got {log_id!r}")
    r = logs.loc[log_id]
    return float(reliability.per_gpu_mtbf_s(r["interruptions"], r["days"], r["gpus"]))


def cluster_config(gpu: str) -> dict[str, Any]:
    """The InfiniBand cluster configuration of a generation (the fastest NIC listed for it)."""
    frame = data.table("cluster_configs")
    rows = frame[(frame["gpu"] == gpu) & (frame["network"] == "infiniband")]
    if rows.empty:
        raise PlanError("gpus", f"no InfiniBand cluster configuration for {gpu} in data/cluster_configs.csv")
    return rows.sort_values("nic_gbit_per_s_per_gpu", ascending=False).iloc[0].to_dict()


def _price_id(gpu: str, item: str, rent_class: str = "neocloud") -> str:
    return f"{gpu.lower()}-server" if item == "server" else f"{gpu.lower()}-rent-{rent_class}"


def supported_gpus() -> list[str]:
    """Generations with an InfiniBand cluster configuration, a server price and a neocloud rent."""
    clusters = data.table("cluster_configs")
    prices = set(data.prices()["id"])
    out = []
    for g in data.gpu_names():
        has_cluster = not clusters[(clusters["gpu"] == g) & (clusters["network"] == "infiniband")].empty
        if has_cluster and {_price_id(g, "server"), _price_id(g, "rent")} <= prices:
            out.append(g)
    return out


@functools.lru_cache(maxsize=8)
def _validation(holdout_sources: tuple[str, ...]) -> pd.DataFrame:
    bench = data.table("scaling_benchmarks")
    if holdout_sources:
        bench = bench[~bench["source"].isin(holdout_sources)]
    return scaling.model_vs_measurement(
        bench, data.table("cluster_configs"), lambda g, p: data.gpu(g).peak_flops(p), overlap=0.5
    )


def calibrations(holdout_sources: Sequence[str] = ()) -> pd.DataFrame:
    """Kernel efficiency per (GPU, precision) calibrated on published throughput rows.

    ``holdout_sources`` removes every benchmark row citing those sources, so a published run can
    be planned without its own throughput in the calibration.
    """
    frame = _validation(tuple(holdout_sources))
    cal = frame[frame["role"] == "calibrate"]
    return cal[["gpu", "precision", "compute_efficiency", "id", "source"]].reset_index(drop=True)


def validation_errors(holdout_sources: Sequence[str] = ()) -> np.ndarray:
    """The step-time model's relative errors (predicted/measured − 1) on the published validation rows."""
    frame = _validation(tuple(holdout_sources))
    return frame.loc[frame["role"] == "validate", "error"].to_numpy(dtype=float)


def kernel_efficiency(gpu: str, precision: str, holdout_sources: Sequence[str] = ()) -> tuple[float, str]:
    """The calibrated kernel efficiency for ``gpu`` at ``precision`` and how it was obtained.

    Exact (GPU, precision) calibration first; else the mean of the same precision's calibrations on
    other GPUs ("borrowed"); else the mean of every calibration.
    """
    cal = calibrations(holdout_sources)
    own = cal[(cal["gpu"] == gpu) & (cal["precision"] == precision)]
    if not own.empty:
        return float(own["compute_efficiency"].mean()), f"calibrated on {', '.join(own['id'])}"
    same = cal[cal["precision"] == precision]
    pool = same if not same.empty else cal
    return (
        float(pool["compute_efficiency"].mean()),
        f"borrowed: the mean of the {' and '.join(pool['gpu'] + ' ' + pool['precision'])} calibrations",
    )


# --------------------------------------------------------------------------------------------
# Layouts and their evaluation
# --------------------------------------------------------------------------------------------


def selective_recompute_overhead(seq_len: float, hidden: float) -> float:
    """Extra FLOPs of selective recomputation as a share of a layer's model FLOPs: ``s/(18h + 3s)``.

    Selective recomputation (Korthikanti et al. 2022, Sec. 4.2) reruns the attention core
    (QKᵀ, softmax, dropout, attention over V): ``4·b·s²·h`` forward FLOPs per layer, against
    ``72·b·s·h² + 12·b·s²·h`` for the layer's forward and backward passes (Narayanan et al. 2021,
    Eq. 3 without recomputation).
    """
    return seq_len / (18.0 * hidden + 3.0 * seq_len)


def recompute_factor(recompute: np.ndarray, seq_len: float, hidden: float) -> np.ndarray:
    """Hardware FLOPs / model FLOPs: 4/3 for full recomputation (one more forward pass, 2ND on 6ND)."""
    return np.where(recompute == "full", 4.0 / 3.0, 1.0 + selective_recompute_overhead(seq_len, hidden))


def data_parallel_sizes(max_gpus: int) -> list[int]:
    """Data-parallel sizes tried: powers of two and three times powers of two, up to ``max_gpus``."""
    sizes = {m * 2**k for m in (1, 3) for k in range(int(np.log2(max_gpus)) + 1)}
    return sorted(s for s in sizes if s <= max_gpus)


def candidates(req: Request, gpu: str) -> pd.DataFrame:
    """Every layout of ``req`` on ``gpu``: tp, pp, dp, ZeRO stage, micro-batch, interleave, recompute.

    Kept: ``min_gpus ≤ tp·pp·dp ≤ max_gpus``; tp within the NVLink domain (at most 8) and dividing
    the heads; pp ≤ layers; interleaving only with a pipeline and at least v layers per stage;
    ZeRO only with data parallelism; at least one micro-batch per data-parallel rank.
    """
    cfg = cluster_config(gpu)
    domain = int(cfg["gpus_per_node"])  # one NVLink domain per node (72 GPUs for an NVL72 rack)
    dps = data_parallel_sizes(req.max_gpus)
    grid = np.meshgrid(
        TP_CHOICES, PP_CHOICES, dps, ZERO_STAGES, MICRO_BATCHES, VIRTUAL_STAGES, range(len(RECOMPUTE)), indexing="ij"
    )
    tp, pp, dp, z, mb, v, rc = (g.ravel() for g in grid)
    n = tp * pp * dp
    seqs = req.global_batch_tokens / req.shape.seq_len
    keep = (
        (n >= req.min_gpus)
        & (n <= req.max_gpus)
        & (tp <= min(domain, 8))
        & (req.shape.heads % tp == 0)
        & (pp <= req.shape.layers)
        & ((v == 1) | ((pp > 1) & (req.shape.layers >= pp * v)))
        & ((z == 0) | (dp > 1))
        & (dp * mb <= seqs)
    )
    frame = pd.DataFrame(
        {
            "tp": tp[keep],
            "pp": pp[keep],
            "dp": dp[keep],
            "zero_stage": z[keep],
            "micro_batch": mb[keep],
            "virtual_stages": v[keep],
            "recompute": np.asarray(RECOMPUTE)[rc[keep]],
        }
    )
    frame.insert(0, "n_gpus", frame["tp"] * frame["pp"] * frame["dp"])
    frame.insert(0, "gpu", gpu)
    return frame.reset_index(drop=True)


def hourly_cost_central(req: Request, gpu: str) -> dict[str, float]:
    """Central cost of one GPU-hour of ``gpu``, rented and owned (USD)."""
    draws = hourly_cost_draws(req, gpu, central=True)
    return {k: float(v[0]) for k, v in draws.items()}


def _price_ranges(req: Request, gpu: str) -> dict[str, uncertainty.Range]:
    def r(price_id: str) -> uncertainty.Range:
        p = data.price(price_id)
        return uncertainty.Range(p.low, p.central, p.high)

    out = {
        "server": r(_price_id(gpu, "server")),
        "network_storage": r("network-storage"),
        "power_overhead": r("server-power-overhead"),
        "pue": r("pue"),
        "electricity": r(f"electricity-{req.electricity_region}"),
        "hosting": r("hosting"),
        "staff": r("staff"),
        "rental_overhead": r("rental-overhead"),
    }
    rent_id = _price_id(gpu, "rent", req.rent_class)
    out["rent"] = r(rent_id) if rent_id in set(data.prices()["id"]) else uncertainty.Range(np.nan, np.nan, np.nan)
    return out


def hourly_cost_draws(req: Request, gpu: str, *, central: bool = False, n: int | None = None) -> dict[str, np.ndarray]:
    """Cost of one GPU-hour (USD), rented and owned, on Monte Carlo draws of every price input.

    Inputs are drawn (split lognormal, 5th/95th percentiles = the table's low/high) from one
    generator seeded with ``req.seed``; ``central=True`` returns the one-element central values.
    A generation without a rent row for ``req.rent_class`` gets NaN rented costs.
    """
    ranges = _price_ranges(req, gpu)
    if central:
        v = {k: np.array([r.central]) for k, r in ranges.items()}
    else:
        size = n or req.mc_samples
        rng = np.random.default_rng(req.seed)
        v = {
            k: (uncertainty.sample_range(r, size, rng) if np.isfinite(r.central) else np.full(size, np.nan))
            for k, r in ranges.items()
        }
    owned = tco.owned_cost_from_inputs(
        v, v["server"], data.gpu(gpu).tdp_w, req.depreciation_years, req.cost_of_capital
    ).total
    return {"rented": tco.rented_cost_per_gpu_hour(v["rent"], v["rental_overhead"]), "owned": owned}


def evaluate(req: Request, gpu: str, layouts: pd.DataFrame | None = None) -> pd.DataFrame:
    """Memory, step time, goodput, time to train and central cost of every layout (one pass).

    Adds columns: ``mem_bytes`` (busiest GPU), ``fits``, ``step_s`` (with stall), the time parts
    per step (``compute_s``, ``recompute_s``, ``bubble_s``, ``tp_s``, ``pp_s``, ``dp_exposed_s``,
    ``stall_s``), ``mfu``, ``checkpoint_s``, ``mtbf_s`` (cluster), ``interval_s``, ``goodput``,
    ``days``, ``gpu_hours``, ``cost_rented``, ``cost_owned``, ``cost`` (``req.cost_basis``) and
    ``meets_deadline``.
    """
    req = req.validate()
    frame = candidates(req, gpu) if layouts is None else layouts.reset_index(drop=True).copy()
    s = req.shape
    g = data.gpu(gpu)
    cfg = cluster_config(gpu)
    peak = g.peak_flops(req.precision)
    eff = req.compute_efficiency or kernel_efficiency(gpu, req.precision, req.holdout_sources)[0]
    tp, pp, dp = (frame[c].to_numpy(float) for c in ("tp", "pp", "dp"))
    z, mb, v = (frame[c].to_numpy() for c in ("zero_stage", "micro_batch", "virtual_stages"))
    n = frame["n_gpus"].to_numpy(float)
    rc = frame["recompute"].to_numpy()

    mem = np.zeros(len(frame))
    for mode in RECOMPUTE:
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
                overhead_bytes=req.overhead_gib * 2**30,
            )["total"]

    factor = recompute_factor(rc, s.seq_len, s.hidden)
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
        overlap=req.overlap,
        dp_volume=np.where(z == 3, 1.5, 1.0),
        **scaling.cluster_kwargs(cfg, peak),
    )
    nodes = np.ceil(n / cfg["gpus_per_node"])
    load_s = pipeline.load_time_s(
        req.global_batch_tokens * req.bytes_per_token, req.loader_gb_per_s_per_node * 1e9 * nodes
    )
    step = pipeline.step_time_s(st.step_s, load_s, overlap=1.0)
    steps = req.tokens / req.global_batch_tokens

    states = memory.model_state_bytes_by_part(s.n_params, precision=MEMORY_RECIPE[req.precision])
    checkpoint_bytes = float(states["weights"] + states["optimizer"])
    checkpoint_s = checkpoint_bytes / (req.checkpoint_gb_per_s_per_node * 1e9 * nodes)
    mtbf = reliability.cluster_mtbf_s(n, per_gpu_mtbf_s(req.mtbf_source))
    interval = reliability.checkpoint_interval(checkpoint_s, mtbf, method=req.checkpoint_method)
    good = reliability.goodput(interval, checkpoint_s, mtbf, req.restart_min * 60.0)
    wall_s = steps * step / good

    hourly = hourly_cost_central(req, gpu)
    out = frame.assign(
        mem_bytes=mem,
        fits=mem <= g.hbm_usable_bytes,
        kernel_efficiency=eff,
        step_s=step,
        compute_s=st.compute_s / factor,
        recompute_s=st.compute_s * (1.0 - 1.0 / factor),
        bubble_s=st.bubble_s,
        tp_s=st.tensor_parallel_s,
        pp_s=st.pipeline_p2p_s,
        dp_exposed_s=st.data_parallel_exposed_s,
        stall_s=step - st.step_s,
        mfu=6.0 * s.n_params * req.global_batch_tokens / (step * n * peak),
        checkpoint_s=checkpoint_s,
        mtbf_s=mtbf,
        interval_s=interval,
        goodput=good,
        days=wall_s / SECONDS_PER_DAY,
        gpu_hours=n * wall_s / 3600.0,
    )
    out["cost_rented"] = out["gpu_hours"] * hourly["rented"]
    out["cost_owned"] = out["gpu_hours"] * hourly["owned"]
    out["cost"] = out[f"cost_{req.cost_basis}"]
    out["meets_deadline"] = out["days"] <= req.deadline_days
    return out


def pareto_front(frame: pd.DataFrame, x: str = "days", y: str = "cost") -> pd.DataFrame:
    """Rows not beaten on both ``x`` and ``y`` (lower is better), sorted by ``x``."""
    ordered = frame.sort_values([x, y], kind="stable")
    best = np.minimum.accumulate(ordered[y].to_numpy())
    prev = np.concatenate([[np.inf], best[:-1]])
    return ordered[ordered[y].to_numpy() < prev].reset_index(drop=True)


@dataclass(frozen=True)
class Plan:
    """The planner's answer: every fitting layout, the fronts and the recommendation per generation."""

    request: Request
    layouts: pd.DataFrame
    front: pd.DataFrame
    recommended: pd.DataFrame
    efficiency_basis: dict[str, str]
    no_fit: tuple[str, ...]

    @property
    def best(self) -> pd.Series | None:
        """The cheapest recommendation that meets the deadline over all generations (else the fastest)."""
        rec = self.recommended
        if rec.empty:
            return None
        ok = rec[rec["meets_deadline"]]
        return (ok.sort_values("cost").iloc[0]) if not ok.empty else rec.sort_values("days").iloc[0]


def recommend(frame: pd.DataFrame) -> pd.Series:
    """The cheapest layout that meets the deadline, else the fastest (ties: fewer GPUs)."""
    ok = frame[frame["meets_deadline"]]
    if not ok.empty:
        return ok.sort_values(["cost", "days", "n_gpus"], kind="stable").iloc[0]
    return frame.sort_values(["days", "cost", "n_gpus"], kind="stable").iloc[0]


def plan(req: Request) -> Plan:
    """Evaluate every layout on every generation of ``req`` and recommend one per generation."""
    req = req.validate()
    fitting, fronts, recs, basis, no_fit = [], [], [], {}, []
    for gpu in req.gpus:
        basis[gpu] = (
            "set by the reader"
            if req.compute_efficiency
            else kernel_efficiency(gpu, req.precision, req.holdout_sources)[1]
        )
        ev = evaluate(req, gpu)
        ok = ev[ev["fits"]]
        if ok.empty:
            no_fit.append(gpu)
            continue
        fitting.append(ok)
        fronts.append(pareto_front(ok))
        recs.append(recommend(ok))
    cat = functools.partial(pd.concat, ignore_index=True)
    return Plan(
        request=req,
        layouts=cat(fitting) if fitting else pd.DataFrame(),
        front=cat(fronts) if fronts else pd.DataFrame(),
        recommended=pd.DataFrame(recs).reset_index(drop=True) if recs else pd.DataFrame(),
        efficiency_basis=basis,
        no_fit=tuple(no_fit),
    )


# --------------------------------------------------------------------------------------------
# Uncertainty, breakdown and sensitivity
# --------------------------------------------------------------------------------------------


def intervals(req: Request, rows: pd.DataFrame, level: float = uncertainty.INTERVAL_LEVEL) -> pd.DataFrame:
    """Intervals (90% by default) of days and of both costs for ``rows`` (layouts of any generations).

    Time: the step-time model's published validation errors, resampled (true time = planned /
    (1 + error)). Cost: GPU-hours at that time × cost per GPU-hour drawn from the price ranges
    (:func:`hourly_cost_draws`). Adds ``days_lo``/``days_hi`` and, for each basis in
    :data:`COST_BASES`, ``cost_<basis>_lo``/``_med``/``_hi``; ``cost_lo``/``cost_med``/``cost_hi``
    repeat the request's basis. One generator per generation, seeded with ``req.seed``.
    """
    errors = validation_errors(req.holdout_sources)
    out = rows.copy()
    cols = ["days_lo", "days_hi"] + [f"cost_{b}_{q}" for b in COST_BASES for q in ("lo", "med", "hi")]
    for col in cols:
        out[col] = np.nan
    for gpu, idx in out.groupby("gpu").groups.items():
        hourly = hourly_cost_draws(req, gpu)
        rng = np.random.default_rng(req.seed + 1)
        factor = 1.0 / (1.0 + rng.choice(errors, size=req.mc_samples))
        for i in idx:
            days = out.at[i, "days"] * factor
            values = list(uncertainty.interval(days, level)[::2])
            for basis in COST_BASES:
                cost = out.at[i, "n_gpus"] * days * 24.0 * hourly[basis]
                values += list(uncertainty.interval(cost, level)) if np.isfinite(cost).all() else [np.nan] * 3
            out.loc[i, cols] = values
    for q in ("lo", "med", "hi"):
        out[f"cost_{q}"] = out[f"cost_{req.cost_basis}_{q}"]
    return out


def breakdown(row: pd.Series, req: Request) -> pd.DataFrame:
    """Where the wall-clock time of one layout goes, in days per part (:data:`TIME_PARTS`)."""
    steps = req.tokens / req.global_batch_tokens
    per_step = [row[c] for c in ("compute_s", "recompute_s", "bubble_s", "tp_s", "pp_s", "dp_exposed_s", "stall_s")]
    days = [steps * x / SECONDS_PER_DAY for x in per_step]
    days.append(row["days"] - sum(days))
    return pd.DataFrame({"part": TIME_PARTS, "days": days, "share": np.asarray(days) / row["days"]})


def sensitivity(req: Request, row: pd.Series) -> pd.DataFrame:
    """What moves one layout's days and cost: each input at a low and a high value, the rest fixed.

    Kernel efficiency at the model's worst under- and over-prediction on the validation rows;
    per-GPU MTBF at the lowest and highest published log; checkpoint bandwidth and restart time
    ÷4 and ×4; data-parallel overlap 0 and 1; price per GPU-hour at its 5th and 95th percentiles.
    """
    layout = pd.DataFrame([row[list(candidates_columns())]])
    base_eff = req.compute_efficiency or kernel_efficiency(row["gpu"], req.precision, req.holdout_sources)[0]
    err = validation_errors(req.holdout_sources)
    mtbfs = {i: per_gpu_mtbf_s(i) for i in failure_log_ids()}
    lo_log, hi_log = min(mtbfs, key=mtbfs.get), max(mtbfs, key=mtbfs.get)
    variants = {
        "kernel efficiency (validation error range)": (
            {"compute_efficiency": base_eff * (1 + err.min())},
            {"compute_efficiency": base_eff * (1 + err.max())},
        ),
        "per-GPU failure rate (published logs)": ({"mtbf_source": lo_log}, {"mtbf_source": hi_log}),
        "checkpoint bandwidth ÷4 / ×4": (
            {"checkpoint_gb_per_s_per_node": req.checkpoint_gb_per_s_per_node / 4},
            {"checkpoint_gb_per_s_per_node": req.checkpoint_gb_per_s_per_node * 4},
        ),
        "restart time ×4 / ÷4": ({"restart_min": req.restart_min * 4}, {"restart_min": req.restart_min / 4}),
        "data-parallel overlap 0 / 1": ({"overlap": 0.0}, {"overlap": 1.0}),
    }
    rows = []
    for name, (lo, hi) in variants.items():
        a = evaluate(req.with_(**lo), row["gpu"], layout).iloc[0]
        b = evaluate(req.with_(**hi), row["gpu"], layout).iloc[0]
        rows.append({"input": name, "days_a": a["days"], "days_b": b["days"], "cost_a": a["cost"], "cost_b": b["cost"]})
    draws = hourly_cost_draws(req, row["gpu"])[req.cost_basis]
    p_lo, _, p_hi = uncertainty.interval(draws)
    central = hourly_cost_central(req, row["gpu"])[req.cost_basis]
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


def candidates_columns() -> tuple[str, ...]:
    """The columns that define a layout (what :func:`evaluate` accepts as ``layouts``)."""
    return ("gpu", "n_gpus", "tp", "pp", "dp", "zero_stage", "micro_batch", "virtual_stages", "recompute")


# --------------------------------------------------------------------------------------------
# Presets (data/plan_presets.csv)
# --------------------------------------------------------------------------------------------


def resolve(expr: Any, where: str = "expression") -> float:
    """The value of a preset expression: a number, or factors joined by ``*``, each a number or a
    reference ``claim:<id>:<value>``, ``model:<name>:<column>`` or ``benchmark:<id>:<column>``.
    """
    if isinstance(expr, int | float) and not isinstance(expr, bool):
        return float(expr)
    total = 1.0
    for factor in str(expr).split(" * "):
        factor = factor.strip()
        kind, _, rest = factor.partition(":")
        try:
            if kind == "claim":
                cid, _, name = rest.partition(":")
                total *= data.claim(cid).value(name)
            elif kind == "model":
                name, _, col = rest.rpartition(":")
                total *= float(data.model(name)[col])
            elif kind == "benchmark":
                bid, _, col = rest.partition(":")
                row = data.table("scaling_benchmarks").set_index("id").loc[bid]
                total *= float(row["global_batch_seqs"] * row["seq_len"] if col == "global_batch_tokens" else row[col])
            else:
                total *= float(factor)
        except (KeyError, ValueError) as err:
            raise PlanError(where, f"cannot resolve {factor!r}: {err}") from None
    return total


def preset_ids() -> list[str]:
    """Ids of the planning presets, in table order."""
    return list(data.table("plan_presets")["id"])


def _split(value: Any) -> tuple[str, ...]:
    if not isinstance(value, str):
        return ()
    return tuple(v.strip() for v in value.split(";") if v.strip())


def preset(preset_id: str) -> dict[str, Any]:
    """One preset as planner inputs (``model_shape`` or ``n_params``, tokens, GPUs, deadline, ...)
    plus ``label``, ``kind``, ``notes``, ``claims`` and ``compare_gpu_hours`` (NaN when none)."""
    frame = data.table("plan_presets").set_index("id")
    if preset_id not in frame.index:
        raise PlanError("preset", f"expected one of {', '.join(frame.index)}, got {preset_id!r}")
    r = frame.loc[preset_id]
    shape = r["model_shape"] if isinstance(r["model_shape"], str) and r["model_shape"] else "generic"
    out: dict[str, Any] = {
        "model_shape": shape,
        "tokens": resolve(r["tokens"], "tokens"),
        "gpus": list(_split(r["gpus"])),
        "min_gpus": int(resolve(r["min_gpus"], "min_gpus")),
        "max_gpus": int(resolve(r["max_gpus"], "max_gpus")),
        "deadline_days": resolve(r["deadline_days"], "deadline_days"),
        "precision": r["precision"],
        "global_batch_tokens": resolve(r["global_batch_tokens"], "global_batch_tokens"),
        "holdout_sources": list(_split(r["holdout_sources"])),
        "mtbf_source": r["mtbf_source"],
    }
    if shape == "generic":
        out["n_params"] = resolve(r["n_params"], "n_params")
    compare = r["compare_gpu_hours"]
    return out | {
        "label": r["label"],
        "kind": r["kind"],
        "notes": r["notes"],
        "claims": list(_split(r["claims"])),
        "compare_gpu_hours": resolve(compare) if isinstance(compare, str) and compare else float("nan"),
    }
