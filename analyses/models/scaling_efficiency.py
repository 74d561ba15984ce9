"""Scaling efficiency: the per-GPU throughput a training job keeps when it moves to more GPUs, from the
book's one step-time model (:func:`analyses.models.performance.step_time`) and its fitted coefficients.

```text
efficiency(n; n_ref) = tokens/s per GPU at n / tokens/s per GPU at n_ref
speed-up(n; n_ref)   = efficiency · n / n_ref
```

Strong scaling keeps the global batch (in sequences); weak scaling grows it with the GPU count (the
batch given is the one at ``n_ref``). The layout at each count keeps the tensor- and pipeline-parallel
sizes and the micro-batch: the rest is data parallelism, and where the batch holds fewer micro-batches
than data-parallel ranks (strong scaling far out) the remaining factor splits each sequence across GPUs
(context parallelism, as Llama 3 did at 16,384 GPUs), which the step-time model charges its K/V ring.

Every function takes the step-time model's other inputs as keywords (``run``: shape, precision's peaks,
fabric, recomputation; :data:`analyses.models.performance.INPUTS` less ``n_gpus``, ``global_batch``,
``cp`` and ``dp``), arrays allowed, so a check evaluates 1,000 scenario draws in one call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from analyses.models import performance as pf


def split(n_gpus: ArrayLike, tp: ArrayLike, pp: ArrayLike, sequences: ArrayLike, micro_batch: ArrayLike = 1) -> tuple:
    """(data-parallel, context-parallel) sizes of ``n_gpus`` at tensor size ``tp`` and pipeline size ``pp``
    for a batch of ``sequences``: ``dp = min(n/(tp·pp), sequences/micro_batch)``, ``cp = n/(tp·pp·dp)``."""
    replicas = np.asarray(n_gpus, float) / (np.asarray(tp, float) * np.asarray(pp, float))
    dp = np.maximum(np.minimum(replicas, np.asarray(sequences, float) / np.asarray(micro_batch, float)), 1.0)
    return dp, np.maximum(replicas / dp, 1.0)


def step(coef: pf.Coefficients, *, n_gpus: ArrayLike, global_batch: ArrayLike, **run: Any) -> pf.Step:
    """One step of ``global_batch`` sequences on ``n_gpus`` GPUs at the layout :func:`split` gives."""
    _, cp = split(n_gpus, run["tp"], run["pp"], global_batch, run["micro_batch"])
    return pf.step_time(coef, n_gpus=n_gpus, global_batch=global_batch, cp=cp, **run)


def efficiency(
    coef: pf.Coefficients,
    n_gpus: ArrayLike,
    reference_gpus: ArrayLike,
    *,
    weak: bool,
    global_batch: ArrayLike,
    **run: Any,
) -> np.ndarray:
    """Scaling efficiency from ``reference_gpus`` to ``n_gpus`` (see the module docstring), 0-1 when
    communication grows with the count; ``global_batch`` is the batch (sequences) at ``reference_gpus``."""
    n, ref = np.asarray(n_gpus, float), np.asarray(reference_gpus, float)
    batch = np.asarray(global_batch, float) * (n / ref if weak else 1.0)
    at_n = step(coef, n_gpus=n, global_batch=batch, **run).tokens_per_s_per_gpu
    at_ref = step(coef, n_gpus=ref, global_batch=global_batch, **run).tokens_per_s_per_gpu
    return at_n / at_ref


def speedup(
    coef: pf.Coefficients,
    n_gpus: ArrayLike,
    reference_gpus: ArrayLike,
    *,
    weak: bool,
    global_batch: ArrayLike,
    **run: Any,
) -> np.ndarray:
    """Throughput at ``n_gpus`` over throughput at ``reference_gpus``: ``efficiency · n / n_ref``."""
    eff = efficiency(coef, n_gpus, reference_gpus, weak=weak, global_batch=global_batch, **run)
    return eff * np.asarray(n_gpus, float) / np.asarray(reference_gpus, float)


def nic_for_speedup(
    coef: pf.Coefficients,
    target_speedup: float,
    n_before: float,
    n_after: float,
    *,
    weak: bool,
    global_batch: float,
    **run: Any,
) -> float:
    """Achievable NIC bytes/s per GPU per direction at which ``n_before → n_after`` gives ``target_speedup``.

    Solved with :func:`scipy.optimize.brentq` on 1e6-1e12 bytes/s; ValueError when no bandwidth in that
    range gives it (the speed-up is then limited by something other than the network).
    """
    from scipy.optimize import brentq  # imported when first needed (scipy is slow to import)

    run = {k: v for k, v in run.items() if k != "nic_bytes_per_s"}

    def gap(log_b: float) -> float:
        got = speedup(coef, n_after, n_before, weak=weak, global_batch=global_batch, nic_bytes_per_s=10.0**log_b, **run)
        return float(got) - target_speedup

    return 10.0 ** brentq(gap, 6.0, 12.0, xtol=1e-6)


def network_share_kept(coef: pf.Coefficients, *, n_gpus: ArrayLike, global_batch: ArrayLike, **run: Any) -> np.ndarray:
    """Throughput at the run's ``nic_bytes_per_s`` over the throughput with an unlimited network, 0-1:
    ``step(unlimited) / step(nic)`` (latency and NVLink kept, so only the NIC's bandwidth is compared)."""
    limited = step(coef, n_gpus=n_gpus, global_batch=global_batch, **run).step_s
    unlimited = step(coef, n_gpus=n_gpus, global_batch=global_batch, **(run | {"nic_bytes_per_s": np.inf})).step_s
    return unlimited / limited


def communication_share_for_speedup(target_speedup: ArrayLike, gpu_ratio: ArrayLike) -> np.ndarray:
    """Closed form: the share ``c`` of the larger cluster's step spent communicating for a speed-up ``S``
    at ``r`` times the GPUs (strong scaling, communication that does not shrink): ``S = r·(1−c)``, so
    ``c = 1 − S/r``. For 64 → 256 GPUs and 2.1× this gives 0.475."""
    return 1.0 - np.asarray(target_speedup, float) / np.asarray(gpu_ratio, float)
