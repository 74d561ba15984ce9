"""Activation memory of a transformer layer: what it stores for backward, by layout and recomputation.

Two accountings: :func:`activation_bytes_per_layer`, Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models" (MLSys 2023), Sec. 4, Eq. 1-6 and Table 2, for a
Megatron-style GPT block with 16-bit activations; and :func:`torch_eager_activation_bytes_per_layer`,
the tensors a plain PyTorch block saves, which ``tools/measure_memory.py`` measures. Both take plain
numbers or numpy arrays and broadcast; the string options are scalars.
"""

from __future__ import annotations

import numpy as np

RECOMPUTE = ("none", "selective", "full")


def activation_bytes_per_layer(
    seq_len,
    micro_batch,
    hidden,
    heads,
    *,
    tp=1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    flash: bool = False,
):
    """Activation bytes one transformer layer stores for backward (bytes, 16-bit activations).

    Korthikanti et al. 2022, Table 2 (s = ``seq_len``, b = ``micro_batch``, h, a, t = ``tp``):

    - no parallelism: sbh(34 + 5as/h) (Eq. 1)
    - tensor parallel: sbh(10 + 24/t + 5as/(ht)) (Eq. 2)
    - tensor + sequence parallel: sbh/t·(34 + 5as/h) (Eq. 4)
    - selective recompute: sbh(10 + 24/t) without, 34·sbh/t with sequence parallelism (Eq. 6)
    - full recompute: only the layer input, 2sbh (2sbh/t with sequence parallelism).

    ``flash=True`` models a fused attention kernel (FlashAttention) that never stores the a·s²·b
    attention matrices: the 5as/h term is dropped (its per-row softmax statistics are ignored).
    GPT-style block with f = 4h and dropout, as in the paper.
    """
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    s, b = np.asarray(seq_len, float), np.asarray(micro_batch, float)
    h, a, t = np.asarray(hidden, float), np.asarray(heads, float), np.asarray(tp, float)
    sbh = s * b * h
    if recompute == "full":
        return 2.0 * sbh / (t if sequence_parallel else 1.0)
    attn = 0.0 if (flash or recompute == "selective") else 5.0 * a * s / h
    if sequence_parallel:
        return sbh / t * (34.0 + attn)
    return sbh * (10.0 + 24.0 / t + attn / t)


def torch_eager_activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, *, attention="eager", dtype="fp32"):
    """Bytes a plain PyTorch pre-LN GPT block saves for backward (the measured alternative accounting).

    Counted from the tensors autograd saves in the block of ``tools/measure_memory.py`` (LayerNorm,
    fused QKV ``nn.Linear``, explicit softmax(QKᵀ/√d + causal mask)·V or
    ``F.scaled_dot_product_attention``, output ``nn.Linear``, LayerNorm, fc1, exact GELU, fc2; no
    dropout), each distinct storage once:

    - ``fp32``: LN inputs 2·sbh and their mean/rstd 4·sb elements; QKV input sbh; the QKV output
      3sbh (Q, K, V are views of it); softmax output as²b; attention output (contiguous) sbh; fc1
      input sbh; GELU input 4sbh; fc2 input 4sbh; ×4 bytes. With ``attention="sdpa"`` (CPU flash
      kernel) the as²b term becomes the fp32 logsumexp a·s·b (the kernel's output doubles as the
      output projection's input).
    - ``bf16`` (autocast): LayerNorm stays fp32 (its input 4 B, stats 4 B); each linear saves a bf16
      copy of its input (2 B); QKV output, attention output, GELU input/output are bf16; the eager
      softmax runs in fp32 (4as²b) and matmul saves a bf16 copy of the probabilities (2as²b).
      Autocast's bf16 weight copies are counted separately (``weight_cast_bytes``), not here.

    Returns bytes per layer.
    """
    s, b = np.asarray(seq_len, float), np.asarray(micro_batch, float)
    h, a = np.asarray(hidden, float), np.asarray(heads, float)
    sbh, sb, as2b = s * b * h, s * b, a * s * s * b
    if dtype == "fp32":
        e = 4.0
        base = e * (2 * sbh + sbh + 3 * sbh + sbh + sbh + 4 * sbh + 4 * sbh) + 4.0 * 4 * sb
        if attention == "eager":
            return base + e * as2b
        # SDPA flash kernel on CPU: saves its output, whose (b, s, a, d) layout makes the output
        # projection's input a view of it (already counted), plus the fp32 logsumexp (a·s·b)
        return base + 4.0 * a * s * b
    if dtype == "bf16":
        ln = 2 * (4.0 * sbh + 2 * 4.0 * sb)
        lin_inputs = 2.0 * (sbh + sbh + sbh + 4 * sbh)  # qkv, out-proj, fc1, fc2 inputs (bf16 copies)
        qkv_out = 2.0 * 3 * sbh
        gelu_in = 2.0 * 4 * sbh
        base = ln + lin_inputs + qkv_out + gelu_in
        if attention == "eager":
            return base + 4.0 * as2b + 2.0 * as2b
        return base + 4.0 * a * s * b
    raise ValueError("dtype must be fp32 or bf16")
