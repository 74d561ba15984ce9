"""Chapter ``memory``: what training a model of N parameters needs per GPU, and does it fit.

Checks document 000 part 2.2 (a 100B model needs about 400 GB for FP16 weights and over 1.5 TB
with gradients and Adam states; no single card holds it; B300's HBM3e holds bigger shards),
part 5's memory side of the 4-8 node plan for a 10B model, and document 001 part 2.2's HBM
bandwidth figure (checks in :mod:`.checks`). :func:`compute` runs every fit search and table of the
page once; the parameters choose the model, recipe and layout the page explores, and the one
assumption, the framework memory per GPU, comes from the scenario.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.chapters import ledger
from analyses.chapters.memory import checks
from analyses.chapters.memory.wiring import measured_error_table, measured_table, param_count_table, published_table
from analyses.models import activations, memory
from analyses.models import peak_memory as pm
from analyses.scenario import generations, memory_fit
from analyses.scenario.generations import NEW, OLD, gpu
from analyses.scenario.params import ChapterSpec, Config, Param, Rule, precision_rule
from analyses.units import GB
from analyses.verdicts.sweeps import Slider

SLUG = "memory"
ALLOWANCE = checks.ALLOWANCE
DEFAULT_MODELS = (
    "llama2-7b",
    "llama2-13b",
    "llama2-70b",
    "illustrative-100b",
    "gpt3-175b",
    "llama31-405b",
    "megatron-1t",
)
HUNDRED_B = "000-2.2-weights-400gb-total-1p5tb"
PLAN = "000-5-node-plan-memory"
ZERO_EXAMPLE = "zero-fig1-baseline"  # data/memory_published.csv: the 7.5B model on 64 GPUs
SLIDER_CLAIMS = ("000-2.2-one-card-cannot-hold", PLAN)


NO_FRAMEWORK = "none"


def _framework_choices() -> list[str]:
    return [NO_FRAMEWORK, *data.memory_frameworks()["framework"]]


def _layout_problem(cfg: Config) -> str | None:
    if cfg["n_gpus"] % (cfg["tp"] * cfg["pp"]):
        return f"n_gpus must be a multiple of tp x pp = {cfg['tp'] * cfg['pp']} (data parallelism takes the rest)"
    return None


def _domain_problem(cfg: Config) -> str | None:
    domain = data.gpu(cfg["gpu"]).nvlink_domain_gpus
    if cfg["tp"] > domain:
        return f"tensor parallelism stays within one NVLink domain: tp at most {domain} on {cfg['gpu']}"
    return None


def _split_problem(cfg: Config) -> str | None:
    s = data.model_shape(cfg["preset"])
    heads = {int(s["heads"]), int(s["kv_heads"])}
    if any(h % cfg["tp"] for h in heads):
        allowed = [t for t in range(1, 73) if all(h % t == 0 for h in heads)]
        return (
            f"tensor parallelism splits the attention heads, so tp must divide {cfg['preset']}'s "
            f"{' and '.join(str(h) for h in sorted(heads, reverse=True))} heads: tp one of {', '.join(map(str, allowed))}"
        )
    if cfg["pp"] > s["layers"]:
        return f"each pipeline stage needs a layer: pp at most {int(s['layers'])} for {cfg['preset']}"
    return None


SPEC = ChapterSpec(
    slug=SLUG,
    title="Memory budgets",
    params=(
        Param(
            "preset",
            "str",
            "illustrative-100b",
            "-",
            "model shape (a row of data/model_shapes.csv)",
            choices=data.model_shape_names,
        ),
        Param(
            "precision",
            "str",
            "bf16-mixed",
            "-",
            "precision recipe of weights, gradients and optimizer states",
            choices=memory.PRECISIONS,
        ),
        Param(
            "optimizer", "str", "adam", "-", "Adam/AdamW (two moments) or SGD with momentum", choices=memory.OPTIMIZERS
        ),
        Param(
            "fp32_grads", "bool", False, "-", "count gradients in fp32 (18 bytes/param accounting) instead of ZeRO's 16"
        ),
        Param("zero_stage", "int", 1, "-", "ZeRO stage over the data-parallel group (3: FSDP full shard)", 0, 3),
        Param("gpu", "str", "B300", "-", "GPU type", choices=data.gpu_names),
        Param("n_gpus", "int", 64, "GPUs", "GPUs in the job (tp x pp x dp)", 1, 65536),
        Param("tp", "int", 8, "-", "tensor-parallel degree (within one NVLink domain)", 1, 72),
        Param("pp", "int", 4, "-", "pipeline-parallel stages (1F1B schedule)", 1, 256),
        Param("seq_len", "int", 4096, "tokens", "sequence length", 128, 1048576),
        Param("micro_batch", "int", 1, "sequences", "micro-batch per GPU", 1, 1024),
        Param("recompute", "str", "selective", "-", "activation recomputation", choices=activations.RECOMPUTE),
        Param("sequence_parallel", "bool", True, "-", "Megatron sequence parallelism alongside tensor parallelism"),
        Param("flash", "bool", True, "-", "fused (flash) attention that never stores the attention matrix"),
        scenario.param(ALLOWANCE, "memory a framework keeps on each GPU besides model states (scenario)"),
        Param(
            "framework",
            "str",
            NO_FRAMEWORK,
            "-",
            "the layout check counts what this framework keeps (a row of data/memory_frameworks.csv: its "
            "buffers, the vocabulary, logits, recomputation workspace and the fitted allocator reserve) "
            "instead of the flat allowance; none: the flat allowance",
            choices=_framework_choices,
        ),
        scenario.param(memory_fit.RESERVE, "measured peak over the bytes held, with a framework (scenario)"),
        Param(
            "models",
            "str_list",
            list(DEFAULT_MODELS),
            "-",
            "model shapes in the fit table and charts",
            choices=data.model_shape_names,
        ),
        Param(
            "gpus", "str_list", generations.documents_span(), "-", "GPU types in the fit table", choices=data.gpu_names
        ),
        Param(
            "previous_gpu",
            "str",
            "A100",
            "-",
            "the GPU the page's takeaway sets against B300 (document 000's part 3 table uses A100)",
            choices=data.gpu_names,
        ),
        Param(
            "plan_preset",
            "str",
            "llama2-13b",
            "-",
            "shape whose activations stand in for part 5's 10B model in the plan's fit search",
            choices=data.model_shape_names,
        ),
    ),
    rules=(
        Rule(("n_gpus", "tp", "pp"), lambda c: _layout_problem(c)),
        Rule(("gpu", "tp"), lambda c: _domain_problem(c)),
        precision_rule("gpu", "precision", memory.TENSOR_FORMATS),
        Rule(("preset", "tp", "pp"), lambda c: _split_problem(c)),
    ),
)


@dataclass(frozen=True)
class HundredB:
    """Document 000 §2.2's 100B model: its bytes in the documents' recipe (GB, TB)."""

    params: float
    weights_fp16_gb: float
    weights_fp32_gb: float
    states_tb: float  # ZeRO's 16 bytes per parameter
    states_fp32_grads_tb: float  # 18 bytes per parameter
    states_chapter_tb: float  # the chapter's recipe
    stated_weights_gb: float
    stated_total_tb: float


@dataclass(frozen=True)
class Result:
    """Everything the memory page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    bytes_per_param: dict[str, float]  # zero (16), fp32_grads (18), fp32, fp8, k_adam
    hundred_b: HundredB
    param_counts: pd.DataFrame
    accounting: pd.DataFrame
    activation_layer_gb: float  # one layer of the preset with the chapter's settings
    activation_plain_gb: float  # ... without parallelism or recomputation
    layout: dict[str, Any]
    zero: pd.DataFrame
    fits: dict[tuple[str, str], pd.Series | None]  # (shape, GPU) -> smallest fitting layout
    gpus_needed: pd.DataFrame
    hundred_b_gpus: pd.DataFrame
    hundred_b_states_b300: float  # B300s whose usable HBM (less the allowance) holds the 100B states
    plan_fit: pd.Series | None  # the 10B plan model on B300 (activations of plan_preset)
    plan_capacity: dict[str, float]  # the plan's smallest cluster: GPUs, largest model (18 and 16 bytes), GPUs needed
    hbm: dict[str, float]  # B300 capacity and bandwidth figures
    published: pd.DataFrame
    zero_example: dict[str, float]  # the ZeRO paper's Fig. 1 baseline: parameters and data-parallel GPUs
    search_limits: dict[str, int]  # the layout search's largest tp, pp and dp
    measured: pd.DataFrame
    measured_errors: pd.DataFrame
    runs: pd.DataFrame  # published peak memory of training runs against the model (memory_fit.validation)
    reserve: Any  # the allocator overhead fitted on the calibration runs (peak_memory.OverheadFit)
    ledger: pd.DataFrame
    sliders: tuple[Slider, ...]

    def min_gpus(self, shape: str, gpu: str) -> int | None:
        best = self.fits[(shape, gpu)]
        return None if best is None else int(best["n_gpus"])

    def verdict(self, claim_id: str) -> str:
        return str(self.ledger.set_index("id").loc[claim_id, "verdict"])


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


@functools.cache
def _shape(name: str) -> dict[str, Any]:
    r = data.model_shape(name)
    return r | {"n_params": memory.shape_parameter_count(r)}


def shape(name: str) -> dict[str, Any]:
    """A preset with its recomputed parameter count under ``n_params`` (a copy; read once per process)."""
    return dict(_shape(name))


def recipe(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"precision": cfg["precision"], "optimizer": cfg["optimizer"], "fp32_grads": cfg["fp32_grads"]}


def activation_settings(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"sequence_parallel": cfg["sequence_parallel"], "recompute": cfg["recompute"], "flash": cfg["flash"]}


def layout_text(best: pd.Series | None) -> str:
    """A fitting layout in words: "8 (TP8 PP1 DP1 ZeRO-0)"."""
    if best is None:
        return "none up to the search limit"
    return f"{int(best['n_gpus'])} (TP{int(best['tp'])} PP{int(best['pp'])} DP{int(best['dp'])} ZeRO-{int(best['zero_stage'])})"


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def _totals(
    cfg: Mapping[str, Any], s: Mapping[str, Any], zero_stage: int, dp: Any, overhead_bytes: float, **extra: Any
) -> dict:
    """Memory per GPU by part (bytes) of shape ``s`` at the configured sequence, micro-batch, tp, pp,
    recipe and activation settings, for ``zero_stage`` and ``dp`` (a number or an array); ``extra``:
    more keywords of :func:`analyses.models.memory.total_bytes_per_gpu`."""
    return memory.total_bytes_per_gpu(
        s["n_params"],
        s["layers"],
        cfg["seq_len"],
        cfg["micro_batch"],
        s["hidden"],
        s["heads"],
        zero_stage=zero_stage,
        dp=dp,
        tp=cfg["tp"],
        pp=cfg["pp"],
        overhead_bytes=overhead_bytes,
        **recipe(cfg),
        **activation_settings(cfg),
        **extra,
    )


def framework_terms(cfg: Mapping[str, Any], s: Mapping[str, Any], reserve: float) -> tuple[float, dict[str, Any]]:
    """The layout check's overhead bytes and extra keywords: with ``framework`` none, the flat
    allowance; with a framework, its CUDA context, what it keeps (peak_memory.framework_keywords), the
    shape's vocabulary and block, and the fitted reserve ``reserve`` (measured peak over bytes held)."""
    if cfg["framework"] == NO_FRAMEWORK:
        return s["allowance_bytes"], {}
    fw = data.memory_frameworks().set_index("framework").loc[cfg["framework"]].to_dict()
    extra = pm.framework_keywords(fw) | pm.shape_keywords(s["shape"]) | {"overhead_fraction": reserve - 1.0}
    return pm.context_bytes(fw), extra


def layout_check(cfg: Mapping[str, Any], overhead_bytes: float, reserve: float | None = None) -> dict[str, Any]:
    """Memory per GPU of the configured model, GPU and layout (GB), and whether it fits. With a
    ``framework``, what it keeps and the fitted ``reserve`` (the scenario's memory_reserve_factor)
    replace the flat ``overhead_bytes``."""
    n, tp, pp = cfg["n_gpus"], cfg["tp"], cfg["pp"]
    problem = _layout_problem(cfg)  # SPEC's rule refuses this before compute; a direct call gets the same words
    if problem:
        raise ValueError(f"parameters 'n_gpus', 'tp' and 'pp' of chapter 'memory': {problem}")
    s = shape(cfg["preset"])
    dp = n // (tp * pp)
    if reserve is None:
        reserve = scenario.values(cfg)[memory_fit.RESERVE]
    overhead, extra = framework_terms(cfg, {"allowance_bytes": overhead_bytes, "shape": s}, reserve)
    parts = _totals(cfg, s, cfg["zero_stage"], dp, overhead, **extra)
    out = {k: float(v) / GB for k, v in parts.items()}
    hbm = gpu(cfg["gpu"]).hbm_usable_bytes / GB
    return out | {
        "model": s["label"],
        "n_params": s["n_params"],
        "dp": dp,
        "usable_gb": hbm,
        "fits": out["total"] <= hbm,
    }


def layout_table(res: Result) -> pd.DataFrame:
    """The configured layout as a two-column table (part, GB per GPU)."""
    c = res.layout
    parts = ("weights", "gradients", "optimizer", "activations", "logits", "workspace", "overhead", "total")
    rows = [(k, c[k]) for k in parts if k not in ("logits", "workspace") or c[k] > 0]
    rows.append((f"usable HBM of one {res.cfg['gpu']}", c["usable_gb"]))
    return pd.DataFrame(rows, columns=["part", "GB per GPU"])


def fit_search(name: str, gpu_name: str, cfg: Mapping[str, Any], overhead_bytes: float, n_params: float | None = None):
    """The smallest GPU count (and its layout) that fits preset ``name`` on ``gpu_name``; None if none does."""
    s = shape(name) if n_params is None else shape(name) | {"n_params": n_params}
    tab = memory.fit_table(
        s,
        gpu(gpu_name).hbm_usable_bytes - overhead_bytes,
        seq_len=cfg["seq_len"],
        micro_batch=cfg["micro_batch"],
        max_tp=min(8, gpu(gpu_name).nvlink_domain_gpus),
        **recipe(cfg),
        **activation_settings(cfg),
    )
    return memory.smallest_fit(tab)


def accounting_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Unsharded bytes of each model (one replica, no parallelism), by part, in GB.

    Activations are for one micro-batch through all layers at the configured recomputation
    (without tensor parallelism, so sequence parallelism does not apply).
    """
    rows = []
    for name in cfg["models"]:
        s = shape(name)
        parts = memory.model_state_bytes_by_part(s["n_params"], **recipe(cfg))
        act = s["layers"] * activations.activation_bytes_per_layer(
            cfg["seq_len"], cfg["micro_batch"], s["hidden"], s["heads"], recompute=cfg["recompute"], flash=cfg["flash"]
        )
        for part, value in [*parts.items(), ("activations", act)]:
            rows.append(
                {"model": s["label"], "parameters (B)": s["n_params"] / 1e9, "part": part, "GB": float(value) / GB}
            )
    return pd.DataFrame(rows)


def zero_curves(cfg: Mapping[str, Any], overhead_bytes: float) -> pd.DataFrame:
    """Memory per GPU of the configured preset vs GPU count, for each ZeRO stage (configured tp, pp)."""
    s = shape(cfg["preset"])
    mp = cfg["tp"] * cfg["pp"]
    n = np.array([c for c in (2**k for k in range(13)) if c >= mp and c % mp == 0])
    rows = []
    for stage in range(4):
        parts = _totals(cfg, s, stage, n // mp, overhead_bytes)
        rows.append(pd.DataFrame({"GPUs": n, "ZeRO stage": f"ZeRO-{stage}", "GB per GPU": parts["total"] / GB}))
    return pd.concat(rows, ignore_index=True)


# --------------------------------------------------------------------------------------------
# compute
# --------------------------------------------------------------------------------------------


def _hundred_b(cfg: Mapping[str, Any]) -> HundredB:
    c = data.claim(HUNDRED_B)
    n = c.value("params")
    b16, b18 = checks.state_bytes_per_param()
    return HundredB(
        params=n,
        weights_fp16_gb=n * memory.RECIPES[checks.RECIPE].weight_bytes / GB,
        weights_fp32_gb=n * memory.RECIPES["fp32"].weight_bytes / GB,
        states_tb=n * b16 / 1e12,
        states_fp32_grads_tb=n * b18 / 1e12,
        states_chapter_tb=float(memory.model_state_bytes(n, **recipe(cfg))) / 1e12,
        stated_weights_gb=c.value("weights_fp16_gb"),
        stated_total_tb=c.value("total_min_tb"),
    )


def _hbm() -> dict[str, float]:
    b300, prev = gpu(NEW), gpu(OLD)
    dis = data.gpu_spec_disagreements()
    bw = dis[(dis["gpu"] == NEW) & (dis["field"] == "hbm_bandwidth_tb_per_s")]["value"].astype(float)
    return {
        "capacity_gb": b300.hbm_bytes / GB,
        "usable_gb": b300.hbm_usable_bytes / GB,
        "previous_gb": prev.hbm_bytes / GB,
        "ratio": b300.hbm_bytes / prev.hbm_bytes,
        "ratio_b200": b300.hbm_bytes / gpu("B200").hbm_bytes,
        "bandwidth_tb_s": b300.hbm_bytes_per_s / 1e12,
        "bandwidth_max_tb_s": float(max([b300.hbm_bytes_per_s / 1e12, *bw])),
    }


def compute(cfg: Config) -> Result:
    """Every table, figure input and number of the memory page at ``cfg`` (each fit search once)."""
    s = scenario.values(cfg)
    overhead = s[ALLOWANCE] * GB
    pre = shape(cfg["preset"])
    args = (cfg["seq_len"], cfg["micro_batch"], pre["hidden"], pre["heads"])
    layout = layout_check(cfg, overhead, s[memory_fit.RESERVE])
    pairs = dict.fromkeys(
        [(m, g) for m in cfg["models"] for g in cfg["gpus"]]
        + [(cfg["preset"], g) for g in (*cfg["gpus"], cfg["previous_gpu"], NEW)]
    )
    fits = {(m, g): fit_search(m, g, cfg, overhead) for m, g in pairs}
    gpus_needed = pd.DataFrame(
        [
            {"model": shape(m)["label"], "parameters (B)": shape(m)["n_params"] / 1e9}
            | {g: layout_text(fits[(m, g)]) for g in cfg["gpus"]}
            for m in cfg["models"]
        ]
    )
    hb = _hundred_b(cfg)
    states = hb.params * memory.bytes_per_param(**recipe(cfg))
    hundred_b_gpus = pd.DataFrame(
        [
            {
                "GPU": g,
                "usable GB (less allowance)": (gpu(g).hbm_usable_bytes - overhead) / GB,
                "states only: GPUs (ZeRO-3)": float(memory.gpus_for_states(states, gpu(g).hbm_usable_bytes, overhead)),
                f"{pre['label']}: smallest layout": layout_text(fits[(cfg["preset"], g)]),
            }
            for g in cfg["gpus"]
        ]
    )
    plan = data.claim(PLAN)
    measured = measured_table()
    return Result(
        cfg=cfg,
        s=s,
        bytes_per_param={
            "zero": memory.bytes_per_param(),
            "fp32_grads": memory.bytes_per_param(fp32_grads=True),
            "fp32": memory.bytes_per_param("fp32"),
            "fp8": memory.bytes_per_param("fp8"),
            "k_adam": memory.RECIPES["bf16-mixed"].optimizer_bytes["adam"],
        },
        hundred_b=hb,
        param_counts=param_count_table(),
        accounting=accounting_table(cfg),
        activation_layer_gb=float(
            activations.activation_bytes_per_layer(*args, tp=cfg["tp"], **activation_settings(cfg)) / GB
        ),
        activation_plain_gb=float(activations.activation_bytes_per_layer(*args) / GB),
        layout=layout,
        zero=zero_curves(cfg, overhead),
        fits=fits,
        gpus_needed=gpus_needed,
        hundred_b_gpus=hundred_b_gpus,
        hundred_b_states_b300=float(memory.gpus_for_states(states, gpu(NEW).hbm_usable_bytes, overhead)),
        plan_fit=fit_search(cfg["plan_preset"], NEW, cfg, overhead, n_params=plan.value("params")),
        plan_capacity={k: float(v) for k, v in checks.plan_capacity(plan, s).items()},
        hbm=_hbm(),
        published=published_table(),
        zero_example={
            k: float(v)
            for k, v in data.memory_published().set_index("id").loc[ZERO_EXAMPLE, ["n_params", "dp"]].items()
        },
        search_limits={"tp": max(memory.TP_CHOICES), "pp": max(memory.PP_CHOICES), "dp": max(memory.DP_CHOICES)},
        measured=measured,
        measured_errors=measured_error_table(measured),
        runs=memory_fit.validation(s[ALLOWANCE]),
        reserve=memory_fit.fit(),
        ledger=ledger.ledger(SLUG, cfg),
        sliders=(ledger.slider(ALLOWANCE, SLIDER_CLAIMS, {SLUG: cfg}),),
    )
