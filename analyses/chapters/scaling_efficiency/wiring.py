"""The clusters and the workload the scaling-efficiency chapter runs the step-time model on.

A reference cluster of ``data/cluster_configs.csv`` contributes its GPU, wire rates and measured
NVLink share (facts); the scenario contributes what is assumed: the NIC's achievable share and
latency per fabric (RDMA or kernel TCP), the data-parallel overlap, the global batch and the MFU at
the training precision. Every function takes the scenario values ``s`` (floats or arrays of draws),
so the checks built on them are vectorised.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from analyses import data, units
from analyses.models import scaling
from analyses.scenario import cases, generations
from analyses.scenario.generations import NEW, NEW_PRECISION, OLD_MFU, gpu

B300_CLUSTER = "B300 + 800G IB"  # the reference cluster of the documents' B300 claims
ETHERNET_CLUSTER = "A100 + 100GbE"  # 'ordinary Ethernet': NCCL over kernel TCP between A100 servers


@functools.cache
def _cluster_rows(data_dir: str) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in data.table("cluster_configs").to_dict("records")}


def cluster_names() -> list[str]:
    """Names of the reference clusters, in table order."""
    return list(_cluster_rows(str(data.DATA_DIR)))


def cluster_row(name: str) -> dict[str, Any]:
    """One row of ``cluster_configs`` as a dict (KeyError names the clusters)."""
    rows = _cluster_rows(str(data.DATA_DIR))
    if name not in rows:
        raise KeyError(f"no cluster '{name}' in data/cluster_configs.csv; clusters: {', '.join(rows)}")
    return rows[name]


def plan() -> cases.DeploymentPlan:
    """The documents' deployment plan (:func:`analyses.scenario.cases.deployment_plan`)."""
    return cases.deployment_plan()


def kernel_efficiency(s: Mapping[str, Any], precision: str) -> Any:
    """The scenario's MFU at a training precision: published A100 BF16 runs for 16-bit training; for 8-
    and 4-bit the B300 FP8 MFU that the B300/A100 speed-up implies (from Blackwell FP8 runs)."""
    if precision in ("bf16", "fp16"):
        return s[OLD_MFU]
    return generations.mfu(s, NEW)


def fabric(s: Mapping[str, Any], network: str) -> tuple[Any, Any]:
    """(NIC achievable share, latency per hop in µs) of a network class, from the scenario."""
    if network == "ethernet-tcp":
        return s["tcp_nic_share"], s["tcp_latency_us"]
    return s["rdma_nic_share"], s["rdma_latency_us"]


def precision_for(gpu_name: str, wanted: str = NEW_PRECISION) -> str:
    """``wanted`` where the GPU runs it densely, else BF16."""
    return wanted if wanted in gpu(gpu_name).peak_flops_dense else "bf16"


def batch_tokens(s: Mapping[str, Any]) -> Any:
    """The scenario's global batch in tokens."""
    return s["batch_million_tokens"] * units.MB


def nic_bytes_per_s(s: Mapping[str, Any], gbit_per_gpu: Any, network: str = "infiniband") -> Any:
    """Achievable NIC bytes/s per GPU per direction for a wire rate in Gbit/s on a fabric."""
    return gbit_per_gpu * units.GB / units.BITS_PER_BYTE * fabric(s, network)[0]


def cluster(s: Mapping[str, Any], name: str, precision: str | None = None) -> dict[str, Any]:
    """Step-time arguments of a reference cluster: its wire rates and measured NVLink share, the
    scenario's NIC share and latency for its fabric, the MFU at its precision and the overlap."""
    row = cluster_row(name)
    prec = precision or precision_for(row["gpu"])
    share, latency = fabric(s, row["network"])
    peak = gpu(row["gpu"]).peak_flops(prec)
    return scaling.cluster_kwargs(row, peak, nic_share=share, latency_us=latency) | {
        "compute_efficiency": kernel_efficiency(s, prec),
        "overlap": s["dp_overlap"],
    }


def workload() -> dict[str, Any]:
    """The model the checks train: the plan's 10B-parameter model in pure data parallelism (with data
    parallelism alone the model size cancels from every efficiency except the latency term)."""
    return {"params": plan().params, "tp": 1, "pp": 1}


def b300(s: Mapping[str, Any]) -> dict[str, Any]:
    """The documents' B300 cluster running the workload."""
    return cluster(s, B300_CLUSTER) | workload()


def ethernet(s: Mapping[str, Any]) -> dict[str, Any]:
    """The ordinary-Ethernet A100 cluster running the workload."""
    return cluster(s, ETHERNET_CLUSTER) | workload()


def nvlink_share_for(gpu_name: str) -> float:
    """Measured NVLink share (nccl-tests busbw / wire) of the reference cluster whose NVLink per
    direction is nearest the GPU's."""
    rate = gpu(gpu_name).nvlink_bytes_per_s_per_direction / units.GB
    rows = list(_cluster_rows(str(data.DATA_DIR)).values())
    best = min(rows, key=lambda r: abs(r["nvlink_gb_per_s_per_direction"] - rate))
    return float(best["nvlink_achievable_share"])


def nvlink_per_direction_gb(gpu_name: str) -> float:
    """A GPU's NVLink bandwidth per direction, GB/s (datasheet)."""
    return float(gpu(gpu_name).nvlink_bytes_per_s_per_direction) / units.GB
