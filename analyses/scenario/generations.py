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

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import data, scenario
from analyses.models import throughput

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


def achieved_flop_per_s(s: Mapping[str, Any], name: str, x: Any = None) -> np.ndarray:
    """Model FLOP/s per GPU of a busy, healthy job: the old generation's dense peak × its MFU, the new
    one's that × the per-GPU speed-up (the scenario's, or ``x``: a workload's, :func:`speedup`)."""
    base = throughput.effective_flops_per_s(peak_flops(OLD), s[OLD_MFU])
    if name == OLD:
        return base
    if name == NEW:
        return base * np.asarray(s[SPEEDUP] if x is None else x, dtype=float)
    raise KeyError(f"the scenario's speed-up compares {NEW} with {OLD}, not {name}")


def speedup(s: Mapping[str, Any], workload: Any = None) -> np.ndarray:
    """The per-GPU speed-up of :data:`NEW` over :data:`OLD` on ``workload`` (an
    :class:`analyses.scenario.speedups.Workload`; None: the reference workload, ``s[SPEEDUP]`` itself).

    ``s[SPEEDUP] × model(workload) / model(reference)``: the scenario's speed-up (floats or arrays of
    draws) scaled by the step-time model's ratio of the two workloads' speed-ups at the central
    scenario. One definition for every claim: a claim about a 13B pretraining, an 8-GPU fine-tune or
    the documents' generic "training" asks this function with its own workload.
    """
    x = np.asarray(s[SPEEDUP], dtype=float)
    if workload is None:
        return x
    return x * workload_factor(workload)


def speedup_basis() -> str:
    """Where :data:`SPEEDUP` comes from, in words: the calibrated step-time model on the reference workload."""
    from analyses.scenario import speedups

    return f"the step-time model calibrated on published runs, on {speedups.reference(scenario.values()).describe()}"


def workload_factor(workload: Any) -> float:
    """The step-time model's speed-up on ``workload`` over its speed-up on the reference workload
    (1 for the reference itself), at the central scenario."""
    from analyses.scenario import speedups  # the planner's search, on the floor it lives on

    central = scenario.values()
    ref = speedups.reference(central)
    if workload == ref:
        return 1.0
    return speedups.model_speedup(workload, NEW, OLD, central) / speedups.model_speedup(ref, NEW, OLD, central)


def mfu(s: Mapping[str, Any], name: str, x: Any = None) -> np.ndarray:
    """MFU of :data:`NEW` or :data:`OLD` in the scenario; for the new generation
    ``speedup × peak_old × MFU_old / peak_new`` (the achieved rate over its own dense peak; ``x`` a
    workload's speed-up instead of the scenario's)."""
    return achieved_flop_per_s(s, name, x) / peak_flops(name)
