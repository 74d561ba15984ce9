"""The per-GPU speed-up of one GPU over another for a workload, from the calibrated step-time model.

A :class:`Workload` names what is trained (a row of ``data/model_shapes.csv``, its sequence length),
on how many GPUs (the same count on both sides: a per-GPU speed-up), with what batch, over which
network, and each side's precision. :func:`model_speedup` plans the workload on each GPU with the
planner's search (:func:`analyses.models.plan.evaluate`: every layout that fits in memory,
at the GPU count), takes each side's fastest layout, and divides their tokens per second per GPU.
Both sides run the same model, software assumptions and fabric rules, so what differs is the
hardware: peaks, HBM, NVLink domain, NIC, memory (a layout the smaller memory forbids).

:func:`band` turns the model's out-of-sample errors on same-recipe published pairs (the
Megatron-Bridge cross-generation rows, MosaicML's A100/H100 pairs) into the factors that widen a
modelled speed-up into a 90% band. The scenario's ``speedup_b300_a100`` is the speed-up of the
reference workload (:func:`reference`) with that band; :func:`analyses.scenario.generations.speedup`
scales it to any other workload.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from analyses import data
from analyses.models import layouts
from analyses.models import plan as pl
from analyses.models.training_run import TIME_ASSUMPTIONS
from analyses.models.uncertainty import error_band
from analyses.scenario import calibration, clusters
from analyses.units import MB

KINDS = ("pretraining", "fine-tune")
NETWORKS = ("infiniband", "ethernet-tcp")
REFERENCE_SHAPE = "illustrative-100b"  # the plan chapter's default model: the documents' hundred-billion class
FABRIC = {"infiniband": ("rdma_nic_share", "rdma_latency_us"), "ethernet-tcp": ("tcp_nic_share", "tcp_latency_us")}
# The scenario's assumptions a speed-up reads (each side's plan): memory, fabric, overlap, batch, GPUs
# what a speed-up reads of the scenario (its cache key): every assumption the planner's time needs
# (the rates and restarts of both operations modes included), the fabrics and the reference job
READS = tuple(dict.fromkeys((*TIME_ASSUMPTIONS, "tcp_nic_share", "tcp_latency_us", "batch_million_tokens", "job_gpus")))


@dataclass(frozen=True)
class Workload:
    """What a per-GPU speed-up is measured on: a model, a GPU count, a batch, a network and precisions.

    ``shape`` is a row of ``data/model_shapes.csv`` (``seq_len`` 0: its own); ``gpus`` the GPUs on
    each side; ``batch_tokens`` the global batch; ``kind`` pretraining or fine-tune (a fine-tune is a
    short-sequence, small-batch, few-GPU workload: what differs is in those fields, the kind labels
    it); ``network`` the scale-out fabric of both clusters; ``new_precision`` and ``old_precision``
    each side's training precision (a GPU without the format trains in BF16).
    """

    label: str
    shape: str
    gpus: int
    batch_tokens: float
    seq_len: int = 0
    kind: str = "pretraining"
    network: str = "infiniband"
    new_precision: str = "fp8"
    old_precision: str = "bf16"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.network not in NETWORKS:
            raise ValueError(f"network must be one of {NETWORKS}, got {self.network!r}")
        if not self.gpus >= 1:
            raise ValueError(f"gpus must be at least 1, got {self.gpus!r}")

    def describe(self) -> str:
        """The workload in words: '100B pretraining, 512 GPUs, 4.2M-token batch, seq 2,048, InfiniBand'."""
        shape = calibration.shape(self.shape, self.seq_len or None)
        return (
            f"{shape.n_params / 1e9:.0f}B {self.kind}, {self.gpus:,} GPUs, {self.batch_tokens / MB:.2g}M-token batch, "
            f"sequence {shape.seq_len:,}, {'InfiniBand' if self.network == 'infiniband' else 'Ethernet (TCP)'}"
        )


def reference(s: Mapping[str, Any]) -> Workload:
    """The reference workload of the scenario's ``speedup_b300_a100``: the illustrative 100B model
    (the documents' hundred-billion class, the plan chapter's default) pretrained on the scenario's
    large job (``job_gpus``) at the scenario's global batch, on InfiniBand."""
    return Workload(
        "reference: 100B-class pretraining",
        REFERENCE_SHAPE,
        int(round(float(np.asarray(s["job_gpus"]).mean()))),
        float(np.asarray(s["batch_million_tokens"]).mean()) * MB,
    )


def nearest_shape(params: float) -> str:
    """The decoder of ``data/model_shapes.csv`` whose parameter count is nearest ``params`` (in ratio)."""
    shapes = data.model_shapes()
    decoders = shapes[shapes["kind"] == "decoder"]
    counts = {n: calibration.shape(n).n_params for n in decoders["name"]}
    return min(counts, key=lambda n: abs(np.log(counts[n] / params)))


def _precision(gpu: str, wanted: str) -> str:
    return wanted if wanted in data.gpu(gpu).peak_flops_dense else "bf16"


def best_layout(workload: Workload, gpu: str, precision: str, s: Mapping[str, Any]) -> Any:
    """The fastest layout of ``workload`` on ``gpu`` that fits in memory (a row of
    :func:`analyses.models.plan.evaluate`, the planner's search at the workload's GPU count), or None
    when none fits."""
    share, latency = FABRIC[workload.network]
    values = dict(s) | {"rdma_nic_share": s[share], "rdma_latency_us": s[latency]}  # no price: costs left NaN
    req = pl.Request(
        shape=calibration.shape(workload.shape, workload.seq_len or None),
        tokens=workload.batch_tokens,
        deadline_days=1.0,
        precision=_precision(gpu, precision),
        gpus=(gpu,),
        min_gpus=int(workload.gpus),
        max_gpus=int(workload.gpus),
        global_batch_tokens=workload.batch_tokens,
        s=values,
        hardware={gpu: clusters.plan_hardware(gpu)},
    )
    frame = pl.evaluate(req, gpu, calibration.coefficients())
    ok = frame[frame["fits"]]
    if ok.empty:
        return None
    return ok.sort_values(["tokens_per_s_per_gpu", "n_gpus"], ascending=[False, True], kind="stable").iloc[0]


def _key(s: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    return tuple((k, float(np.asarray(s[k]).mean())) for k in READS if k in s)


def model_speedup(workload: Workload, new: str, old: str, s: Mapping[str, Any]) -> float:
    """Tokens per second per GPU of ``new`` over ``old`` on ``workload``, each at its fastest fitting
    layout at ``workload.precision``; NaN when the workload fits neither (``s``: the central scenario)."""
    return _model_speedup(workload, new, old, _key(s), str(data.DATA_DIR))


@functools.cache
def _model_speedup(workload: Workload, new: str, old: str, key: tuple, data_dir: str) -> float:
    s = dict(key)
    a = best_layout(workload, new, workload.new_precision, s)
    b = best_layout(workload, old, workload.old_precision, s)
    if a is None or b is None:
        return float("nan")
    return float(a["tokens_per_s_per_gpu"] / b["tokens_per_s_per_gpu"])


def comparison(workload: Workload, gpus: tuple[str, ...], s: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each GPU's fastest layout of ``workload`` (GPU, precision, tokens/s per GPU, MFU, layout)."""
    out = []
    for g in gpus:
        prec = workload.old_precision if g == gpus[-1] else workload.new_precision
        row = best_layout(workload, g, prec, s)
        out.append(
            {
                "gpu": g,
                "precision": _precision(g, prec),
                "tokens_per_s_per_gpu": np.nan if row is None else float(row["tokens_per_s_per_gpu"]),
                "mfu": np.nan if row is None else float(row["mfu"]),
                "layout": "does not fit" if row is None else layouts.label(row),
            }
        )
    return out


# --------------------------------------------------------------------------------------------
# The band: the model's errors on published same-recipe ratios
# --------------------------------------------------------------------------------------------


def band(arch: str = "dense", level: float = 0.9) -> tuple[float, float, int]:
    """Factors (low, high) that widen a modelled per-GPU speed-up into a ``level`` band, and the number
    of published pairs behind them: ``exp(−high)`` and ``exp(−low)`` of the split-conformal band
    (:func:`analyses.models.uncertainty.error_band`) of the model's out-of-sample errors on same-recipe
    ratios of ``arch`` (``dense`` or ``moe``) runs (:func:`analyses.scenario.calibration.ratio_errors`).
    Plain 5-95% quantiles of the 18 dense pairs covered 78% of each recipe's pairs when that recipe was
    left out; the conformal ranks cover 89%."""
    pairs = calibration.ratio_errors()
    d = pairs.loc[pairs["arch"] == arch, "log_error"].to_numpy(float)
    lo, hi = error_band(d, level)
    return float(np.exp(-hi)), float(np.exp(-lo)), int(d.size)


def with_(workload: Workload, **changes: Any) -> Workload:
    """A copy of ``workload`` with some fields changed."""
    return replace(workload, **changes)
