"""Packing jobs onto whole GPUs or onto MIG slices: GPUs needed and utilisation.

Conventions: a job asks for a fraction of one GPU's compute (``compute_frac``) and of its memory
(``memory_frac``), both in (0, 1]. On whole GPUs every job takes a GPU. With MIG (NVIDIA MIG user
guide) a GPU has 7 compute slices and 8 memory slices; a job takes the smallest profile that
covers both needs, and profiles are packed onto GPUs first-fit decreasing under the two slice
budgets. This ignores MIG's placement rules (which positions each profile may start at), so it is
optimistic by at most a few percent for mixed profiles. Utilisation is compute used / compute
provisioned: ``Σ compute_frac / GPUs``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

COMPUTE_SLICES, MEMORY_SLICES = 7, 8


def assign_profiles(compute_frac: npt.ArrayLike, memory_frac: npt.ArrayLike, profiles: pd.DataFrame) -> pd.DataFrame:
    """The smallest profile (fewest compute then memory slices) covering each job's needs.

    ``profiles`` has columns ``profile``, ``compute_slices``, ``memory_eighths``. Returns one row per
    job with the profile name and its slices.
    """
    c = np.asarray(compute_frac, dtype=float)
    m = np.asarray(memory_frac, dtype=float)
    prof = profiles.sort_values(["compute_slices", "memory_eighths"], kind="stable").reset_index(drop=True)
    cs = prof["compute_slices"].to_numpy() / COMPUTE_SLICES
    ms = prof["memory_eighths"].to_numpy() / MEMORY_SLICES
    fits = (cs[None, :] >= c[:, None] - 1e-12) & (ms[None, :] >= m[:, None] - 1e-12)
    if not fits.any(axis=1).all():
        raise ValueError("a job needs more than one whole GPU")
    idx = fits.argmax(axis=1)  # first (smallest) profile that fits
    return prof.loc[idx, ["profile", "compute_slices", "memory_eighths"]].reset_index(drop=True)


def pack_first_fit(compute_slices: npt.ArrayLike, memory_eighths: npt.ArrayLike) -> int:
    """GPUs needed to hold MIG instances, first-fit decreasing under 7 compute and 8 memory slices."""
    cs = np.asarray(compute_slices, dtype=int)
    ms = np.asarray(memory_eighths, dtype=int)
    order = np.lexsort((-ms, -cs))
    free_c: list[int] = []
    free_m: list[int] = []
    for i in order:
        for g in range(len(free_c)):
            if free_c[g] >= cs[i] and free_m[g] >= ms[i]:
                free_c[g] -= cs[i]
                free_m[g] -= ms[i]
                break
        else:
            free_c.append(COMPUTE_SLICES - cs[i])
            free_m.append(MEMORY_SLICES - ms[i])
    return len(free_c)


def lower_bound_gpus(compute_slices: npt.ArrayLike, memory_eighths: npt.ArrayLike) -> int:
    """Closed-form lower bound on GPUs for MIG instances: ``max(⌈Σc/7⌉, ⌈Σm/8⌉)``."""
    return int(
        max(
            np.ceil(np.sum(compute_slices) / COMPUTE_SLICES),
            np.ceil(np.sum(memory_eighths) / MEMORY_SLICES),
        )
    )


def draw_jobs(
    rng: np.random.Generator,
    mean_jobs: float,
    small_share: float,
    small_compute: float,
    small_memory: float,
    large_compute: float,
) -> tuple[np.ndarray, np.ndarray]:
    """One snapshot of concurrent jobs: a Poisson number, each small (partial GPU) or large (whole GPU).

    Small jobs need ``small_compute`` of a GPU's compute and ``small_memory`` of its memory (each
    varied ±50% uniformly); large jobs need all of its memory and use ``large_compute`` of its compute.
    """
    n = max(int(rng.poisson(mean_jobs)), 1)
    small = rng.random(n) < small_share
    jitter_c = rng.uniform(0.5, 1.5, n)
    jitter_m = rng.uniform(0.5, 1.5, n)
    compute = np.where(small, np.clip(small_compute * jitter_c, 0.01, 1.0), large_compute)
    memory = np.where(small, np.clip(small_memory * jitter_m, 0.01, 1.0), 1.0)
    return compute, memory


def simulate(
    profiles: pd.DataFrame,
    *,
    mean_jobs: float = 100.0,
    small_share: float = 0.7,
    small_compute: float = 0.2,
    small_memory: float = 0.2,
    large_compute: float = 0.9,
    snapshots: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """GPUs needed and utilisation on whole GPUs vs MIG for random job snapshots (fixed seed).

    Returns one row per snapshot: jobs, GPUs whole, GPUs MIG (first fit), GPUs MIG lower bound,
    utilisation whole, utilisation MIG, utilisation MIG upper bound.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(snapshots):
        compute, memory = draw_jobs(rng, mean_jobs, small_share, small_compute, small_memory, large_compute)
        prof = assign_profiles(compute, memory, profiles)
        gpus_mig = pack_first_fit(prof["compute_slices"], prof["memory_eighths"])
        bound = lower_bound_gpus(prof["compute_slices"], prof["memory_eighths"])
        used = compute.sum()
        rows.append(
            {
                "jobs": compute.size,
                "gpus_whole": compute.size,
                "gpus_mig": gpus_mig,
                "gpus_mig_bound": bound,
                "util_whole": used / compute.size,
                "util_mig": used / gpus_mig,
                "util_mig_bound": used / bound,
            }
        )
    return pd.DataFrame(rows)


def gpus_ratio_from_utilisation(util_before: npt.ArrayLike, util_after: npt.ArrayLike) -> np.ndarray:
    """GPUs needed after/before for the same work when utilisation rises: ``u_before / u_after``."""
    return np.asarray(util_before, dtype=float) / np.asarray(util_after, dtype=float)
