"""Activation memory of a transformer layer: what it stores for backward, by layout and recomputation.

Two accountings: :func:`activation_bytes_per_layer`, Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models" (MLSys 2023), Sec. 4, Eq. 1-6 and Table 2, for a
Megatron-style GPT block with 16-bit activations; and :func:`torch_eager_activation_bytes_per_layer`,
the tensors a plain PyTorch block saves, which ``tools/measure_memory.py`` measures. Both take plain
numbers or numpy arrays and broadcast; the string options are scalars.
"""

from __future__ import annotations

import numpy as np

RECOMPUTE = ("none", "selective", "full", "op")


def layer_activation_parts(
    seq_len,
    micro_batch,
    hidden,
    heads,
    *,
    ffn_hidden=None,
    kv_heads=None,
    gated_mlp: bool = False,
    dropout: bool = True,
    flash: bool = False,
) -> dict[str, np.ndarray]:
    """Bytes one transformer layer stores for backward, by part, without parallelism or recomputation.

    Korthikanti et al. 2022, Sec. 4.1, term by term, for any MLP width, grouped-query attention, a
    gated MLP and with or without dropout (16-bit activations, 1-byte dropout masks):

    - ``attention``: the QKV input 2sbh, Q 2sbh, K and V 2sbh·(kv/a) each, the projection input
      2sbh, its dropout mask sbh; plus ``scores``: softmax output 2as²b, and with dropout its mask
      as²b and output 2as²b (none with a fused, flash kernel).
    - ``mlp``: its input 2sbh; per f-wide tensor 2sbf/h: the first linear's output and the
      activation's output (GeLU), or gate, up, the activation of the gate and their product (gated);
      the dropout mask sbh.
    - ``norms``: the inputs of the two norms, 4sbh.
    - ``unsplit``: what tensor parallelism without sequence parallelism leaves whole on every rank
      (norm inputs, the QKV and MLP inputs, both dropout masks): 10sbh for a GPT block.

    With f = 4h, a = kv, no gate and dropout the total is the paper's sbh(34 + 5as/h) (Eq. 1).
    """
    s, b = np.asarray(seq_len, float), np.asarray(micro_batch, float)
    h, a = np.asarray(hidden, float), np.asarray(heads, float)
    f = 4.0 * h if ffn_hidden is None else np.asarray(ffn_hidden, float)
    kvr = 1.0 if kv_heads is None else np.asarray(kv_heads, float) / a
    d = 1.0 if dropout else 0.0
    sbh = s * b * h
    scores = 0.0 if flash else (2.0 + 3.0 * d) * a * s * s * b
    return {
        "attention": sbh * (2.0 + 2.0 + 4.0 * kvr + 2.0 + d),
        "scores": np.asarray(scores, float) * np.ones_like(sbh),
        "mlp": sbh * (2.0 + (8.0 if gated_mlp else 4.0) * f / h + d),
        "norms": 4.0 * sbh,
        "unsplit": sbh * (4.0 + 2.0 + 2.0 + 2.0 * d),
    }


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
    ffn_hidden=None,
    kv_heads=None,
    gated_mlp: bool = False,
    dropout: bool = True,
    moe_topk=1,
):
    """Activation bytes one transformer layer stores for backward (bytes, 16-bit activations).

    Korthikanti et al. 2022, Table 2 (s = ``seq_len``, b = ``micro_batch``, h, a, t = ``tp``):

    - no parallelism: sbh(34 + 5as/h) (Eq. 1)
    - tensor parallel: sbh(10 + 24/t + 5as/(ht)) (Eq. 2)
    - tensor + sequence parallel: sbh/t·(34 + 5as/h) (Eq. 4)
    - selective recompute: sbh(10 + 24/t) without, 34·sbh/t with sequence parallelism (Eq. 6)
    - full recompute: only the layer input, 2sbh (2sbh/t with sequence parallelism).
    - ``op``: operator-level selective checkpointing as torchtitan's ``selective`` mode does it
      (``apply_ac`` in torchtitan's parallelize_llama.py: outputs of every other matmul and of the
      attention kernel are saved, everything else recomputed): the layer input, Q, V, the attention
      output, the gate (first MLP matmul) and the MLP output, 2sbh·(4 + kv/a + f/h) bytes.

    ``flash=True`` models a fused attention kernel (FlashAttention) that never stores the a·s²·b
    attention matrices: the 5as/h term is dropped (its per-row softmax statistics are ignored).
    The defaults are the paper's GPT-style block (f = 4h, dropout); ``ffn_hidden``, ``kv_heads``,
    ``gated_mlp`` and ``dropout`` give any other block term by term (:func:`layer_activation_parts`),
    and ``moe_topk`` multiplies the MLP part by the experts each token visits (a mixture-of-experts
    layer with expert MLPs of width ``ffn_hidden``). A sequence split over context-parallel ranks is
    ``seq_len`` / cp.
    """
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    s, b = np.asarray(seq_len, float), np.asarray(micro_batch, float)
    h, t = np.asarray(hidden, float), np.asarray(tp, float)
    sbh = s * b * h
    if recompute == "full":
        return 2.0 * sbh / (t if sequence_parallel else 1.0)
    if recompute == "op":
        f = 4.0 * h if ffn_hidden is None else np.asarray(ffn_hidden, float)
        kvr = 1.0 if kv_heads is None else np.asarray(kv_heads, float) / np.asarray(heads, float)
        split = sbh * (2.0 + 2.0 * kvr + 2.0 + 2.0 * np.asarray(moe_topk, float) * f / h)  # Q, V, attention out, gate
        whole = 4.0 * sbh  # the layer's input and its MLP output
        return (whole + split) / t if sequence_parallel else whole + split / t
    p = layer_activation_parts(
        seq_len,
        micro_batch,
        hidden,
        heads,
        ffn_hidden=ffn_hidden,
        kv_heads=kv_heads,
        gated_mlp=gated_mlp,
        dropout=dropout,
        flash=flash or recompute == "selective",
    )
    k = np.asarray(moe_topk, float)
    whole = p["attention"] + k * p["mlp"] + p["norms"]
    unsplit = p["unsplit"] + (k - 1.0) * 2.0 * sbh  # every expert's copy of its input stays whole
    if sequence_parallel:
        return (whole + p["scores"]) / t
    return unsplit + (whole - unsplit + p["scores"]) / t


def recompute_workspace_bytes(
    seq_len, micro_batch, hidden, heads, *, tp=1, sequence_parallel=False, recompute="full", **block
):
    """Bytes the backward pass of one recomputed layer holds on top of what is stored: the layer's
    activations rebuilt by the recomputation (all of them for full recomputation, the attention
    scores for selective; none without), :func:`activation_bytes_per_layer` at ``recompute="none"``
    less what the stored form already keeps. ``block`` takes the block's shape switches."""
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    args = (seq_len, micro_batch, hidden, heads)
    kw = {"tp": tp, "sequence_parallel": sequence_parallel, **block}
    if recompute == "none":
        return np.zeros_like(np.asarray(activation_bytes_per_layer(*args, **kw), float))
    return activation_bytes_per_layer(*args, recompute="none", **kw) - activation_bytes_per_layer(
        *args, recompute=recompute, **kw
    )


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
