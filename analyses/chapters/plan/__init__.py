"""Chapter ``plan``: from a model, its tokens and a deadline to GPUs, layout, time, goodput and cost.

No claims of its own: the chapter chains the book's models (:mod:`analyses.models.plan`) and replays
the documents' scenarios (the 13B run of 000 part 2.1, the 4-8-node plan of 000 part 5, the two
case studies) and two published runs (Llama 3.1 405B on 16,384 H100, LLaMA-65B on 2,048 A100)
inside the planner. Every assumption it shares with the rest of the book (prices, framework memory,
the RDMA fabric, data-parallel overlap, failure rate, restart time, batch, tokens per parameter,
depreciation, cost of capital) is the scenario's (:mod:`analyses.scenario`); the parameters named
after them override it. :func:`compute` runs the planner once for the page; :func:`run` is the part
the command line (``python -m analyses plan``) needs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analyses import data, scenario
from analyses.chapters import ledger
from analyses.chapters.plan import wiring
from analyses.models import plan as pl
from analyses.models import tco
from analyses.scenario import buying, planning
from analyses.scenario.params import ChapterSpec, Config, Param, Rule, precision_rule

SLUG = "plan"
PUBLISHED_TOLERANCE = 0.15
"""Relative error of the planned GPU-hours of a published run accepted as a pass: issue 21's target
for the step-time model's median error on published runs (the validation chapter shows every run; the
planner's own 90% interval, from the model's out-of-sample errors, must contain the published figure too)."""

MAX_MC_SAMPLES = 200_000  # the worst allowed run (every generation, 131,072 GPUs) stays near a second
RELATED = {
    "stack": ("stack",),
    "tp": tuple(wiring.PIN_PARAMS),
    "pp": tuple(wiring.PIN_PARAMS),
    "dp": tuple(wiring.PIN_PARAMS),
    "ep": ("ep", "n_experts", "active_params"),
    **{name: ("model_shape", name) for name in (*wiring.ARCH, "attention")},
    "window": ("attention", "window"),
    "max_gpus": ("min_gpus", "max_gpus"),
    "active_params": ("model_shape", "n_params", "active_params"),
    "n_experts": ("n_experts", "experts_active"),
    "precision": ("gpus", "precision"),
    "batch_million_tokens": ("seq_len", "batch_million_tokens"),
}
GENERATIONS = tuple(planning.supported_gpus())  # every generation the planner can place (priced or not)
PRICED = tuple(planning.priced_gpus())  # the default list: the generations the scenario prices both ways


@functools.cache
def _choices(data_dir: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (*data.model_shape_names(), wiring.GENERIC), (wiring.NONE, *wiring.preset_ids())


def _shape_choices() -> list[str]:
    return list(_choices(str(data.DATA_DIR))[0])


def _preset_choices() -> list[str]:
    return list(_choices(str(data.DATA_DIR))[1])


SPEC = ChapterSpec(
    slug=SLUG,
    title="Plan your run",
    params=(
        *buying.currency_params(),
        Param(
            "preset",
            "str",
            wiring.NONE,
            "-",
            "a scenario from data/plan_presets.csv; it replaces the model, tokens, GPUs, deadline, precision "
            "and batch wherever those are left at their defaults",
            choices=_preset_choices,
        ),
        Param(
            "model_shape",
            "str",
            "illustrative-100b",
            "-",
            "model shape (data/model_shapes.csv) or 'generic'",
            choices=_shape_choices,
        ),
        Param(
            "n_params", "float", 1e11, "parameters", "parameters of a generic shape (model_shape generic)", 1e8, 1e13
        ),
        Param(
            "active_params",
            "float",
            0.0,
            "parameters",
            "parameters each token uses: 0 for a dense model, fewer than n_params for a mixture of experts "
            "(generic shape: layers and width follow the active parameters)",
            0,
            1e13,
        ),
        Param("n_experts", "int", 256, "experts", "routed experts of a mixture of experts (DeepSeek-V3: 256)", 2, 4096),
        Param("experts_active", "int", 8, "experts", "routed experts each token uses (DeepSeek-V3: 8)", 1, 256),
        Param("n_layers", "int", 0, "layers", "layers of a generic shape (0: from the parameters)", 0, 1000),
        Param("d_model", "int", 0, "-", "hidden size of a generic shape (0: from the parameters)", 0, 131_072),
        Param("ffn_hidden", "int", 0, "-", "FFN width of a dense layer (0: 4 × d_model)", 0, 1_048_576),
        Param("n_heads", "int", 0, "heads", "attention (query) heads (0: d_model / 128)", 0, 4096),
        Param(
            "n_kv_heads", "int", 0, "heads", "key/value heads, fewer with grouped-query attention (0: n_heads)", 0, 4096
        ),
        Param(
            "vocab",
            "int",
            0,
            "tokens",
            "vocabulary (0: not known; its embeddings are then counted as layers)",
            0,
            10_000_000,
        ),
        Param(
            "shared_experts",
            "int",
            0,
            "experts",
            "experts every token uses besides the routed ones (counted in active_params)",
            0,
            64,
        ),
        Param(
            "dense_layers",
            "int",
            0,
            "layers",
            "layers of a mixture of experts with a dense FFN (DeepSeek-V3: 3)",
            0,
            1000,
        ),
        Param(
            "attention",
            "str",
            "full",
            "-",
            "attention: full, sliding (window) or mla (multi-head latent)",
            choices=wiring.ATTENTION,
        ),
        Param("window", "int", 0, "tokens", "sliding window of attention sliding", 0, 10_000_000),
        Param("head_dim", "int", 0, "-", "query-key size of a head (0: d_model / n_heads; mla: 192)", 0, 4096),
        Param("v_head_dim", "int", 0, "-", "value size of a head where it differs (0: head_dim; mla: 128)", 0, 4096),
        Param(
            "stack",
            "str",
            "unspecified",
            "-",
            "training stack (data/training_stacks.csv; an alias works too): its fitted efficiency and what it "
            "runs; unspecified pools every published run",
            choices=wiring.stack_choices,
        ),
        Param(
            "attention_kernel",
            "str",
            "flash",
            "-",
            "attention kernel: flash (FlashAttention-class, every stack since 2023) or materialized (the score "
            "matrix in HBM: Megatron-LM and DeepSpeed of 2021-22, PyTorch eager attention)",
            choices=pl.ATTENTION_KERNELS,
        ),
        Param("tp", "int", 0, "GPUs", "tensor-parallel size (0: searched)", 0, 1024),
        Param("pp", "int", 0, "stages", "pipeline-parallel stages (0: searched)", 0, 1024),
        Param("dp", "int", 0, "GPUs", "data-parallel size (0: searched)", 0, 131_072),
        Param("cp", "int", 0, "GPUs", "context-parallel size (0: searched)", 0, 1024),
        Param("ep", "int", 0, "GPUs", "expert-parallel size (0: searched)", 0, 4096),
        Param("zero_stage", "int", -1, "-", "ZeRO stage 0-3 (-1: searched; 3 is FSDP's full sharding)", -1, 3),
        Param("micro_batch", "int", 0, "sequences", "micro-batch per GPU (0: searched)", 0, 4096),
        Param("interleave", "int", 0, "-", "virtual pipeline stages per GPU (0: searched; 1: none)", 0, 64),
        Param(
            "recompute",
            "str",
            wiring.SEARCH,
            "-",
            "activation recomputation: none, selective, full or search",
            choices=(wiring.SEARCH, *pl.RECOMPUTE_PINS),
        ),
        Param(
            "seq_len",
            "int",
            0,
            "tokens",
            f"sequence length (0: the shape's own, {wiring.GENERIC_SEQ_LEN} for a generic shape)",
            0,
            1_048_576,
        ),
        Param("tokens", "float", 0.0, "tokens", "training tokens (0: tokens per parameter × parameters)", 0, 1e15),
        Param("deadline_days", "float", 30.0, "days", "wall-clock days the run must finish in", 0.01, 3650),
        Param(
            "precision", "str", "bf16", "-", "training precision (peak FLOP/s and memory recipe)", choices=pl.PRECISIONS
        ),
        Param(
            "gpus",
            "str_list",
            list(PRICED),
            "-",
            "GPU generations to consider (H800, H200, GB200 and GB300 too; a price the scenario lacks shows as n/a)",
            choices=planning.supported_gpus,
        ),
        Param("min_gpus", "int", 8, "GPUs", "smallest cluster to consider", 1, 131_072),
        Param("max_gpus", "int", 4096, "GPUs", "largest cluster to consider", 1, 131_072),
        scenario.param("batch_million_tokens", "global batch per optimizer step (scenario)"),
        Param("checkpoint_gb_per_s_per_node", "float", 1.0, "GB/s", "checkpoint write bandwidth per node", 0.01, 1000),
        Param(
            "checkpoint_method",
            "str",
            "daly",
            "-",
            "optimal checkpoint interval: Young or Daly",
            choices=pl.CHECKPOINT_METHODS,
        ),
        Param("loader_gb_per_s_per_node", "float", 1.0, "GB/s", "input-pipeline read bandwidth per node", 0.001, 1000),
        Param(
            "compute_efficiency",
            "float",
            0.0,
            "fraction",
            "GEMM efficiency ceiling of each GPU's die (0: calibrated on published runs)",
            0,
            1,
        ),
        Param("rent_class", "str", "neocloud", "-", "rental price class", choices=tco.RENT_CLASSES),
        Param(
            "electricity_region",
            "str",
            buying.REGION,
            "-",
            "electricity tariff of owned GPUs",
            choices=tco.ELECTRICITY_REGIONS,
        ),
        Param("cost_basis", "str", "rented", "-", "cost the recommendation minimises", choices=tco.COST_BASES),
        Param("mc_samples", "int", 20_000, "draws", "Monte Carlo draws for the 90% intervals", 100, MAX_MC_SAMPLES),
        Param("seed", "int", 2026, "-", "Monte Carlo seed", 0, 2**31 - 1),
        scenario.param("tokens_per_param", "pretraining tokens per parameter (scenario)"),
        Param(
            "operations",
            "str",
            pl.OPERATIONS[0],
            "-",
            "how the cluster detects and clears interruptions (its failure rate and restart)",
            choices=pl.OPERATIONS,
        ),
        scenario.param(
            "interruptions_per_gpu_year", "job interruptions per GPU per year, automated operations (scenario)"
        ),
        scenario.param("restart_s", "time from an interruption to training again, automated operations (scenario)"),
        scenario.param(
            "interruptions_per_gpu_year_manual", "job interruptions per GPU per year, manual operations (scenario)"
        ),
        scenario.param("restart_s_manual", "time from an interruption to training again, manual operations (scenario)"),
        scenario.param("framework_memory_gb", "memory a framework keeps on each GPU besides model states (scenario)"),
        scenario.param("input_bytes_per_token", "bytes the loader reads per training token (scenario)"),
        scenario.param("dp_overlap", "share of the gradient exchange hidden behind compute (scenario)"),
        scenario.param("rdma_nic_share", "share of the NIC wire rate an all-reduce reaches (scenario)"),
        scenario.param("rdma_latency_us", "latency of one collective step over RDMA (scenario)"),
        scenario.param("depreciation_years", "depreciation period of owned servers (scenario)"),
        scenario.param("cost_of_capital", "annual cost of capital (scenario)"),
        *wiring.price_params(GENERATIONS),
    ),
    rules=(
        Rule(("preset", "model_shape", "n_params"), lambda c: shape_problem(c)),
        precision_rule("gpus", "precision"),
        Rule(
            (
                "min_gpus",
                "max_gpus",
                "gpus",
                "precision",
                "seq_len",
                "batch_million_tokens",
                "n_params",
                "active_params",
                "n_experts",
                "experts_active",
                *wiring.ARCH,
                "attention",
                "window",
                "stack",
                *wiring.PIN_PARAMS,
            ),
            lambda c: planner_problem(c),
        ),
    ),
)


@dataclass(frozen=True)
class Run:
    """One planner run: the request, the plan and each generation's recommendation with its intervals."""

    request: pl.Request
    plan: pl.Plan
    recommended: pd.DataFrame  # plan.recommended with planning.intervals' columns
    per_run: pd.DataFrame = field(default_factory=pd.DataFrame)  # buying.per_run: each GPU rented and owned, USD
    currency: str = "USD"  # the currency money is shown in

    @property
    def money_factor(self) -> float:
        """USD to the shown currency (the scenario's exchange rate for RMB)."""
        return float(buying.in_currency(1.0, self.currency, self.request.s))


@dataclass(frozen=True)
class Result:
    """Everything the plan page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    run: Run
    front: pd.DataFrame  # each generation's Pareto front with intervals and a ``layout`` label
    cloud: pd.DataFrame  # the cheapest fitting layout of each generation and GPU count
    assumptions: pd.DataFrame  # the scenario's assumptions the page reads, at cfg, with ranges and sources
    efficiency: pd.DataFrame  # where each generation's GEMM efficiency ceiling comes from
    breakdown: pd.DataFrame  # days per part of each recommended layout (long form)
    sensitivity: pd.DataFrame  # the best recommendation's days and cost with each input at its ends
    comparison: pd.DataFrame  # the published runs planned and compared with their GPU-hours
    published_layout: str  # TP and PP of the Llama 3 paper's largest throughput row
    band: tuple[float, float]  # the recommended option's 90% whole-run band on a planned time (factors)
    band_class: str  # the class of published runs that band comes from
    scenarios: pd.DataFrame  # the documents' scenarios planned
    related: pd.DataFrame  # ledger rows of the claims the presets replay

    @property
    def request(self) -> pl.Request:
        return self.run.request

    @property
    def plan(self) -> pl.Plan:
        return self.run.plan

    @property
    def best(self) -> pd.Series | None:
        return self.run.plan.best


# --------------------------------------------------------------------------------------------
# The request and one planner run
# --------------------------------------------------------------------------------------------


def request(cfg: Mapping[str, Any]) -> pl.Request:
    """The planner request of a (validated) chapter configuration, at the chapter's defaults
    (:func:`analyses.chapters.plan.wiring.request`)."""
    return wiring.request(cfg, SPEC.param_defaults())


def shape_problem(cfg: Config) -> tuple[tuple[str, ...], str] | None:
    """``n_params`` set (from -p, a params file or a preset's row) while the shape planned is a named
    one, whose own parameter count would silently win: the parameters at fault and what applies."""
    defaults = SPEC.param_defaults()
    if cfg["n_params"] == defaults["n_params"]:
        return None
    shape = wiring.merged(cfg, scenario.values(cfg), defaults)["model_shape"]
    if shape == wiring.GENERIC:
        return None
    from_preset = cfg["preset"] != wiring.NONE and cfg["model_shape"] == defaults["model_shape"]
    names = ("preset", "n_params") if from_preset else ("model_shape", "n_params")
    source = f"the preset's model_shape {shape}" if from_preset else f"model_shape {shape}"
    return names, (
        f"n_params sizes only a generic shape; {source} has its own parameter count, so n_params would be "
        f"ignored: set model_shape {wiring.GENERIC} to plan a model of n_params parameters, or leave n_params out"
    )


def planner_problem(cfg: Config) -> tuple[tuple[str, ...], str] | None:
    """The combination check of the chapter's parameters (a cross-parameter rule: the parameters at
    fault and what is allowed, or None), so a bad combination fails before a kernel starts: the
    planner's own check of the request and of a generic shape (a mixture of experts' counts).

    A model that fits on no GPU is not refused: the page and the command line say so."""
    try:
        req = request(cfg)
        if req.pinned:  # a pinned layout that no GPU count allows fails here, not in the page
            for gpu in req.gpus:
                pl.candidates(req, gpu)
    except pl.PlanError as err:
        names = RELATED.get(err.field, (err.field,))
        return tuple(n for n in names if n in cfg), err.detail
    return None


def run(cfg: Mapping[str, Any]) -> Run:
    """The planner once at ``cfg``, with the intervals of each generation's recommendation and each
    generation's time and cost per run, rented and owned, from the function the buy-or-rent page and
    the cost chapter call for the same figure (:func:`analyses.scenario.buying.per_run`)."""
    req = request(cfg)
    p = planning.plan(req)
    rec = planning.intervals(req, p.recommended) if not p.recommended.empty else p.recommended
    if not rec.empty:  # the class of published runs each generation's bands come from
        rec = rec.assign(band_class=[planning.band_class(req, g) for g in rec["gpu"]])
    return Run(req, p, rec, buying.per_run(req, p), cfg.get("currency", buying.DEFAULT_CURRENCY))


# --------------------------------------------------------------------------------------------
# The published runs and the documents' scenarios, each planned
# --------------------------------------------------------------------------------------------


def _kept(cfg: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The settings of ``cfg`` a preset keeps (all but the preset and the fields it sets), hashable."""
    return tuple(
        (k, tuple(v) if isinstance(v, list) else v)
        for k, v in sorted(cfg.items())
        if k not in wiring.FIELDS and k != "preset"
    )


def preset_plan(preset_id: str, cfg: Mapping[str, Any]) -> tuple[pl.Request, pl.Plan, dict[str, Any]]:
    """Plan a preset with the chapter's other settings and assumptions (checkpoint, prices, ...)."""
    req = request(SPEC.validate(dict(_kept(cfg)) | {"preset": preset_id}))
    return req, planning.plan(req), wiring.preset(preset_id, req.s)


def published_comparison(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Every published-run preset planned and compared with its published GPU-hours.

    Each run is planned as its preset says (its own throughput rows, if any, held out of the
    calibration); a run with held-out rows is planned a second time with them back in, to show how
    much the calibration on the run itself would flatter the planner. Read once per setting the
    presets keep (a reader's model, tokens or deadline do not change it).
    """
    return _published(_kept(cfg), str(data.DATA_DIR)).copy()


def scenarios_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Each document scenario planned: GPUs and layout that meet its stated days, time and cost (read
    once per setting the presets keep)."""
    return _scenarios(_kept(cfg), str(data.DATA_DIR)).copy()


@functools.lru_cache(maxsize=32)
def _published(kept: tuple[tuple[str, Any], ...], data_dir: str) -> pd.DataFrame:
    cfg = dict(kept)
    rows = []
    for pid in wiring.of_kind(wiring.PUBLISHED_RUN, scenario.values(cfg)):
        req, p, meta = preset_plan(pid, cfg)
        variants = [("held out" if req.holdout_sources else "not in the data", p)]
        if req.holdout_sources:
            variants.append(("in the calibration", planning.plan(req.with_(holdout_sources=()))))
        rows += [wiring.published_row(pid, meta, label, plan_) for label, plan_ in variants]
    return pd.DataFrame(rows)


@functools.lru_cache(maxsize=32)
def _scenarios(kept: tuple[tuple[str, Any], ...], data_dir: str) -> pd.DataFrame:
    cfg = dict(kept)
    rows = []
    for pid in wiring.of_kind(wiring.DOCUMENT_SCENARIO, scenario.values(cfg)):
        req, p, meta = preset_plan(pid, cfg)
        rows.append(wiring.scenario_row(pid, meta, req, p))
    return pd.DataFrame(rows)


@functools.cache
def _related(data_dir: str) -> pd.DataFrame:
    return ledger.ledger(ids=wiring.related_claims(scenario.values()))


def related_ledger() -> pd.DataFrame:
    """The ledger rows (verdicts at each chapter's defaults) of the claims the presets replay."""
    return _related(str(data.DATA_DIR)).copy()


# --------------------------------------------------------------------------------------------
# compute
# --------------------------------------------------------------------------------------------


def compute(cfg: Config) -> Result:
    """Every table, figure input and number of the page at ``cfg`` (the planner once for the reader's
    run, once per preset for the published runs and the documents' scenarios)."""
    r = run(cfg)
    best = r.plan.best
    return Result(
        cfg=cfg,
        s=dict(r.request.s),
        run=r,
        front=wiring.front_table(r.plan),
        cloud=wiring.cloud_table(r.plan),
        assumptions=wiring.assumptions_table(cfg, r.request),
        efficiency=wiring.efficiency_table(r.plan),
        breakdown=wiring.breakdown_table(r.plan),
        sensitivity=planning.sensitivity(r.request, best) if best is not None else pd.DataFrame(),
        comparison=published_comparison(cfg),
        published_layout=wiring.published_layout(r.request.s),
        band=wiring.band(r.request, best),
        band_class=planning.band_class(r.request, best["gpu"]) if best is not None else "",
        scenarios=scenarios_table(cfg),
        related=related_ledger(),
    )
