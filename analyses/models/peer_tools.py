"""The two open-source peers the appendix compares our models with, wrapped: llm-analysis 0.2.2 and MLSys·im 0.3.0.

Both are optional dependencies (``pip install -e '.[bench]'``), loaded on first use by
:func:`_optional`, so this module imports without them. Here too are the inputs every tool is given
(sequence, micro-batch, global batch, MFU, the fleet figures), so that what differs between the
tools is their formulas, not their inputs; :mod:`analyses.models.peers` holds our side, the grid and
the comparison.

Conventions: bytes are bytes (GB = 1e9 bytes, GiB = 2**30); times in seconds.
"""

from __future__ import annotations

import importlib
import logging
import warnings
from types import ModuleType
from typing import Any

from analyses.models import memory

TOOLS = {"llm-analysis": "0.2.2", "mlsysim": "0.3.0"}
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


def _optional(module: str) -> ModuleType:
    """A module of an optional peer (llm-analysis, MLSys·im), loaded on first use: the book builds
    and tests without them; a missing one is named with the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{module} is an optional dependency: pip install -e '.[bench]'") from err


# --------------------------------------------------------------------------------------------
# llm-analysis 0.2.2 (https://github.com/cli99/llm-analysis)
# --------------------------------------------------------------------------------------------


def _llm_analysis(shape: dict, gpu: str, tp: int, pp: int, dp: int) -> Any:
    analysis, config = _optional("llm_analysis.analysis"), _optional("llm_analysis.config")
    _optional("llm_analysis.logger").logger.setLevel(logging.ERROR)
    model = config.ModelConfig(
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
    return analysis.LLMAnalysis(
        model,
        config.get_gpu_config_by_name(LLM_ANALYSIS_GPU[gpu]),
        config.get_dtype_config_by_name("w16a16e16"),
        config.ParallelismConfig(tp_size=tp, pp_size=pp, dp_size=dp, sp_size=tp),
        flops_efficiency=MFU,
    )


def _llm_analysis_training(shape: dict, gpu: str, tp: int, pp: int, dp: int, zero_stage: int) -> dict:
    api = _optional("llm_analysis.analysis")
    analysis = _llm_analysis(shape, gpu, tp, pp, dp)
    return analysis.training(
        batch_size_per_gpu=MICRO_BATCH,
        gradient_accumulation_steps=max(GLOBAL_BATCH // (dp * MICRO_BATCH), 1),
        seq_len=SEQ_LEN,
        activation_recomputation=api.ActivationRecomputation.SELECTIVE,
        ds_zero=api.DSZeRO(zero_stage),
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
    ureg = _optional("mlsysim.core.units").ureg
    return _optional("mlsysim.models.types").TransformerWorkload(
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
    n = memory.shape_parameter_count(shape)
    hardware = getattr(_optional("mlsysim").Hardware.Cloud, gpu)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = (
            _optional("mlsysim.engine.solvers.training")
            .TrainingMemoryModel()
            .solve(
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
    fleet = getattr(_optional("mlsysim.systems.registry").Clusters, MLSYSIM_FLEET[gpu])
    assert fleet.total_accelerators == tp * pp * dp
    microbatches = GLOBAL_BATCH // (dp * MICRO_BATCH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = (
            _optional("mlsysim.engine.solvers.distributed")
            .DistributedModel()
            .solve(
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
        )
    return {
        "compute_s": float(r.node_profile.latency_compute.to("s").magnitude),
        "bubble_s": float(r.pipeline_bubble_latency.to("s").magnitude),
        "step_s": float(r.step_latency_total.to("s").magnitude),
    }
