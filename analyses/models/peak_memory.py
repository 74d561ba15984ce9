"""A measured run's peak memory per GPU, from its configuration and what its framework keeps.

:func:`analyses.models.memory.total_bytes_per_gpu` gives the bytes a configuration holds: model
states of its precision recipe, the activations stored for backward, and, by keyword, what a
framework adds (an unsharded fp32 gradient buffer, the vocabulary matrices on the first and last
pipeline stages, the logits and the loss's fp32 copies, the layer rebuilt by recomputation, weights
gathered unsharded under FSDP, context and expert parallelism). Here a measured row and its
framework's row (``data/memory_measured.csv``, ``data/memory_frameworks.csv``, passed in) become
those keywords (:func:`run_kwargs`), and the bytes held become a predicted peak:

``peak = held × (1 + f) + CUDA context``

``f`` is the caching allocator's reserve and the framework's other buffers as a share of what is
held (a measured peak is reserved memory, as PyTorch's ``max_reserved`` or nvidia-smi report it, not
what live tensors take), fitted on calibration rows (:func:`fit_overhead`): ``1 + f`` is the
geometric mean of measured over modelled, and the spread of the logs of that ratio gives the 90%
prediction band of a new run (:func:`analyses.models.uncertainty.prediction_factor`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analyses.models import memory, uncertainty
from analyses.units import GIB

ArrayLike = npt.ArrayLike
ZERO_STAGE = {"none": 0, "zero1": 1, "zero3-fsdp": 3}


def framework_keywords(framework: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`analyses.models.memory.total_bytes_per_gpu` keywords of what a framework keeps
    besides the textbook count (a row of ``data/memory_frameworks.csv``): its fp32 gradient buffer,
    embeddings as pipeline layers, bytes per logit, weights gathered under ZeRO-3/FSDP, and the layer
    rebuilt by recomputation."""
    return {
        "embedding_as_layer": bool(framework["embedding_as_layer"]),
        "logits_bytes_per_element": float(framework["logits_bytes_per_element"]),
        "fp32_grad_buffer": bool(framework["fp32_grad_buffer"]),
        "workspace": True,
        "gathered_layers": int(framework["gathered_layers"]),
        "unsharded_stage": bool(framework["unsharded_stage"]),
    }


def shape_keywords(shape: Mapping[str, Any]) -> dict[str, Any]:
    """The block-shape keywords of a model (a row of ``data/model_shapes.csv`` or of
    ``data/memory_measured.csv``: ``vocab``, ``tied_embeddings``, ``ffn_hidden``, ``gated_mlp`` and
    the key-value heads, ``kv_heads`` or ``n_kv_heads``)."""
    kv = shape["kv_heads"] if "kv_heads" in shape else shape["n_kv_heads"]
    return {
        "vocab": int(shape["vocab"]),
        "tied_embeddings": bool(shape["tied_embeddings"]),
        "ffn_hidden": int(shape["ffn_hidden"]),
        "kv_heads": int(kv),
        "gated_mlp": bool(shape["gated_mlp"]),
    }


def run_kwargs(row: Mapping[str, Any], framework: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`analyses.models.memory.total_bytes_per_gpu` arguments of one measured run.

    ``row``: a row of ``data/memory_measured.csv``; ``framework``: its framework's row of
    ``data/memory_frameworks.csv``. With pipelining, a row whose framework counts the local batch
    (torchtitan) is split into ``pp_microbatches`` micro-batches; the first stage holds min(pp,
    micro-batches) of them in flight. 'selective' checkpointing means what the framework means by it.
    """
    pp = int(row["pp"])
    micro = int(row["micro_batch_seqs"])
    if framework["microbatch_is"] == "local_batch" and pp > 1:
        micro = max(micro // int(row["pp_microbatches"]), 1)
    recompute = row["recompute"]
    if recompute == "selective" and framework["selective"] == "op":
        recompute = "op"
    return {
        "n_params": float(row["params_total"]),
        "layers": int(row["n_layers"]),
        "seq_len": int(row["seq_len"]),
        "micro_batch": micro,
        "hidden": int(row["d_model"]),
        "heads": int(row["n_heads"]),
        "precision": framework["recipe"],
        "zero_stage": ZERO_STAGE[row["sharding"]],
        "dp": int(row["dp"]),
        "tp": int(row["tp"]),
        "pp": pp,
        "cp": int(row["cp"]),
        "sequence_parallel": bool(framework["sequence_parallel"]),
        "recompute": recompute,
        "flash": bool(framework["flash"]),
        "microbatches": int(row["pp_microbatches"]),
        "dropout": bool(row["dropout"]),
        **framework_keywords(framework),
        **shape_keywords(row),
    }


def held_bytes(row: Mapping[str, Any], framework: Mapping[str, Any]) -> dict[str, float]:
    """The bytes one measured run's busiest stage holds, by part (no allocator overhead, no context)."""
    parts = memory.total_bytes_per_gpu(**run_kwargs(row, framework))
    return {k: float(v) for k, v in parts.items()}


def context_bytes(framework: Mapping[str, Any]) -> float:
    """The CUDA context and kernels of one process (bytes)."""
    return float(framework["context_mib"]) * 2.0**20


@dataclass(frozen=True)
class OverheadFit:
    """The allocator overhead ``f`` fitted on calibration runs and the spread of the fit."""

    fraction: float  # f: reserved over held, less one
    log_sd: float  # standard deviation of ln(measured / predicted) around the fit
    dof: int
    n: int

    def band(self, level: float = uncertainty.INTERVAL_LEVEL) -> tuple[float, float]:
        """Multiplicative (low, high) factors of the prediction band of a new run."""
        f = float(uncertainty.prediction_factor(self.log_sd, self.dof, self.n, level=level))
        return 1.0 / f, f


def fit_overhead(measured: ArrayLike, held: ArrayLike, context: ArrayLike) -> OverheadFit:
    """Fit ``f`` so that ``held (1 + f) + context`` matches ``measured`` on average in log space.

    ``1 + f`` is the geometric mean of (measured − context) / held; the spread is the standard
    deviation of the logs of that ratio, with n − 1 degrees of freedom (two runs at least).
    """
    ratio = (np.asarray(measured, float) - np.asarray(context, float)) / np.asarray(held, float)
    logs = np.log(ratio)
    if logs.size < 2:
        raise ValueError("the overhead fit needs two calibration runs at least")
    return OverheadFit(float(np.exp(logs.mean()) - 1.0), float(logs.std(ddof=1)), int(logs.size - 1), int(logs.size))


def predicted_peak(held: ArrayLike, context: ArrayLike, fraction: float) -> np.ndarray:
    """The predicted peak (bytes): ``held (1 + f) + context``."""
    return np.asarray(held, float) * (1.0 + fraction) + np.asarray(context, float)


def gib(x: ArrayLike) -> np.ndarray:
    """Bytes in GiB."""
    return np.asarray(x, float) / GIB
