"""Our memory and step-time models beside two open-source peers: llm-analysis and MLSys·im.

The peers are optional dependencies (``pip install -e '.[bench]'``: llm-analysis 0.2.2 and
mlsysim 0.3.0), imported only inside their wrapper functions. ``tools/peer_compare.py`` evaluates
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

import logging
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from analyses.models import memory, scaling

TOOLS = {"llm-analysis": "0.2.2", "mlsysim": "0.3.0"}
SOURCES = {"llm-analysis": "peer-llm-analysis-0.2.2", "mlsysim": "peer-mlsysim-0.3.0"}

MEMORY_SHAPES = ("megatron-7.5b", "korthikanti-22b", "gpt3-175b", "megatron-530b", "llama2-7b")
MEMORY_LAYOUTS = ((8, 1, 8, 1), (8, 8, 8, 1), (4, 4, 32, 0), (8, 16, 8, 3))  # (tp, pp, dp, zero_stage)
STEP_SHAPES = ("korthikanti-22b", "gpt3-175b")
STEP_LAYOUTS = ((8, 8, 16, 1), (4, 16, 16, 1))  # tp·pp·dp = 1,024 GPUs
GPUS = ("A100", "H100")
SEQ_LEN = 2048
MICRO_BATCH = 1
GLOBAL_BATCH = 1024  # sequences per step (2.1 M tokens)
MFU = 0.5  # share of the dense bf16 peak every tool is told the kernels reach

# The fleet figures every model is given for step times, copied from MLSys·im 0.3.0
# (mlsysim/systems/registry.py: Clusters.Training_1K and Training_1K_A100 = 128 DGX nodes of 8 GPUs;
# Nodes.DGX_H100 / DGX_A100 intra_node_bw; Fabrics.InfiniBand_HDR = 200 Gb/s, 7 µs, no
# oversubscription). ``link_bytes_per_s`` is the bandwidth of one ring hop between nodes.
FLEETS: dict[str, dict[str, float]] = {
    "A100": {"nvlink_bytes_per_s": 300e9, "link_bytes_per_s": 200e9 / 8, "latency_s": 7e-6, "peak_bf16": 312e12},
    "H100": {"nvlink_bytes_per_s": 450e9, "link_bytes_per_s": 200e9 / 8, "latency_s": 7e-6, "peak_bf16": 989e12},
}
LLM_ANALYSIS_GPU = {"A100": "a100-sxm-80gb", "H100": "h100-sxm-80gb"}
MLSYSIM_FLEET = {"A100": "Training_1K_A100", "H100": "Training_1K"}

MEMORY_QUANTITIES = (
    "params",
    "weights_bytes",
    "gradients_bytes",
    "optimizer_bytes",
    "activations_bytes",
    "total_bytes",
)
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
# llm-analysis 0.2.2 (https://github.com/cli99/llm-analysis)
# --------------------------------------------------------------------------------------------


def _llm_analysis(shape: dict, gpu: str, tp: int, pp: int, dp: int) -> Any:
    from llm_analysis.analysis import LLMAnalysis
    from llm_analysis.config import ModelConfig, ParallelismConfig, get_dtype_config_by_name, get_gpu_config_by_name
    from llm_analysis.logger import logger

    logger.setLevel(logging.ERROR)
    model = ModelConfig(
        name=shape["name"],
        num_layers=int(shape["layers"]),
        n_head=int(shape["heads"]),
        hidden_dim=int(shape["hidden"]),
        vocab_size=int(shape["vocab"]),
        max_seq_len=max(int(shape["seq_len"]), SEQ_LEN),
        num_key_value_heads=int(shape["kv_heads"]),
        ffn_embed_dim=int(shape["ffn_hidden"]),
        expansion_ratio=shape["ffn_hidden"] / shape["hidden"],  # given, so a non-integer ratio (Llama) is accepted
    )
    return LLMAnalysis(
        model,
        get_gpu_config_by_name(LLM_ANALYSIS_GPU[gpu]),
        get_dtype_config_by_name("w16a16e16"),
        ParallelismConfig(tp_size=tp, pp_size=pp, dp_size=dp, sp_size=tp),
        flops_efficiency=MFU,
    )


def _llm_analysis_training(shape: dict, gpu: str, tp: int, pp: int, dp: int, zero_stage: int) -> dict:
    from llm_analysis.analysis import ActivationRecomputation, DSZeRO

    analysis = _llm_analysis(shape, gpu, tp, pp, dp)
    return analysis.training(
        batch_size_per_gpu=MICRO_BATCH,
        gradient_accumulation_steps=max(GLOBAL_BATCH // (dp * MICRO_BATCH), 1),
        seq_len=SEQ_LEN,
        activation_recomputation=ActivationRecomputation.SELECTIVE,
        ds_zero=DSZeRO(zero_stage),
        flash_attn=True,
        mlp_gated_linear_units=bool(shape["gated_mlp"]),
    )


def llm_analysis_memory(shape: dict, tp: int, pp: int, dp: int, zero_stage: int, gpu: str = "H100") -> dict[str, float]:
    """llm-analysis's memory per GPU (bytes) and parameter count: ``LLMAnalysis.training()``.

    ``training()`` asserts that the states and one micro-batch fit in the GPU's memory
    (``config_batch_size_and_gradient_accumulation_steps``); where they do not, every value is NaN.
    """
    try:
        s = _llm_analysis_training(shape, gpu, tp, pp, dp, zero_stage)
    except AssertionError as err:
        if "max_batch_size_per_gpu" not in str(err):
            raise
        return dict.fromkeys(MEMORY_QUANTITIES, float("nan"))
    parts = {
        "weights_bytes": s["weight_memory_per_gpu"],
        "gradients_bytes": s["gradient_memory_per_gpu"],
        "optimizer_bytes": s["optimizer_state_memory_per_gpu"],
        "activations_bytes": s["activation_memory_per_gpu"],
    }
    return (
        {"params": float(s["num_params_total"])}
        | {k: float(v) for k, v in parts.items()}
        | {"total_bytes": float(sum(parts.values()))}
    )


def llm_analysis_step(shape: dict, gpu: str, tp: int, pp: int, dp: int) -> dict[str, float]:
    """llm-analysis's time per training iteration (s): ``latency_per_iter`` of ``training()``.

    It has no pipeline bubble and no data-parallel or tensor-parallel communication in that figure,
    so ``compute_s`` and ``step_s`` are the same number and ``bubble_s`` is 0.
    """
    s = _llm_analysis_training(shape, gpu, tp, pp, dp, 1)
    t = float(s["latency_per_iter"])
    return {"compute_s": t, "bubble_s": 0.0, "step_s": t}


# --------------------------------------------------------------------------------------------
# MLSys·im 0.3.0 (harvard-edge/cs249r_book, mlsysim/)
# --------------------------------------------------------------------------------------------


def _mlsysim_workload(shape: dict, n_params: float) -> Any:
    from mlsysim.core.units import ureg
    from mlsysim.models.types import TransformerWorkload

    return TransformerWorkload(
        name=shape["name"],
        architecture="Transformer",
        parameters=n_params * ureg.count,
        layers=int(shape["layers"]),
        hidden_dim=int(shape["hidden"]),
        heads=int(shape["heads"]),
        kv_heads=int(shape["kv_heads"]),
    )


def mlsysim_memory(shape: dict, tp: int, pp: int, dp: int, zero_stage: int, gpu: str = "H100") -> dict[str, float]:
    """MLSys·im's memory per GPU (bytes): ``TrainingMemoryModel.solve``, given our parameter count.

    Its ``batch_size`` is the global batch; we pass ``dp × micro-batch`` so one micro-batch is in
    its local term, as in ours. Its ``total`` also holds communication buffers (5% of gradients,
    plus pipeline send/receive buffers), reported in ``total_bytes`` only.
    """
    import mlsysim
    from mlsysim.engine.solvers.training import TrainingMemoryModel

    n = memory.shape_parameter_count(shape)
    hardware = getattr(mlsysim.Hardware.Cloud, gpu)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = TrainingMemoryModel().solve(
            _mlsysim_workload(shape, n),
            hardware,
            batch_size=dp * MICRO_BATCH,
            seq_len=SEQ_LEN,
            precision="bf16",
            optimizer="adam",
            activation_checkpointing="selective",
            tp_size=tp,
            pp_size=pp,
            dp_size=dp,
            zero_stage=zero_stage,
            sequence_parallel=True,
        )

    def b(q: Any) -> float:
        return float(q.to("byte").magnitude)

    return {
        "params": n,
        "weights_bytes": b(r.weights),
        "gradients_bytes": b(r.gradients),
        "optimizer_bytes": b(r.optimizer_state),
        "activations_bytes": b(r.activations),
        "total_bytes": b(r.total_memory),
    }


def mlsysim_step(shape: dict, gpu: str, tp: int, pp: int, dp: int) -> dict[str, float]:
    """MLSys·im's step time (s): ``DistributedModel.solve`` on its reference 1,024-GPU fleet."""
    from mlsysim.engine.solvers.distributed import DistributedModel
    from mlsysim.systems.registry import Clusters

    fleet = getattr(Clusters, MLSYSIM_FLEET[gpu])
    assert fleet.total_accelerators == tp * pp * dp
    microbatches = GLOBAL_BATCH // (dp * MICRO_BATCH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = DistributedModel().solve(
            _mlsysim_workload(shape, memory.shape_parameter_count(shape)),
            fleet,
            batch_size=GLOBAL_BATCH,
            precision="bf16",
            efficiency=MFU,
            tp_size=tp,
            pp_size=pp,
            microbatch_count=microbatches,
            zero_stage=1,
            seq_len=SEQ_LEN,
        )
    return {
        "compute_s": float(r.node_profile.latency_compute.to("s").magnitude),
        "bubble_s": float(r.pipeline_bubble_latency.to("s").magnitude),
        "step_s": float(r.step_latency_total.to("s").magnitude),
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
