"""The clusters and the workload the scaling-efficiency chapter runs the step-time model on.

The step time is the book's one model (:func:`analyses.models.performance.step_time`) at its one
calibration (:func:`analyses.scenario.calibration.coefficients`), with the scenario's data-parallel
overlap, as the planner runs it. A reference cluster of ``data/cluster_configs.csv`` contributes its
GPU, wire rates, measured NVLink share and node size (facts); the scenario contributes what is
assumed: the NIC's achievable share and latency per fabric (RDMA or kernel TCP), the overlap and the
global batch. Every function takes the scenario values ``s`` (floats or arrays of draws), so the checks
built on them are vectorised.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, units
from analyses.models import performance
from analyses.models import plan as pl
from analyses.scenario import calibration, cases, clusters
from analyses.scenario.generations import NEW_PRECISION, gpu

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


def coefficients(s: Mapping[str, Any]) -> performance.Coefficients:
    """The step-time model's calibrated coefficients with the scenario's data-parallel overlap (as
    :func:`analyses.models.plan_inputs.coefficients_for` plans with it)."""
    return replace(calibration.coefficients(), dp_overlap=s["dp_overlap"])


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


def hardware(row: Mapping[str, Any], precision: str, s: Mapping[str, Any]) -> dict[str, Any]:
    """The step-time model's hardware inputs for a cluster row (``data/cluster_configs.csv``: its GPU's
    datasheet and compute die, wire rates, measured NVLink share, node size) at ``precision``, with the
    scenario's NIC share and latency for its fabric."""
    share, latency = fabric(s, row["network"])
    sheet = gpu(row["gpu"])
    return {
        "die": clusters.die(row["gpu"]),
        "peak_flops": sheet.peak_flops(precision),
        "peak_flops_bf16": sheet.peak_flops("bf16"),
        "hbm_bytes_per_s": sheet.hbm_bytes_per_s,
        "nvlink_bytes_per_s": row["nvlink_gb_per_s_per_direction"] * units.GB * row["nvlink_achievable_share"],
        "nic_bytes_per_s": nic_bytes_per_s(s, row["nic_gbit_per_s_per_gpu"], row["network"]),
        "gpus_per_node": row["gpus_per_node"],
        "nvlink_domain_gpus": row["gpus_per_node"],
        "latency_s": latency * units.MICROSECOND,
    }


def cluster(s: Mapping[str, Any], name: str, precision: str | None = None) -> dict[str, Any]:
    """Hardware inputs of a reference cluster (:func:`hardware`) at ``precision`` (default: the
    documents' new precision where the GPU runs it densely, else BF16)."""
    row = cluster_row(name)
    return hardware(row, precision or precision_for(row["gpu"]), s)


def model(shape: pl.Shape, tp: int = 1, pp: int = 1) -> dict[str, Any]:
    """The step-time model's inputs for a dense ``shape`` at tensor size ``tp`` and pipeline size ``pp``:
    no interleaving, one sequence per micro-batch, selective recomputation, ZeRO-1 (the gradient
    exchange of plain data parallelism)."""
    return {
        "params_active": shape.params_active,
        "params_total": shape.n_params,
        "n_layers": shape.layers,
        "d_model": shape.hidden,
        "seq_len": shape.seq_len,
        "kv_ratio": shape.kv_heads / shape.heads,
        "n_experts": 0,
        "experts_active": 0,
        "tp": tp,
        "pp": pp,
        "vp": 1,
        "ep": 1,
        "micro_batch": 1,
        "recompute": "selective",
        "zero3": False,
    }


def workload() -> dict[str, Any]:
    """The model the checks train: the plan's 10B-parameter model as the planner's generic shape
    (:meth:`analyses.models.plan.Shape.from_params`, its default sequence length) in data parallelism."""
    return model(pl.Shape.from_params(plan().params))


def batch_sequences(s: Mapping[str, Any], run: Mapping[str, Any]) -> Any:
    """The scenario's global batch in sequences of the run's length."""
    return batch_tokens(s) / run["seq_len"]


def b300(s: Mapping[str, Any]) -> dict[str, Any]:
    """The documents' B300 cluster running the workload."""
    return cluster(s, B300_CLUSTER) | workload()


def ethernet(s: Mapping[str, Any]) -> dict[str, Any]:
    """The ordinary-Ethernet A100 cluster running the workload."""
    return cluster(s, ETHERNET_CLUSTER) | workload()


def nvlink_per_direction_gb(gpu_name: str) -> float:
    """A GPU's NVLink bandwidth per direction, GB/s (datasheet)."""
    return float(gpu(gpu_name).nvlink_bytes_per_s_per_direction) / units.GB


# --------------------------------------------------------------------------------------------
# Published scaling: the same job at several GPU counts
# --------------------------------------------------------------------------------------------

SERIES = (
    "source",
    "arch",
    "gpu",
    "precision",
    "params_total",
    "n_layers",
    "d_model",
    "seq_len",
    "model_tp",
    "model_pp",
    "model_cp",
    "model_ep",
    "model_vp",
    "model_micro_batch",
    "model_recompute",
    "sharding",
)
"""What a published series of one job at several GPU counts shares (with its run's name, GPU count
left out): the step-time rows of ``data/published_runs.csv`` that agree on all of it are one job."""


def _series_name(run: str, n_gpus: float) -> str:
    n = int(n_gpus)
    return re.sub(rf"\b({n}|{n:,})\b", "", run)


@functools.cache
def _published_scaling(data_dir: str) -> pd.DataFrame:
    rows = calibration.step_time_rows()
    predicted = calibration.predictions().set_index("id")["out_of_sample"]
    rows["series"] = [_series_name(r, n) for r, n in zip(rows["run"], rows["n_gpus"], strict=True)]
    keys = [*SERIES, "series"]
    rows[keys] = rows[keys].fillna("-")
    out = []
    for _, group in rows.groupby(keys, sort=False):
        if group["n_gpus"].nunique() < 2:
            continue
        group = group.sort_values("n_gpus", kind="stable")
        ref = group.iloc[0]
        for r in group.iloc[1:].to_dict("records"):
            if r["n_gpus"] == ref["n_gpus"]:
                continue
            per_gpu = (r["global_batch_seqs"] / r["n_gpus"], ref["global_batch_seqs"] / ref["n_gpus"])
            out.append(
                {
                    "id": r["id"],
                    "job": r["run"],
                    "reference": ref["id"],
                    "gpu": r["gpu"],
                    "GPUs": f"{int(ref['n_gpus']):,} -> {int(r['n_gpus']):,}",
                    "batch": "fixed"
                    if r["global_batch_seqs"] == ref["global_batch_seqs"]
                    else "grows"
                    if np.isclose(*per_gpu)
                    else "changes",
                    "published": r["tokens_per_s_per_gpu"] / ref["tokens_per_s_per_gpu"],
                    "predicted": predicted[r["id"]] / predicted[ref["id"]],
                    "in_sample": bool(r["role"] == "calibrate" and ref["role"] == "calibrate"),
                    "source": r["source"],
                }
            )
    frame = pd.DataFrame(out)
    frame["error"] = frame["predicted"] / frame["published"] - 1.0
    return frame


def published_scaling() -> pd.DataFrame:
    """Every published job measured at two or more GPU counts (:data:`SERIES`), each larger count against
    the smallest: the scaling efficiency published (tokens/s per GPU at the larger count over the
    smaller) and predicted by the step-time model at the published layouts, both sides out of sample
    (:func:`analyses.scenario.calibration.predictions`: validation rows at the full fit, calibration rows
    left out of it), with ``error`` = predicted / published − 1 and whether the batch is fixed, grows with
    the GPUs or changes otherwise."""
    return _published_scaling(str(data.DATA_DIR)).copy()


def published_retention() -> dict[str, float]:
    """The range of the published scaling efficiencies at a fixed batch (strong scaling) and of the larger
    GPU counts they were measured at."""
    rows = published_scaling()
    fixed = rows[rows["batch"] == "fixed"]
    sizes = fixed["GPUs"].str.split(" -> ").str[1].str.replace(",", "").astype(float)
    return {
        "ratio_min": float(fixed["published"].min()),
        "ratio_max": float(fixed["published"].max()),
        "gpus_min": float(sizes.min()),
        "gpus_max": float(sizes.max()),
    }
