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
``Clusters.Training_1K`` and ``Training_1K_A100``) at 50% of the dense bf16 peak, with every model
given the same link figures (:data:`FLEETS`), so what differs is the formulas, not the inputs.

Conventions: bytes are bytes (GB = 1e9 bytes, GiB = 2**30); times in seconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from analyses.models import memory, scaling
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


def ours_step(shape: dict, gpu: str, tp: int, pp: int, dp: int) -> dict[str, float]:
    """Our step time (s) on the shared fleet figures: :func:`analyses.models.scaling.step_time`.

    No overlap of the gradient all-reduce (both peers expose it by default); latency per ring hop
    as the fleet's fabric; two-level all-reduce.
    """
    f = FLEETS[gpu]
    st = scaling.step_time(
        params=memory.shape_parameter_count(shape),
        tokens_per_step=GLOBAL_BATCH * SEQ_LEN,
        n_gpus=tp * pp * dp,
        peak_flops=f["peak_bf16"],
        compute_efficiency=MFU,
        nvlink_bytes_per_s=f["nvlink_bytes_per_s"],
        nic_bytes_per_s=f["link_bytes_per_s"],
        gpus_per_node=8,
        nvlink_domain_gpus=8,
        tp=tp,
        pp=pp,
        microbatch_tokens=MICRO_BATCH * SEQ_LEN,
        n_layers=shape["layers"],
        d_model=shape["hidden"],
        overlap=0.0,
        grad_bytes_per_param=2.0,
        activation_bytes=2.0,
        latency_s=f["latency_s"],
    )
    return {
        "compute_s": float(st.compute_s),
        "bubble_s": float(st.bubble_s),
        "step_s": float(st.step_s),
        "p2p_s": float(st.pipeline_p2p_s),  # pipeline sends: not in the comparison table (no peer has them)
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


def ours(c: dict[str, Any], shapes: dict[str, dict]) -> dict[str, float]:
    """Our values for one configuration of :func:`grid`."""
    shape = shapes[c["shape"]]
    if c["kind"] == "memory":
        return ours_memory(shape, c["tp"], c["pp"], c["dp"], c["zero_stage"])
    return ours_step(shape, c["gpu"], c["tp"], c["pp"], c["dp"])


def peer(tool: str, c: dict[str, Any], shapes: dict[str, dict]) -> dict[str, float]:
    """One peer's values for one configuration of :func:`grid`."""
    shape = shapes[c["shape"]]
    if c["kind"] == "memory":
        fn = llm_analysis_memory if tool == "llm-analysis" else mlsysim_memory
        return fn(shape, c["tp"], c["pp"], c["dp"], c["zero_stage"], gpu=c["gpu"])
    fn = llm_analysis_step if tool == "llm-analysis" else mlsysim_step
    return fn(shape, c["gpu"], c["tp"], c["pp"], c["dp"])


def compare(shapes: pd.DataFrame, tools: Iterable[str] = tuple(TOOLS)) -> pd.DataFrame:
    """The long comparison table: one row per configuration, quantity and peer (both sides)."""
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    rows = []
    for c in grid(shapes):
        mine = ours(c, by_name)
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


def recompute_ours(table: pd.DataFrame, shapes: pd.DataFrame) -> np.ndarray:
    """Our side of a comparison table recomputed now (the page's freshness check)."""
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    cache: dict[str, dict[str, float]] = {}
    out = []
    for r in table.to_dict("records"):
        if r["config"] not in cache:
            cache[r["config"]] = ours(r, by_name)
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


def pipeline_send_gap(step_rows: pd.DataFrame, shapes: pd.DataFrame) -> pd.DataFrame:
    """Per step configuration: our step time minus the peer's, beside our pipeline-send time (s).

    ``step_rows`` are one peer's ``step_s`` rows of the comparison table; our pipeline
    point-to-point time comes from :func:`ours_step` (no peer models it).
    """
    by_name = {r["name"]: r for r in shapes.to_dict("records")}
    rows = [
        {
            "config": r["config"],
            "ours − peer (s)": r["ours"] - r["peer"],
            "our pipeline sends (s)": ours_step(by_name[r["shape"]], r["gpu"], r["tp"], r["pp"], r["dp"])["p2p_s"],
        }
        for r in step_rows.to_dict("records")
    ]
    return pd.DataFrame(rows, columns=["config", "ours − peer (s)", "our pipeline sends (s)"])
