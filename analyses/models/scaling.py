"""Step time of data-, tensor- and pipeline-parallel training, and the scaling efficiency it implies.

One training step on ``n`` GPUs = compute + pipeline bubble + tensor-parallel all-reduces +
pipeline point-to-point sends + the exposed part of the gradient all-reduce. All inputs broadcast
as numpy arrays, so a sweep over 100,000 configurations is one call.

Conventions (stated once):

* Bandwidths are **bytes/s per direction**, already multiplied by the achievable share a
  measured ``nccl-tests`` run reaches (busbw / wire rate). ``nvlink_bytes_per_s`` is the per-GPU
  NVLink bandwidth in one direction; ``nic_bytes_per_s`` the scale-out NIC per GPU.
* All-reduce time follows NCCL's bus-bandwidth convention (nccl-tests ``doc/PERFORMANCE.md``):
  ``t = S/B · 2(n−1)/n``; reduce-scatter and all-gather are each ``S/B · (n−1)/n``.
* Gradients are exchanged once per step (gradient accumulation over microbatches), in
  ``grad_bytes_per_param`` (2 for BF16 gradients).
* Tensor parallelism follows Megatron (Shoeybi et al. 2019, fig. 4): 4 all-reduces of the layer
  activations per layer and microbatch (2 forward, 2 backward), inside the NVLink domain when
  ``tp <= nvlink_domain_gpus``, else over the NIC.
* Pipeline bubble: ``(p−1)/(v·m)`` of the ideal time for ``m`` microbatches and ``v`` virtual
  stages per GPU (Narayanan et al. 2021, sec. 2.2.1-2.2.2); as a share of the total step it is
  ``(p−1)/(v·m + p−1)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from analyses.units import BITS_PER_BYTE, GB, MICROSECOND, TERA


def allreduce_time_s(size_bytes: ArrayLike, bus_bytes_per_s: ArrayLike, n: ArrayLike) -> np.ndarray:
    """All-reduce of ``size_bytes`` over ``n`` ranks at bus bandwidth B: ``S/B · 2(n−1)/n`` s."""
    n = np.asarray(n, float)
    return np.asarray(size_bytes, float) / np.asarray(bus_bytes_per_s, float) * 2.0 * (n - 1.0) / np.maximum(n, 1.0)


def hierarchical_allreduce_time_s(
    size_bytes: ArrayLike,
    local_ranks: ArrayLike,
    nodes: ArrayLike,
    nvlink_bytes_per_s: ArrayLike,
    nic_bytes_per_s: ArrayLike,
) -> np.ndarray:
    """Two-level all-reduce: reduce-scatter + all-gather over NVLink among ``local_ranks`` GPUs of a
    node, and an all-reduce of each GPU's ``S/local_ranks`` shard across ``nodes`` on its own NIC.

    ``t = S/B_nvl · 2(k−1)/k + (S/k)/B_nic · 2(M−1)/M`` (seconds). The inter-node term equals a
    ring whose bus bandwidth is ``k · B_nic``, the node's aggregate NIC bandwidth, which is what
    multi-node nccl-tests report.
    """
    k = np.maximum(np.asarray(local_ranks, float), 1.0)
    size = np.asarray(size_bytes, float)
    return allreduce_time_s(size, nvlink_bytes_per_s, k) + allreduce_time_s(size / k, nic_bytes_per_s, nodes)


ASPECT = 128.0  # d_model / layers of the default shape (GPT-3's 175B is 12288 / 96 = 128)


def default_shape(params: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Layers and width of a dense transformer of ``params`` when no shape is given.

    ``N = 12·L·d²`` (attention and 4h MLP per layer, embeddings left out) with ``d = 128·L``, so
    ``L = cbrt(N / (12·128²))`` (not rounded).
    """
    layers = np.cbrt(np.asarray(params, float) / (12.0 * ASPECT**2))
    return layers, ASPECT * layers


@dataclass(frozen=True)
class StepTime:
    """Components of one training step, seconds per step (arrays broadcast over the inputs)."""

    compute_s: np.ndarray
    bubble_s: np.ndarray
    tensor_parallel_s: np.ndarray
    pipeline_p2p_s: np.ndarray
    data_parallel_s: np.ndarray
    data_parallel_exposed_s: np.ndarray
    step_s: np.ndarray

    @property
    def efficiency(self) -> np.ndarray:
        """Share of the step spent in useful compute: ``compute / step`` (1 = no parallel overhead)."""
        return self.compute_s / self.step_s

    @property
    def communication_share(self) -> np.ndarray:
        """Share of the step in exposed communication (TP + PP sends + exposed DP)."""
        return (self.tensor_parallel_s + self.pipeline_p2p_s + self.data_parallel_exposed_s) / self.step_s


def step_time(
    *,
    params: ArrayLike,
    tokens_per_step: ArrayLike,
    n_gpus: ArrayLike,
    peak_flops: ArrayLike,
    compute_efficiency: ArrayLike,
    nvlink_bytes_per_s: ArrayLike,
    nic_bytes_per_s: ArrayLike,
    gpus_per_node: ArrayLike = 8,
    nvlink_domain_gpus: ArrayLike = 8,
    tp: ArrayLike = 1,
    pp: ArrayLike = 1,
    virtual_stages: ArrayLike = 1,
    microbatch_tokens: ArrayLike = 8192,
    n_layers: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
    overlap: ArrayLike = 0.0,
    grad_bytes_per_param: ArrayLike = 2.0,
    activation_bytes: ArrayLike = 2.0,
    latency_s: ArrayLike = 5e-6,
    hierarchical: bool = True,
    dp_volume: ArrayLike = 1.0,
) -> StepTime:
    """Time of one training step of a dense transformer, seconds (see the module docstring).

    Parameters
    ----------
    params
        Parameters N.
    tokens_per_step
        Global batch in tokens (fixed for strong scaling; proportional to ``n_gpus`` for weak).
    n_gpus
        GPUs; data-parallel size is ``n_gpus / (tp·pp)``.
    peak_flops
        Dense peak FLOP/s per GPU at the training precision.
    compute_efficiency
        Share of the peak the GPU's kernels reach with no parallel overhead (single-GPU MFU).
    nvlink_bytes_per_s, nic_bytes_per_s
        Achievable bandwidth per GPU per direction, bytes/s (wire rate × nccl-tests busbw share).
    gpus_per_node, nvlink_domain_gpus
        GPUs per server and per NVLink domain.
    tp, pp, virtual_stages
        Tensor- and pipeline-parallel sizes; interleaved stages per GPU.
    microbatch_tokens
        Tokens per microbatch (sequence length × microbatch size).
    n_layers, d_model
        Transformer shape; when omitted, ``d_model = 128·L`` and ``N = 12·L·d_model²`` give them.
    overlap
        Share (0-1) of the gradient all-reduce that runs concurrently with compute; it can never
        hide more than the compute time.
    grad_bytes_per_param, activation_bytes
        Bytes per gradient element and per activation element.
    latency_s
        Per-hop latency of a collective; a tree/hierarchical all-reduce pays ``2·log2(n)`` hops,
        a flat ring ``2(n−1)``.
    hierarchical
        Two-level all-reduce (True) or one flat ring over all data-parallel ranks (False).
    dp_volume
        Data-parallel traffic relative to one gradient all-reduce: 1 for plain data parallelism
        and ZeRO stages 1-2, 1.5 for ZeRO stage 3, which all-gathers the parameters in the
        forward and backward passes and reduce-scatters the gradients (Rajbhandari et al. 2020,
        Sec. 7.2.2).
    """
    N = np.asarray(params, float)
    n = np.asarray(n_gpus, float)
    tp_, pp_ = np.asarray(tp, float), np.asarray(pp, float)
    if n_layers is None or d_model is None:
        layers, width = default_shape(N)
    else:
        layers, width = np.asarray(n_layers, float), np.asarray(d_model, float)
    node = np.asarray(gpus_per_node, float)
    domain = np.asarray(nvlink_domain_gpus, float)
    b_nvl = np.asarray(nvlink_bytes_per_s, float)
    b_nic = np.asarray(nic_bytes_per_s, float)

    dp = np.maximum(n / (tp_ * pp_), 1.0)
    tokens_per_replica = np.asarray(tokens_per_step, float) / dp
    microbatches = np.maximum(tokens_per_replica / np.asarray(microbatch_tokens, float), 1.0)

    compute = (
        6.0
        * N
        * np.asarray(tokens_per_step, float)
        / (n * np.asarray(peak_flops, float) * np.asarray(compute_efficiency, float))
    )
    bubble = compute * (pp_ - 1.0) / (np.asarray(virtual_stages, float) * microbatches)

    # Tensor parallel: 4 all-reduces of (tokens × width) activations per layer, per microbatch.
    tp_fabric = np.where(tp_ <= domain, b_nvl, b_nic)
    tp_bytes = 4.0 * (layers / pp_) * tokens_per_replica * width * np.asarray(activation_bytes, float)
    tensor_parallel = np.where(tp_ > 1, allreduce_time_s(tp_bytes, tp_fabric, tp_), 0.0)

    # Pipeline: activations of each microbatch cross each stage boundary forward and backward;
    # Megatron's scatter/gather splits them over the tp ranks' NICs.
    p2p_bytes = (
        2.0 * tokens_per_replica * width * np.asarray(activation_bytes, float) * np.asarray(virtual_stages, float) / tp_
    )
    pp_fabric = np.where(tp_ * pp_ <= node, b_nvl, b_nic)
    pipeline_p2p = np.where(pp_ > 1, p2p_bytes / pp_fabric, 0.0)

    # Data parallel: gradients of this GPU's N/(tp·pp) parameters across dp ranks.
    grad_bytes = np.asarray(grad_bytes_per_param, float) * np.asarray(dp_volume, float) * N / (tp_ * pp_)
    local = np.clip(np.floor(node / (tp_ * pp_)), 1.0, None)
    local = np.minimum(local, dp)
    nodes = np.maximum(dp / local, 1.0)
    if hierarchical:
        dp_time = hierarchical_allreduce_time_s(grad_bytes, local, nodes, b_nvl, b_nic)
        hops = 2.0 * np.log2(np.maximum(dp, 1.0))
    else:
        bus = np.where(nodes > 1, np.minimum(b_nvl, local * b_nic), b_nvl)
        dp_time = allreduce_time_s(grad_bytes, bus, dp)
        hops = 2.0 * (dp - 1.0)
    dp_time = np.where(dp > 1, dp_time + hops * np.asarray(latency_s, float), 0.0)
    ov = np.clip(np.asarray(overlap, float), 0.0, 1.0)
    exposed = np.maximum(dp_time * (1.0 - ov), dp_time - compute)

    step = compute + bubble + tensor_parallel + pipeline_p2p + exposed
    return StepTime(*np.broadcast_arrays(compute, bubble, tensor_parallel, pipeline_p2p, dp_time, exposed, step))


def achieved_flops_per_gpu(st: StepTime, peak_flops: ArrayLike, compute_efficiency: ArrayLike) -> np.ndarray:
    """Model FLOP/s per GPU the step achieves: ``peak · compute_efficiency · compute/step``."""
    return np.asarray(peak_flops, float) * np.asarray(compute_efficiency, float) * st.efficiency


def scaling_curve(
    n_gpus: ArrayLike, reference_gpus: float, *, weak: bool, tokens_per_step: float, **kwargs
) -> dict[str, np.ndarray]:
    """Speed-up and scaling efficiency from ``reference_gpus`` to each of ``n_gpus``.

    Strong scaling (``weak=False``) keeps the global batch ``tokens_per_step``; weak scaling
    grows it in proportion to the GPU count (``tokens_per_step`` is then the batch at
    ``reference_gpus``). Efficiency = (throughput(n)/n) / (throughput(ref)/ref).

    Returns a dict of arrays: ``n_gpus``, ``speedup``, ``efficiency``, ``step_efficiency``,
    ``communication_share``.
    """
    n = np.asarray(n_gpus, float)
    batch = tokens_per_step * (n / reference_gpus if weak else 1.0)
    st = step_time(n_gpus=n, tokens_per_step=batch, **kwargs)
    ref = step_time(n_gpus=np.asarray(reference_gpus, float), tokens_per_step=tokens_per_step, **kwargs)
    rate = batch / st.step_s
    rate_ref = tokens_per_step / ref.step_s
    speedup = rate / rate_ref
    return {
        "n_gpus": n,
        "speedup": speedup,
        "efficiency": speedup / (n / reference_gpus),
        "step_efficiency": st.efficiency,
        "communication_share": st.communication_share,
    }


def solve_nic_bandwidth_for_speedup(
    target_speedup: float, n_before: float, n_after: float, *, weak: bool, tokens_per_step: float, **kwargs
) -> float:
    """NIC bytes/s per GPU (per direction, achievable) at which ``n_before → n_after`` gives ``target_speedup``.

    Solved with :func:`scipy.optimize.brentq` on 1e6-1e12 bytes/s; raises ValueError when no
    bandwidth in that range gives the target (the speed-up is then limited by something else).
    """
    from scipy.optimize import brentq  # imported when first needed

    kwargs = dict(kwargs)
    kwargs.pop("nic_bytes_per_s", None)

    def gap(log_b: float) -> float:
        curve = scaling_curve(
            n_after, n_before, weak=weak, tokens_per_step=tokens_per_step, nic_bytes_per_s=10.0**log_b, **kwargs
        )
        return float(curve["speedup"]) - target_speedup

    return 10.0 ** brentq(gap, 6.0, 12.0, xtol=1e-6)


def solve_compute_efficiency(measured_flops_per_gpu: float, peak_flops: float, **kwargs) -> float:
    """Single-GPU compute efficiency that makes the model reproduce a measured per-GPU FLOP/s (brentq)."""
    from scipy.optimize import brentq  # imported when first needed

    def gap(eff: float) -> float:
        st = step_time(peak_flops=peak_flops, compute_efficiency=eff, **kwargs)
        return float(achieved_flops_per_gpu(st, peak_flops, eff)) - measured_flops_per_gpu

    return brentq(gap, 0.01, 1.0, xtol=1e-9)


def communication_share_for_speedup(target_speedup: float, gpu_ratio: float) -> float:
    """Closed form: the share c of the larger cluster's step that is communication for a speed-up S.

    Strong scaling with fixed global batch: compute per GPU falls by the GPU ratio r, so with a
    communication time that does not shrink, ``S = r·(1−c)`` at the larger size and
    ``c = 1 − S/r``. For 64 → 256 GPUs and 2.1× this gives c = 0.475.
    """
    return 1.0 - target_speedup / gpu_ratio


def cluster_kwargs(
    cluster: Mapping[str, Any],
    peak_flops: ArrayLike,
    nvlink_domain_gpus: float | None = None,
    *,
    nic_share: ArrayLike | None = None,
    latency_us: ArrayLike | None = None,
) -> dict:
    """Step-time keyword arguments for one row of ``cluster_configs`` (achievable bytes/s per direction).

    ``nic_share`` and ``latency_us`` replace the row's measured NIC share and per-hop latency (a
    scenario's assumptions for the fabric, arrays allowed).
    """
    share = cluster["nic_achievable_share"] if nic_share is None else nic_share
    latency = cluster["latency_us"] if latency_us is None else latency_us
    return {
        "peak_flops": peak_flops,
        "nvlink_bytes_per_s": cluster["nvlink_gb_per_s_per_direction"] * GB * cluster["nvlink_achievable_share"],
        "nic_bytes_per_s": cluster["nic_gbit_per_s_per_gpu"] * GB / BITS_PER_BYTE * np.asarray(share, float),
        "gpus_per_node": cluster["gpus_per_node"],
        "nvlink_domain_gpus": nvlink_domain_gpus if nvlink_domain_gpus is not None else cluster["gpus_per_node"],
        "latency_s": np.asarray(latency, float) * MICROSECOND,
    }


def efficiency(
    n_gpus: ArrayLike, reference_gpus: float, *, weak: bool, tokens_per_step: ArrayLike, **kwargs
) -> np.ndarray:
    """Scaling efficiency from ``reference_gpus`` to ``n_gpus``: :func:`scaling_curve`'s ``efficiency``."""
    return scaling_curve(n_gpus, reference_gpus, weak=weak, tokens_per_step=tokens_per_step, **kwargs)["efficiency"]


def network_share_kept(nic_bytes_per_s: ArrayLike, **kwargs) -> np.ndarray:
    """Throughput at ``nic_bytes_per_s`` over the throughput with an unlimited network, 0-1.

    ``step(unlimited) / step(nic)``: the share of the step rate the scale-out network leaves (1 when
    the network is never the bottleneck). The unlimited network keeps the collective latency and
    NVLink, so only bandwidth is compared. ``kwargs`` are :func:`step_time`'s other arguments.
    """
    limited = step_time(nic_bytes_per_s=nic_bytes_per_s, **kwargs).step_s
    unlimited = step_time(nic_bytes_per_s=np.inf, **kwargs).step_s
    return unlimited / limited


def published_retention(benchmarks: pd.DataFrame) -> dict[str, float]:
    """Per-GPU throughput kept by published runs when the same job moved to more GPUs.

    Within each benchmark of ``scaling_benchmarks`` with model TFLOP/s per GPU at two or more GPU
    counts: the value at the largest count over the value at the smallest. Returns the range of
    those ratios (``ratio_min``, ``ratio_max``) and of the larger GPU counts (``gpus_min``, ``gpus_max``).
    """
    tf = benchmarks[benchmarks["metric"] == "model_tflops_per_gpu"]
    ratios, sizes = [], []
    for _, rows in tf.groupby("benchmark"):
        if len(rows) < 2:
            continue
        rows = rows.sort_values("n_gpus")
        ratios.append(float(rows["value"].iloc[-1] / rows["value"].iloc[0]))
        sizes.append(float(rows["n_gpus"].iloc[-1]))
    if not ratios:
        raise ValueError("no benchmark has model TFLOP/s per GPU at two GPU counts")
    return {"ratio_min": min(ratios), "ratio_max": max(ratios), "gpus_min": min(sizes), "gpus_max": max(sizes)}


def benchmark_kwargs(row: dict) -> dict:
    """Step-time keyword arguments for one row of ``scaling_benchmarks`` (layout and batch)."""
    return {
        "params": row["params"],
        "n_layers": row["n_layers"],
        "d_model": row["d_model"],
        "n_gpus": row["n_gpus"],
        "tp": row["tp"],
        "pp": row["pp"],
        "virtual_stages": row["virtual_stages"],
        "tokens_per_step": row["global_batch_seqs"] * row["seq_len"],
        "microbatch_tokens": row["microbatch_seqs"] * row["seq_len"],
    }


def model_vs_measurement(
    benchmarks: pd.DataFrame,
    clusters: pd.DataFrame,
    peak_flops: Callable[[str, str], float],
    overlap: float = 0.5,
    default_compute_efficiency: float = 0.5,
) -> pd.DataFrame:
    """Calibrate the compute efficiency on ``role == calibrate`` rows, then predict every row.

    Per-GPU throughput rows compare model TFLOP/s per GPU; time-to-train rows compare the scaling
    efficiency from their ``pair`` (reference) row: ``(T_ref·n_ref)/(T·n)`` measured against the
    model's ``(rate/n)/(rate_ref/n_ref)``. Groups without a calibrate row use
    ``default_compute_efficiency`` (it cancels in an efficiency ratio to first order).

    Returns one row per benchmark with ``measured``, ``predicted``, ``error`` (predicted/measured − 1),
    ``quantity`` and ``compute_efficiency``.
    """
    by_name = {r["name"]: r for r in clusters.to_dict("records")}
    rows = benchmarks.to_dict("records")
    by_id = {r["id"]: r for r in rows}

    def kwargs(r: dict) -> dict:
        c = by_name[r["cluster"]]
        return benchmark_kwargs(r) | cluster_kwargs(c, peak_flops(r["gpu"], r["precision"])) | {"overlap": overlap}

    eff: dict[str, float] = {}
    for r in rows:
        if r["role"] == "calibrate":
            eff[r["calibration_group"]] = solve_compute_efficiency(r["value"] * TERA, **kwargs(r))

    out = []
    for r in rows:
        e = eff.get(r["calibration_group"], default_compute_efficiency)
        kw = kwargs(r)
        if r["metric"] == "model_tflops_per_gpu":
            st = step_time(compute_efficiency=e, **kw)
            predicted = float(achieved_flops_per_gpu(st, kw["peak_flops"], e)) / TERA
            measured, quantity = r["value"], "model TFLOP/s per GPU"
        elif r["role"] == "validate":
            ref = by_id[r["pair"]]
            kref = kwargs(ref)
            st, st_ref = step_time(compute_efficiency=e, **kw), step_time(compute_efficiency=e, **kref)
            rate = kw["tokens_per_step"] / float(st.step_s) / kw["n_gpus"]
            rate_ref = kref["tokens_per_step"] / float(st_ref.step_s) / kref["n_gpus"]
            predicted = rate / rate_ref
            measured = (ref["value"] * ref["n_gpus"]) / (r["value"] * r["n_gpus"])
            quantity = f"scaling efficiency from {ref['n_gpus']:,} GPUs"
        else:
            continue
        out.append(
            {
                "id": r["id"],
                "benchmark": r["benchmark"],
                "gpu": r["gpu"],
                "precision": r["precision"],
                "n_gpus": r["n_gpus"],
                "role": r["role"],
                "quantity": quantity,
                "measured": measured,
                "predicted": predicted,
                "error": predicted / measured - 1.0,
                "compute_efficiency": e,
                "source": r["source"],
            }
        )
    return pd.DataFrame(out)
