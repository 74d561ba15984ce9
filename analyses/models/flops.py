"""Training FLOPs, stated once: the model FLOPs of a dense transformer per token and per run.

Every model that converts between parameters, tokens, FLOPs and time (time to train, tokens per
second, MFU, tokens per parameter for a compute budget) calls these two functions.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

FLOP_PER_PARAM_PER_TOKEN = 6.0  # 2N forward + 4N backward per token (Kaplan et al. 2020, sec. 2.1)


def flops_per_token(params: ArrayLike) -> np.ndarray:
    """Model FLOPs per training token of a dense transformer of ``params`` parameters: ``6·N``."""
    return FLOP_PER_PARAM_PER_TOKEN * np.asarray(params, float)


def training_flops(
    params: ArrayLike,
    tokens: ArrayLike,
    n_layers: ArrayLike | None = None,
    d_model: ArrayLike | None = None,
    seq_len: ArrayLike | None = None,
) -> np.ndarray:
    """Model FLOPs to train a dense transformer, FLOP.

    ``6·N·D`` (Kaplan et al. 2020, sec. 2.1: 2N forward + 4N backward per token) plus, when the
    layer count, width and sequence length are given, the attention-score term of PaLM's
    appendix B, ``12·L·H·Q·T`` per token with ``H·Q = d_model`` and ``T = seq_len``:
    ``C = 6·N·D + 12·L·d_model·seq_len·D``.

    Parameters
    ----------
    params
        Parameter count N.
    tokens
        Training tokens D.
    n_layers, d_model, seq_len
        Layers L, hidden size, sequence length (all three or none).
    """
    flops = flops_per_token(params) * np.asarray(tokens, float)
    if n_layers is not None and d_model is not None and seq_len is not None:
        attention_per_token = (
            12.0 * np.asarray(n_layers, float) * np.asarray(d_model, float) * np.asarray(seq_len, float)
        )
        flops = flops + attention_per_token * np.asarray(tokens, float)
    return flops
