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
  the MFU it implies (:func:`mfu`) are derived here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from analyses import data, scenario
from analyses.models import throughput
from analyses.scenario.quantities import named

NEW, OLD = "B300", "A100"  # the generations the documents compare
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
    documents' servers do (rack-scale systems such as GB300 NVL72 left out)."""
    ladder = names()
    span = ladder[ladder.index(OLD) : ladder.index(NEW) + 1]
    return [g for g in span if gpu(g).nvlink_domain_gpus == gpu(NEW).nvlink_domain_gpus]


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
    on one 8-GPU server, an embedding-bound recommender); :func:`speedup` gives it for each one."""

    id: str
    label: str
    params: float | None  # parameters of the model (None: not stated)
    precision: str  # the new generation's training precision the claim implies
    gpus: str  # the GPU counts the claim states or implies, in words


WORKLOADS: dict[str, Workload] = {
    w.id: w
    for w in (
        Workload("pretrain", "dense transformer pretraining (the documents' per-GPU claims)", None, "fp8", "any"),
        Workload("pretrain-100b", "pretraining a 100B-class dense model", 1e11, "fp8", "hundreds"),
        Workload("pretrain-13b", "pretraining a 13B model (000 §2.1 anecdote)", 1.3e10, "fp8", "not stated"),
        Workload("pretrain-10b", "pretraining a 10B model on 4-8 B300 nodes (000 §5 plan)", 1e10, "fp8", "32-64"),
        Workload("pretrain-7b", "pretraining a 7B model (001 §2.1 anecdote)", 7e9, "fp8", "not stated"),
        Workload("sweep-8b", "an 8B hyper-parameter sweep, one 8-GPU server per run (001 §2.5)", 8e9, "fp8", "6 x 8"),
        Workload("finetune", "full fine-tunes of 7B-13B models on two 4-GPU servers (001 §4 case)", 1.3e10, "bf16", "8"),
        Workload("recommender", "a multimodal recommender, 128 A100 -> 96 B300 (000 §4 case)", None, "bf16", "128 -> 96"),
        Workload("risk-10b", "a 10B risk model (the fintech anecdote of both §2.4)", 1e10, "fp8", "not stated"),
    )
}


@named(
    "speedup",
    "B300/A100 per-GPU speed-up of a workload",
    "x",
    "Model FLOP/s per GPU of the new generation over the old on the claim's workload (its size, precision and "
    "GPU count); today every workload reads the scenario's one speed-up, until the throughput model gives each its own",
    owns=(SPEEDUP,),
    audit="R9",
)
def speedup(s: Mapping[str, Any], workload: str = "pretrain") -> np.ndarray:
    """The per-GPU speed-up of :data:`NEW` over :data:`OLD` on ``workload`` (a key of :data:`WORKLOADS`).

    The one place a check or chapter obtains it: the scenario's ``speedup_b300_a100`` for every
    workload today; the throughput model will give each workload its own value and band here."""
    if workload not in WORKLOADS:
        raise KeyError(f"unknown workload '{workload}'; the workloads are: {', '.join(WORKLOADS)}")
    return np.asarray(s[SPEEDUP], dtype=float)


def achieved_flop_per_s(s: Mapping[str, Any], name: str, workload: str = "pretrain") -> np.ndarray:
    """Model FLOP/s per GPU of a busy, healthy job: the old generation's dense peak × its MFU, the new
    one's that × the speed-up of ``workload``."""
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
