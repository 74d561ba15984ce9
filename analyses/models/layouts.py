"""Parallel layouts of a training job: the search space the planner evaluates, and what recomputation costs.

A layout places a dense transformer on ``tp · pp · dp`` GPUs: tensor parallelism inside one NVLink
domain, pipeline stages (optionally interleaved, ``virtual_stages`` model chunks per GPU), data
parallelism with a ZeRO stage, a micro-batch size in sequences and activation recomputation
(selective or full). :func:`candidates` lists every layout a request allows, one row each;
:func:`recompute_factor` gives the hardware FLOPs a recomputation mode adds to the model FLOPs.

Search rules (stated once): power-of-two tensor and pipeline sizes; data-parallel sizes of
``2^k`` or ``3 · 2^k``; tensor parallelism within the NVLink domain (at most 8, dividing the heads);
at most one pipeline stage per layer, and at least ``v`` layers per stage when interleaving;
ZeRO only with data parallelism; at least one micro-batch per data-parallel rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
ZERO_STAGES = (0, 1, 2, 3)
MICRO_BATCHES = (1, 2, 4)
VIRTUAL_STAGES = (1, 2)
RECOMPUTE = ("selective", "full")
MAX_TP = 8  # tensor parallelism beyond 8 GPUs is not searched, even in a 72-GPU NVLink domain

COLUMNS = ("gpu", "n_gpus", "tp", "pp", "dp", "zero_stage", "micro_batch", "virtual_stages", "recompute")
"""The columns that define a layout (what the planner's ``evaluate`` accepts as ``layouts``)."""

LABEL = "TP{tp} PP{pp} DP{dp} ZeRO-{zero_stage} mb{micro_batch} v{virtual_stages} {recompute}"


def selective_recompute_overhead(seq_len: float, hidden: float) -> float:
    """Extra FLOPs of selective recomputation as a share of a layer's model FLOPs: ``s/(18h + 3s)``.

    Selective recomputation (Korthikanti et al. 2022, Sec. 4.2) reruns the attention core
    (QKᵀ, softmax, dropout, attention over V): ``4·b·s²·h`` forward FLOPs per layer, against
    ``72·b·s·h² + 12·b·s²·h`` for the layer's forward and backward passes (Narayanan et al. 2021,
    Eq. 3 without recomputation).
    """
    return seq_len / (18.0 * hidden + 3.0 * seq_len)


def recompute_factor(recompute: np.ndarray, seq_len: float, hidden: float) -> np.ndarray:
    """Hardware FLOPs / model FLOPs: 4/3 for full recomputation (one more forward pass, 2ND on 6ND)."""
    return np.where(np.asarray(recompute) == "full", 4.0 / 3.0, 1.0 + selective_recompute_overhead(seq_len, hidden))


def data_parallel_sizes(max_gpus: int) -> list[int]:
    """Data-parallel sizes tried: powers of two and three times powers of two, up to ``max_gpus``."""
    sizes = {m * 2**k for m in (1, 3) for k in range(int(np.log2(max_gpus)) + 1)}
    return sorted(s for s in sizes if s <= max_gpus)


def candidates(
    gpu: str,
    *,
    layers: int,
    heads: int,
    sequences_per_step: float,
    min_gpus: int,
    max_gpus: int,
    domain_gpus: int,
) -> pd.DataFrame:
    """Every layout of a model of ``layers`` layers and ``heads`` heads on ``gpu`` (columns :data:`COLUMNS`).

    ``sequences_per_step`` is the global batch in sequences; ``domain_gpus`` the GPUs of one NVLink
    domain (a node of 8, or 72 for an NVL72 rack). Kept: ``min_gpus ≤ tp·pp·dp ≤ max_gpus`` and the
    search rules of the module docstring.
    """
    dps = data_parallel_sizes(max_gpus)
    grid = np.meshgrid(
        TP_CHOICES, PP_CHOICES, dps, ZERO_STAGES, MICRO_BATCHES, VIRTUAL_STAGES, range(len(RECOMPUTE)), indexing="ij"
    )
    tp, pp, dp, z, mb, v, rc = (g.ravel() for g in grid)
    n = tp * pp * dp
    keep = (
        (n >= min_gpus)
        & (n <= max_gpus)
        & (tp <= min(domain_gpus, MAX_TP))
        & (heads % tp == 0)
        & (pp <= layers)
        & ((v == 1) | ((pp > 1) & (layers >= pp * v)))
        & ((z == 0) | (dp > 1))
        & (dp * mb <= sequences_per_step)
    )
    frame = pd.DataFrame(
        {
            "gpu": gpu,
            "n_gpus": n[keep],
            "tp": tp[keep],
            "pp": pp[keep],
            "dp": dp[keep],
            "zero_stage": z[keep],
            "micro_batch": mb[keep],
            "virtual_stages": v[keep],
            "recompute": np.asarray(RECOMPUTE)[rc[keep]],
        }
    )
    return frame


def label(row: Mapping[str, Any]) -> str:
    """The whole layout in words: ``TP8 PP16 DP128 ZeRO-1 mb1 v2 selective``."""
    return LABEL.format(**{k: row[k] for k in COLUMNS if k not in ("gpu", "n_gpus")})


def short_label(row: Mapping[str, Any]) -> str:
    """Tensor × pipeline × data parallel sizes and ZeRO stage: ``8·16·128 Z1``."""
    return f"{row['tp']}·{row['pp']}·{row['dp']} Z{row['zero_stage']}"
