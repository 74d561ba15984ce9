"""Training memory per GPU: parameter counts, model states, activations, and whether a layout fits.

Conventions (stated once): bytes are bytes; GB = 1e9 bytes; ``n_params`` counts every trainable
scalar (embeddings included). All public functions take plain numbers or numpy arrays and
broadcast; string options (precision, optimizer, recompute) are scalars.

Sources
-------
- Model states: Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion
  Parameter Models" (SC20), Sec. 3.1 and 5 / Fig. 1: mixed-precision Adam keeps 2Ψ fp16 weights,
  2Ψ fp16 gradients and KΨ optimizer states with K = 12 (fp32 master weights, momentum,
  variance): 16Ψ bytes. Stage 1 (P_os) shards the K term over the data-parallel group N_d, stage 2
  (P_os+g) also the gradients, stage 3 (P_os+g+p) also the weights.
- FP8 recipe: DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", Sec. 3.3 (FP8 training): GEMM
  inputs in FP8, master weights and gradients kept in FP32, AdamW moments in BF16; the FP8 weight
  copy is the only per-parameter FP8 tensor. See :data:`RECIPES`.
- Activations: :mod:`analyses.models.activations` (Korthikanti et al. 2022, Sec. 4, Eq. 1-6 and
  Table 2).
- Parameter count of a GPT block 12h² + 13h per layer: Narayanan et al. 2021, "Efficient
  Large-Scale Language Model Training on GPU Clusters Using Megatron-LM" (SC21), Eq. 2.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses.models.activations import (
    activation_bytes_per_layer,
    recompute_workspace_bytes,
)

# --------------------------------------------------------------------------------------------
# Parameter counts
# --------------------------------------------------------------------------------------------


def parameter_count(
    layers,
    hidden,
    heads,
    vocab,
    seq_len,
    ffn_hidden=None,
    *,
    kv_heads=None,
    gated_mlp=False,
    tied_embeddings=True,
    rotary=False,
    bias=True,
    norm="layernorm",
    token_types=0,
    pooler=False,
):
    """Trainable parameters of a dense transformer from its shape (count, float).

    Per layer: attention Q and output projections h·h each, K and V projections h·(kv·h/a) each;
    MLP 2·h·f (3·h·f when gated, SwiGLU); biases on every projection when ``bias``; two norms with
    scale (and shift for LayerNorm). Plus token embeddings v·h (a second v·h output matrix when
    untied), learned positions s·h unless ``rotary``, BERT's token-type table and pooler, and a
    final norm (decoders; BERT has an embedding norm instead: both are one norm).
    With a = kv, f = 4h, bias and LayerNorm this is Narayanan et al. 2021, Eq. 2:
    12·l·h² + 13·l·h + (v + s)·h (+ final norm).

    Parameters
    ----------
    layers, hidden, heads, vocab, seq_len
        l, h, a, v, s (``seq_len`` matters only for learned positions).
    ffn_hidden
        MLP width f (default 4h).
    kv_heads
        Key/value heads for grouped-query attention (default ``heads``).
    gated_mlp, tied_embeddings, rotary, bias, norm, token_types, pooler
        Architecture switches; ``norm`` is ``"layernorm"`` (scale + shift) or ``"rmsnorm"``.
    """
    n_layers, h, a = np.asarray(layers, float), np.asarray(hidden, float), np.asarray(heads, float)
    v, s = np.asarray(vocab, float), np.asarray(seq_len, float)
    f = 4.0 * h if ffn_hidden is None else np.asarray(ffn_hidden, float)
    kv = a if kv_heads is None else np.asarray(kv_heads, float)
    kv_width = kv * h / a
    b = 1.0 if bias else 0.0
    norm_p = {"layernorm": 2.0, "rmsnorm": 1.0}[norm] * h
    attn = 2 * h * h + 2 * h * kv_width + b * (2 * h + 2 * kv_width)
    mlp_mats = 3.0 if gated_mlp else 2.0
    mlp = mlp_mats * h * f + b * ((mlp_mats - 1) * f + h)
    per_layer = attn + mlp + 2 * norm_p
    embed = v * h * (1.0 if tied_embeddings else 2.0)
    pos = 0.0 if rotary else s * h
    extra = token_types * h + (h * h + h if pooler else 0.0)
    return n_layers * per_layer + embed + pos + extra + norm_p


def shape_parameter_count(shape: pd.Series | dict) -> float:
    """:func:`parameter_count` of one row of the model-shapes table (``data.table("model_shapes")``)."""
    r = dict(shape)
    return float(
        parameter_count(
            r["layers"],
            r["hidden"],
            r["heads"],
            r["vocab"],
            r["seq_len"],
            r["ffn_hidden"],
            kv_heads=r["kv_heads"],
            gated_mlp=bool(r["gated_mlp"]),
            tied_embeddings=bool(r["tied_embeddings"]),
            rotary=r["positions"] == "rotary",
            bias=bool(r["bias"]),
            norm=r["norm"],
            token_types=r.get("token_types") or 0,
            pooler=bool(r.get("pooler") or False),
        )
    )


# --------------------------------------------------------------------------------------------
# Model states
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter of one precision recipe: weights, gradients, optimizer (per optimizer).

    ``optimizer_bytes`` maps an optimizer to bytes per parameter of its states *including* any
    fp32 master copy of the weights (ZeRO's K).
    """

    name: str
    weight_bytes: float
    grad_bytes: float
    optimizer_bytes: dict[str, float]
    fp32_grad_bytes: float
    description: str


RECIPES: dict[str, Recipe] = {
    "fp32": Recipe(
        "fp32",
        4.0,
        4.0,
        {"adam": 8.0, "sgd": 4.0},
        4.0,
        "fp32 weights and gradients; Adam momentum + variance (8 B), SGD momentum (4 B); no master copy",
    ),
    "bf16-mixed": Recipe(
        "bf16-mixed",
        2.0,
        2.0,
        {"adam": 12.0, "sgd": 8.0},
        4.0,
        "ZeRO Sec. 3.1: bf16/fp16 weights and gradients, fp32 master + momentum + variance (K = 12)",
    ),
    "fp16-mixed": Recipe(
        "fp16-mixed",
        2.0,
        2.0,
        {"adam": 12.0, "sgd": 8.0},
        4.0,
        "as bf16-mixed (the loss scale is a scalar)",
    ),
    "fp8": Recipe(
        "fp8",
        1.0,
        4.0,
        {"adam": 8.0, "sgd": 6.0},
        4.0,
        "DeepSeek-V3 Sec. 3.3: FP8 weight copy for GEMMs (1 B), fp32 gradients (4 B), fp32 master "
        "(4 B) + bf16 AdamW momentum and variance (2 + 2 B); SGD: fp32 master + bf16 momentum",
    ),
}
PRECISIONS = tuple(RECIPES)
# The tensor format each recipe's matrix multiplies run in: a GPU must offer it to train in the recipe.
TENSOR_FORMATS = {"fp32": "fp32", "bf16-mixed": "bf16", "fp16-mixed": "fp16", "fp8": "fp8"}
OPTIMIZERS = ("adam", "sgd")
STATE_PARTS = ("weights", "gradients", "optimizer")


def model_state_bytes_by_part(
    n_params,
    *,
    precision: str = "bf16-mixed",
    optimizer: str = "adam",
    zero_stage=0,
    dp=1,
    tp=1,
    pp=1,
    fp32_grads: bool = False,
) -> dict[str, np.ndarray]:
    """Weights, gradients and optimizer-state bytes per GPU (dict of arrays, bytes).

    Tensor and pipeline parallelism split every state evenly over tp·pp GPUs (Megatron; uneven
    embedding stages ignored). ZeRO stage ≥ 1 divides the optimizer term by ``dp``, ≥ 2 also the
    gradients, 3 also the weights (ZeRO Sec. 5.1-5.3; FSDP full-shard = stage 3).
    """
    if precision not in RECIPES:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    r = RECIPES[precision]
    z = np.asarray(zero_stage)
    if np.any((z < 0) | (z > 3)):
        raise ValueError("zero_stage must be 0, 1, 2 or 3")
    per_mp = np.asarray(n_params, float) / (np.asarray(tp, float) * np.asarray(pp, float))
    d = np.asarray(dp, float)
    grad = r.fp32_grad_bytes if fp32_grads else r.grad_bytes
    return {
        "weights": per_mp * r.weight_bytes / np.where(z >= 3, d, 1.0),
        "gradients": per_mp * grad / np.where(z >= 2, d, 1.0),
        "optimizer": per_mp * r.optimizer_bytes[optimizer] / np.where(z >= 1, d, 1.0),
    }


def model_state_bytes(
    n_params,
    *,
    precision: str = "bf16-mixed",
    optimizer: str = "adam",
    zero_stage=0,
    dp=1,
    tp=1,
    pp=1,
    fp32_grads: bool = False,
):
    """Model-state bytes per GPU: weights + gradients + optimizer states (bytes).

    Default accounting is ZeRO's (Rajbhandari et al. 2020, Sec. 3.1): 2 + 2 + 12 = 16 bytes per
    parameter for bf16/fp16 mixed precision with Adam; ``fp32_grads=True`` counts fp32 gradients
    (2 + 4 + 12 = 18 bytes, the accounting of stas00/ml-engineering and others).
    See :func:`model_state_bytes_by_part` for the sharding rules.
    """
    parts = model_state_bytes_by_part(
        n_params,
        precision=precision,
        optimizer=optimizer,
        zero_stage=zero_stage,
        dp=dp,
        tp=tp,
        pp=pp,
        fp32_grads=fp32_grads,
    )
    return parts["weights"] + parts["gradients"] + parts["optimizer"]


def bytes_per_param(precision: str = "bf16-mixed", optimizer: str = "adam", fp32_grads: bool = False) -> float:
    """Unsharded model-state bytes per parameter of a recipe (16 for ZeRO's mixed-precision Adam)."""
    return float(model_state_bytes(1.0, precision=precision, optimizer=optimizer, fp32_grads=fp32_grads))


# --------------------------------------------------------------------------------------------
# Total per GPU and fit search
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Extras:
    """What :func:`total_bytes_per_gpu` adds to the planner's states and activations: the rest of a
    model's shape and what a measured run holds besides (each off by default; numbers or arrays).

    - ``vocab``: the vocabulary matrices are ``vocab``·h parameters each (one if
      ``tied_embeddings``, else two) of ``n_params``; the first stage holds the input embedding, the
      last the output layer (a tied copy too), the other parameters spread over the stages, all over
      tp. ``embedding_as_layer``: each embedding takes a layer's slot (Megatron-DeepSpeed's
      ``type:transformer|embedding`` partition: the first stage gets ⌈(L + 2)/p⌉ − 1 blocks).
    - ``logits_bytes_per_element``: the stage with the output layer holds the logits,
      (s/cp)·b·vocab/tp elements at these bytes each (2 for bf16 logits, plus 4 for each fp32 copy
      the loss makes: the upcast, the log-softmax kept for backward, its gradient).
    - ``fp32_grad_buffer``: an fp32 gradient accumulation buffer, 4 bytes per parameter and not
      sharded (DeepSpeed's BF16 optimizer).
    - ``workspace``: one layer's activations rebuilt by recomputation during its backward
      (:func:`analyses.models.activations.recompute_workspace_bytes`).
    - ``gathered_layers``: layers whose weights ZeRO-3/FSDP holds unsharded at once (prefetch).
    - ``unsharded_stage``: with pipelining, ZeRO-3/FSDP keeps the whole stage's weights gathered
      and accumulates its gradients unsharded across the micro-batches of a step (torchtitan does
      not reshard after forward under pipelining), weight bytes plus 2 bytes of gradient per
      parameter of the stage.
    - ``microbatches``: micro-batches per step; the first stage holds min(p, this) in flight (the
      last, one).
    - ``cp``: context parallelism: each rank holds 1/cp of every sequence (activations, logits) and
      ZeRO shards over dp·cp (torchtitan's FSDP mesh).
    - ``expert_params``, ``ep``, ``moe_topk``: a mixture of experts. ``n_params`` counts every
      expert; the ``expert_params`` of them split over ep expert-parallel ranks (and the stages),
      not over tp, and their optimizer states over the dp·cp/ep ranks that hold the same experts;
      each token's MLP activations are stored for the ``moe_topk`` experts it visits.
    - ``ffn_hidden``, ``kv_heads``, ``gated_mlp``, ``dropout``: the block's shape for the activations.
    - ``overhead_fraction``: the caching allocator's reserve and other buffers as a share of
      everything above (the measured peaks are reserved memory, not allocated).
    """

    vocab: Any = 0
    tied_embeddings: bool = True
    embedding_as_layer: bool = False
    logits_bytes_per_element: Any = 0.0
    fp32_grad_buffer: bool = False
    workspace: bool = False
    gathered_layers: Any = 0
    unsharded_stage: bool = False
    microbatches: Any = None
    cp: Any = 1
    ep: Any = 1
    expert_params: Any = 0.0
    moe_topk: Any = 1
    ffn_hidden: Any = None
    kv_heads: Any = None
    gated_mlp: bool = False
    dropout: bool = True
    overhead_fraction: Any = 0.0


@dataclass(frozen=True)
class _Stages:
    """What every pipeline stage of one call shares (arrays broadcast over layouts)."""

    x: Extras
    n_layers: np.ndarray
    p: np.ndarray
    t: np.ndarray
    shard: np.ndarray
    embed: np.ndarray
    dense_body: np.ndarray
    experts: np.ndarray
    per_layer: np.ndarray
    rebuilt: Any
    logit_elems: np.ndarray
    states: dict[str, Any]  # model_state_bytes_by_part's precision, optimizer, zero_stage, fp32_grads
    weight_bytes: float

    def stage(self, blocks: Any, vocab_mats: Any, flight: Any, logits_here: Any) -> dict[str, np.ndarray]:
        """Bytes by part of a stage of ``blocks`` layers, ``vocab_mats`` vocabulary matrices and
        ``flight`` micro-batches in flight, holding the logits where ``logits_here``."""
        x, p, v = self.x, self.p, np.asarray(self.x.vocab, float)
        # without a vocabulary split the states spread evenly over the stages (the planner's convention);
        # with one, the stage holds its own blocks
        share = np.where((v > 0) | x.embedding_as_layer, blocks / self.n_layers, np.where(p <= 1, 1.0, 1.0 / p))
        dense = (self.dense_body * share + self.embed * vocab_mats) / self.t
        expert = self.experts * share / np.asarray(x.ep, float)
        out = model_state_bytes_by_part(dense, dp=self.shard, **self.states)
        if np.any(self.experts):
            b = model_state_bytes_by_part(
                expert, dp=np.maximum(self.shard / np.asarray(x.ep, float), 1.0), **self.states
            )
            out = {k: out[k] + b[k] for k in STATE_PARTS}
        if x.fp32_grad_buffer:
            out["gradients"] = out["gradients"] + 4.0 * (dense + expert)
        gathered = np.asarray(x.gathered_layers, float) * (self.dense_body / self.n_layers / self.t) * self.weight_bytes
        if x.unsharded_stage:
            gathered = np.where(p > 1, (dense + expert) * (self.weight_bytes + 2.0), gathered)
        out["weights"] = out["weights"] + np.where(np.asarray(self.states["zero_stage"]) >= 3, gathered, 0.0)
        out["activations"] = self.per_layer * blocks * flight
        out["logits"] = np.where(logits_here, self.logit_elems * np.asarray(x.logits_bytes_per_element, float), 0.0)
        out["workspace"] = self.rebuilt * np.ones_like(out["activations"])
        return out


def total_bytes_per_gpu(
    n_params,
    layers,
    seq_len,
    micro_batch,
    hidden,
    heads,
    *,
    precision: str = "bf16-mixed",
    optimizer: str = "adam",
    zero_stage=0,
    dp=1,
    tp=1,
    pp=1,
    sequence_parallel: bool = True,
    recompute: str = "selective",
    flash: bool = True,
    fp32_grads: bool = False,
    overhead_bytes=0.0,
    **extras: Any,
) -> dict[str, np.ndarray]:
    """Bytes per GPU of the busiest pipeline stage: states + activations + what frameworks add.

    With the defaults (the planner's call) every GPU holds ``n_params``/(tp·pp) and the first stage
    of a 1F1B pipeline holds p micro-batches in flight, each through L/p layers, so it stores L
    layers' worth whatever p is (Korthikanti et al. 2022, Sec. 4.2.3); ``overhead_bytes`` is the
    stated allowance for framework buffers (CUDA context, communication buckets). ``extras`` are the
    fields of :class:`Extras` (the vocabulary, logits, a mixture of experts, context parallelism,
    what a framework keeps besides); an unknown one is a ``TypeError`` naming it. Returns a dict of
    arrays (bytes) of the busiest stage: ``weights``, ``gradients``, ``optimizer``, ``activations``,
    ``logits``, ``workspace``, ``overhead`` and ``total``.
    """
    x = Extras(**extras)
    n_layers = np.asarray(layers, float)
    p, c, v = np.asarray(pp, float), np.asarray(x.cp, float), np.asarray(x.vocab, float)
    embed = v * np.asarray(hidden, float)  # one vocabulary matrix
    experts = np.asarray(x.expert_params, float)
    # blocks of the first (and last) stage; an embedding in a layer's slot takes one
    blocks_first = (
        np.maximum(np.ceil((n_layers + 2.0) / p) - 1.0, 0.0) if x.embedding_as_layer else np.ceil(n_layers / p)
    )
    in_flight = p if x.microbatches is None else np.minimum(p, np.asarray(x.microbatches, float))
    block = {k: getattr(x, k) for k in ("moe_topk", "ffn_hidden", "kv_heads", "gated_mlp", "dropout")}
    act_kw = {"tp": tp, "sequence_parallel": sequence_parallel, "recompute": recompute, "flash": flash, **block}
    s_rank = np.asarray(seq_len, float) / c
    recipe = RECIPES[precision] if precision in RECIPES else None
    stages = _Stages(
        x=x,
        n_layers=n_layers,
        p=p,
        t=np.asarray(tp, float),
        shard=np.asarray(dp, float) * c,
        embed=embed,
        dense_body=np.asarray(n_params, float) - embed * (1.0 if x.tied_embeddings else 2.0) - experts,
        experts=experts,
        per_layer=activation_bytes_per_layer(s_rank, micro_batch, hidden, heads, **act_kw),
        rebuilt=recompute_workspace_bytes(s_rank, micro_batch, hidden, heads, **act_kw) if x.workspace else 0.0,
        logit_elems=s_rank * np.asarray(micro_batch, float) * v / np.asarray(tp, float),
        states={"precision": precision, "optimizer": optimizer, "zero_stage": zero_stage, "fp32_grads": fp32_grads},
        weight_bytes=recipe.weight_bytes if recipe else 2.0,
    )
    single = p <= 1
    first = stages.stage(
        np.where(single, n_layers, blocks_first),
        np.where(single, 1.0 if x.tied_embeddings else 2.0, 1.0) * (v > 0),  # vocabulary matrices
        np.where(single, 1.0, in_flight),
        single,
    )
    if not (np.any(v > 0) or x.embedding_as_layer):  # every stage holds the same states: the first is busiest
        parts = first
    else:
        last = stages.stage(
            blocks_first, 1.0 * (v > 0), np.ones_like(np.asarray(in_flight, float)), np.ones_like(single)
        )
        busiest = np.where(single, True, sum(first.values()) >= sum(last.values()))
        parts = {k: np.where(busiest, first[k], last[k]) for k in first}
    held = sum(parts[k] for k in parts)
    overhead = np.asarray(overhead_bytes, float) + np.asarray(x.overhead_fraction, float) * held
    overhead = np.broadcast_to(overhead, np.shape(held)).astype(float)
    return parts | {"overhead": overhead, "total": held + overhead}


TP_CHOICES = (1, 2, 4, 8)
PP_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128)
DP_CHOICES = tuple(2**k for k in range(0, 13))


@functools.lru_cache(maxsize=64)
def _layout_grid(max_tp: int, layers: int | None) -> tuple[np.ndarray, ...]:
    tp, pp, dp, z = (a.ravel() for a in np.meshgrid(TP_CHOICES, PP_CHOICES, DP_CHOICES, (0, 1, 2, 3), indexing="ij"))
    keep = (tp <= max_tp) & ((dp > 1) | (z == 0))
    if layers is not None:
        keep &= pp <= layers
    out = tuple(a[keep] for a in (tp, pp, dp, z))
    for a in out:
        a.setflags(write=False)  # shared by every caller: read-only
    return out


def layouts(max_tp: int = 8, layers: int | None = None) -> pd.DataFrame:
    """Every (tp, pp, dp, zero_stage) candidate layout: tp ≤ ``max_tp`` (one NVLink domain), pp ≤ layers."""
    tp, pp, dp, z = _layout_grid(int(max_tp), None if layers is None else int(layers))
    return pd.DataFrame({"tp": tp, "pp": pp, "dp": dp, "zero_stage": z, "n_gpus": tp * pp * dp})


def fit_table(
    shape: dict,
    usable_bytes: float,
    *,
    seq_len: int,
    micro_batch: int,
    precision: str = "bf16-mixed",
    optimizer: str = "adam",
    sequence_parallel: bool = True,
    recompute: str = "selective",
    flash: bool = True,
    fp32_grads: bool = False,
    overhead_bytes: float = 0.0,
    max_tp: int = 8,
) -> pd.DataFrame:
    """Memory per GPU of every candidate layout of one model on one GPU (vectorised over layouts).

    ``shape`` needs ``n_params``, ``layers``, ``hidden``, ``heads``. Adds columns for each memory
    part (bytes), ``total`` and ``fits`` (total ≤ ``usable_bytes``).
    """
    lay = layouts(max_tp, int(shape["layers"]))
    lay = lay[(lay["tp"] <= shape["heads"])]
    parts = total_bytes_per_gpu(
        shape["n_params"],
        shape["layers"],
        seq_len,
        micro_batch,
        shape["hidden"],
        shape["heads"],
        precision=precision,
        optimizer=optimizer,
        zero_stage=lay["zero_stage"].to_numpy(),
        dp=lay["dp"].to_numpy(),
        tp=lay["tp"].to_numpy(),
        pp=lay["pp"].to_numpy(),
        sequence_parallel=sequence_parallel,
        recompute=recompute,
        flash=flash,
        fp32_grads=fp32_grads,
        overhead_bytes=overhead_bytes,
    )
    out = lay.copy()
    for k, v in parts.items():
        out[k] = np.broadcast_to(v, len(out))
    out["fits"] = out["total"] <= usable_bytes
    return out


def smallest_fit(table: pd.DataFrame) -> pd.Series | None:
    """The fitting layout with the fewest GPUs (ties: lower ZeRO stage, less pipeline, less memory)."""
    ok = np.flatnonzero(table["fits"].to_numpy())
    if ok.size == 0:
        return None
    keys = [table[c].to_numpy()[ok] for c in ("total", "tp", "pp", "zero_stage", "n_gpus")]
    return table.iloc[ok[np.lexsort(keys)[0]]]  # lexsort is stable: full ties keep table order


# --------------------------------------------------------------------------------------------
# Capacity of a cluster (published and measured figures mapped to the model: memory_figures.py)
# --------------------------------------------------------------------------------------------


def gpus_for_states(state_bytes, usable_bytes, reserved_bytes=0.0):
    """GPUs whose usable memory, less ``reserved_bytes`` each, holds ``state_bytes`` fully sharded (ZeRO-3).

    ``ceil(states / (usable − reserved))``; infinite where nothing is left after the reserve.
    """
    free = np.asarray(usable_bytes, float) - np.asarray(reserved_bytes, float)
    with np.errstate(divide="ignore"):
        return np.where(free > 0, np.ceil(np.asarray(state_bytes, float) / np.where(free > 0, free, 1.0)), np.inf)


def max_params_sharded(n_gpus, usable_bytes, bytes_per_parameter, reserved_bytes=0.0):
    """The largest model whose states fit ``n_gpus`` GPUs fully sharded (ZeRO-3 / FSDP full shard).

    ``n · (usable − reserved) / bytes per parameter`` (Rajbhandari et al. 2020, Sec. 5.3: stage 3
    divides all model states by the data-parallel degree); activations come on top.
    """
    free = np.maximum(np.asarray(usable_bytes, float) - np.asarray(reserved_bytes, float), 0.0)
    return np.asarray(n_gpus, float) * free / np.asarray(bytes_per_parameter, float)
