"""The generation ladder: every GPU the book knows, the documents' two generations, and what a GPU
achieves in the scenario.

One home for the GPU-level vocabulary every chapter and check shares:

- the ladder itself is ``data/gpus.csv`` in launch order (:func:`names`); the chapters' default
  lists are rules over it (:func:`since`, :func:`documents_span`, and the GPUs the scenario prices,
  :func:`analyses.scenario.costs.priced`), so a GPU added to
  the data (with its prices in ``data/prices.csv`` and ``data/scenario.csv``, and its InfiniBand
  cluster in ``data/cluster_configs.csv`` for the planner) appears in every list without code;
- the documents compare :data:`NEW` (B300) with :data:`OLD` (A100); the scenario's per-GPU
  speed-up of the one over the other is the assumption :data:`SPEEDUP` and the old generation's
  MFU :data:`OLD_MFU`; each generation's precision (:data:`NEW_PRECISION`, :data:`OLD_PRECISION`)
  is the one its MFU comes from (``data/scenario.csv``: ``B300:fp8:... / A100:bf16:...``);
- the FLOP/s a busy, healthy job achieves on either generation (:func:`achieved_flop_per_s`) and
  the MFU it implies (:func:`mfu`) are derived here and nowhere else;
- the speed-up of :data:`NEW` over :data:`OLD` for a claim's own workload (:func:`speedup`): the
  scenario's speed-up (the reference workload's, :func:`analyses.scenario.speedups.reference`)
  scaled by the calibrated step-time model's ratio between that workload and the reference, so a
  draw or a reader's override of :data:`SPEEDUP` moves every workload's speed-up together.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from analyses import data, scenario
from analyses.models import throughput
from analyses.scenario import cases, speedups
from analyses.scenario.cases import NEW, OLD  # the generations the documents compare
from analyses.scenario.quantities import named

NEW_PRECISION, OLD_PRECISION = "fp8", "bf16"  # the precision each one's MFU is measured at
SPEEDUP = "speedup_b300_a100"  # the scenario's per-GPU speed-up of NEW (FP8) over OLD (BF16)
OLD_MFU = "mfu_a100_bf16"  # the scenario's MFU of OLD at OLD_PRECISION
PAIR = ((NEW, NEW_PRECISION), (OLD, OLD_PRECISION))
FIRST_TENSOR_CORES = "V100"  # the first generation with tensor cores: where the throughput ladder starts


def gpu(name: str) -> data.GPU:
    """One GPU's datasheet in SI units (:func:`analyses.data.gpu`, cached per data folder)."""
    return data.gpu(name)


def names() -> list[str]:
    """Every GPU of ``data/gpus.csv``, in launch order."""
    return data.gpu_names()


def since(first: str) -> list[str]:
    """The ladder from ``first`` on, in launch order."""
    ladder = names()
    return ladder[ladder.index(first) :]


def documents_span() -> list[str]:
    """The GPUs from :data:`OLD` to :data:`NEW` in launch order that ship in 8-GPU NVLink nodes, as the
    documents' servers do (rack-scale systems such as GB300 NVL72 left out), without a memory variant of
    either (the A100 40GB is the documents' A100 generation)."""
    ladder = names()
    span = ladder[ladder.index(OLD) : ladder.index(NEW) + 1]
    variants = data.gpus().set_index("name")["variant_of"].fillna("")
    return [
        g
        for g in span
        if gpu(g).nvlink_domain_gpus == gpu(NEW).nvlink_domain_gpus and variants.get(g, "") not in (OLD, NEW)
    ]


def check_pair() -> None:
    """Raise :class:`analyses.data.DataError` unless the scenario's speed-up compares the pair named here."""
    a = scenario.assumption(SPEEDUP)
    new, _, old = a.argument.partition("/")
    found = tuple((p.split(":")[0], p.split(":")[1]) for p in (new, old))
    if found != PAIR:
        raise data.DataError("data/scenario.csv", f"{SPEEDUP} compares {found}, the ladder's pair is {PAIR}")


def peak_flops(name: str) -> float:
    """Dense peak FLOP/s of :data:`NEW` or :data:`OLD` at the precision its MFU is measured at."""
    for g, precision in PAIR:
        if g == name:
            return gpu(name).peak_flops(precision)
    raise KeyError(f"the scenario's speed-up compares {NEW} with {OLD}, not {name}")


# --------------------------------------------------------------------------------------------
# The per-GPU speed-up of each workload the documents describe
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """A training workload a claim is about: what runs, at what size and precision, on how many GPUs.

    The speed-up of :data:`NEW` over :data:`OLD` depends on it (a 13B pretraining in FP8, a fine-tune
    on one 8-GPU server, a recommender); :func:`speedup` gives it for each one from the calibrated
    step-time model (:func:`model_workload` is the model's description of it)."""

    id: str
    label: str
    params: float | None  # parameters of the model (None: not stated)
    precision: str  # the new generation's training precision: FP8 on every workload (analyses/scenario/frame.py)
    gpus: str  # the GPU counts the claim states or implies, in words
    claim: str = ""  # the claim whose case or anecdote defines it (:func:`analyses.scenario.cases.workload`)


WORKLOADS: dict[str, Workload] = {
    w.id: w
    for w in (
        Workload("pretrain", "dense transformer pretraining (the documents' per-GPU claims)", None, "fp8", "any"),
        Workload("pretrain-100b", "pretraining a 100B-class dense model", 1e11, "fp8", "hundreds"),
        Workload(
            "pretrain-13b", "pretraining a 13B model (000 §2.1 anecdote)", 1.3e10, "fp8", "not stated",
            "000-2.1-13b-anecdote-days",
        ),
        Workload("pretrain-10b", "pretraining a 10B model on 4-8 B300 nodes (000 §5 plan)", 1e10, "fp8", "32-64"),
        Workload(
            "pretrain-7b", "pretraining a 7B model (001 §2.1 anecdote)", 7e9, "fp8", "not stated",
            "001-2.1-7b-anecdote-days",
        ),
        Workload(
            "sweep-8b", "an 8B hyper-parameter sweep, one 8-GPU server per run (001 §2.5)", 8e9, "fp8", "6 x 8",
            "001-2.5-hyperparam-sweep-36-to-9-days",
        ),
        Workload(
            "finetune", "full fine-tunes of 7B-13B models on two 4-GPU servers (001 §4 case)", 1.3e10, NEW_PRECISION, "8",
            "001-4-finetune-5-to-2p8-days",
        ),
        Workload(
            "recommender", "a multimodal recommender, 128 A100 -> 96 B300 (000 §4 case)", None, NEW_PRECISION, "128 -> 96",
            "000-4-training-days-28-to-11",
        ),
        Workload("risk-10b", "a 10B risk model (the fintech anecdote of both §2.4)", 1e10, "fp8", "not stated"),
    )
}
PLAN_GPUS = 64  # 000 §5's plan at its upper size: 8 nodes of 8 B300s


def _check(workload: str) -> str:
    if workload not in WORKLOADS:
        raise KeyError(f"unknown workload '{workload}'; the workloads are: {', '.join(WORKLOADS)}")
    return workload


@functools.cache
def _model_workload(workload: str, data_dir: str) -> speedups.Workload | None:
    w = WORKLOADS[workload]
    central = scenario.values()
    ref = speedups.reference(central)
    if w.claim:
        found = cases.workload(w.claim, central)
        base = ref if found is None else found
    elif w.params is None or w.params == 1e11:
        return None  # the reference workload itself: the documents' 100B class
    else:
        base = speedups.with_(ref, label=f"{w.label}", shape=speedups.nearest_shape(w.params))
        if w.id == "pretrain-10b":
            base = speedups.with_(base, gpus=PLAN_GPUS)
    model = speedups.with_(base, label=w.label, new_precision=w.precision)
    return None if model == ref else model


def model_workload(workload: str) -> speedups.Workload | None:
    """The step-time model's description (:class:`analyses.scenario.speedups.Workload`) of ``workload``,
    a key of :data:`WORKLOADS`, at the central scenario; None for the reference workload of the
    scenario's :data:`SPEEDUP`.

    A claim with a case or anecdote of its own takes :func:`analyses.scenario.cases.workload` (the
    nearest decoder of ``data/model_shapes.csv``, the case's GPUs and batch), at the precision listed
    here for the new generation; the 10B plan and the 10B risk model take the nearest decoder to 10B
    at the reference's batch (the plan at :data:`PLAN_GPUS`)."""
    return _model_workload(_check(workload), str(data.DATA_DIR))


@functools.cache
def _factor(workload: str, data_dir: str) -> float:
    model = model_workload(workload)
    if model is None:
        return 1.0
    central = scenario.values()
    ref = speedups.reference(central)
    return speedups.model_speedup(model, NEW, OLD, central) / speedups.model_speedup(ref, NEW, OLD, central)


def workload_factor(workload: str) -> float:
    """The step-time model's speed-up on ``workload`` (a key of :data:`WORKLOADS`) over its speed-up on
    the reference workload (1 for the reference itself), at the central scenario: computed once per
    data folder, so the speed-up of a draw is that draw's :data:`SPEEDUP` times a fixed factor."""
    return _factor(_check(workload), str(data.DATA_DIR))


@named(
    "speedup",
    "B300/A100 per-GPU speed-up of a workload",
    "x",
    "Model FLOP/s per GPU of the new generation over the old on the claim's workload (its size, precision and "
    "GPU count): the scenario's speed-up (the calibrated step-time model's, on the reference 100B workload) scaled "
    "by the model's ratio between the claim's workload and the reference",
    owns=(SPEEDUP,),
    wraps=("model_speedup",),
    audit="R9",
)
def speedup(s: Mapping[str, Any], workload: str = "pretrain") -> np.ndarray:
    """The per-GPU speed-up of :data:`NEW` over :data:`OLD` on ``workload``, a key of :data:`WORKLOADS`
    ("pretrain": the reference workload, ``s[SPEEDUP]``).

    ``s[SPEEDUP] × model(workload) / model(reference)``: the scenario's speed-up (floats or arrays of
    draws) scaled by the step-time model's ratio of the two workloads' speed-ups at the central
    scenario (:func:`workload_factor`). The one place a check or chapter obtains it: a claim about a
    13B pretraining, an 8-GPU fine-tune or the documents' generic "training" asks this function with
    its own workload."""
    return np.asarray(s[SPEEDUP], dtype=float) * workload_factor(workload)


def speedup_basis() -> str:
    """Where :data:`SPEEDUP` comes from, in words: the calibrated step-time model on the reference workload."""
    return f"the step-time model calibrated on published runs, on {speedups.reference(scenario.values()).describe()}"


def achieved_flop_per_s(s: Mapping[str, Any], name: str, workload: str = "pretrain") -> np.ndarray:
    """Model FLOP/s per GPU of a busy, healthy job: the old generation's dense peak × its MFU, the new
    one's that × the speed-up of ``workload`` (a key of :data:`WORKLOADS`)."""
    base = throughput.effective_flops_per_s(peak_flops(OLD), s[OLD_MFU])
    if name == OLD:
        return base
    if name == NEW:
        return base * speedup(s, workload)
    raise KeyError(f"the scenario's speed-up compares {NEW} with {OLD}, not {name}")


def mfu(s: Mapping[str, Any], name: str, workload: str = "pretrain") -> np.ndarray:
    """MFU of :data:`NEW` or :data:`OLD` in the scenario; for the new generation
    ``speedup × peak_old × MFU_old / peak_new`` (the achieved rate over its own dense peak)."""
    return achieved_flop_per_s(s, name, workload) / peak_flops(name)
