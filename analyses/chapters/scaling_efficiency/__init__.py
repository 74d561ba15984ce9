"""Chapter ``scaling-efficiency``: how well training scales across GPUs and networks.

Checks document 000's interconnect and scaling claims (parts 2.2, 2.3, 3, 5 and 6): NVLink-C2C and
NVSwitch bandwidths, the "+50%" of the comparison table, "64 -> 256 GPUs gave 2.1x", microsecond
latency, ">90% at a thousand GPUs", near-linear scaling, the >= 200 Gbps network, the 4-8-node plan
and the 4-8-GPU proof of concept. :func:`compute` runs the book's one step-time model
(:func:`analyses.models.performance.step_time` at its one calibration, through
:mod:`analyses.models.scaling_efficiency`), the inverse questions, the validation against published
jobs measured at several GPU counts and the checks once; :mod:`.figures` and :mod:`.text` only read
its :class:`Result`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario, units
from analyses.chapters import ledger
from analyses.chapters.scaling_efficiency import checks, wiring
from analyses.models import plan as pl
from analyses.models import scaling_efficiency as se
from analyses.scenario import clusters, planning
from analyses.scenario.generations import NEW, OLD
from analyses.scenario.params import ChapterSpec, Config, Param, Rule, precision_rule
from analyses.verdicts.sweeps import Slider

SLUG = "scaling-efficiency"
ETHERNET = "000-2.3-64-to-256-gpus-2p1x"
THOUSAND = "000-2.3-nccl-90pct-linear-1000-gpus"
TABLE = "000-3-table-bandwidth"
YOUR_CLUSTER = "your cluster (parameters)"
CURVE_POINTS = 40  # GPU counts on each efficiency curve

# The slider figures: an assumption and the claims whose checks read it.
SLIDERS = (
    ("batch_million_tokens", ("000-5-network-200gbps", "000-6-poc-4-8-gpus", ETHERNET, THOUSAND)),
    ("rdma_nic_share", ("000-5-network-200gbps", "000-6-poc-4-8-gpus")),
)


def _tp_problem(cfg: Config) -> str | None:
    domain = data.gpu(cfg["gpu"]).nvlink_domain_gpus
    if cfg["tp"] > domain:
        return f"tensor parallelism stays within one NVLink domain: tp at most {domain} on {cfg['gpu']}"
    return None


def _replica_problem(cfg: Config) -> str | None:
    if cfg["tp"] * cfg["pp"] > cfg["gpus_min"]:
        return f"the reference cluster must hold one model replica: gpus_min >= tp x pp = {cfg['tp'] * cfg['pp']}"
    return None


SPEC = ChapterSpec(
    slug=SLUG,
    title="More GPUs, how much faster? Scaling efficiency",
    params=(
        Param("gpu", "str", "B300", "-", "GPU of your cluster", choices=planning.supported_gpus),
        Param("precision", "str", "fp8", "-", "training precision", choices=("bf16", "fp16", "fp8", "fp4")),
        Param("gpus_min", "int", 8, "GPUs", "smallest cluster of the curve (the reference)", 1, 16384),
        Param("gpus_max", "int", 16384, "GPUs", "largest cluster of the curve", 8, 131072),
        Param(
            "nic_gbit_per_s",
            "float",
            800.0,
            "Gbit/s per GPU",
            "your scale-out RDMA network per GPU (wire rate)",
            1,
            3200,
        ),
        Param("model_params", "float", 13e9, "parameters", "model size", 1e8, 2e12),
        Param("seq_len", "int", 8192, "tokens", "sequence length (one sequence per micro-batch)", 128, 131072),
        Param("tp", "int", 1, "GPUs", "tensor-parallel size", 1, 72),
        Param("pp", "int", 1, "GPUs", "pipeline-parallel size", 1, 128),
        Param(
            "weak_scaling", "bool", False, "-", "grow the batch with the GPU count (weak) instead of fixing it (strong)"
        ),
        scenario.param("batch_million_tokens"),
        scenario.param("rdma_nic_share"),
        scenario.param("rdma_latency_us"),
        scenario.param("dp_overlap"),
        scenario.param("tokens_per_param"),
    ),
    rules=(
        precision_rule("gpu", "precision"),
        Rule(
            ("gpus_min", "gpus_max"),
            lambda c: None if c["gpus_max"] >= c["gpus_min"] else "gpus_max must be at least gpus_min",
        ),
        Rule(("gpu", "tp"), lambda c: _tp_problem(c)),
        Rule(("tp", "pp", "gpus_min"), lambda c: _replica_problem(c)),
    ),
)


# --------------------------------------------------------------------------------------------
# Your cluster and the reference clusters
# --------------------------------------------------------------------------------------------


def model(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Step-time inputs of the reader's model: the planner's generic shape of ``model_params`` at
    ``seq_len`` (:meth:`analyses.models.plan.Shape.from_params`) at tensor size ``tp`` and pipeline size ``pp``."""
    return wiring.model(pl.Shape.from_params(cfg["model_params"], cfg["seq_len"]), cfg["tp"], cfg["pp"])


def your_cluster(cfg: Mapping[str, Any], s: Mapping[str, Any]) -> dict[str, Any]:
    """Hardware inputs of the reader's cluster: its GPU's InfiniBand cluster (``data/cluster_configs.csv``:
    NVLink, node size) at the parameters' precision and NIC rate, the scenario's RDMA share and latency."""
    row = clusters.cluster(cfg["gpu"]) | {"nic_gbit_per_s_per_gpu": cfg["nic_gbit_per_s"]}
    return wiring.hardware(row, cfg["precision"], s)


def gpu_counts(cfg: Mapping[str, Any]) -> np.ndarray:
    """GPU counts of the curves: geometric from ``gpus_min`` to ``gpus_max``."""
    lo, hi = cfg["gpus_min"], max(cfg["gpus_max"], cfg["gpus_min"])
    return np.unique(np.round(np.geomspace(lo, hi, CURVE_POINTS)).astype(int))


def curves(cfg: Config, s: Mapping[str, Any]) -> pd.DataFrame:
    """Scaling-efficiency curves (strong or weak per ``weak_scaling``) for every reference cluster and yours."""
    n, run, coef = gpu_counts(cfg), model(cfg), wiring.coefficients(s)
    batch = wiring.batch_sequences(s, run)
    sets = [
        (name, wiring.cluster(s, name, wiring.precision_for(wiring.cluster_row(name)["gpu"], cfg["precision"])))
        for name in wiring.cluster_names()
    ]
    sets.append((YOUR_CLUSTER, your_cluster(cfg, s)))
    frames = []
    for name, hw in sets:
        eff = se.efficiency(coef, n, cfg["gpus_min"], weak=cfg["weak_scaling"], global_batch=batch, **run, **hw)
        frames.append(
            pd.DataFrame({"cluster": name, "GPUs": n, "efficiency": eff, "speed-up": eff * n / cfg["gpus_min"]})
        )
    return pd.concat(frames, ignore_index=True)


def bandwidth_for(cfg: Config, s: Mapping[str, Any], efficiency: float, n_gpus: float) -> float:
    """NIC wire rate per GPU (Gbit/s) that keeps ``efficiency`` from ``gpus_min`` to ``n_gpus`` on your
    cluster (NaN when no bandwidth does: compute per GPU is then too short)."""
    run = model(cfg) | your_cluster(cfg, s)
    try:
        b = se.nic_for_speedup(
            wiring.coefficients(s),
            efficiency * n_gpus / cfg["gpus_min"],
            cfg["gpus_min"],
            n_gpus,
            weak=cfg["weak_scaling"],
            global_batch=wiring.batch_sequences(s, run),
            **run,
        )
    except ValueError:
        return float("nan")
    return b * units.BITS_PER_BYTE / units.GB / s["rdma_nic_share"]


@dataclass(frozen=True)
class Ethernet:
    """The 64 -> 256-GPU Ethernet anecdote: the model's speed-up and what reproduces the stated one."""

    cluster: str
    gpus_before: float
    gpus_after: float
    stated_x: float
    ideal_x: float
    model_x: float
    gbit_per_gpu: float  # Ethernet wire rate per GPU that reproduces the stated speed-up
    gbit_per_server: float
    lost: float  # share of the ideal speed-up lost (1 - stated / ideal)


def ethernet(s: Mapping[str, Any]) -> Ethernet:
    """The Ethernet anecdote at the scenario ``s`` (the check's own functions)."""
    claim = data.claim(ETHERNET)
    n0, n1 = claim.value("gpus_before"), claim.value("gpus_after")
    gbit = checks.ethernet_gbit_for(claim, s)
    return Ethernet(
        cluster=wiring.ETHERNET_CLUSTER,
        gpus_before=n0,
        gpus_after=n1,
        stated_x=claim.value("speedup_actual_x"),
        ideal_x=claim.value("speedup_ideal_x"),
        model_x=float(checks.ethernet_speedup(claim, s)),
        gbit_per_gpu=gbit,
        gbit_per_server=gbit * wiring.cluster_row(wiring.ETHERNET_CLUSTER)["gpus_per_node"],
        lost=float(se.communication_share_for_speedup(claim.value("speedup_actual_x"), n1 / n0)),
    )


@dataclass(frozen=True)
class Result:
    """Everything the scaling-efficiency page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    nvlink_gb: dict[str, float]  # per direction by GPU (A100, B300)
    clusters: pd.DataFrame
    curves: pd.DataFrame
    ethernet: Ethernet
    thousand_gpus: float
    thousand_min: float  # the stated efficiency (">90%")
    thousand_weak: float
    thousand_strong: float
    bandwidth_90: float  # your cluster's NIC per GPU for >90% at a thousand GPUs
    validation: pd.DataFrame  # published jobs at several GPU counts (wiring.published_scaling)
    ledger: pd.DataFrame
    sliders: tuple[Slider, ...]

    @property
    def your_curve(self) -> pd.DataFrame:
        return self.curves[self.curves["cluster"] == YOUR_CLUSTER]

    @property
    def validated(self) -> pd.DataFrame:
        """The published scaling efficiencies no side of which the model was fitted on."""
        return self.validation[~self.validation["in_sample"]]


def compute(cfg: Config) -> Result:
    """Run the models, the inverse questions, the validation and the checks once."""
    s = scenario.values(cfg)
    thousand = data.claim(THOUSAND)
    n = thousand.value("gpus_order")
    return Result(
        cfg=cfg,
        s=s,
        nvlink_gb={g: wiring.nvlink_per_direction_gb(g) for g in (OLD, NEW)},
        clusters=data.table("cluster_configs").drop(columns=["notes", "source"]),
        curves=curves(cfg, s),
        ethernet=ethernet(s),
        thousand_gpus=n,
        thousand_min=thousand.value("scaling_efficiency_min_pct") / 100,
        thousand_weak=float(checks.thousand_gpu_efficiency(thousand, s)),
        thousand_strong=float(checks.thousand_gpu_efficiency(thousand, s, weak=False)),
        bandwidth_90=bandwidth_for(cfg, s, thousand.value("scaling_efficiency_min_pct") / 100, n),
        validation=wiring.published_scaling(),
        ledger=ledger.ledger(SLUG, cfg),
        sliders=tuple(ledger.slider(name, ids, {SLUG: cfg}) for name, ids in SLIDERS),
    )


__all__ = ["SPEC", "Result", "checks", "compute"]
