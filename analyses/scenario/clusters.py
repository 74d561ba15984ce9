"""The hardware the step-time model and the planner read from ``data/``: each GPU's compute die
(``variant_of`` in ``data/gpus.csv``: H800 and H200 counted as H100, GB200 as B200, GB300 as B300), its
datasheet, and its InfiniBand cluster in ``data/cluster_configs.csv`` (the fastest NIC listed for it)
with the cluster's measured NVLink and NIC shares and latency: facts of the clusters, not the
scenario's assumptions. Read once per data folder."""

from __future__ import annotations

import functools
from typing import Any

from analyses import data
from analyses.models import plan as pl
from analyses.units import BITS_PER_BYTE, GB, MICROSECOND


def die(gpu: str) -> str:
    """The compute die a GPU is counted as (``variant_of`` in ``data/gpus.csv``, else itself)."""
    return _dies(str(data.DATA_DIR))[gpu]


@functools.cache
def _dies(data_dir: str) -> dict[str, str]:
    frame = data.gpus()
    return {
        r["name"]: (r["variant_of"] if isinstance(r["variant_of"], str) and r["variant_of"] else r["name"])
        for r in frame.to_dict("records")
    }


@functools.cache
def _clusters(data_dir: str) -> dict[str, dict[str, Any]]:
    frame = data.table("cluster_configs")
    frame = frame[frame["network"] == "infiniband"].sort_values("nic_gbit_per_s_per_gpu", ascending=False)
    return {g: rows.iloc[0].to_dict() for g, rows in frame.groupby("gpu", sort=False)}


def cluster(gpu: str) -> dict[str, Any]:
    """The InfiniBand cluster configuration of ``gpu`` (the fastest NIC listed for it)."""
    rows = _clusters(str(data.DATA_DIR))
    if gpu not in rows:
        raise KeyError(f"no InfiniBand cluster configuration for {gpu} in data/cluster_configs.csv")
    return rows[gpu]


def has_cluster(gpu: str) -> bool:
    """Whether ``data/cluster_configs.csv`` has an InfiniBand cluster for ``gpu``."""
    return gpu in _clusters(str(data.DATA_DIR))


def hardware(
    gpu: str,
    precision: str,
    *,
    nic_gbit_per_s_per_gpu: float | None = None,
    nic_share: float | None = None,
    latency_us: float | None = None,
) -> dict[str, Any]:
    """The step-time model's hardware inputs for ``gpu`` at ``precision`` on its InfiniBand cluster.

    ``nic_gbit_per_s_per_gpu``, ``nic_share`` and ``latency_us`` replace the cluster's (a run's own
    network; the scenario's fabric assumptions in a plan).
    """
    sheet = data.gpu(gpu)
    c = cluster(gpu)
    nic = c["nic_gbit_per_s_per_gpu"] if nic_gbit_per_s_per_gpu is None else nic_gbit_per_s_per_gpu
    share = c["nic_achievable_share"] if nic_share is None else nic_share
    latency = c["latency_us"] if latency_us is None else latency_us
    return {
        "die": die(gpu),
        "peak_flops": sheet.peak_flops(precision),
        "peak_flops_bf16": sheet.peak_flops("bf16"),
        "hbm_bytes_per_s": sheet.hbm_bytes_per_s,
        "nvlink_bytes_per_s": c["nvlink_gb_per_s_per_direction"] * GB * c["nvlink_achievable_share"],
        "nic_bytes_per_s": nic * GB / BITS_PER_BYTE * share,
        "gpus_per_node": int(c["gpus_per_node"]),
        "nvlink_domain_gpus": int(c["gpus_per_node"]),
        "latency_s": latency * MICROSECOND,
    }


def plan_hardware(gpu: str) -> pl.Hardware:
    """The planner's facts of ``gpu``: its datasheet, compute die and InfiniBand cluster."""
    sheet = data.gpu(gpu)
    return pl.Hardware(
        gpu,
        dict(sheet.peak_flops_dense),
        sheet.hbm_usable_bytes,
        sheet.tdp_w,
        cluster(gpu),
        die=die(gpu),
        hbm_bytes_per_s=sheet.hbm_bytes_per_s,
    )


def clear_cache() -> None:
    """Forget what was read (after editing ``data/``)."""
    for fn in (_dies, _clusters):
        fn.cache_clear()
