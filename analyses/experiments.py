"""Running experiments serially on a whole cluster or concurrently on slices of it.

Conventions: times in days; a run needs a fixed amount of work. On the whole cluster (``n`` GPUs)
at parallel efficiency ``e_full`` a run takes ``t_full``; on a slice of ``n/k`` GPUs at efficiency
``e_slice`` it takes ``t_full · k · e_full / e_slice`` (same work, ``1/k`` of the GPUs, each GPU
``e_slice/e_full`` as productive). A scaling-efficiency curve could come from
:mod:`analyses.scaling`; here the two efficiencies are plain parameters.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

DAYS_PER_MONTH = 365.25 / 12


def serial_days(runs: int, run_days_full: float) -> float:
    """Wall time (days) of ``runs`` runs one after another on the whole cluster."""
    return runs * run_days_full


def concurrent_days(
    runs: int, run_days_full: float, concurrent: int, e_full: float, e_slice: float, speedup: float = 1.0
) -> float:
    """Wall time (days) of ``runs`` runs, ``concurrent`` at a time on equal slices of the cluster.

    Each run on a slice takes ``run_days_full · concurrent · e_full / e_slice / speedup``; the runs
    go in ``ceil(runs / concurrent)`` waves. ``speedup`` is the new cluster's throughput relative to
    the one that gave ``run_days_full``.
    """
    per_run = run_days_full * concurrent * e_full / e_slice / speedup
    return float(np.ceil(runs / concurrent) * per_run)


def required_speedup(
    runs: int, serial_total_days: float, concurrent: int, target_days: float, e_full: float, e_slice: float
) -> float:
    """Cluster speedup needed for the concurrent sweep to finish in ``target_days``."""
    return concurrent_days(runs, serial_total_days / runs, concurrent, e_full, e_slice) / target_days


def runs_per_month(run_days: npt.ArrayLike) -> np.ndarray:
    """Complete runs per month (average rate) when runs go back to back: ``30.44 / run_days``."""
    return DAYS_PER_MONTH / np.asarray(run_days, dtype=float)


def successive_halving_cost(configs: int, eta: int = 2) -> float:
    """Compute of successive halving as a fraction of training every config fully.

    Successive halving (Jamieson & Talwalkar 2016; Li et al. 2018, Hyperband, Sec 3): with
    ``configs = eta^R``, rung ``r`` trains ``configs/eta^r`` survivors to ``eta^(r−R)`` of a full
    run, so each of the ``R + 1`` rungs costs ``configs · eta^-R`` full runs.
    """
    rungs = int(round(np.log(configs) / np.log(eta)))
    per_rung = configs * float(eta) ** (-rungs)
    return (rungs + 1) * per_rung / configs
