"""Training FLOPs, stated once: the model FLOPs of a transformer per token and per run, the hardware
FLOPs recomputation adds, and the conversion of a published figure to the one basis.

The book's one FLOP definition (every MFU, every model TFLOP/s, every time-to-train reads it):

```text
model FLOPs per token = 6 · N_active + 12 · L · d_model · seq_len
```

``6·N`` is the dense matrix work of the forward (2N) and backward (4N) pass (Kaplan et al. 2020,
sec. 2.1), ``N`` the parameters each token passes through (all of them for a dense model, the
active ones for a mixture of experts); ``12·L·d·s`` the attention scores and their product with the
values, forward and backward, as PaLM's appendix B counts it (Chowdhery et al. 2022: ``12·L·H·Q·T``
with ``H·Q = d_model`` and ``T = seq_len``; the causal mask is not halved). Where a model's heads
are not ``d_model`` wide (multi-head latent attention, wide heads) ``d`` is ``H·Q``
(:func:`attention_width`), and a sliding window counts ``min(s, 2w)`` keys (:func:`attention_span`). MFU is always on these
model FLOPs. Recomputation runs part of the forward pass again: that is extra *hardware* FLOPs
(HFU), reported separately (:func:`recompute_flops_per_token`) and never counted in MFU.

Published figures come on other bases (Megatron's Eq. 3 counts the recomputed forward, BLOOM's
8N hardware FLOPs, NVIDIA's recipes add the logits); :func:`model_tflops` converts a published
throughput in tokens per second to this basis, so every row of every table is compared on it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

FLOP_PER_PARAM_PER_TOKEN = 6.0  # 2N forward + 4N backward per token (Kaplan et al. 2020, sec. 2.1)
ATTENTION_FLOP_PER_TOKEN = 12.0  # × layers × d_model × seq_len (Chowdhery et al. 2022, PaLM, appendix B)
RECOMPUTE_MODES = ("none", "selective", "full")


def flops_per_token(params: ArrayLike) -> np.ndarray:
    """The matrix part of the model FLOPs per training token: ``6·N`` (``N``: active parameters)."""
    return FLOP_PER_PARAM_PER_TOKEN * np.asarray(params, float)


def attention_flops_per_token(n_layers: ArrayLike, d_model: ArrayLike, seq_len: ArrayLike) -> np.ndarray:
    """The attention part of the model FLOPs per training token: ``12·L·d_model·seq_len`` (PaLM, app. B)."""
    return (
        ATTENTION_FLOP_PER_TOKEN * np.asarray(n_layers, float) * np.asarray(d_model, float) * np.asarray(seq_len, float)
    )


def attention_span(seq_len: ArrayLike, window: ArrayLike = 0) -> np.ndarray:
    """The keys per query the attention term counts: ``seq_len`` for full causal attention (PaLM's
    ``T``, the causal mask not halved), ``min(seq_len, 2·window)`` for a sliding window (a query sees
    ``window`` keys where full attention averages ``seq_len / 2``: the same convention); ``window`` 0 is full."""
    s, w = np.asarray(seq_len, float), np.asarray(window, float)
    return np.where(w > 0, np.minimum(s, 2.0 * w), s)


def attention_width(
    d_model: ArrayLike, n_heads: ArrayLike = 0, qk_head_dim: ArrayLike = 0, v_head_dim: ArrayLike = 0
) -> np.ndarray:
    """PaLM's ``H·Q`` where it is not ``d_model``: heads × the mean of the query-key and value head sizes
    (multi-head latent attention: DeepSeek-V3's 128 heads of 192 and 128 give 20,480 against a width of
    7,168; a model with wide heads: Qwen3-235B's 64 × 128 = 8,192 against 4,096). Zeros give ``d_model``."""
    d = np.asarray(d_model, float)
    h, qk, v = (np.asarray(x, float) for x in (n_heads, qk_head_dim, v_head_dim))
    v = np.where(v > 0, v, qk)
    return np.where((h > 0) & (qk > 0), h * (qk + v) / 2.0, d)


def model_flops_per_token(
    params_active: ArrayLike,
    n_layers: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
    seq_len: ArrayLike | None = None,
) -> np.ndarray:
    """Model FLOPs per training token, the book's one definition: ``6·N_active + 12·L·d·s``.

    Without the shape (``n_layers``, ``d_model``, ``seq_len``: all three or none) the attention term is
    left out, ``6·N``: what a claim that names only a parameter count allows.
    """
    out = flops_per_token(params_active)
    if n_layers is not None and d_model is not None and seq_len is not None:
        out = out + attention_flops_per_token(n_layers, d_model, seq_len)
    return out


def recompute_flops_per_token(
    recompute: ArrayLike, params_active: ArrayLike, n_layers: ArrayLike, d_model: ArrayLike, seq_len: ArrayLike
) -> np.ndarray:
    """Hardware FLOPs per token that recomputation adds to the model FLOPs (zero for ``none``).

    ``full``: the whole forward pass again, ``2·N + 4·L·d·s`` (a third of the model FLOPs);
    ``selective``: only the attention core (Korthikanti et al. 2022, sec. 4.2: QKᵀ, softmax and the
    product with V), ``4·L·d·s``. FlashAttention recomputes the same core in its backward pass, so
    selective recomputation costs a flash-attention run nothing more than it already does.
    """
    rc = np.asarray(recompute)
    bad = ~np.isin(rc, RECOMPUTE_MODES)
    if np.any(bad):
        raise ValueError(f"recompute must be one of {RECOMPUTE_MODES}, got {np.unique(rc[bad]).tolist()}")
    attention_forward = attention_flops_per_token(n_layers, d_model, seq_len) / 3.0
    full = 2.0 * np.asarray(params_active, float) + attention_forward
    return np.where(rc == "full", full, np.where(rc == "selective", attention_forward, 0.0))


def hardware_flops_per_token(
    recompute: ArrayLike, params_active: ArrayLike, n_layers: ArrayLike, d_model: ArrayLike, seq_len: ArrayLike
) -> np.ndarray:
    """Hardware FLOPs per token (HFU's numerator): model FLOPs plus what recomputation adds."""
    return model_flops_per_token(params_active, n_layers, d_model, seq_len) + recompute_flops_per_token(
        recompute, params_active, n_layers, d_model, seq_len
    )


def training_flops(
    params: ArrayLike,
    tokens: ArrayLike,
    n_layers: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
    seq_len: ArrayLike | None = None,
) -> np.ndarray:
    """Model FLOPs to train a transformer on ``tokens`` tokens: :func:`model_flops_per_token` × tokens.

    ``C = 6·N·D`` (Kaplan et al. 2020, sec. 2.1) plus, when the layer count, width and sequence length
    are given, PaLM's attention term ``12·L·d_model·seq_len·D``.
    """
    return model_flops_per_token(params, n_layers, d_model, seq_len) * np.asarray(tokens, float)


def model_tflops(
    tokens_per_s_per_gpu: ArrayLike,
    params_active: ArrayLike,
    n_layers: ArrayLike,
    d_model: ArrayLike,
    seq_len: ArrayLike,
) -> np.ndarray:
    """Model TFLOP/s per GPU of a published throughput in tokens per second per GPU, on the one basis."""
    return (
        np.asarray(tokens_per_s_per_gpu, float)
        * model_flops_per_token(params_active, n_layers, d_model, seq_len)
        / 1e12
    )
