"""Sharing GPUs with MIG: which slice a job takes, how many GPUs a job mix needs, and its utilisation.

Conventions (NVIDIA MIG user guide): a GPU has 7 compute slices and 8 memory slices; a MIG
profile takes ``compute_slices`` of the first and ``memory_eighths`` of the second. A job needs a
fraction of one GPU's compute (``compute_frac``) and of its memory (``memory_frac``), both in
(0, 1]; it takes the smallest profile (fewest compute, then memory slices) that covers both. A
*small* job needs part of a GPU: its compute and memory are uniform within ±50% (``SPREAD``) of
their means, clipped to [0.01, 1]. A *large* job holds a whole GPU and keeps it busy (the 7g
profile), so any idle time MIG could recover lies in small jobs: the figures below are the most
MIG can deliver.

Utilisation is compute used over compute provisioned: on whole GPUs every job holds one GPU, so it
is the mean compute per job; with MIG it is ``Σ compute_frac / GPUs``. Two ways to count GPUs:

* the **fluid bound** (:func:`mig_utilisation_bound`): ``max(Σ c / 7, Σ m / 8)`` GPUs for profiles
  of ``c`` compute and ``m`` memory slices, in expectation over the job mix (closed form,
  vectorised over arrays of the mix's parameters; the many-job limit of a perfect packer);
* **first-fit decreasing** (:func:`pack_counts`, :func:`simulate`): profiles sorted by compute
  then memory slices, each placed on the first GPU with room. It ignores MIG's placement rules
  (which slice positions each profile may start at), so it is itself slightly optimistic; it stays
  within a few percent of the bound for the job mixes of this book (tested).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

COMPUTE_SLICES, MEMORY_SLICES = 7, 8
SPREAD = 0.5  # a small job's compute and memory vary uniformly within ±50% of their means
MIN_FRACTION = 0.01  # the smallest need a job is given after the spread


class Profiles(NamedTuple):
    """A GPU's MIG profiles sorted smallest first, and the smallest profile for every need."""

    names: tuple[str, ...]
    compute_slices: np.ndarray  # (P,) int
    memory_eighths: np.ndarray  # (P,) int
    lookup: np.ndarray  # (7, 8) index of the smallest profile with >= k+1 compute and >= j+1 memory slices


def profiles_of(frame: pd.DataFrame) -> Profiles:
    """:class:`Profiles` from a table with columns ``profile``, ``compute_slices``, ``memory_eighths``
    (``data.mig_profiles(gpu)``). Raises ``ValueError`` if no profile holds a whole GPU's needs."""
    return _profiles(
        tuple(frame["profile"]),
        tuple(int(c) for c in frame["compute_slices"]),
        tuple(int(m) for m in frame["memory_eighths"]),
    )


@functools.cache
def _profiles(names: tuple[str, ...], cs: tuple[int, ...], ms: tuple[int, ...]) -> Profiles:
    order = sorted(range(len(names)), key=lambda i: (cs[i], ms[i]))
    c = np.array([cs[i] for i in order])
    m = np.array([ms[i] for i in order])
    k = np.arange(1, COMPUTE_SLICES + 1)[:, None, None]
    j = np.arange(1, MEMORY_SLICES + 1)[None, :, None]
    fits = (c[None, None, :] >= k) & (m[None, None, :] >= j)
    if not fits.any(axis=2).all():
        raise ValueError("the profiles hold no whole-GPU instance (7 compute and 8 memory slices)")
    return Profiles(tuple(names[i] for i in order), c, m, fits.argmax(axis=2))


def _slices(frac: np.ndarray, n: int) -> np.ndarray:
    """Slices of ``n`` a fraction needs, ``⌈n·frac⌉`` (with a tolerance for round fractions)."""
    return np.clip(np.ceil(np.asarray(frac, dtype=float) * n - 1e-9), 1, n).astype(int)


def profile_index(compute_frac: npt.ArrayLike, memory_frac: npt.ArrayLike, prof: Profiles) -> np.ndarray:
    """Index (into ``prof``) of the smallest profile covering each job's compute and memory."""
    return prof.lookup[_slices(compute_frac, COMPUTE_SLICES) - 1, _slices(memory_frac, MEMORY_SLICES) - 1]


def assign_profiles(compute_frac: npt.ArrayLike, memory_frac: npt.ArrayLike, profiles: pd.DataFrame) -> pd.DataFrame:
    """The smallest profile covering each job: one row per job with ``profile``, ``compute_slices``,
    ``memory_eighths``. Raises ``ValueError`` for a need outside (0, 1]."""
    c, m = np.atleast_1d(np.asarray(compute_frac, dtype=float)), np.atleast_1d(np.asarray(memory_frac, dtype=float))
    if (c <= 0).any() or (c > 1 + 1e-12).any() or (m <= 0).any() or (m > 1 + 1e-12).any():
        raise ValueError("a job needs a fraction of one GPU in (0, 1]")
    prof = profiles_of(profiles)
    idx = profile_index(c, m, prof)
    return pd.DataFrame(
        {
            "profile": np.asarray(prof.names, dtype=object)[idx],
            "compute_slices": prof.compute_slices[idx],
            "memory_eighths": prof.memory_eighths[idx],
        }
    )


# --------------------------------------------------------------------------------------------
# The job mix in expectation (closed form, vectorised)
# --------------------------------------------------------------------------------------------


def slice_probabilities(mean_frac: npt.ArrayLike, n: int) -> np.ndarray:
    """P(a small job needs k of ``n`` slices), k = 1..n, for a need uniform within ±SPREAD of
    ``mean_frac`` and clipped to [MIN_FRACTION, 1]. Shape ``mean_frac.shape + (n,)``."""
    mean = np.asarray(mean_frac, dtype=float)[..., None]
    lo, hi = (1 - SPREAD) * mean, (1 + SPREAD) * mean
    edges = np.arange(n + 1) / n  # need in (edge[k-1], edge[k]] takes k slices
    cdf = np.clip((edges - lo) / (hi - lo), 0.0, 1.0)
    cdf[..., -1] = 1.0  # needs above one GPU are clipped to it
    cdf[..., 0] = 0.0  # needs below the first edge are clipped up to MIN_FRACTION > 0
    return np.diff(cdf, axis=-1)


def mean_need(mean_frac: npt.ArrayLike) -> np.ndarray:
    """Expected need of a small job, E[clip(U((1−s)·mean, (1+s)·mean), MIN_FRACTION, 1)] (exact)."""
    mean = np.asarray(mean_frac, dtype=float)
    lo, hi = (1 - SPREAD) * mean, (1 + SPREAD) * mean
    a, b = np.clip(lo, MIN_FRACTION, 1.0), np.clip(hi, MIN_FRACTION, 1.0)
    # mass below MIN_FRACTION sits at MIN_FRACTION, above 1 at 1, and uniform in between
    below = np.clip((MIN_FRACTION - lo) / (hi - lo), 0, 1)
    above = np.clip((hi - 1.0) / (hi - lo), 0, 1)
    inside = 1 - below - above
    return below * MIN_FRACTION + above * 1.0 + inside * (a + b) / 2


class MixExpectation(NamedTuple):
    """A job mix in expectation: per-job compute used, slices taken and the resulting utilisations."""

    small_share: np.ndarray  # share of jobs that need part of a GPU
    compute_per_job: np.ndarray  # mean compute a job uses (fraction of a GPU) = whole-GPU utilisation
    compute_slices_per_job: np.ndarray  # mean compute slices of the profiles jobs take
    memory_eighths_per_job: np.ndarray
    gpus_per_job_mig: np.ndarray  # fluid bound: max(slices/7, eighths/8)
    utilisation_whole: np.ndarray
    utilisation_mig: np.ndarray  # fluid bound: the most MIG packing can reach


def expected_mix(
    small_share: npt.ArrayLike, small_compute: npt.ArrayLike, small_memory: npt.ArrayLike, prof: Profiles
) -> MixExpectation:
    """The job mix in expectation on whole GPUs and with MIG (fluid bound), vectorised in every input.

    ``small_share`` of the jobs need part of a GPU (means ``small_compute``, ``small_memory``); the
    rest hold and use a whole one. Profile slices are averaged exactly over the independent
    uniform compute and memory needs (:func:`slice_probabilities`)."""
    s = np.asarray(small_share, dtype=float)
    pk = slice_probabilities(small_compute, COMPUTE_SLICES)  # (..., 7)
    pj = slice_probabilities(small_memory, MEMORY_SLICES)  # (..., 8)
    joint = pk[..., :, None] * pj[..., None, :]  # (..., 7, 8)
    cs = np.sum(joint * prof.compute_slices[prof.lookup], axis=(-2, -1))
    ms = np.sum(joint * prof.memory_eighths[prof.lookup], axis=(-2, -1))
    compute = s * mean_need(small_compute) + (1 - s)
    cs_job = s * cs + (1 - s) * COMPUTE_SLICES
    ms_job = s * ms + (1 - s) * MEMORY_SLICES
    gpus = np.maximum(cs_job / COMPUTE_SLICES, ms_job / MEMORY_SLICES)
    return MixExpectation(s, compute, cs_job, ms_job, gpus, compute, compute / gpus)


def small_share_for(utilisation_whole: npt.ArrayLike, small_compute: npt.ArrayLike) -> np.ndarray:
    """Share of small jobs that makes a whole-GPU cluster's utilisation ``utilisation_whole``:
    ``u = s·E[c] + (1 − s)`` solved for ``s``, clipped to [0, 1] (a cluster whose small jobs use
    more than ``u`` on average cannot be that idle: then every job is small)."""
    need = mean_need(small_compute)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (1.0 - np.asarray(utilisation_whole, dtype=float)) / (1.0 - need)
    return np.clip(np.nan_to_num(s, nan=1.0, posinf=1.0), 0.0, 1.0)


def mig_utilisation_bound(
    utilisation_whole: npt.ArrayLike, small_compute: npt.ArrayLike, small_memory: npt.ArrayLike, prof: Profiles
) -> MixExpectation:
    """The most MIG can lift a cluster whose utilisation on whole GPUs is ``utilisation_whole``:
    the share of small jobs that explains it (:func:`small_share_for`), then the fluid bound."""
    return expected_mix(small_share_for(utilisation_whole, small_compute), small_compute, small_memory, prof)


def gpus_ratio_from_utilisation(util_before: npt.ArrayLike, util_after: npt.ArrayLike) -> np.ndarray:
    """GPUs needed after/before for the same work when utilisation rises: ``u_before / u_after``."""
    return np.asarray(util_before, dtype=float) / np.asarray(util_after, dtype=float)


def largest_shared_memory(profiles: pd.DataFrame) -> float:
    """The largest memory share (of a GPU) an instance may hold and still share its GPU with another
    instance: the biggest ``memory_eighths / 8`` among profiles that fit at least twice
    (``max_instances`` >= 2 in ``data.mig_profiles(gpu)``)."""
    shared = profiles[profiles["max_instances"] >= 2]
    return float(shared["memory_eighths"].max() / MEMORY_SLICES) if len(shared) else 0.0


# --------------------------------------------------------------------------------------------
# Packing instances: first-fit decreasing, by profile type
# --------------------------------------------------------------------------------------------


def pack_counts(counts: npt.ArrayLike, prof: Profiles) -> int:
    """GPUs first-fit decreasing needs for ``counts[p]`` instances of each profile ``p``.

    Identical instances placed first-fit fill the open GPUs in order, each up to its room, so each
    profile type is placed in bulk over a run-length list of (free compute, free memory, GPUs) in
    creation order: the cost grows with the number of distinct GPU states, not with the jobs.
    """
    counts = np.asarray(counts, dtype=np.int64)
    runs: list[list[int]] = []  # [free compute slices, free memory eighths, GPUs], oldest first
    order = sorted(range(len(counts)), key=lambda p: (-prof.compute_slices[p], -prof.memory_eighths[p]))
    for p in order:
        left, c, m = int(counts[p]), int(prof.compute_slices[p]), int(prof.memory_eighths[p])
        if left == 0:
            continue
        out: list[list[int]] = []
        for fc, fm, n in runs:
            room = min(fc // c, fm // m)
            if left == 0 or room == 0:
                out.append([fc, fm, n])
                continue
            full = min(n, left // room)  # GPUs that take `room` more instances each
            if full:
                out.append([fc - room * c, fm - room * m, full])
                left -= full * room
            rest = n - full
            if rest and left:  # the next GPU takes what is left (fewer than `room`)
                out.append([fc - left * c, fm - left * m, 1])
                left, rest = 0, rest - 1
            if rest:
                out.append([fc, fm, rest])
        per_gpu = min(COMPUTE_SLICES // c, MEMORY_SLICES // m)
        full, part = divmod(left, per_gpu)
        if full:
            out.append([COMPUTE_SLICES - per_gpu * c, MEMORY_SLICES - per_gpu * m, full])
        if part:
            out.append([COMPUTE_SLICES - part * c, MEMORY_SLICES - part * m, 1])
        runs = _merge(out)
    return int(sum(n for _, _, n in runs))


def _merge(runs: list[list[int]]) -> list[list[int]]:
    """Neighbouring runs of GPUs in the same state merged (order kept)."""
    out: list[list[int]] = []
    for r in runs:
        if out and out[-1][0] == r[0] and out[-1][1] == r[1]:
            out[-1][2] += r[2]
        else:
            out.append(list(r))
    return out


def pack_first_fit(compute_slices: npt.ArrayLike, memory_eighths: npt.ArrayLike) -> int:
    """GPUs first-fit decreasing needs for a list of instances (compute and memory slices each)."""
    cs = np.asarray(compute_slices, dtype=int)
    ms = np.asarray(memory_eighths, dtype=int)
    kinds, counts = np.unique(np.stack([cs, ms], axis=1), axis=0, return_counts=True)
    prof = Profiles(tuple(f"{c}g.{m}" for c, m in kinds), kinds[:, 0], kinds[:, 1], np.zeros((7, 8), dtype=int))
    return pack_counts(counts, prof)


def lower_bound_gpus(compute_slices: npt.ArrayLike, memory_eighths: npt.ArrayLike) -> int:
    """Closed-form lower bound on GPUs for MIG instances: ``max(⌈Σc/7⌉, ⌈Σm/8⌉)``."""
    return int(
        max(
            np.ceil(np.sum(compute_slices) / COMPUTE_SLICES - 1e-9),
            np.ceil(np.sum(memory_eighths) / MEMORY_SLICES - 1e-9),
        )
    )


# --------------------------------------------------------------------------------------------
# Random snapshots of a job mix
# --------------------------------------------------------------------------------------------


def draw_jobs(
    rng: np.random.Generator, n_jobs: int, small_share: float, small_compute: float, small_memory: float
) -> tuple[np.ndarray, np.ndarray]:
    """Compute and memory needs of ``n_jobs`` jobs: small with probability ``small_share`` (needs
    uniform within ±SPREAD of the means, clipped to [MIN_FRACTION, 1]), otherwise a whole GPU."""
    small = rng.random(n_jobs) < small_share
    jitter = rng.uniform(1 - SPREAD, 1 + SPREAD, (2, n_jobs))
    compute = np.where(small, np.clip(small_compute * jitter[0], MIN_FRACTION, 1.0), 1.0)
    memory = np.where(small, np.clip(small_memory * jitter[1], MIN_FRACTION, 1.0), 1.0)
    return compute, memory


def simulate(
    profiles: pd.DataFrame,
    *,
    mean_jobs: float = 100.0,
    small_share: float = 0.7,
    small_compute: float = 0.3,
    small_memory: float = 0.25,
    snapshots: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Random snapshots of concurrent jobs packed on whole GPUs and on MIG slices (fixed seed).

    Each snapshot holds a Poisson number of jobs (at least one) with mean ``mean_jobs``. Returns one
    row per snapshot: ``jobs``, ``gpus_whole``, ``gpus_mig`` (first-fit decreasing),
    ``gpus_mig_bound`` (:func:`lower_bound_gpus`), ``util_whole``, ``util_mig``, ``util_mig_bound``.
    Jobs are drawn in one vectorised call; packing costs a few operations per snapshot and profile.
    """
    prof = profiles_of(profiles)
    rng = np.random.default_rng(seed)
    jobs = np.maximum(rng.poisson(mean_jobs, snapshots), 1)
    compute, memory = draw_jobs(rng, int(jobs.sum()), small_share, small_compute, small_memory)
    snap = np.repeat(np.arange(snapshots), jobs)
    idx = profile_index(compute, memory, prof)
    n_prof = len(prof.names)
    counts = np.bincount(snap * n_prof + idx, minlength=snapshots * n_prof).reshape(snapshots, n_prof)
    used = np.bincount(snap, weights=compute, minlength=snapshots)
    gpus_mig = np.array([pack_counts(row, prof) for row in counts])
    bound = np.maximum(
        np.ceil(counts @ prof.compute_slices / COMPUTE_SLICES - 1e-9),
        np.ceil(counts @ prof.memory_eighths / MEMORY_SLICES - 1e-9),
    ).astype(int)
    return pd.DataFrame(
        {
            "jobs": jobs,
            "gpus_whole": jobs,
            "gpus_mig": gpus_mig,
            "gpus_mig_bound": bound,
            "util_whole": used / jobs,
            "util_mig": used / gpus_mig,
            "util_mig_bound": used / bound,
        }
    )
