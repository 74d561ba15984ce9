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

:class:`Coefficients` holds the fitted terms; :func:`fit` finds them by damped Gauss-Newton
(Levenberg-Marquardt, numpy only) on the log of published throughput of declared calibration
rows, each term pulled gently toward its textbook value (:data:`PRIOR`) so that a term few rows
inform stays where physics puts it. Bandwidths are bytes/s per direction, already multiplied by
the achievable share (nccl-tests busbw over wire rate). Collectives follow NCCL's bus-bandwidth
convention (nccl-tests ``doc/PERFORMANCE.md``): an all-reduce of ``S`` bytes over ``n`` ranks at bus
bandwidth ``B`` takes ``S/B · 2(n−1)/n``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


# How each coefficient is transformed for the fit: shares in (0, 1) by a logit, positives by a log
SHARES = {
    "e_max_a100",
    "e_max_h100",
    "e_max_b200",
    "e_max_b300",
    "e_attn",
    "e_attn_materialized",
    "moe_gemm",
    "dp_overlap",
    "tp_exposed",
    "ep_exposed",
}

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

PRIOR_SD = 1.0
"""Standard deviation of each anchor in the fit's transformed space (log or logit): a weak pull,
e^1 ≈ 2.7× either way, so the data decide whenever a few rows inform a term."""

RESIDUAL_SD = 0.15
"""The scatter expected of one published row around the model, in ``ln`` (about 15%): software
stacks, clocks and unprinted settings differ. It weighs the rows against the anchors."""


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


def step_time(coef: Coefficients, **run: Any) -> Step:
    """One training step of every run in ``run`` (keyword arrays named as :data:`INPUTS`, and any of
    :data:`OPTIONAL`)."""
    missing = [k for k in INPUTS if k not in run]
    if missing:
        raise TypeError(f"step_time needs {', '.join(missing)}")
    run = OPTIONAL | run
    na, nt = _f(run["params_active"]), _f(run["params_total"])
    layers, d, s = _f(run["n_layers"]), _f(run["d_model"]), _f(run["seq_len"])
    n = _f(run["n_gpus"])
    tp, pp, vp, cp, ep = (np.maximum(_f(run[k]), 1.0) for k in ("tp", "pp", "vp", "cp", "ep"))
    k_act, n_exp = _f(run["experts_active"]), _f(run["n_experts"])
    moe = n_exp > 1
    rc = np.asarray(run["recompute"])
    full = rc == "full"
    node, domain = _f(run["gpus_per_node"]), _f(run["nvlink_domain_gpus"])
    b_nvl, b_nic = _f(run["nvlink_bytes_per_s"]), _f(run["nic_bytes_per_s"])

    dp = np.maximum(n / (tp * pp * cp), 1.0)
    tokens = _f(run["global_batch"]) * s
    mb_tokens = _f(run["micro_batch"]) * s / cp  # tokens of one micro-batch on one GPU
    microbatches = np.maximum(_f(run["global_batch"]) / (dp * _f(run["micro_batch"])), 1.0)

    # Mixture of experts: the routed experts' parameters (all of them, and those a token uses), their
    # width (three matrices each, a gated MLP) and the tokens one expert multiplies per micro-batch
    expert_params = routed_expert_params(nt, na, n_exp, k_act)
    expert_active = np.where(moe, expert_params * k_act / np.maximum(n_exp, 1.0), 0.0)
    moe_layers = _f(run["moe_layers"])
    moe_layers = np.where(np.isnan(moe_layers), layers, moe_layers)
    expert_width = np.where(moe, expert_params / np.maximum(n_exp, 1.0) / (3.0 * d * np.maximum(moe_layers, 1.0)), d)
    expert_tokens = np.where(moe, ep * mb_tokens * k_act / np.maximum(n_exp, 1.0), mb_tokens)

    # Compute: GEMMs at the precision's peak, attention at the BF16 peak, the rest through HBM
    e_max = coef.e_max(run["die"])
    e_gemm = e_max / (1.0 + coef.gemm_width / (d / tp) + coef.gemm_tokens / mb_tokens)
    e_expert = coef.moe_gemm * e_max / (1.0 + coef.gemm_width / expert_width + coef.gemm_tokens / expert_tokens)
    extra = np.where(full, 1.0 / 3.0, 0.0)  # full recomputation runs the forward pass (a third) again
    linear = flops.flops_per_token(na - expert_active) / e_gemm + flops.flops_per_token(expert_active) / e_expert
    width, span = _f(run["attention_width"]), _f(run["attention_span"])
    width, span = np.where(np.isnan(width), d, width), np.where(np.isnan(span), s, span)
    attention = flops.attention_flops_per_token(layers, width, span)
    e_attn = np.where(np.asarray(run["flash"], dtype=bool), coef.e_attn, coef.e_attn_materialized)
    gemm = tokens * linear * (1.0 + extra) / (n * _f(run["peak_flops"]))
    attn = tokens * attention * (1.0 + extra) / (n * _f(run["peak_flops_bf16"]) * e_attn)
    per_token_bytes = layers * d * coef.mem_dense
    mem = tokens * per_token_bytes * (1.0 + extra) / (n * _f(run["hbm_bytes_per_s"]))
    compute = gemm + attn + mem
    recompute = compute * extra / (1.0 + extra)

    bubble = coef.bubble * compute * (pp - 1.0) / (vp * microbatches)

    # Tensor parallel: 4 all-reduces of a micro-batch's activations per layer (6 with full recompute)
    tp_fabric = np.where(tp <= domain, b_nvl, b_nic)
    per_ar = allreduce_time_s(mb_tokens * d * 2.0, tp_fabric, tp)
    tp_time = np.where(tp > 1, microbatches * (layers / pp) * np.where(full, 6.0, 4.0) * per_ar, 0.0)
    tp_exposed = coef.tp_exposed * tp_time

    # Pipeline sends: each micro-batch's activations cross each stage boundary forward and backward
    p2p_bytes = 2.0 * microbatches * mb_tokens * d * 2.0 * vp / tp
    pp_fabric = np.where(tp * pp * cp <= node, b_nvl, b_nic)
    pp_time = np.where(pp > 1, p2p_bytes / pp_fabric, 0.0)

    # Data parallel: gradients of this GPU's parameters (experts over fewer ranks)
    dense_params = nt - expert_params
    # ZeRO-3/FSDP gathers the weights forward and backward and reduce-scatters the gradients: 1.5× an
    # all-reduce's traffic (Rajbhandari et al. 2020, sec. 7.2.2). An implementation measured to gather
    # synchronously at a rate of its own (``gather_bytes_per_s``) runs the two gathers at that rate, in
    # the open; its reduce-scatter (half an all-reduce) stays a collective that overlaps as fitted.
    zero3 = np.asarray(run["zero3"], dtype=bool)
    rate = _f(run["gather_bytes_per_s"])
    own_gathers = zero3 & np.isfinite(rate)
    shard_bytes = 2.0 * (dense_params + expert_params / ep) / (tp * pp)  # 16-bit weights of this GPU's part
    volume = np.where(zero3, np.where(own_gathers, 0.5, 1.5), 1.0)
    ranks = dp * cp
    local = np.minimum(np.clip(np.floor(node / (tp * pp)), 1.0, None), ranks)
    nodes = np.maximum(ranks / local, 1.0)
    collective = hierarchical_allreduce_time_s(volume * shard_bytes, local, nodes, b_nvl, b_nic)
    collective = np.where(ranks > 1, collective + 2.0 * np.log2(np.maximum(ranks, 1.0)) * _f(run["latency_s"]), 0.0)
    # never faster than NCCL would move them (two all-gathers: one all-reduce's traffic)
    nccl_gathers = hierarchical_allreduce_time_s(shard_bytes, local, nodes, b_nvl, b_nic)
    gathers = np.where(own_gathers & (ranks > 1), np.maximum(2.0 * shard_bytes / rate, nccl_gathers), 0.0)
    dp_time = collective + gathers
    dp_exposed = np.maximum(collective * (1.0 - coef.dp_overlap), collective - compute) + gathers

    # Expert parallel: dispatch and combine, forward and backward, k copies of each token
    ep_fabric = np.where(tp * ep <= domain, b_nvl, b_nic)
    a2a = mb_tokens * k_act * d * 2.0 * (ep - 1.0) / ep / ep_fabric
    ep_time = np.where(moe & (ep > 1), microbatches * (moe_layers / pp) * 4.0 * a2a, 0.0)
    ep_exposed = coef.ep_exposed * ep_time

    # Context parallel: K and V around the ring, forward once and backward twice
    kv = 2.0 * mb_tokens * width * _f(run["kv_ratio"]) * 2.0
    cp_fabric = np.where(tp * cp <= domain, b_nvl, b_nic)
    ring = np.where(cp > 1, microbatches * (layers / pp) * 3.0 * (cp - 1.0) * kv / cp_fabric, 0.0)
    cp_exposed = np.maximum(ring - attn, 0.0)

    reference = compute + bubble + tp_exposed + pp_time + dp_exposed + ep_exposed + cp_exposed
    step = reference / _f(run["stack_efficiency"])  # the training stack's own step
    mflops = flops.model_flops_per_token(na, layers, width, span)
    parts = (gemm, attn, mem, recompute, bubble, tp_exposed, pp_time, dp_time, dp_exposed, ep_exposed, cp_exposed)
    parts += (step - reference,)
    arrays = np.broadcast_arrays(*parts, step, tokens, n, mflops, e_gemm)
    return Step(*arrays)


# --------------------------------------------------------------------------------------------
# The fit
# --------------------------------------------------------------------------------------------


def _to_theta(coef: Coefficients) -> np.ndarray:
    out = []
    for name in NAMES:
        v = getattr(coef, name)
        out.append(np.log(v / (1.0 - v)) if name in SHARES else np.log(v))
    return np.asarray(out, float)


def _from_theta(theta: np.ndarray) -> Coefficients:
    values = {}
    for name, t in zip(NAMES, theta, strict=True):
        values[name] = float(1.0 / (1.0 + np.exp(-t))) if name in SHARES else float(np.exp(t))
    return Coefficients(**values)


def log_residuals(coef: Coefficients, runs: Mapping[str, Any], tokens_per_s_per_gpu: ArrayLike) -> np.ndarray:
    """``ln(predicted / published)`` tokens per second per GPU of each run."""
    return np.log(step_time(coef, **runs).tokens_per_s_per_gpu) - np.log(_f(tokens_per_s_per_gpu))


@dataclass(frozen=True)
class Fit:
    """A fitted model: coefficients, the rows it saw, and how well it reproduces them."""

    coefficients: Coefficients
    rows: int
    rms_log_error: float  # root mean square of ln(predicted/published) on the fitted rows
    iterations: int


def fit(
    runs: Mapping[str, Any],
    tokens_per_s_per_gpu: ArrayLike,
    *,
    prior: Coefficients = PRIOR,
    prior_sd: float = PRIOR_SD,
    residual_sd: float = RESIDUAL_SD,
    fixed: Sequence[str] = (),
    max_iter: int = 200,
    start: Coefficients | None = None,
) -> Fit:
    """The coefficients that best reproduce ``tokens_per_s_per_gpu`` of ``runs`` (least squares in log
    space, every coefficient pulled toward ``prior`` with ``prior_sd`` in its transformed space).

    ``fixed`` names coefficients held at their prior; ``start`` is where the search starts (the prior by
    default; a neighbouring fit's coefficients make a leave-one-out refit a few steps).
    Levenberg-Marquardt with a forward-difference Jacobian: a dozen coefficients on a few dozen rows
    converge in well under a second.
    """
    y = _f(tokens_per_s_per_gpu)
    runs = dict(runs) | {"die": die_index(runs["die"])}  # look the dies up once
    free = np.array([n not in fixed for n in NAMES])
    anchor = _to_theta(prior)

    def residuals(theta: np.ndarray) -> np.ndarray:
        r = log_residuals(_from_theta(theta), runs, y) / residual_sd
        return np.concatenate([r, ((theta - anchor) / prior_sd)[free]])

    theta = anchor.copy() if start is None else np.where(free, _to_theta(start), anchor)
    r = residuals(theta)
    cost = float(r @ r)
    lam, iterations = 1e-2, 0
    while iterations < max_iter:
        iterations += 1
        jac = np.zeros((r.size, len(NAMES)))
        for j in np.flatnonzero(free):
            step = 1e-6 * max(1.0, abs(theta[j]))
            t = theta.copy()
            t[j] += step
            jac[:, j] = (residuals(t) - r) / step
        jf = jac[:, free]
        a = jf.T @ jf
        g = jf.T @ r
        improved = False
        while lam < 1e10:
            delta = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
            t = theta.copy()
            t[free] += delta
            rt = residuals(t)
            ct = float(rt @ rt)
            if np.isfinite(ct) and ct < cost:
                theta, r, improved = t, rt, True
                lam = max(lam / 3.0, 1e-9)
                break
            lam *= 4.0
        if not improved or cost - float(r @ r) < 1e-6 * max(cost, 1.0):
            cost = float(r @ r)
            break
        cost = float(r @ r)
    coef = _from_theta(theta)
    data_r = log_residuals(coef, runs, y)
    return Fit(coef, int(y.size), float(np.sqrt(np.mean(data_r**2))), iterations)


def leave_one_out(
    coef: Coefficients,
    runs: Mapping[str, Any],
    tokens_per_s_per_gpu: ArrayLike,
    *,
    prior: Coefficients = PRIOR,
    prior_sd: float = PRIOR_SD,
    residual_sd: float = RESIDUAL_SD,
) -> np.ndarray:
    """Each fitted row's prediction (tokens/s per GPU) by the fit without it, one Newton step from the
    fit with it: ``θ₋ᵢ = θ + (H − jᵢᵀjᵢ)⁻¹ jᵢᵀ rᵢ`` with ``H = JᵀJ`` (rows and anchors) at the optimum,
    where the gradient ``Jᵀr`` vanishes (the approximate leave-one-out of Cook's distance and of
    nonlinear least squares; a test compares it with refits). ``coef`` must be :func:`fit` on the
    same ``runs`` and arguments."""
    y = _f(tokens_per_s_per_gpu)
    runs = dict(runs) | {"die": die_index(runs["die"])}
    theta, anchor = _to_theta(coef), _to_theta(prior)

    def residuals(th: np.ndarray) -> np.ndarray:
        r = log_residuals(_from_theta(th), runs, y) / residual_sd
        return np.concatenate([r, (th - anchor) / prior_sd])

    r = residuals(theta)
    jac = np.empty((r.size, theta.size))
    for j in range(theta.size):
        step = 1e-6 * max(1.0, abs(theta[j]))
        t = theta.copy()
        t[j] += step
        jac[:, j] = (residuals(t) - r) / step
    h = jac.T @ jac
    out = np.empty(y.size)
    for i in range(y.size):
        ji = jac[i]
        delta = np.linalg.solve(h - np.outer(ji, ji), ji * r[i])
        one = {k: v[i : i + 1] if isinstance(v, np.ndarray) and v.shape[:1] == y.shape else v for k, v in runs.items()}
        out[i] = float(step_time(_from_theta(theta + delta), **one).tokens_per_s_per_gpu[0])
    return out


def leave_groups_out(
    coef: Coefficients,
    runs: Mapping[str, Any],
    tokens_per_s_per_gpu: ArrayLike,
    groups: ArrayLike,
    *,
    prior: Coefficients = PRIOR,
    prior_sd: float = PRIOR_SD,
    residual_sd: float = RESIDUAL_SD,
) -> dict[Any, Coefficients]:
    """The coefficients of the fit without each group of fitted rows (``groups``: one label per row), one
    Newton step from the fit with them: ``θ₋g = θ + (H − J_gᵀJ_g)⁻¹ J_gᵀ r_g`` (:func:`leave_one_out`'s
    step for a block of rows: grouped cross-validation, a source or a model family left out at a time).
    ``coef`` must be :func:`fit` on the same ``runs`` and arguments."""
    y = _f(tokens_per_s_per_gpu)
    labels = np.asarray(groups)
    runs = dict(runs) | {"die": die_index(runs["die"])}
    theta, anchor = _to_theta(coef), _to_theta(prior)

    def residuals(th: np.ndarray) -> np.ndarray:
        r = log_residuals(_from_theta(th), runs, y) / residual_sd
        return np.concatenate([r, (th - anchor) / prior_sd])

    r = residuals(theta)
    jac = np.empty((r.size, theta.size))
    for j in range(theta.size):
        step = 1e-6 * max(1.0, abs(theta[j]))
        t = theta.copy()
        t[j] += step
        jac[:, j] = (residuals(t) - r) / step
    h = jac.T @ jac
    out = {}
    for g in dict.fromkeys(labels.tolist()):
        rows = np.flatnonzero(labels == g)
        jg = jac[rows]
        out[g] = _from_theta(theta + np.linalg.solve(h - jg.T @ jg, jg.T @ r[rows]))
    return out


STACK_PRIOR_ROWS = 3.0
"""How many rows' weight the anchor of a stack's efficiency carries (its family's, and the family's the
reference's, 1): a stack with three published rows moves half way from its family to its own mean."""


def stack_efficiencies(
    log_ratio: ArrayLike,
    stacks: Sequence[str],
    families: Mapping[str, str],
    reference: str,
    pooled: str,
    prior_rows: float = STACK_PRIOR_ROWS,
) -> dict[str, float]:
    """Each training stack's efficiency, the share of the reference stack's throughput it reaches on the
    same layout, from ``log_ratio`` = ``ln(published / reference model's tokens per second)`` of rows run
    on ``stacks``: a shrunk geometric mean, ``ln e_s = (Σ_s r + k·ln e_family) / (n_s + k)`` with
    ``ln e_family = Σ_family r / (n_family + k)`` (the family of ``families``: a stack without rows takes
    its family's, a family without rows the reference's, 1). ``reference`` is 1 by definition; ``pooled``
    (a plan that names no stack) is every row's, reference included, shrunk alike."""
    r = _f(log_ratio)
    on = np.asarray(stacks, dtype=object)
    fam = np.array([families[s] for s in on], dtype=object)
    ref_family = families[reference]
    out: dict[str, float] = {}
    for stack, family in families.items():
        if stack == reference:
            out[stack] = 1.0
            continue
        if stack == pooled:
            out[stack] = float(np.exp(r.sum() / (r.size + prior_rows)))
            continue
        in_family = (fam == family) & (on != reference)
        ln_family = 0.0 if family == ref_family else r[in_family].sum() / (in_family.sum() + prior_rows)
        own = on == stack
        out[stack] = float(np.exp((r[own].sum() + prior_rows * ln_family) / (own.sum() + prior_rows)))
    return out


def with_values(coef: Coefficients, **changes: float) -> Coefficients:
    """A copy of ``coef`` with some terms changed."""
    return replace(coef, **changes)
