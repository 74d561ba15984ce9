"""The calibrated step-time model: how long one training step of a transformer takes on a cluster,
from its shape, precision, parallel layout and the GPUs' datasheet, with a few fitted terms.

One step on ``n`` GPUs (all terms seconds per step, arrays broadcast over layouts):

```text
step = compute + bubble + exposed TP + pipeline sends + exposed DP + exposed EP + exposed CP
compute = tokens · [ F_linear / (peak_p · e_gemm) + F_attention / (peak_bf16 · e_attn(kernel))
                     + L · d · m_dense / HBM ] / n
e_gemm = e_max(GPU generation) / (1 + w0 / (d / tp) + t0 / (micro-batch tokens / cp))
```

- ``F_linear`` = ``6·N_active`` (+ ``2·N`` with full recomputation) runs at the dense peak of the
  training precision; ``F_attention`` = ``12·L·d·s`` (+ a third with recomputation) at the BF16
  peak (FlashAttention runs in BF16 in FP8 and FP4 recipes alike): :mod:`analyses.models.flops`.
  The attention kernel has its own efficiency on those FLOPs (PaLM's count, the causal mask not
  halved): ``e_attn`` for a FlashAttention-class kernel (FlashAttention 1-3, xformers' memory-efficient
  attention, cuDNN/Transformer Engine fused attention: the scores stay on chip, the tiles above the
  causal diagonal are skipped), ``e_attn_materialized`` for one that writes the score matrix to HBM
  and multiplies its masked half too (Megatron-LM's fused softmax of 2021, PyTorch eager attention),
  each fitted on the published runs of its kind.
- ``e_gemm`` is the kernel efficiency of the matrix multiplications: a ceiling per tensor-core
  generation, lowered when a GEMM is small (the width a TP shard multiplies, ``d/tp``, and the
  tokens of one micro-batch per context-parallel rank), the shape of a roofline with a fixed cost
  per tile.
- The memory-bound rest (norms, activations, residuals, casts; for a mixture of experts the routing
  and token permutation of its ``k`` active experts) moves ``m`` bytes per token, layer and unit of
  width through HBM; it does not speed up with FP8 or FP4, which is why their MFU is lower.
- ``bubble`` = ``b · compute · (pp−1)/(v·m)`` (Narayanan et al. 2021, sec. 2.2), ``b`` fitted.
- Tensor parallel: 4 all-reduces (6 with full recomputation) of a micro-batch's activations per
  layer; a fitted share ``x_tp`` of them is exposed (the rest overlaps GEMMs).
- Data parallel: the gradients of the GPU's parameters (dense part over ``dp·cp`` ranks, experts
  over ``dp·cp/ep``), a two-level all-reduce (1.5× the traffic for ZeRO-3/FSDP); a fitted share
  ``overlap`` hides behind compute, and never more than the compute time. A ZeRO-3 implementation
  measured to gather the weights synchronously at a rate of its own (the optional input
  ``gather_bytes_per_s``: DeepSpeed's of early 2021) gathers them forward and backward at that rate,
  none of it hidden; only its gradient reduce-scatter overlaps.
- Expert parallel: 4 all-to-alls of ``k`` copies of each token per MoE layer and micro-batch, over
  NVLink when ``tp·ep`` fits the NVLink domain, else over the NIC; a fitted share ``x_ep`` exposed.
- Context parallel: a ring passes K and V ``cp−1`` times forward and about twice that backward; only
  what the attention compute cannot hide is exposed.

:class:`Coefficients` holds the fitted terms; :func:`analyses.models.step_time_fit.fit` finds them
by damped Gauss-Newton (Levenberg-Marquardt, numpy only) on the log of published throughput of
declared calibration rows, each term pulled gently toward its textbook value (:data:`PRIOR`) so that
a term few rows inform stays where physics puts it. Bandwidths are bytes/s per direction, already multiplied by
the achievable share (nccl-tests busbw over wire rate). Collectives follow NCCL's bus-bandwidth
convention (nccl-tests ``doc/PERFORMANCE.md``): an all-reduce of ``S`` bytes over ``n`` ranks at bus
bandwidth ``B`` takes ``S/B · 2(n−1)/n``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from analyses.models import flops

DIES = ("A100", "H100", "B200", "B300")
"""The compute dies whose GEMM ceilings are fitted: a GPU is counted as the die it is a variant of
(``data/gpus.csv``: H800 and H200 of H100, GB200 of B200, GB300 of B300)."""
INPUTS = (
    "params_active",
    "params_total",
    "n_layers",
    "d_model",
    "seq_len",
    "kv_ratio",
    "n_experts",
    "experts_active",
    "n_gpus",
    "tp",
    "pp",
    "vp",
    "cp",
    "ep",
    "micro_batch",
    "global_batch",
    "recompute",
    "zero3",
    "die",
    "peak_flops",
    "peak_flops_bf16",
    "hbm_bytes_per_s",
    "nvlink_bytes_per_s",
    "nic_bytes_per_s",
    "gpus_per_node",
    "nvlink_domain_gpus",
    "latency_s",
)
"""What :func:`step_time` needs of each run (arrays or scalars that broadcast)."""
OPTIONAL = {
    "gather_bytes_per_s": np.inf,
    "stack_efficiency": 1.0,
    "attention_width": np.nan,
    "attention_span": np.nan,
    "moe_layers": np.nan,
    "flash": True,
}
"""What :func:`step_time` takes where a run has it, and the value where it does not: the rate (bytes of
16-bit weights per second per GPU) at which a ZeRO-3 implementation gathers the weights when it does so
synchronously and slower than NCCL (:func:`gather_rate`); infinite, NCCL's collectives, by default. The
training stack's efficiency, the share of the reference stack's throughput it reaches on the same layout
(fitted per stack on published runs: :mod:`analyses.scenario.calibration`), 1 by default: the step is
the reference stack's divided by it. The attention's width and span (``attention_width``: heads times
the mean of the query-key and value head sizes where it differs from ``d_model``, as multi-head latent
attention and wide-head models have; ``attention_span``: the keys a query sees as counted, ``min(s, 2w)``
for a sliding window ``w``, :func:`analyses.models.flops.attention_span`), NaN where they are
``d_model`` and ``seq_len``; the layers that hold experts (``moe_layers``: a mixture of experts' dense
layers have none), NaN where every layer does; and whether the attention kernel is FlashAttention-class
(``flash``, true by default: every stack since 2023) or materialises the scores in HBM."""


@dataclass(frozen=True)
class Coefficients:
    """The fitted terms of the step-time model (see the module docstring for where each enters)."""

    e_max_a100: float  # GEMM efficiency ceiling of the A100 die
    e_max_h100: float  # H100, H800, H200
    e_max_b200: float  # B200, GB200
    e_max_b300: float  # B300, GB300 (Blackwell Ultra)
    gemm_width: float  # w0, elements of d/tp at which GEMM efficiency halves
    gemm_tokens: float  # t0, micro-batch tokens per CP rank at which GEMM efficiency halves
    e_attn: float  # FlashAttention-class kernels' share of the BF16 peak (PaLM's attention FLOPs)
    e_attn_materialized: float  # the same for a kernel that writes the score matrix to HBM
    mem_dense: float  # bytes per token, layer and unit of d_model through HBM (non-GEMM work)
    moe_gemm: float  # grouped expert GEMMs' efficiency relative to a dense GEMM of the same shape
    bubble: float  # multiplier of the schedule's pipeline bubble
    dp_overlap: float  # share of the gradient exchange hidden behind compute
    tp_exposed: float  # share of tensor-parallel collectives exposed
    ep_exposed: float  # share of expert-parallel all-to-alls exposed

    def e_max(self, die: ArrayLike) -> np.ndarray:
        """The GEMM efficiency ceiling of each compute ``die``: a name of :data:`DIES`, or its index
        there (:func:`die_index`)."""
        values = np.array([getattr(self, f"e_max_{x.lower()}") for x in DIES])
        return values[die_index(die)]

    def as_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


NAMES = tuple(f.name for f in fields(Coefficients))


def die_index(die: ArrayLike) -> np.ndarray:
    """The index in :data:`DIES` of each die name (integers pass through); ValueError names an unknown die."""
    d = np.asarray(die)
    if d.dtype.kind in "iu":
        return d
    bad = ~np.isin(d, DIES)
    if np.any(bad):
        raise ValueError(f"die must be one of {DIES}, got {np.unique(d[bad]).tolist()}")
    return np.select([d == x for x in DIES], list(range(len(DIES))))


PRIOR = Coefficients(
    e_max_a100=0.7,
    e_max_h100=0.7,
    e_max_b200=0.7,
    e_max_b300=0.7,
    gemm_width=128.0,
    gemm_tokens=256.0,
    e_attn=0.4,
    e_attn_materialized=0.3,
    mem_dense=100.0,
    moe_gemm=0.5,
    bubble=1.0,
    dp_overlap=0.5,
    tp_exposed=0.5,
    ep_exposed=0.5,
)
"""Where each term sits before the data speak, and the anchor the fit is pulled toward.

GEMM ceilings 70% (cuBLAS on large shapes reaches 70-80% of the dense peak); width and token
half-points of one 128 × 256 tile; FlashAttention at 40% of the BF16 peak (FlashAttention-2 reaches
50-70% forward, less backward), a kernel that materialises the scores at 30% (batched GEMMs over the
whole score matrix and softmax passes through HBM); about 20 bytes per token, layer and unit of width
(some ten reads and writes of a 16-bit activation per layer); the textbook bubble (1); half of the gradient
exchange, tensor- and expert-parallel traffic exposed."""


# --------------------------------------------------------------------------------------------
# Collectives
# --------------------------------------------------------------------------------------------


def allreduce_time_s(size_bytes: ArrayLike, bus_bytes_per_s: ArrayLike, n: ArrayLike) -> np.ndarray:
    """All-reduce of ``size_bytes`` over ``n`` ranks at bus bandwidth B: ``S/B · 2(n−1)/n`` seconds."""
    n = np.asarray(n, float)
    return np.asarray(size_bytes, float) / np.asarray(bus_bytes_per_s, float) * 2.0 * (n - 1.0) / np.maximum(n, 1.0)


def hierarchical_allreduce_time_s(
    size_bytes: ArrayLike,
    local_ranks: ArrayLike,
    nodes: ArrayLike,
    nvlink_bytes_per_s: ArrayLike,
    nic_bytes_per_s: ArrayLike,
) -> np.ndarray:
    """Two-level all-reduce: reduce-scatter + all-gather over NVLink among ``local_ranks`` GPUs of a
    node, and an all-reduce of each GPU's ``S/local_ranks`` shard across ``nodes`` on its own NIC.

    ``t = S/B_nvl · 2(k−1)/k + (S/k)/B_nic · 2(M−1)/M`` seconds. The inter-node term equals a ring whose
    bus bandwidth is ``k · B_nic``, the node's aggregate NIC bandwidth, which multi-node nccl-tests report.
    """
    k = np.maximum(np.asarray(local_ranks, float), 1.0)
    size = np.asarray(size_bytes, float)
    return allreduce_time_s(size, nvlink_bytes_per_s, k) + allreduce_time_s(size / k, nic_bytes_per_s, nodes)


# --------------------------------------------------------------------------------------------
# The step
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """Parts of one training step, seconds (arrays over the inputs), and the rates they imply."""

    gemm_s: np.ndarray
    attention_s: np.ndarray
    memory_s: np.ndarray
    recompute_s: np.ndarray  # the part of gemm + attention + memory that recomputation adds
    bubble_s: np.ndarray
    tp_s: np.ndarray
    pp_s: np.ndarray
    dp_s: np.ndarray  # the whole gradient exchange
    dp_exposed_s: np.ndarray
    ep_s: np.ndarray  # exposed all-to-all
    cp_s: np.ndarray  # exposed context-parallel ring
    stack_s: np.ndarray  # what the training stack adds to (or saves from) the reference stack's step
    step_s: np.ndarray
    tokens_per_step: np.ndarray
    n_gpus: np.ndarray
    model_flops_per_token: np.ndarray
    kernel_efficiency: np.ndarray  # e_gemm

    @property
    def compute_s(self) -> np.ndarray:
        """GEMMs, attention and memory-bound kernels, recomputation included."""
        return self.gemm_s + self.attention_s + self.memory_s

    @property
    def tokens_per_s_per_gpu(self) -> np.ndarray:
        return self.tokens_per_step / (self.step_s * self.n_gpus)

    def model_tflops(self) -> np.ndarray:
        """Model TFLOP/s per GPU (:mod:`analyses.models.flops`)."""
        return self.tokens_per_s_per_gpu * self.model_flops_per_token / 1e12

    def mfu(self, peak_flops: ArrayLike) -> np.ndarray:
        """Model FLOPs utilisation against ``peak_flops`` (the dense peak at the training precision)."""
        return self.tokens_per_s_per_gpu * self.model_flops_per_token / np.asarray(peak_flops, float)


def _f(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


def routed_expert_params(
    params_total: ArrayLike, params_active: ArrayLike, n_experts: ArrayLike, experts_active: ArrayLike
) -> np.ndarray:
    """Parameters of a mixture of experts' routed experts, all of them: ``(N − N_active) / (1 − k/E)``.

    A token uses the dense part and ``k`` of the ``E`` routed experts, so ``N_active = dense + R·k/E``
    and ``N = dense + R``. DeepSeek-V3 (671B, 37B active, 8 of 256): R = 654B, dense part 17B. Zero for
    a dense model (``n_experts`` ≤ 1).
    """
    nt, na = _f(params_total), _f(params_active)
    e, k = _f(n_experts), _f(experts_active)
    moe = e > 1
    return np.where(moe, (nt - na) / np.maximum(1.0 - k / np.maximum(e, 1.0), 1e-9), 0.0)


def gather_rate(params: ArrayLike, forward_s: ArrayLike, forward_without_gathers_s: ArrayLike) -> np.ndarray:
    """Bytes of 16-bit weights a ZeRO-3 implementation gathers per second per GPU, from one measured
    forward pass with and without the gathering: ``2·N / (t_ZeRO-3 − t_without)``. DeepSpeed 0.3.16 on
    8 A100 (issue #1174): a 5.1B model's forward took 480 ms under ZeRO-3 and 60 ms under ZeRO-2, so
    10.2 GB in 0.42 s, about 24 GB/s per GPU (ValueError names a forward pass no longer than the other)."""
    t, t0 = _f(forward_s), _f(forward_without_gathers_s)
    if np.any(t <= t0):
        raise ValueError("forward_s must be longer than forward_without_gathers_s (the gathering takes the difference)")
    return 2.0 * _f(params) / (t - t0)


@dataclass(frozen=True)
class Layout:
    """A run's shape, parallel layout and fabric as the step's terms read them (arrays that broadcast)."""

    layers: np.ndarray
    d: np.ndarray  # d_model
    n: np.ndarray  # GPUs
    tp: np.ndarray  # tensor-, pipeline-, context- and expert-parallel sizes (at least 1), virtual stages
    pp: np.ndarray
    vp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    dp: np.ndarray  # data-parallel size, n / (tp·pp·cp), at least 1
    tokens: np.ndarray  # tokens per step
    mb_tokens: np.ndarray  # tokens of one micro-batch on one GPU
    microbatches: np.ndarray  # micro-batches per step and data-parallel rank, at least 1
    node: np.ndarray  # GPUs per node
    domain: np.ndarray  # GPUs per NVLink domain
    b_nvl: np.ndarray  # NVLink bus bandwidth, bytes/s per direction
    b_nic: np.ndarray  # the NIC's, bytes/s per direction

    @classmethod
    def of(cls, run: Mapping[str, Any]) -> Layout:
        """The layout of ``run`` (:func:`step_time`'s inputs)."""
        layers, d, s, n = (_f(run[k]) for k in ("n_layers", "d_model", "seq_len", "n_gpus"))
        tp, pp, vp, cp, ep = (np.maximum(_f(run[k]), 1.0) for k in ("tp", "pp", "vp", "cp", "ep"))
        dp = np.maximum(n / (tp * pp * cp), 1.0)
        batch, micro = _f(run["global_batch"]), _f(run["micro_batch"])
        microbatches = np.maximum(batch / (dp * micro), 1.0)
        node, domain = _f(run["gpus_per_node"]), _f(run["nvlink_domain_gpus"])
        b_nvl, b_nic = _f(run["nvlink_bytes_per_s"]), _f(run["nic_bytes_per_s"])
        return cls(
            layers, d, n, tp, pp, vp, cp, ep, dp, batch * s, micro * s / cp, microbatches, node, domain, b_nvl, b_nic
        )


@dataclass(frozen=True)
class Experts:
    """A mixture of experts' routed experts as the step sees them (zeros and the dense layer's width and
    tokens for a dense model): their parameters, all of them and those a token uses; the layers that
    hold them; their width (three matrices each, a gated MLP); the tokens one expert multiplies per
    micro-batch; and ``k`` of ``E`` active."""

    moe: np.ndarray  # bool: more than one routed expert
    params: np.ndarray
    active_params: np.ndarray
    layers: np.ndarray
    width: np.ndarray
    tokens: np.ndarray
    k: np.ndarray

    @classmethod
    def of(cls, run: Mapping[str, Any], lay: Layout) -> Experts:
        """The experts of ``run`` on the layout ``lay``."""
        k, n_exp = _f(run["experts_active"]), _f(run["n_experts"])
        moe = n_exp > 1
        params = routed_expert_params(_f(run["params_total"]), _f(run["params_active"]), n_exp, k)
        active = np.where(moe, params * k / np.maximum(n_exp, 1.0), 0.0)
        layers = _f(run["moe_layers"])
        layers = np.where(np.isnan(layers), lay.layers, layers)
        width = np.where(moe, params / np.maximum(n_exp, 1.0) / (3.0 * lay.d * np.maximum(layers, 1.0)), lay.d)
        tokens = np.where(moe, lay.ep * lay.mb_tokens * k / np.maximum(n_exp, 1.0), lay.mb_tokens)
        return cls(moe, params, active, layers, width, tokens, k)


@dataclass(frozen=True)
class Compute:
    """The compute of one step on one GPU, seconds, recomputation included: GEMMs at the training
    precision's peak, attention at the BF16 peak, the memory-bound rest through HBM."""

    gemm_s: np.ndarray
    attention_s: np.ndarray
    memory_s: np.ndarray
    recompute_s: np.ndarray  # the part of the three that recomputation adds
    kernel_efficiency: np.ndarray  # e_gemm of a dense GEMM


def compute_time(
    coef: Coefficients, run: Mapping[str, Any], lay: Layout, experts: Experts, width: np.ndarray, span: np.ndarray
) -> Compute:
    """The compute term (module docstring): ``tokens · [F_linear / (peak_p · e_gemm) + F_attention /
    (peak_bf16 · e_attn) + L · d · m_dense / HBM] / n``, a third more with full recomputation; the routed
    experts' GEMMs at ``moe_gemm`` times a GEMM's efficiency at their width and tokens. ``width`` and
    ``span``: the attention's (PaLM's FLOPs, :func:`analyses.models.flops.attention_flops_per_token`)."""
    d, tp, tokens, n = lay.d, lay.tp, lay.tokens, lay.n
    e_max = coef.e_max(run["die"])
    e_gemm = e_max / (1.0 + coef.gemm_width / (d / tp) + coef.gemm_tokens / lay.mb_tokens)
    e_expert = coef.moe_gemm * e_max / (1.0 + coef.gemm_width / experts.width + coef.gemm_tokens / experts.tokens)
    extra = np.where(np.asarray(run["recompute"]) == "full", 1.0 / 3.0, 0.0)  # the forward pass (a third) again
    na, expert_active = _f(run["params_active"]), experts.active_params
    linear = flops.flops_per_token(na - expert_active) / e_gemm + flops.flops_per_token(expert_active) / e_expert
    attention = flops.attention_flops_per_token(lay.layers, width, span)
    e_attn = np.where(np.asarray(run["flash"], dtype=bool), coef.e_attn, coef.e_attn_materialized)
    gemm = tokens * linear * (1.0 + extra) / (n * _f(run["peak_flops"]))
    attn = tokens * attention * (1.0 + extra) / (n * _f(run["peak_flops_bf16"]) * e_attn)
    per_token_bytes = lay.layers * d * coef.mem_dense
    mem = tokens * per_token_bytes * (1.0 + extra) / (n * _f(run["hbm_bytes_per_s"]))
    compute = gemm + attn + mem
    return Compute(gemm, attn, mem, compute * extra / (1.0 + extra), e_gemm)


def tensor_parallel_s(lay: Layout, full: np.ndarray) -> np.ndarray:
    """Tensor-parallel all-reduces of one step, seconds, before overlap: 4 of a micro-batch's 16-bit
    activations per layer (6 with full recomputation ``full``), over NVLink when ``tp`` fits its domain."""
    tp = lay.tp
    per_ar = allreduce_time_s(lay.mb_tokens * lay.d * 2.0, np.where(tp <= lay.domain, lay.b_nvl, lay.b_nic), tp)
    return np.where(tp > 1, lay.microbatches * (lay.layers / lay.pp) * np.where(full, 6.0, 4.0) * per_ar, 0.0)


def pipeline_sends_s(lay: Layout) -> np.ndarray:
    """Pipeline sends of one step, seconds: each micro-batch's 16-bit activations cross each stage
    boundary forward and backward, over NVLink when ``tp·pp·cp`` fits a node."""
    p2p_bytes = 2.0 * lay.microbatches * lay.mb_tokens * lay.d * 2.0 * lay.vp / lay.tp
    fabric = np.where(lay.tp * lay.pp * lay.cp <= lay.node, lay.b_nvl, lay.b_nic)
    return np.where(lay.pp > 1, p2p_bytes / fabric, 0.0)


def data_parallel_s(
    coef: Coefficients, run: Mapping[str, Any], lay: Layout, expert_params: np.ndarray, compute_s: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The gradient exchange of one step, seconds: the whole of it and what is exposed after overlap
    with ``compute_s``. The gradients of this GPU's parameters (the routed experts' over ``ep`` times
    fewer ranks) in a two-level all-reduce over the ``dp·cp`` ranks, plus a latency per hop."""
    tp, pp, b_nvl, b_nic = lay.tp, lay.pp, lay.b_nvl, lay.b_nic
    dense_params = _f(run["params_total"]) - expert_params
    # ZeRO-3/FSDP gathers the weights forward and backward and reduce-scatters the gradients: 1.5× an
    # all-reduce's traffic (Rajbhandari et al. 2020, sec. 7.2.2). An implementation measured to gather
    # synchronously at a rate of its own (``gather_bytes_per_s``) runs the two gathers at that rate, in
    # the open; its reduce-scatter (half an all-reduce) stays a collective that overlaps as fitted.
    zero3 = np.asarray(run["zero3"], dtype=bool)
    rate = _f(run["gather_bytes_per_s"])
    own_gathers = zero3 & np.isfinite(rate)
    shard_bytes = 2.0 * (dense_params + expert_params / lay.ep) / (tp * pp)  # 16-bit weights of this GPU's part
    volume = np.where(zero3, np.where(own_gathers, 0.5, 1.5), 1.0)
    ranks = lay.dp * lay.cp
    local = np.minimum(np.clip(np.floor(lay.node / (tp * pp)), 1.0, None), ranks)
    nodes = np.maximum(ranks / local, 1.0)
    collective = hierarchical_allreduce_time_s(volume * shard_bytes, local, nodes, b_nvl, b_nic)
    collective = np.where(ranks > 1, collective + 2.0 * np.log2(np.maximum(ranks, 1.0)) * _f(run["latency_s"]), 0.0)
    # never faster than NCCL would move them (two all-gathers: one all-reduce's traffic)
    nccl_gathers = hierarchical_allreduce_time_s(shard_bytes, local, nodes, b_nvl, b_nic)
    gathers = np.where(own_gathers & (ranks > 1), np.maximum(2.0 * shard_bytes / rate, nccl_gathers), 0.0)
    exposed = np.maximum(collective * (1.0 - coef.dp_overlap), collective - compute_s) + gathers
    return collective + gathers, exposed


def expert_parallel_s(lay: Layout, experts: Experts) -> np.ndarray:
    """Expert-parallel all-to-alls of one step, seconds, before overlap: dispatch and combine, forward
    and backward, ``k`` copies of each token per MoE layer and micro-batch, over NVLink when ``tp·ep``
    fits its domain."""
    ep = lay.ep
    fabric = np.where(lay.tp * ep <= lay.domain, lay.b_nvl, lay.b_nic)
    a2a = lay.mb_tokens * experts.k * lay.d * 2.0 * (ep - 1.0) / ep / fabric
    return np.where(experts.moe & (ep > 1), lay.microbatches * (experts.layers / lay.pp) * 4.0 * a2a, 0.0)


def context_parallel_s(lay: Layout, width: np.ndarray, kv_ratio: np.ndarray) -> np.ndarray:
    """The context-parallel ring of one step, seconds, before overlap: K and V (``kv_ratio`` of the
    attention ``width``) around ``cp`` ranks, forward once and backward twice."""
    cp = lay.cp
    kv = 2.0 * lay.mb_tokens * width * kv_ratio * 2.0
    fabric = np.where(lay.tp * cp <= lay.domain, lay.b_nvl, lay.b_nic)
    return np.where(cp > 1, lay.microbatches * (lay.layers / lay.pp) * 3.0 * (cp - 1.0) * kv / fabric, 0.0)


def step_time(coef: Coefficients, **run: Any) -> Step:
    """One training step of every run in ``run`` (keyword arrays named as :data:`INPUTS`, and any of
    :data:`OPTIONAL`): the terms of the module docstring, each its own function above."""
    missing = [k for k in INPUTS if k not in run]
    if missing:
        raise TypeError(f"step_time needs {', '.join(missing)}")
    run = OPTIONAL | run
    lay = Layout.of(run)
    experts = Experts.of(run, lay)
    width, span = _f(run["attention_width"]), _f(run["attention_span"])
    width, span = np.where(np.isnan(width), lay.d, width), np.where(np.isnan(span), _f(run["seq_len"]), span)
    c = compute_time(coef, run, lay, experts, width, span)
    compute = c.gemm_s + c.attention_s + c.memory_s

    bubble = coef.bubble * compute * (lay.pp - 1.0) / (lay.vp * lay.microbatches)  # Narayanan et al. 2021, 2.2
    tp_exposed = coef.tp_exposed * tensor_parallel_s(lay, np.asarray(run["recompute"]) == "full")
    pp_time = pipeline_sends_s(lay)
    dp_time, dp_exposed = data_parallel_s(coef, run, lay, experts.params, compute)
    ep_exposed = coef.ep_exposed * expert_parallel_s(lay, experts)
    cp_exposed = np.maximum(context_parallel_s(lay, width, _f(run["kv_ratio"])) - c.attention_s, 0.0)

    reference = compute + bubble + tp_exposed + pp_time + dp_exposed + ep_exposed + cp_exposed
    step = reference / _f(run["stack_efficiency"])  # the training stack's own step
    mflops = flops.model_flops_per_token(_f(run["params_active"]), lay.layers, width, span)
    parts = (c.gemm_s, c.attention_s, c.memory_s, c.recompute_s, bubble, tp_exposed, pp_time, dp_time, dp_exposed)
    parts += (ep_exposed, cp_exposed, step - reference)
    arrays = np.broadcast_arrays(*parts, step, lay.tokens, lay.n, mflops, c.kernel_efficiency)
    return Step(*arrays)


def with_values(coef: Coefficients, **changes: float) -> Coefficients:
    """A copy of ``coef`` with some terms changed."""
    return replace(coef, **changes)
