"""Our memory and step-time models beside two open-source peers: llm-analysis and MLSys·im.

The peers are optional dependencies (``pip install -e '.[bench]'``: llm-analysis 0.2.2 and
mlsysim 0.3.0), wrapped in :mod:`analyses.models.peer_tools` and imported only inside those
wrappers, which are re-exported here (``peers.llm_analysis_memory``). ``tools/peer_compare.py`` evaluates
both sides on one shared grid and writes ``data/measurements/peer_comparison.csv``, so the book
page (``book/peers.ipynb``) and its tests need neither peer installed.

The grid: GPT-style shapes from ``data/model_shapes.csv`` plus Llama 2 7B (a gated, SwiGLU MLP);
layouts of tensor (tp), pipeline (pp) and data (dp) parallelism with ZeRO stages; bf16 mixed
precision with Adam; sequence 2,048 tokens, micro-batch 1; selective recomputation, sequence
parallelism and a fused attention kernel. Step times use 1,024 GPUs (MLSys·im's reference fleets
``Clusters.Training_1K`` and ``Training_1K_A100``), with every model given the same link figures
(:data:`FLEETS`). The peers are told the kernels reach 50% of the dense bf16 peak; ours is the book's
one step-time model (:func:`analyses.models.performance.step_time`) at its calibrated coefficients
(:class:`StepModel`), which predicts the kernels' efficiency from the shape, so the compute terms
differ by what the calibration says about these shapes and the rest by the formulas.

Conventions: bytes are bytes (GB = 1e9 bytes, GiB = 2**30); times in seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from analyses.models import memory, performance
from analyses.models.peer_tools import (
    FLEETS,
    GLOBAL_BATCH,
    MEMORY_QUANTITIES,
    MFU,
    MICRO_BATCH,
    SEQ_LEN,
    TOOLS,
    llm_analysis_memory,
    llm_analysis_step,
    mlsysim_memory,
    mlsysim_step,
)

SOURCES = {"llm-analysis": "peer-llm-analysis-0.2.2", "mlsysim": "peer-mlsysim-0.3.0"}

MEMORY_SHAPES = ("megatron-7.5b", "korthikanti-22b", "gpt3-175b", "megatron-530b", "llama2-7b")
MEMORY_LAYOUTS = ((8, 1, 8, 1), (8, 8, 8, 1), (4, 4, 32, 0), (8, 16, 8, 3))  # (tp, pp, dp, zero_stage)
STEP_SHAPES = ("korthikanti-22b", "gpt3-175b")
STEP_LAYOUTS = ((8, 8, 16, 1), (4, 16, 16, 1))  # tp·pp·dp = 1,024 GPUs
GPUS = ("A100", "H100")
STEP_QUANTITIES = ("compute_s", "bubble_s", "step_s")
UNITS = {"params": "parameters", "compute_s": "s", "bubble_s": "s", "step_s": "s"}


# --------------------------------------------------------------------------------------------
# Our side
# --------------------------------------------------------------------------------------------


def ours_memory(shape: dict, tp: int, pp: int, dp: int, zero_stage: int) -> dict[str, float]:
    """Our memory per GPU of the busiest pipeline stage (bytes) and our parameter count.

    :func:`analyses.models.memory.total_bytes_per_gpu` with ZeRO's 16 bytes per parameter (bf16 weights
    and gradients, fp32 master + Adam moments), selective recompute, sequence parallelism and
    fused attention; activations of p micro-batches in flight (1F1B), Korthikanti et al. Sec. 4.2.3.
    """
    n = memory.shape_parameter_count(shape)
    parts = memory.total_bytes_per_gpu(
        n,
        shape["layers"],
        SEQ_LEN,
        MICRO_BATCH,
        shape["hidden"],
        shape["heads"],
        precision="bf16-mixed",
        optimizer="adam",
        zero_stage=zero_stage,
        dp=dp,
        tp=tp,
        pp=pp,
        sequence_parallel=True,
        recompute="selective",
        flash=True,
    )
    return {"params": n} | {
        f"{k}_bytes": float(parts[k]) for k in ("weights", "gradients", "optimizer", "activations", "total")
    }


@dataclass(frozen=True)
class StepModel:
    """Our side of the step-time comparison: the calibrated coefficients of the book's one step-time
    model and each fleet GPU's HBM bandwidth (bytes/s, from our GPU table; the peers do not need it)."""

    coef: performance.Coefficients
    hbm_bytes_per_s: Mapping[str, float]


def ours_step(shape: dict, gpu: str, tp: int, pp: int, dp: int, model: StepModel) -> dict[str, float]:
    """Our step time (s) on the shared fleet figures: :func:`analyses.models.performance.step_time`.

    The fleet's GPU as its compute die, bf16 on its dense peak; no overlap of the gradient all-reduce
    (both peers expose it by default); selective recomputation; latency per ring hop as the fleet's
    fabric; two-level all-reduce.
    """
    f, n = FLEETS[gpu], memory.shape_parameter_count(shape)
    st = performance.step_time(
        replace(model.coef, dp_overlap=0.0),
        params_active=n,
        params_total=n,
        n_layers=shape["layers"],
        d_model=shape["hidden"],
        seq_len=SEQ_LEN,
        kv_ratio=shape["kv_heads"] / shape["heads"],
        n_experts=0,
        experts_active=0,
        n_gpus=tp * pp * dp,
        tp=tp,
        pp=pp,
        vp=1,
        cp=1,
        ep=1,
        micro_batch=MICRO_BATCH,
        global_batch=GLOBAL_BATCH,
        recompute="selective",
        zero3=False,
        die=gpu,
        peak_flops=f["peak_bf16"],
        peak_flops_bf16=f["peak_bf16"],
        hbm_bytes_per_s=model.hbm_bytes_per_s[gpu],
        nvlink_bytes_per_s=f["nvlink_bytes_per_s"],
        nic_bytes_per_s=f["link_bytes_per_s"],
        gpus_per_node=8,
        nvlink_domain_gpus=8,
        latency_s=f["latency_s"],
    )
    return {
        "compute_s": float(st.compute_s),
        "bubble_s": float(st.bubble_s),
        "step_s": float(st.step_s),
        "p2p_s": float(st.pp_s),  # pipeline sends: not in the comparison table (no peer has them)
        # 6·N·D FLOPs over our compute time: the kernel efficiency the peers are told (MFU) on their basis
        "compute_efficiency": float(6.0 * st.tokens_per_step * n / (st.n_gpus * st.compute_s * f["peak_bf16"])),
    }


# --------------------------------------------------------------------------------------------
# The grid and the comparison table
# --------------------------------------------------------------------------------------------


def grid(shapes: pd.DataFrame) -> list[dict[str, Any]]:
    """Every configuration compared: memory (GPU-independent) and step time (per GPU)."""
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    out: list[dict[str, Any]] = []
    for name in MEMORY_SHAPES:
        for tp, pp, dp, z in MEMORY_LAYOUTS:
            if pp <= by_name[name]["layers"]:
                out.append(
                    {"kind": "memory", "shape": name, "gpu": "H100", "tp": tp, "pp": pp, "dp": dp, "zero_stage": z}
                )
    for gpu in GPUS:
        for name in STEP_SHAPES:
            for tp, pp, dp, z in STEP_LAYOUTS:
                out.append({"kind": "step", "shape": name, "gpu": gpu, "tp": tp, "pp": pp, "dp": dp, "zero_stage": z})
    return out


def config_id(c: dict[str, Any]) -> str:
    """A readable id: ``memory/gpt3-175b/tp8-pp8-dp8-z1`` or ``step/H100/gpt3-175b/tp8-pp8-dp16``."""
    layout = f"tp{c['tp']}-pp{c['pp']}-dp{c['dp']}"
    if c["kind"] == "memory":
        return f"memory/{c['shape']}/{layout}-z{c['zero_stage']}"
    return f"step/{c['gpu']}/{c['shape']}/{layout}"


def ours(c: dict[str, Any], shapes: dict[str, dict], model: StepModel) -> dict[str, float]:
    """Our values for one configuration of :func:`grid`."""
    shape = shapes[c["shape"]]
    if c["kind"] == "memory":
        return ours_memory(shape, c["tp"], c["pp"], c["dp"], c["zero_stage"])
    return ours_step(shape, c["gpu"], c["tp"], c["pp"], c["dp"], model)


def peer(tool: str, c: dict[str, Any], shapes: dict[str, dict]) -> dict[str, float]:
    """One peer's values for one configuration of :func:`grid`."""
    shape = shapes[c["shape"]]
    if c["kind"] == "memory":
        fn = llm_analysis_memory if tool == "llm-analysis" else mlsysim_memory
        return fn(shape, c["tp"], c["pp"], c["dp"], c["zero_stage"], gpu=c["gpu"])
    fn = llm_analysis_step if tool == "llm-analysis" else mlsysim_step
    return fn(shape, c["gpu"], c["tp"], c["pp"], c["dp"])


def compare(shapes: pd.DataFrame, model: StepModel, tools: Iterable[str] = tuple(TOOLS)) -> pd.DataFrame:
    """The long comparison table: one row per configuration, quantity and peer (both sides)."""
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    rows = []
    for c in grid(shapes):
        mine = ours(c, by_name, model)
        for tool in tools:
            theirs = peer(tool, c, by_name)
            for q in MEMORY_QUANTITIES if c["kind"] == "memory" else STEP_QUANTITIES:
                rows.append(
                    {
                        "config": config_id(c),
                        **c,
                        "micro_batch": MICRO_BATCH,
                        "seq_len": SEQ_LEN,
                        "global_batch": GLOBAL_BATCH,
                        "quantity": q,
                        "unit": UNITS.get(q, "bytes"),
                        "ours": mine[q],
                        "tool": tool,
                        "peer": theirs[q],
                        "source": SOURCES[tool],
                    }
                )
    return pd.DataFrame(rows)


def recompute_ours(table: pd.DataFrame, shapes: pd.DataFrame, model: StepModel) -> np.ndarray:
    """Our side of a comparison table recomputed now (the page's freshness check)."""
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    cache: dict[str, dict[str, float]] = {}
    out = []
    for r in table.to_dict("records"):
        if r["config"] not in cache:
            cache[r["config"]] = ours(r, by_name, model)
        out.append(cache[r["config"]][r["quantity"]])
    return np.asarray(out, dtype=float)


def with_differences(table: pd.DataFrame) -> pd.DataFrame:
    """Adds ``diff`` = peer / ours − 1 (a fraction; NaN where ours is 0)."""
    out = table.copy()
    ours_v = out["ours"].astype(float)
    out["diff"] = np.where(ours_v != 0, out["peer"].astype(float) / ours_v.where(ours_v != 0, np.nan) - 1.0, np.nan)
    return out


# --------------------------------------------------------------------------------------------
# Differences explained by our own models
# --------------------------------------------------------------------------------------------


def fp32_gradient_gap(rows: pd.DataFrame, shapes: pd.DataFrame) -> float:
    """Largest relative gap between a peer's gradient bytes and ours counted in fp32 (``fp32_grads=True``).

    ``rows`` are ``gradients_bytes`` rows of the comparison table (columns ``shape``, ``tp``, ``pp``,
    ``dp``, ``zero_stage``, ``peer``); 0 when there are none. llm-analysis holds gradients in the
    master weights' dtype, so with our fp32-gradient option the two agree up to the parameter-count
    conventions.
    """
    if rows.empty:
        return 0.0
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    ours_fp32 = np.array(
        [
            float(
                memory.model_state_bytes_by_part(
                    memory.shape_parameter_count(by_name[r["shape"]]),
                    zero_stage=r["zero_stage"],
                    dp=r["dp"],
                    tp=r["tp"],
                    pp=r["pp"],
                    fp32_grads=True,
                )["gradients"]
            )
            for r in rows.to_dict("records")
        ]
    )
    return float(np.max(np.abs(rows["peer"].to_numpy(float) / ours_fp32 - 1.0)))


def pipeline_send_gap(step_rows: pd.DataFrame, shapes: pd.DataFrame, model: StepModel) -> pd.DataFrame:
    """Per step configuration: our step time minus the peer's, beside our pipeline-send time (s), our
    compute minus compute at the peers' kernel efficiency (:data:`MFU` of the peak on 6·N·D FLOPs), and
    our calibrated compute efficiency on that basis.

    ``step_rows`` are one peer's ``step_s`` rows of the comparison table; our pipeline
    point-to-point time comes from :func:`ours_step` (no peer models it).
    """
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    rows = []
    for r in step_rows.to_dict("records"):
        mine = ours_step(by_name[r["shape"]], r["gpu"], r["tp"], r["pp"], r["dp"], model)
        rows.append(
            {
                "config": r["config"],
                "ours − peer (s)": r["ours"] - r["peer"],
                "our pipeline sends (s)": mine["p2p_s"],
                "our compute − the peers' (s)": mine["compute_s"] * (1.0 - mine["compute_efficiency"] / MFU),
                "our compute efficiency": mine["compute_efficiency"],
            }
        )
    columns = ["config", "ours − peer (s)", "our pipeline sends (s)", "our compute − the peers' (s)"]
    return pd.DataFrame(rows, columns=[*columns, "our compute efficiency"])
