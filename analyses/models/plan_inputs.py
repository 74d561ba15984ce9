"""The planner's request and layouts as the inputs of the models it chains: the step-time model's
(:func:`step_inputs`, with the coefficients of :func:`coefficients_for`) and the memory of the busiest
GPU (:func:`memory_bytes`), for every layout of a frame in one pass (numpy arrays over layouts).
:mod:`analyses.models.plan` evaluates them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from analyses.models import flops, memory, performance
from analyses.models.training_run import MEMORY_RECIPE, Request
from analyses.units import BITS_PER_BYTE, GB, MICROSECOND


def coefficients_for(req: Request, gpu: str, coef: performance.Coefficients) -> performance.Coefficients:
    """The step-time coefficients a plan of ``req`` on ``gpu`` uses: the calibrated ``coef`` with the
    scenario's data-parallel overlap, and the reader's GEMM ceiling for the GPU's die if set."""
    overlap = req.s["dp_overlap"]  # an array of one value per layout in evaluate_variants
    out = replace(coef, dp_overlap=float(overlap) if np.ndim(overlap) == 0 else np.asarray(overlap, float))
    if req.compute_efficiency:
        die = req.hardware[gpu].die or gpu
        out = replace(out, **{f"e_max_{die.lower()}": float(req.compute_efficiency)})
    return out


def recompute_modes(frame: pd.DataFrame) -> np.ndarray:
    """The recomputation mode of each layout of ``frame`` as a numpy string array (each distinct mode
    converted once: a frame holds a few modes over thousands of layouts)."""
    codes, modes = pd.factorize(frame["recompute"].to_numpy(), use_na_sentinel=False)
    return np.asarray(modes, dtype=object).astype(str)[codes]


def step_inputs(req: Request, gpu: str, frame: pd.DataFrame, recompute: np.ndarray | None = None) -> dict[str, Any]:
    """:func:`analyses.models.performance.step_time`'s inputs for the layouts of ``frame`` on ``gpu``:
    the shape, the layouts, the datasheet and the cluster with the scenario's NIC share and latency
    (``recompute``: :func:`recompute_modes` of ``frame`` if the caller has it)."""
    s, sc, hw = req.shape, req.s, req.hardware[gpu]
    c = hw.cluster
    return {
        "params_active": s.params_active,
        "params_total": s.n_params,
        "n_layers": s.layers,
        "d_model": s.hidden,
        "seq_len": s.seq_len,
        "kv_ratio": s.kv_heads / s.heads,
        "attention_width": s.attention_width,
        "attention_span": flops.attention_span(s.seq_len, s.window),
        "moe_layers": s.moe_layers,
        "stack_efficiency": req.stack_efficiency,
        "flash": req.attention_kernel == "flash",
        "gather_bytes_per_s": req.gather_bytes_per_s,
        "n_experts": s.n_experts,
        "experts_active": s.experts_active,
        "n_gpus": frame["n_gpus"].to_numpy(float),
        "tp": frame["tp"].to_numpy(float),
        "pp": frame["pp"].to_numpy(float),
        "vp": frame["virtual_stages"].to_numpy(float),
        "cp": frame["cp"].to_numpy(float),
        "ep": frame["ep"].to_numpy(float),
        "micro_batch": frame["micro_batch"].to_numpy(float),
        "global_batch": req.global_batch_tokens / s.seq_len,
        "recompute": recompute_modes(frame) if recompute is None else recompute,
        "zero3": frame["zero_stage"].to_numpy() == 3,
        "die": hw.die or gpu,
        "peak_flops": hw.peak_flops(req.precision),
        "peak_flops_bf16": hw.peak_flops("bf16"),
        "hbm_bytes_per_s": hw.hbm_bytes_per_s,
        "nvlink_bytes_per_s": c["nvlink_gb_per_s_per_direction"] * GB * c["nvlink_achievable_share"],
        "nic_bytes_per_s": c["nic_gbit_per_s_per_gpu"] * GB / BITS_PER_BYTE * sc["rdma_nic_share"],
        "gpus_per_node": c["gpus_per_node"],
        "nvlink_domain_gpus": c["gpus_per_node"],
        "latency_s": sc["rdma_latency_us"] * MICROSECOND,
    }


def memory_bytes(req: Request, frame: pd.DataFrame, recompute: np.ndarray | None = None) -> np.ndarray:
    """Memory of the busiest GPU of each layout (:func:`analyses.models.memory.total_bytes_per_gpu`;
    ``recompute``: :func:`recompute_modes` of ``frame`` if the caller has it)."""
    s, sc = req.shape, req.s
    tp, pp, dp = (frame[c].to_numpy(float) for c in ("tp", "pp", "dp"))
    cp, ep = frame["cp"].to_numpy(float), frame["ep"].to_numpy(float)
    z, mb = frame["zero_stage"].to_numpy(), frame["micro_batch"].to_numpy()
    rc = recompute_modes(frame) if recompute is None else recompute
    # TODO(memory model): arguments for a mixture of experts and for context parallelism. Until the
    # memory model takes them, a GPU is charged its dense parameters plus its 1/ep share of the routed
    # experts' (Megatron shards experts over the expert-parallel group), and the activations of its
    # seq_len/cp tokens; ZeRO shards over the dp·cp ranks that hold the same weights.
    experts = performance.routed_expert_params(s.n_params, s.params_active, s.n_experts, s.experts_active)
    params = (s.n_params - experts) + experts / ep
    mem = np.zeros(len(frame))
    for mode in dict.fromkeys(rc.tolist()):  # the searched modes, or a pinned one
        m = rc == mode
        if m.any():
            mem[m] = memory.total_bytes_per_gpu(
                params[m],
                s.layers,
                s.seq_len / cp[m],
                mb[m],
                s.hidden,
                s.heads,
                precision=MEMORY_RECIPE[req.precision],
                zero_stage=z[m],
                dp=dp[m] * cp[m],
                tp=tp[m],
                pp=pp[m],
                sequence_parallel=True,
                recompute=mode,
                flash=req.attention_kernel == "flash",
                overhead_bytes=sc["framework_memory_gb"] * GB,
                kv_heads=s.kv_heads,
                vocab=s.vocab,
                tied_embeddings=False,
                **({"ffn_hidden": s.ffn_hidden} if s.ffn_hidden else {}),
            )["total"]
    return mem
