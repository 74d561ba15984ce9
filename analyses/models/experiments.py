"""Running experiments serially on a whole cluster or concurrently on slices of it.

Conventions: times in days; a run needs a fixed amount of work. On the whole cluster (``n`` GPUs)
at parallel efficiency ``e_full`` a run takes ``t_full``; on a slice of ``n/k`` GPUs at efficiency
``e_slice`` it takes ``t_full · k · e_full / e_slice`` (same work, ``1/k`` of the GPUs, each GPU
``e_slice/e_full`` as productive). A new cluster ``speedup`` times faster per GPU (same GPU count)
divides every run's time. The efficiencies come from the book's one step-time model
(:func:`run_efficiency`: :func:`analyses.models.performance.step_time` at the coefficients given).

Early stopping is modelled as successive halving (Jamieson & Talwalkar 2016, AISTATS, Alg. 1;
Li et al. 2018, "Hyperband", JMLR 18(185), Sec 3, Alg. 1 and Table 1): ``n`` configurations are
trained to a first budget ``r_0`` (a share of a full run), the best ``1/eta`` are promoted to
``eta`` times the budget, and so on until one configuration (or the last rung) gets a full run.
Budgets are shares of one full training run; compute is counted in full-run equivalents.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from analyses.models import performance
from analyses.units import DAYS_PER_MONTH


def serial_days(runs: int, run_days_full: float) -> float:
    """Wall time (days) of ``runs`` runs one after another on the whole cluster."""
    return runs * run_days_full


def concurrent_days(
    runs: int,
    run_days_full: npt.ArrayLike,
    concurrent: int,
    e_full: npt.ArrayLike,
    e_slice: npt.ArrayLike,
    speedup: npt.ArrayLike,
) -> np.ndarray:
    """Wall time (days) of ``runs`` runs, ``concurrent`` at a time on equal slices of the cluster.

    Each run on a slice takes ``run_days_full · concurrent · e_full / e_slice / speedup``; the runs
    go in ``ceil(runs / concurrent)`` waves. ``speedup`` is the cluster's per-GPU throughput
    relative to the one that gave ``run_days_full`` (1 for the same cluster).
    """
    per_run = np.asarray(run_days_full, float) * concurrent * np.asarray(e_full, float) / np.asarray(e_slice, float)
    return np.ceil(runs / concurrent) * per_run / np.asarray(speedup, float)


def sweep_speedup(
    runs: int, concurrent: int, e_full: npt.ArrayLike, e_slice: npt.ArrayLike, speedup: npt.ArrayLike
) -> np.ndarray:
    """Serial wall time on the old cluster over concurrent wall time on the new one (×).

    ``runs · t / concurrent_days = speedup · (e_slice / e_full) · runs / (ceil(runs/k) · k)``: the
    per-GPU speed-up, the efficiency small slices gain, and the idle slices of a last partial wave.
    """
    return runs / concurrent_days(runs, 1.0, concurrent, e_full, e_slice, speedup)


def required_speedup(
    runs: int, serial_total_days: float, concurrent: int, target_days: float, e_full: float, e_slice: float
) -> float:
    """Cluster speed-up needed for the concurrent sweep to finish in ``target_days``."""
    return float(concurrent_days(runs, serial_total_days / runs, concurrent, e_full, e_slice, 1.0)) / target_days


def runs_per_month(run_days: npt.ArrayLike) -> np.ndarray:
    """Complete runs per month (average rate) when runs go back to back: ``30.44 / run_days``."""
    return DAYS_PER_MONTH / np.asarray(run_days, dtype=float)


def required_efficiency_ratio(
    runs: int, serial_total_days: float, concurrent: int, target_days: float, speedup: float
) -> float:
    """The ``e_slice / e_full`` a concurrent sweep needs to finish in ``target_days``.

    From :func:`concurrent_days`: ``ceil(N/k) · k · t · e_full / e_slice / speedup = target``, so
    ``e_slice/e_full = ceil(N/k) · k · t / (target · speedup)`` with ``t = serial_total / N``.
    """
    per_run = serial_total_days / runs
    return float(np.ceil(runs / concurrent) * concurrent * per_run / (target_days * speedup))


def run_efficiency(coef: performance.Coefficients, gpus: npt.ArrayLike, **run: Any) -> np.ndarray:
    """Parallel efficiency of one run on ``gpus`` GPUs: the share of its step spent computing,
    ``compute / step`` of :func:`analyses.models.performance.step_time` at ``coef`` with the run's other
    inputs ``run``. The run keeps its global batch (its hyper-parameters) on any slice, so splitting a
    cluster is strong scaling in reverse, and compute × GPUs is the same on every slice: the ratio of two
    efficiencies is the ratio of their per-GPU throughputs."""
    step = performance.step_time(coef, n_gpus=np.asarray(gpus, float), **run)
    return np.asarray(step.compute_s / step.step_s)


# --------------------------------------------------------------------------------------------
# Successive halving (early stopping)
# --------------------------------------------------------------------------------------------


def _default_min_budget(configs: npt.ArrayLike, eta: npt.ArrayLike) -> np.ndarray:
    """``eta^-s`` with ``s = round(log_eta(configs))``: one configuration left at a full run."""
    n, e = np.asarray(configs, float), np.asarray(eta, float)
    return e ** -np.round(np.log(n) / np.log(e))


def successive_halving_rungs(
    configs: npt.ArrayLike, eta: npt.ArrayLike = 3, min_budget: npt.ArrayLike | None = None
) -> dict[str, np.ndarray]:
    """Rung sizes and budgets of successive halving, broadcast over the inputs (closed form).

    With ``s = ceil(log_eta(1/r_0))`` halvings at most, rung ``i`` trains
    ``n_i = floor(n / eta^i)`` configurations to ``r_i = r_0 · eta^i`` of a full run
    (Li et al. 2018, Alg. 1: ``n_i = floor(n eta^-i)``, ``r_i = r eta^i``). The last rung is the
    first ``i`` where ``n_i <= 1`` or ``i = s``: it trains ``max(1, n_i)`` configurations to a full
    run (budget 1). Counts that are not powers of ``eta`` floor at every rung, as ``top_k`` does in
    the paper; the floors nest, so ``floor(floor(n/eta^i)/eta) = floor(n/eta^(i+1))``.

    Parameters
    ----------
    configs
        Configurations ``n`` in the first rung (integers >= 1).
    eta
        Promotion ratio (integer >= 2): the best ``1/eta`` of a rung go on.
    min_budget
        ``r_0``, the first rung's budget as a share of a full run (0, 1]. Default ``eta^-s``
        with ``s = round(log_eta n)`` (one survivor at a full run).

    Returns
    -------
    dict of numpy.ndarray
        ``configs`` and ``budget`` (shape ``(..., rungs)``, zero past the last rung), ``active``
        (bool mask of real rungs) and ``rungs`` (count per input).
    """
    eta_ = np.asarray(eta)
    if np.any(eta_ < 2) or np.any(eta_ != np.round(eta_)):
        raise ValueError("eta must be an integer >= 2")
    n = np.asarray(configs, float)
    if np.any(n < 1) or np.any(n != np.round(n)):
        raise ValueError("configs must be integers >= 1")
    r0 = _default_min_budget(n, eta_) if min_budget is None else np.asarray(min_budget, float)
    if np.any(r0 <= 0) or np.any(r0 > 1):
        raise ValueError("min_budget must lie in (0, 1]")
    n, e, r0 = np.broadcast_arrays(n, eta_.astype(float), r0)
    s = np.ceil(np.log(1.0 / r0) / np.log(e) - 1e-9).astype(int)
    s = np.maximum(s, 0)
    i = np.arange(int(s.max(initial=0)) + 1)
    shape = (*n.shape, i.size)
    ii = np.broadcast_to(i, shape)
    raw = np.floor(n[..., None] / e[..., None] ** ii + 1e-9)
    # last rung: the first i with at most one configuration left, capped at s
    first_single = np.where(raw <= 1, ii, i.size).min(axis=-1)
    last = np.minimum(s, first_single)
    active = ii <= last[..., None]
    is_last = ii == last[..., None]
    sizes = np.where(active, np.where(is_last, np.maximum(raw, 1.0), raw), 0.0)
    budget = np.where(active, np.where(is_last, 1.0, r0[..., None] * e[..., None] ** ii), 0.0)
    return {"configs": sizes, "budget": budget, "active": active, "rungs": last + 1}


def successive_halving_full_runs(
    configs: npt.ArrayLike,
    eta: npt.ArrayLike = 3,
    min_budget: npt.ArrayLike | None = None,
    resume: bool = False,
) -> np.ndarray:
    """Compute of successive halving in full-run equivalents (closed form, vectorised).

    ``resume=False`` counts each rung's training from scratch, ``Σ n_i r_i`` (the resources of
    Li et al. 2018, Table 1: every bracket uses at most ``(s_max + 1) R``); ``resume=True``
    continues promoted runs from their checkpoints, ``Σ n_i (r_i − r_(i−1))``.
    """
    rungs = successive_halving_rungs(configs, eta, min_budget)
    budget = rungs["budget"]
    if resume:
        previous = np.concatenate([np.zeros_like(budget[..., :1]), budget[..., :-1]], axis=-1)
        step = np.where(rungs["active"], budget - previous, 0.0)
    else:
        step = budget
    return np.sum(rungs["configs"] * step, axis=-1)


def successive_halving_cost(
    configs: npt.ArrayLike,
    eta: npt.ArrayLike = 2,
    min_budget: npt.ArrayLike | None = None,
    resume: bool = False,
) -> np.ndarray | float:
    """Compute of successive halving as a fraction of training every configuration fully.

    ``successive_halving_full_runs / configs``. With ``configs = eta^s`` and the default first
    budget ``eta^-s`` each of the ``s + 1`` rungs costs ``configs · eta^-s`` full runs from scratch,
    so the fraction is ``(s + 1) / eta^s`` (Li et al. 2018, Sec 3).
    """
    out = successive_halving_full_runs(configs, eta, min_budget, resume) / np.asarray(configs, float)
    return float(out) if np.ndim(out) == 0 else out


def successive_halving_trace(
    scores: npt.ArrayLike, eta: int = 3, min_budget: float | None = None, resume: bool = False
) -> dict[str, Any]:
    """Run successive halving rung by rung on given scores (a direct simulation, for checking).

    ``scores[i, c]`` is configuration ``c``'s loss when measured at rung ``i`` (lower is better;
    rows beyond the last rung are ignored). Each rung trains its survivors to the rung's budget,
    keeping a per-configuration count of the budget spent, then promotes the ``floor(m / eta)``
    lowest losses of its ``m`` survivors (at least one). Returns the chosen configuration, the
    survivors of each rung, and the compute spent in full-run equivalents.
    """
    scores = np.asarray(scores, float)
    n = scores.shape[1]
    r0 = float(_default_min_budget(n, eta)) if min_budget is None else float(min_budget)
    s = max(int(np.ceil(np.log(1.0 / r0) / np.log(eta) - 1e-9)), 0)
    alive = list(range(n))
    trained = np.zeros(n)
    spent = 0.0
    history = []
    for i in range(s + 1):
        final = i == s or len(alive) <= 1
        budget = 1.0 if final else r0 * eta**i
        for c in alive:
            spent += budget - trained[c] if resume else budget
            trained[c] = budget
        history.append(list(alive))
        ranked = sorted(alive, key=lambda c: (scores[i, c], c))
        if final:
            return {"chosen": ranked[0], "rungs": history, "full_runs": spent}
        alive = ranked[: max(len(alive) // eta, 1)]
    raise AssertionError("unreachable")  # pragma: no cover


def successive_halving_wall_days(
    configs: int,
    eta: int,
    min_budget: float | None,
    run_days_full: float,
    concurrent: int,
    e_full: float,
    e_slice: float,
    speedup: float,
    resume: bool = True,
    regroup: bool = True,
    e_by_concurrency: npt.ArrayLike | None = None,
) -> float:
    """Wall-clock days of a successive-halving sweep run up to ``concurrent`` at a time on slices.

    Rungs run one after another (a rung must finish before it can promote). Rung ``i`` has
    ``n_i`` jobs of ``Δ_i`` full runs each (``r_i − r_(i−1)`` when resuming, else ``r_i``). With
    ``c`` jobs side by side, each on ``1/c`` of the cluster at efficiency ``e(c)``, a job takes
    ``Δ_i · run_days_full · c · e_full / e(c) / speedup`` (as :func:`concurrent_days`) and the
    rung takes ``ceil(n_i / c)`` such waves. ``regroup=True`` gives a rung with fewer than
    ``concurrent`` survivors larger slices (``c = n_i``); otherwise ``c = concurrent`` throughout.
    ``e(c)`` comes from ``e_by_concurrency[c − 1]`` when given, else geometric interpolation
    ``e_full · (e_slice/e_full)^(ln c / ln k)`` between the whole cluster (c = 1) and ``k`` slices.
    """
    rungs = successive_halving_rungs(configs, eta, min_budget)
    sizes, budget = rungs["configs"], rungs["budget"]
    previous = np.concatenate([[0.0], budget[:-1]])
    step = np.where(rungs["active"], budget - previous if resume else budget, 0.0)
    k = int(concurrent)
    c = np.clip(sizes, 1, k) if regroup else np.full_like(sizes, k)
    if e_by_concurrency is not None:
        table = np.asarray(e_by_concurrency, float)
        eff = table[c.astype(int) - 1]
    elif k == 1:
        eff = np.full_like(c, e_full)
    else:
        eff = e_full * (e_slice / e_full) ** (np.log(c) / np.log(k))
    waves = np.ceil(sizes / c)
    per_job = step * run_days_full * c * e_full / eff / speedup
    return float(np.sum(np.where(rungs["active"], waves * per_job, 0.0)))


def rank_correlation_for_noise(noise: npt.ArrayLike) -> np.ndarray:
    """Spearman rank correlation of ``X`` and ``X + noise·Z`` for independent standard normals.

    Pearson ``ρ = 1/sqrt(1 + noise²)``; for a bivariate normal Spearman's is
    ``ρ_s = (6/π) arcsin(ρ/2)`` (Pearson 1907; Kendall & Gibbons, *Rank Correlation Methods*, 1990).
    """
    rho = 1.0 / np.sqrt(1.0 + np.asarray(noise, float) ** 2)
    return 6.0 / np.pi * np.arcsin(rho / 2.0)


def noise_for_rank_correlation(rank_correlation: npt.ArrayLike) -> np.ndarray:
    """Inverse of :func:`rank_correlation_for_noise`: the noise sd (in units of the score spread)."""
    rs = np.asarray(rank_correlation, float)
    rho = 2.0 * np.sin(np.pi * rs / 6.0)
    with np.errstate(divide="ignore"):
        return np.sqrt(np.maximum(1.0 / rho**2 - 1.0, 0.0))


def successive_halving_selection(
    configs: int,
    eta: int = 3,
    min_budget: float | None = None,
    noise: float = 0.5,
    trials: int = 20_000,
    seed: int = 0,
    persistence: float = 0.0,
) -> dict[str, float]:
    """Monte Carlo of what successive halving selects when early losses are noisy (fixed seed).

    Final losses are independent standard normals (one per configuration). At a rung of budget
    ``r`` a configuration's measured loss is ``final + σ(r)·ε`` with
    ``σ(r) = noise · (1 − r)/(1 − r_0)``: ``noise`` at the first rung, shrinking to 0 at a full run.
    ``ε = sqrt(p)·z + sqrt(1 − p)·w`` mixes a per-configuration offset ``z`` that persists across
    rungs (share ``p = persistence``) with fresh noise ``w``. The first rung's rank correlation
    with the final loss is :func:`rank_correlation_for_noise` (``noise``). Vectorised over trials.

    Returns
    -------
    dict
        ``p_best_kept`` (the truly best configuration is the one selected), its standard error,
        ``mean_regret`` (selected minus best final loss, in units of the spread between
        configurations) and ``full_runs`` (compute, from scratch).
    """
    rungs = successive_halving_rungs(configs, eta, min_budget)
    sizes = rungs["configs"][rungs["active"]].astype(int)
    budgets = rungs["budget"][rungs["active"]]
    rng = np.random.default_rng(seed)
    final = rng.standard_normal((trials, configs))
    offset = rng.standard_normal((trials, configs))
    r0 = budgets[0]
    alive = np.ones((trials, configs), bool)
    rows = np.arange(trials)[:, None]
    for i in range(len(sizes) - 1):
        sigma = noise * (1.0 - budgets[i]) / (1.0 - r0) if r0 < 1 else 0.0
        fresh = rng.standard_normal((trials, configs))
        eps = np.sqrt(persistence) * offset + np.sqrt(1.0 - persistence) * fresh
        measured = np.where(alive, final + sigma * eps, np.inf)
        keep = np.argsort(measured, axis=1, kind="stable")[:, : sizes[i + 1]]
        alive = np.zeros_like(alive)
        alive[rows, keep] = True
    # the last rung trains its survivors fully: the measured loss is the final loss
    chosen = np.argmin(np.where(alive, final, np.inf), axis=1)
    best = np.argmin(final, axis=1)
    hit = chosen == best
    regret = final[np.arange(trials), chosen] - final[np.arange(trials), best]
    p = float(hit.mean())
    return {
        "p_best_kept": p,
        "p_best_kept_se": float(np.sqrt(max(p * (1 - p), 1e-12) / trials)),
        "mean_regret": float(regret.mean()),
        "full_runs": float(successive_halving_full_runs(configs, eta, min_budget)),
    }


def hyperband_brackets(max_resource: float, eta: int = 3) -> list[dict[str, float]]:
    """The brackets of Hyperband (Li et al. 2018, Alg. 1): one row per bracket and rung.

    ``s_max = floor(log_eta R)``; bracket ``s`` starts ``n = ceil((s_max + 1)/(s + 1) · eta^s)``
    configurations at ``r = R · eta^-s`` resources and runs successive halving
    (:func:`successive_halving_rungs`) from there. Rows: ``s``, ``i``, ``n_i``, ``r_i`` (in
    resource units, e.g. epochs).
    """
    s_max = int(np.floor(np.log(max_resource) / np.log(eta) + 1e-9))
    rows = []
    for s in range(s_max, -1, -1):
        n = int(np.ceil((s_max + 1) / (s + 1) * eta**s - 1e-9))
        rungs = successive_halving_rungs(n, eta, float(eta) ** -s)
        for i in np.flatnonzero(rungs["active"]):
            rows.append(
                {"s": s, "i": int(i), "n_i": int(rungs["configs"][i]), "r_i": rungs["budget"][i] * max_resource}
            )
    return rows


def successive_halving_gpu_days(
    configs: npt.ArrayLike,
    eta: npt.ArrayLike,
    min_budget: npt.ArrayLike | None,
    run_days_full: npt.ArrayLike,
    gpus: npt.ArrayLike,
    resume: bool = True,
) -> np.ndarray:
    """GPU-days of a successive-halving sweep: full-run equivalents × ``run_days_full`` × ``gpus``.

    ``run_days_full`` is one run's wall time on ``gpus`` GPUs (the whole cluster); a slice runs the
    same work on fewer GPUs for longer, so GPU-days differ only by the efficiency ratio.
    """
    full = successive_halving_full_runs(configs, eta, min_budget, resume)
    return full * np.asarray(run_days_full, float) * np.asarray(gpus, float)
