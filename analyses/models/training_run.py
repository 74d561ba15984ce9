"""A training run to plan: the model's shape, the hardware it may run on, and the request (tokens,
deadline, GPUs, cluster bounds, cost basis, ...) with the scenario it is planned under.

:class:`Request` holds what the reader sets; every assumption the plan shares with the rest of the
book is read from its ``s``, the scenario's values (with the reader's overrides), and every fact
about a GPU generation from its :class:`Hardware` (datasheet and InfiniBand cluster). Both are
resolved by :mod:`analyses.scenario.planning`; nothing here reads ``data/`` or the scenario.
:meth:`Request.validate` names the first wrong field (:class:`PlanError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from analyses.models import interruptions
from analyses.models.tco import COST_BASES, ELECTRICITY_REGIONS, RENT_CLASSES
from analyses.units import precision_problem

PRECISIONS = ("bf16", "fp16", "fp8", "fp4")
# The memory model's recipe of each training precision. TODO(memory model): an NVFP4 recipe; until
# the memory model has one, FP4 training is counted with the FP8 recipe's states (NVFP4 keeps BF16/FP32
# master weights and optimizer states like FP8, and its 4-bit weight copy is the smaller). FP16 mixed
# precision keeps the states BF16 mixed precision keeps (16-bit weights and gradients, FP32 master
# weights and Adam moments: Micikevicius et al. 2018) and scales the loss, which costs no memory.
MEMORY_RECIPE = {"bf16": "bf16-mixed", "fp16": "bf16-mixed", "fp8": "fp8", "fp4": "fp8"}
PIN_FIELDS = ("tp", "pp", "dp", "cp", "ep", "zero_stage", "micro_batch", "virtual_stages", "recompute")
"""Parts of a layout a request may pin (``Request.pinned``); the planner searches the rest."""
RECOMPUTE_PINS = ("none", "selective", "full")
ATTENTION_KERNELS = ("flash", "materialized")
"""How a run's attention kernel treats the score matrix (:mod:`analyses.models.performance`): ``flash``
keeps it on chip and skips the tiles above the causal diagonal (FlashAttention 1-3, xformers,
cuDNN/Transformer Engine fused attention: every stack since 2023); ``materialized`` writes it to HBM
(Megatron-LM and DeepSpeed of 2021-22 with a fused softmax, PyTorch eager attention)."""
RECOMPUTE_SEARCHED = {"flash": ("selective", "full"), "materialized": ("full",)}
"""The recomputation a search tries with each kernel: with FlashAttention, selective recomputation (the
attention core, which the kernel recomputes anyway) or full; with materialised scores, full, as every
published run of that software did (Megatron-LM 2021, BLOOM, GPT-NeoX's Pythia configs, DeepSpeed's
ZeRO-3 runs: selective recomputation, Korthikanti et al. 2022, came later); a pinned ``recompute`` overrides."""
CHECKPOINT_METHODS = ("young", "daly")
# The scenario's assumptions the time of a layout reads (its cost reads the prices analyses.scenario.costs.inputs names)
TIME_ASSUMPTIONS = (
    "framework_memory_gb",
    "input_bytes_per_token",
    "dp_overlap",
    "rdma_nic_share",
    "rdma_latency_us",
    *interruptions.RATE_ASSUMPTION.values(),
    *interruptions.RESTART_ASSUMPTION.values(),
)
OPERATIONS = interruptions.OPERATIONS  # how the cluster detects and clears interruptions (its rate and restart)
SHARES = ("dp_overlap", "rdma_nic_share")  # assumptions that are fractions from 0 to 1


class PlanError(ValueError):
    """A planning input is wrong; ``field`` names it."""

    def __init__(self, field_name: str, message: str):
        self.field = field_name
        self.detail = message
        super().__init__(f"plan field '{field_name}': {message}")


@dataclass(frozen=True)
class Shape:
    """A transformer's shape: parameters (all of them, and those a token uses), layers, width, heads,
    key/value heads, sequence length, and for a mixture of experts its experts and how many a token
    uses (0 for a dense model)."""

    name: str
    n_params: float
    layers: int
    hidden: int
    heads: int
    seq_len: int
    params_active: float = 0.0  # 0: every parameter (dense)
    n_experts: int = 0
    experts_active: int = 0
    kv_heads: int = 0  # 0: as many as the heads
    vocab: int = 0  # 0: not known (the embeddings are then counted among the layers' parameters)
    ffn_hidden: int = 0  # 0: not known (4·hidden in the activations)
    moe_layers: int = 0  # layers that hold experts (0: every layer of a mixture of experts)
    attention_width: int = 0  # heads × mean head size where it is not ``hidden`` (MLA, wide heads); 0: hidden
    window: int = 0  # sliding attention window (0: full attention)

    def __post_init__(self) -> None:
        if not self.params_active:
            object.__setattr__(self, "params_active", float(self.n_params))
        if not self.kv_heads:
            object.__setattr__(self, "kv_heads", int(self.heads))
        if not self.moe_layers:
            object.__setattr__(self, "moe_layers", int(self.layers))
        if not self.attention_width:
            object.__setattr__(self, "attention_width", int(self.hidden))

    @property
    def moe(self) -> bool:
        """Whether the shape is a mixture of experts."""
        return self.n_experts > 1

    @classmethod
    def from_params(
        cls,
        n_params: float,
        seq_len: int = 4096,
        *,
        active_params: float = 0.0,
        n_experts: int = 0,
        experts_active: int = 0,
        vocab: int = 0,
        tied_embeddings: bool = False,
    ) -> Shape:
        """A shape for ``n_params`` chosen as real models are shaped (:func:`generic_layers_and_width`):
        a width that is a multiple of 1,024, so 128-wide heads come in multiples of 8 and tensor
        parallelism of 2 to 8 divides them; layers from the parameters left for the blocks
        (``12·L·d²``, after ``vocab``'s embedding matrices where a vocabulary is given). ``n_params`` is
        kept as given.

        A mixture of experts (``active_params`` between 0 and ``n_params``, with ``n_experts`` experts of
        which ``experts_active`` serve each token) takes layers and width from its active parameters.
        """
        if not n_params > 0:
            raise PlanError("n_params", f"expected a positive number, got {n_params!r}")
        active = float(active_params) if active_params else float(n_params)
        if not 0 < active <= n_params:
            raise PlanError("active_params", f"expected 0 (dense) or a count up to n_params, got {active_params!r}")
        moe = active < n_params
        if moe and not (1 <= experts_active < n_experts):
            raise PlanError(
                "n_experts",
                f"a mixture of experts needs 1 <= experts_active < n_experts, got {experts_active}, {n_experts}",
            )
        n_layers, hidden = generic_layers_and_width(active, vocab, tied_embeddings)
        label = (
            f"{n_params / 1e9:g}B/{active / 1e9:g}B-active MoE (generic)" if moe else f"{n_params / 1e9:g}B (generic)"
        )
        return cls(
            label,
            float(n_params),
            n_layers,
            hidden,
            hidden // HEAD_SIZE,
            int(seq_len),
            params_active=active,
            n_experts=int(n_experts) if moe else 0,
            experts_active=int(experts_active) if moe else 0,
            vocab=int(vocab),
        )


ASPECT = 128  # d_model / layers of the generic shape (GPT-3 175B: 12,288 / 96)
HEAD_SIZE = 128  # the head size of the generic shape (Llama, Mistral, Qwen, GPT-3 175B)
WIDTH_STEP = 8 * HEAD_SIZE  # widths in multiples of 1,024: heads in multiples of 8


def generic_layers_and_width(params: float, vocab: int = 0, tied_embeddings: bool = False) -> tuple[int, int]:
    """Layers and width of a generic transformer of ``params`` (active) parameters, as real models are
    shaped: the width ``128·L`` (:data:`ASPECT`; ``N = 12·L·d²`` with ``d = 128·L``; GPT-3 175B:
    12,288 for 96 layers; Llama 2 7B 4,096 for 32) rounded to a multiple of :data:`WIDTH_STEP`, then the
    layers that hold the parameters left for the blocks, ``(N − embeddings) / (12·d²)``, rounded (at
    least 2). ``vocab`` (0: unknown) takes one ``vocab × d`` matrix (two, untied) off first."""
    body = float(params)
    hidden = WIDTH_STEP
    for _ in range(3):  # the embeddings depend on the width, the width on what is left
        embed = vocab * hidden * (1 if tied_embeddings else 2)
        body = max(float(params) - embed, float(params) / 2.0)
        layers = float(np.cbrt(body / (12.0 * ASPECT**2)))
        hidden = max(WIDTH_STEP, int(round(ASPECT * layers / WIDTH_STEP)) * WIDTH_STEP)
    return max(2, int(round(body / (12.0 * hidden**2)))), int(hidden)


@dataclass(frozen=True)
class Hardware:
    """One GPU generation as the planner uses it: datasheet figures in SI units, the compute die its
    kernels are calibrated as, and the InfiniBand cluster configuration it is planned on (its NVLink
    figures and node size, which is the NVLink domain: 72 for an NVL72 rack)."""

    name: str
    peak_flops_dense: Mapping[str, float]  # FLOP/s by precision (dense)
    hbm_usable_bytes: float
    tdp_w: float
    cluster: Mapping[str, Any]  # a row of data/cluster_configs.csv
    die: str = ""  # the compute die (analyses.models.performance.DIES); the name when empty
    hbm_bytes_per_s: float = 0.0

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision``."""
        return self.peak_flops_dense[precision]


@dataclass(frozen=True)
class Request:
    """Everything the planner needs; :meth:`validate` names the first wrong field.

    ``s`` is the scenario (:func:`analyses.scenario.values`, with a reader's overrides): every
    assumption the plan shares with the rest of the book (the prices, the framework memory, the
    fabric, the failure rate and restart time of its ``operations`` mode, ...) is read there. ``hardware`` holds every
    generation a request may name (:func:`analyses.scenario.planning.hardware`); ``gpus`` None
    means all of them, ``global_batch_tokens`` None the scenario's batch.
    """

    shape: Shape
    tokens: float
    deadline_days: float
    precision: str = "bf16"
    gpus: tuple[str, ...] | None = None
    global_batch_tokens: float | None = None
    min_gpus: int = 8
    max_gpus: int = 4096
    checkpoint_gb_per_s_per_node: float = 1.0
    checkpoint_method: str = "daly"
    loader_gb_per_s_per_node: float = 1.0
    compute_efficiency: float = 0.0
    holdout_sources: tuple[str, ...] = ()
    rent_class: str = "neocloud"
    electricity_region: str = "us"
    cost_basis: str = "rented"
    operations: str = "automated"
    stack: str = "unspecified"  # the training stack (an id of data/training_stacks.csv)
    stack_efficiency: float = 1.0  # its share of the reference stack's throughput (fitted per stack)
    attention_kernel: str = "flash"  # :data:`ATTENTION_KERNELS`
    gather_bytes_per_s: float = float("inf")  # a ZeRO-3 implementation's own weight-gather rate (inf: NCCL's)
    campaign_overhead: float = 0.0  # a whole run's time beyond steady state, goodput and failures (fitted)
    pinned: tuple[tuple[str, Any], ...] = ()  # (field, value) pairs of :data:`PIN_FIELDS` the search keeps
    zero_stages: tuple[int, ...] = (0, 1, 2, 3)  # the ZeRO stages the stack runs (searched)
    micro_batches: tuple[int, ...] = (1, 2, 4)  # the micro-batch sizes its recipes use (searched)
    model_parallel: bool = True  # whether the stack runs tensor, pipeline, context or expert parallelism
    mc_samples: int = 20_000
    seed: int = 2026
    s: Mapping[str, float] = field(default_factory=dict, repr=False)
    hardware: Mapping[str, Hardware] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.gpus is None:
            object.__setattr__(self, "gpus", tuple(self.hardware))
        if self.global_batch_tokens is None:
            object.__setattr__(self, "global_batch_tokens", float(self.s["batch_million_tokens"]) * 1e6)

    def validate(self) -> Request:
        """Return self, or raise :class:`PlanError` naming the field and what is allowed."""
        for name in ("tokens", "deadline_days", "global_batch_tokens", "checkpoint_gb_per_s_per_node"):
            _positive(name, getattr(self, name))
        _positive("loader_gb_per_s_per_node", self.loader_gb_per_s_per_node)
        if self.precision not in PRECISIONS:
            raise PlanError("precision", f"expected one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        known = list(self.hardware)
        if not self.gpus or any(g not in known for g in self.gpus):
            raise PlanError("gpus", f"expected a non-empty list from {', '.join(known)}, got {list(self.gpus)!r}")
        for g in self.gpus:  # the book's one precision rule (the plan chapter's parameters are checked by it too)
            problem = precision_problem(g, self.hardware[g].peak_flops_dense, self.precision)
            if problem is not None:
                raise PlanError("precision", problem)
        if not (
            isinstance(self.min_gpus, int) and isinstance(self.max_gpus, int) and 1 <= self.min_gpus <= self.max_gpus
        ):
            raise PlanError(
                "max_gpus", f"expected integers 1 <= min_gpus <= max_gpus, got {self.min_gpus!r}, {self.max_gpus!r}"
            )
        if self.max_gpus > 2**17:
            raise PlanError("max_gpus", f"expected at most {2**17}, got {self.max_gpus}")
        choices = {
            "checkpoint_method": CHECKPOINT_METHODS,
            "rent_class": RENT_CLASSES,
            "electricity_region": ELECTRICITY_REGIONS,
            "cost_basis": COST_BASES,
            "operations": OPERATIONS,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise PlanError(name, f"expected one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if not 0 <= self.compute_efficiency <= 1:
            raise PlanError(
                "compute_efficiency", f"expected 0 (calibrated) or a fraction up to 1, got {self.compute_efficiency!r}"
            )
        for name in TIME_ASSUMPTIONS:
            value = self.s.get(name)
            if not (isinstance(value, int | float) and np.isfinite(value) and value >= 0):
                raise PlanError(name, f"expected a number >= 0 from the scenario, got {value!r}")
        for name in SHARES:
            if not self.s[name] <= 1:
                raise PlanError(name, f"expected a fraction from 0 to 1, got {self.s[name]!r}")
        if self.global_batch_tokens < self.shape.seq_len:
            raise PlanError("global_batch_tokens", f"expected at least one sequence ({self.shape.seq_len} tokens)")
        if not 0 < self.stack_efficiency <= 2:
            raise PlanError("stack_efficiency", f"expected a factor from 0 to 2, got {self.stack_efficiency!r}")
        if self.attention_kernel not in ATTENTION_KERNELS:
            raise PlanError(
                "attention_kernel", f"expected one of {', '.join(ATTENTION_KERNELS)}, got {self.attention_kernel!r}"
            )
        if not 0 <= self.campaign_overhead <= 2:
            raise PlanError("campaign_overhead", f"expected a share from 0 to 2, got {self.campaign_overhead!r}")
        self._validate_pins()
        if not (isinstance(self.mc_samples, int) and 100 <= self.mc_samples <= 1_000_000):
            raise PlanError("mc_samples", f"expected an integer from 100 to 1000000, got {self.mc_samples!r}")
        return self

    def _validate_pins(self) -> None:
        for name, value in self.pinned:
            if name not in PIN_FIELDS:
                raise PlanError(name, f"a layout pins only {', '.join(PIN_FIELDS)}")
            if name == "recompute":
                if value not in RECOMPUTE_PINS:
                    raise PlanError(name, f"expected one of {', '.join(RECOMPUTE_PINS)}, got {value!r}")
                continue
            low = 0 if name == "zero_stage" else 1
            high = 3 if name == "zero_stage" else 2**17
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise PlanError(name, f"expected an integer from {low} to {high}, got {value!r}")
        pins = self.pins
        if "tp" in pins and self.shape.heads % pins["tp"]:
            raise PlanError("tp", f"tensor parallelism must divide the {self.shape.heads} heads, got {pins['tp']}")
        if "ep" in pins and pins["ep"] > 1 and not (self.shape.moe and self.shape.n_experts % pins["ep"] == 0):
            raise PlanError(
                "ep", f"expert parallelism needs a mixture of experts whose experts it divides, got {pins['ep']}"
            )
        if "pp" in pins and pins["pp"] > self.shape.layers:
            raise PlanError("pp", f"at most one pipeline stage per layer ({self.shape.layers}), got {pins['pp']}")

    @property
    def pins(self) -> dict[str, Any]:
        """The pinned parts of the layout, by field."""
        return dict(self.pinned)

    @property
    def layout_pinned(self) -> bool:
        """Whether the request pins the layout's tensor and pipeline sizes (what a published run prints):
        the plan is then scored as published runs are at their own layouts, not at the planner's pick."""
        return {"tp", "pp"} <= set(self.pins)

    @property
    def recompute_searched(self) -> tuple[str, ...]:
        """The recomputation modes a search tries with this request's attention kernel (:data:`RECOMPUTE_SEARCHED`)."""
        return RECOMPUTE_SEARCHED[self.attention_kernel]

    @property
    def reliability_assumptions(self) -> tuple[str, str]:
        """The scenario's names of the interruption rate and restart of this request's operations mode."""
        return interruptions.RATE_ASSUMPTION[self.operations], interruptions.RESTART_ASSUMPTION[self.operations]

    def with_(self, **changes: Any) -> Request:
        """A copy with some fields changed (validated); ``s`` entries merge into the scenario."""
        if "s" in changes:
            changes["s"] = dict(self.s) | dict(changes["s"])
        return replace(self, **changes).validate()


REQUEST_FIELDS = tuple(f.name for f in fields(Request))


def _positive(name: str, value: Any) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        raise PlanError(name, f"expected a positive number, got {value!r}")
