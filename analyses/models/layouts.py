"""Parallel layouts of a training job: the search space the planner evaluates.

A layout places a transformer on ``tp · pp · cp · dp`` GPUs: tensor parallelism inside one NVLink
domain, pipeline stages (optionally interleaved, ``virtual_stages`` model chunks per GPU), context
parallelism (the sequence split over ``cp`` GPUs, for long sequences), data parallelism with a ZeRO
stage, expert parallelism for a mixture of experts (``ep`` GPUs of the data-parallel group share
the experts), a micro-batch size in sequences and activation recomputation (selective or full).
:func:`candidates` lists every layout a request allows, one row each.

Search rules (stated once):

- tensor parallelism: powers of two within the NVLink domain (8 GPUs in a server, 72 in an NVL72
  rack), dividing the heads;
- pipeline: powers of two, at most one stage per layer, and at least ``v`` layers per stage when
  interleaving;
- data parallelism: any integer: the ladder ``2^k`` and ``3 · 2^k`` up to the largest cluster, and
  every divisor of the smallest and largest cluster asked for, so a cluster of exactly 440 or 992
  GPUs is tiled;
- context parallelism: powers of two from 2 only for sequences of :data:`LONG_SEQUENCE` tokens or
  more, keeping at least :data:`MIN_CP_TOKENS` tokens per GPU;
- expert parallelism (mixtures of experts only): powers of two dividing the experts and the
  data-parallel group (``dp · cp``), within :data:`EP_CHOICES`;
- ZeRO only with data parallelism; at least one micro-batch per data-parallel rank; ZeRO-2 and -3
  not with pipeline stages (DeepSpeed's pipeline engine and Megatron run ZeRO-1 at most), except on
  a stack that always shards (torchtitan's FSDP2 with pipelining);
- the training stack's ZeRO stages and micro-batch sizes only, and data parallelism only on a stack
  that has no model parallelism (DeepSpeed ZeRO, FSDP trainers); the recomputation the attention
  kernel's software offered (no selective recomputation before FlashAttention-era stacks); a pinned
  part of the layout overrides every rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
PP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
CP_CHOICES = (1, 2, 4, 8, 16, 32)
EP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
ZERO_STAGES = (0, 1, 2, 3)
MICRO_BATCHES = (1, 2, 4)
VIRTUAL_STAGES = (1, 2, 4, 8)
RECOMPUTE = ("selective", "full")
LONG_SEQUENCE = 16_384  # context parallelism is searched from this sequence length on
MIN_CP_TOKENS = 4_096  # tokens of a sequence each context-parallel GPU keeps at least

COLUMNS = ("gpu", "n_gpus", "tp", "pp", "cp", "ep", "dp", "zero_stage", "micro_batch", "virtual_stages", "recompute")
"""The columns that define a layout (what the planner's ``evaluate`` accepts as ``layouts``)."""

LABEL = "TP{tp} PP{pp} CP{cp} EP{ep} DP{dp} ZeRO-{zero_stage} mb{micro_batch} v{virtual_stages} {recompute}"


def data_parallel_sizes(max_gpus: int, exact: tuple[int, ...] = ()) -> list[int]:
    """Data-parallel sizes tried: powers of two and three times powers of two up to ``max_gpus``, and
    every divisor of each count in ``exact`` (the cluster sizes asked for)."""
    sizes = {m * 2**k for m in (1, 3) for k in range(int(np.log2(max(max_gpus, 1))) + 1)}
    for n in exact:
        n = int(n)
        small = [d for d in range(1, int(np.sqrt(n)) + 1) if n % d == 0]
        sizes |= set(small) | {n // d for d in small}
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
    seq_len: int = 4096,
    n_experts: int = 0,
    pinned: Mapping[str, Any] | None = None,
    zero_stages: tuple[int, ...] = ZERO_STAGES,
    model_parallel: bool = True,
    recompute: tuple[str, ...] = RECOMPUTE,
    micro_batches: tuple[int, ...] = MICRO_BATCHES,
) -> pd.DataFrame:
    """Every layout of a model of ``layers`` layers, ``heads`` heads and ``n_experts`` experts (0: dense)
    on ``gpu`` (columns :data:`COLUMNS`).

    ``sequences_per_step`` is the global batch in sequences; ``domain_gpus`` the GPUs of one NVLink
    domain (a node of 8, or 72 for an NVL72 rack). Kept: ``min_gpus ≤ tp·pp·cp·dp ≤ max_gpus`` and the
    search rules of the module docstring. ``pinned`` fixes parts of the layout (``tp``, ``pp``, ``dp``,
    ``cp``, ``ep``, ``zero_stage``, ``micro_batch``, ``virtual_stages``, ``recompute``, this last one of
    ``none``, ``selective``, ``full``) to a value of the reader's, searched or not: a layout a published
    run prints is always a candidate, whatever the search rules. ``recompute`` lists the recomputation
    modes searched when none is pinned (the attention kernel's: :data:`analyses.models.training_run.RECOMPUTE_SEARCHED`),
    ``micro_batches`` the micro-batch sizes (the stack's recipes: ``data/training_stacks.csv``).
    """
    pin = dict(pinned or {})
    dps = data_parallel_sizes(max_gpus, (min_gpus, max_gpus))
    tps = [t for t in TP_CHOICES if t <= domain_gpus and heads % t == 0]
    cps = [c for c in CP_CHOICES if c == 1 or (seq_len >= LONG_SEQUENCE and seq_len // c >= MIN_CP_TOKENS)]
    eps = [e for e in EP_CHOICES if e == 1 or (n_experts > 1 and n_experts % e == 0)]
    zeros = tuple(z for z in zero_stages if n_experts <= 1 or z <= 1) or (0,)  # ZeRO-3 with experts: not searched
    if not model_parallel:
        tps, cps, eps = [1], [1], [1]
    modes = tuple(recompute) if "recompute" not in pin else (pin["recompute"],)
    axes = {
        "tp": tps,
        "pp": PP_CHOICES if model_parallel else (1,),
        "cp": cps,
        "ep": eps,
        "dp": dps,
        "zero_stage": zeros,
        "micro_batch": tuple(micro_batches),
        "virtual_stages": VIRTUAL_STAGES,
    }
    axes |= {k: [int(v)] for k, v in pin.items() if k in axes}
    grid = np.meshgrid(*axes.values(), range(len(modes)), indexing="ij")
    tp, pp, cp, ep, dp, z, mb, v, rc = (g.ravel() for g in grid)
    n = tp * pp * cp * dp
    keep = (
        (n >= min_gpus)
        & (n <= max_gpus)
        & (pp <= layers)
        & ((v == 1) | ((pp > 1) & ((layers >= pp * v) | ("virtual_stages" in pin))))
        & ((z <= 1) | (pp == 1) | ("zero_stage" in pin) | (0 not in zero_stages))
        & ((z == 0) | (dp > 1))
        & ((dp * cp) % ep == 0)
        & ((dp * mb <= sequences_per_step) | ("dp" in pin and "micro_batch" in pin))
    )
    return pd.DataFrame(
        {
            "gpu": gpu,
            "n_gpus": n[keep],
            "tp": tp[keep],
            "pp": pp[keep],
            "cp": cp[keep],
            "ep": ep[keep],
            "dp": dp[keep],
            "zero_stage": z[keep],
            "micro_batch": mb[keep],
            "virtual_stages": v[keep],
            "recompute": np.asarray(modes)[rc[keep]],
        }
    )


def label(row: Mapping[str, Any]) -> str:
    """The whole layout in words: ``TP8 PP16 CP1 EP1 DP128 ZeRO-1 mb1 v2 selective``."""
    return LABEL.format(**{k: row[k] for k in COLUMNS if k not in ("gpu", "n_gpus")})


def short_label(row: Mapping[str, Any]) -> str:
    """Tensor × pipeline × data parallel sizes and ZeRO stage, with context and expert parallelism
    where used: ``8·16·128 Z1``, ``1·16·128 EP64 Z1``, ``8·16·CP16·8 Z1``."""
    cp = f"CP{row['cp']}·" if int(row.get("cp", 1)) > 1 else ""
    ep = f" EP{row['ep']}" if int(row.get("ep", 1)) > 1 else ""
    return f"{row['tp']}·{row['pp']}·{cp}{row['dp']}{ep} Z{row['zero_stage']}"
