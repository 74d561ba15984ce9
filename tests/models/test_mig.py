"""Tests of analyses.models.mig against NVIDIA's MIG profile tables, hand-packed GPUs, a reference
first-fit packer and Monte Carlo draws of the closed-form job-mix expectation."""

import numpy as np
import pytest

from analyses import data
from analyses.models import mig

B300 = data.mig_profiles("B300")


def naive_first_fit(cs: np.ndarray, ms: np.ndarray) -> int:
    """Reference: first-fit decreasing one instance at a time (the textbook algorithm)."""
    free_c: list[int] = []
    free_m: list[int] = []
    for i in np.lexsort((-ms, -cs)):
        for g in range(len(free_c)):
            if free_c[g] >= cs[i] and free_m[g] >= ms[i]:
                free_c[g] -= cs[i]
                free_m[g] -= ms[i]
                break
        else:
            free_c.append(mig.COMPUTE_SLICES - cs[i])
            free_m.append(mig.MEMORY_SLICES - ms[i])
    return len(free_c)


@pytest.mark.parametrize("gpu", ["A100", "H100", "H200", "B200", "B300"])
def test_profiles_match_the_mig_user_guide(gpu):
    # NVIDIA MIG user guide: 7 instances at most (Supported GPUs table); 1g profiles fit 7 times,
    # 7g once; the 7g profile takes all 7 compute and 8 memory slices.
    table = data.mig_profiles(gpu)
    prof = table.set_index("compute_slices")
    assert prof["max_instances"].max() == 7 == data.gpu(gpu).mig_max_instances
    assert prof.loc[7, "memory_eighths"] == 8 and prof.loc[7, "max_instances"] == 1
    # each profile's instance count is what first-fit packs onto one GPU, and one more needs a second GPU
    for row in table.itertuples():
        n = row.max_instances
        assert mig.pack_first_fit([row.compute_slices] * n, [row.memory_eighths] * n) == 1
        assert mig.pack_first_fit([row.compute_slices] * (n + 1), [row.memory_eighths] * (n + 1)) == 2


def test_b300_profile_sizes():
    # B300 1g.34gb ... 7g.269gb (NVIDIA GPU Operator v25.3.0 profile list, via aws PR 403).
    names = mig.profiles_of(B300).names
    assert names[0] == "1g.34gb" and names[-1] == "7g.269gb"


def test_smallest_covering_profile():
    # a job of a fifth of the memory needs 2 of 8 memory slices: 1g.67gb (the debugging example of 001 §2.3)
    got = mig.assign_profiles([1 / 7, 0.2, 0.5, 0.3, 1.0], [0.1, 0.2, 0.5, 0.3, 1.0], B300)
    assert list(got["profile"]) == ["1g.34gb", "2g.67gb", "4g.135gb", "3g.135gb", "7g.269gb"]
    with pytest.raises(ValueError, match="in \\(0, 1\\]"):
        mig.assign_profiles([1.2], [0.5], B300)
    with pytest.raises(ValueError, match="whole-GPU"):
        mig.profiles_of(B300[B300["compute_slices"] < 7])


def test_hand_packed_mixes():
    # NVIDIA's A100 combinations: 4g + 3g share a GPU, and 3g + 2g + 1g + 1g as well
    assert mig.pack_first_fit([4, 3], [4, 4]) == 1
    assert mig.pack_first_fit([3, 2, 1, 1], [4, 2, 1, 1]) == 1
    # two 4g need two GPUs (only 3 compute slices are left beside one)
    assert mig.pack_first_fit([4, 4], [4, 4]) == 2


def test_bulk_first_fit_equals_the_reference():
    rng = np.random.default_rng(1)
    for _ in range(400):
        n = int(rng.integers(1, 120))
        c, m = mig.draw_jobs(rng, n, rng.random(), rng.uniform(0.02, 0.8), rng.uniform(0.02, 0.8))
        a = mig.assign_profiles(c, m, B300)
        cs, ms = a["compute_slices"].to_numpy(), a["memory_eighths"].to_numpy()
        assert mig.pack_first_fit(cs, ms) == naive_first_fit(cs, ms)
        assert mig.lower_bound_gpus(cs, ms) <= mig.pack_first_fit(cs, ms)


def test_slice_probabilities_and_mean_need_against_monte_carlo():
    rng = np.random.default_rng(3)
    for mean in (0.05, 0.2, 0.45, 0.8):
        x = np.clip(mean * rng.uniform(1 - mig.SPREAD, 1 + mig.SPREAD, 400_000), mig.MIN_FRACTION, 1)
        for n in (mig.COMPUTE_SLICES, mig.MEMORY_SLICES):
            p = mig.slice_probabilities(mean, n)
            assert p.sum() == pytest.approx(1.0)
            counts = np.bincount(np.clip(np.ceil(x * n - 1e-9), 1, n).astype(int) - 1, minlength=n) / x.size
            assert p == pytest.approx(counts, abs=3e-3)  # 400k draws: standard error below 1e-3
        assert float(mig.mean_need(mean)) == pytest.approx(x.mean(), rel=2e-3)


def test_closed_form_matches_the_simulation():
    # the fluid bound in expectation is the many-job limit of the simulated lower bound
    share, comp, mem = 0.7, 0.3, 0.25
    e = mig.expected_mix(share, comp, mem, mig.profiles_of(B300))
    sim = mig.simulate(B300, mean_jobs=2000, small_share=share, small_compute=comp, small_memory=mem, snapshots=60)
    assert float(e.utilisation_whole) == pytest.approx(sim["util_whole"].mean(), rel=0.01)
    assert float(e.utilisation_mig) == pytest.approx(sim["util_mig_bound"].mean(), rel=0.01)
    # first-fit decreasing stays within a few percent of the bound for this book's mixes
    assert (sim["gpus_mig"] >= sim["gpus_mig_bound"]).all()
    assert (sim["gpus_mig"] / sim["gpus_mig_bound"]).max() < 1.05


def test_whole_gpu_utilisation_is_the_mean_compute_per_job():
    e = mig.expected_mix(0.7, 0.2, 0.2, mig.profiles_of(B300))
    # 70% small jobs using 20% of a GPU, 30% holding a whole one: 0.7 x 0.2 + 0.3 = 0.44
    assert float(e.utilisation_whole) == pytest.approx(0.44)
    assert float(e.utilisation_mig) > float(e.utilisation_whole)


def test_small_share_inverts_the_whole_gpu_utilisation():
    prof = mig.profiles_of(B300)
    u = np.array([0.3, 0.45, 0.5, 0.9])
    s = mig.small_share_for(u, 0.25)
    assert mig.expected_mix(s, 0.25, 0.25, prof).utilisation_whole == pytest.approx(u)
    # a cluster of jobs that each use more than it averages cannot exist: every job is then small
    assert float(mig.small_share_for(0.2, 0.5)) == 1.0


def test_bound_is_vectorised_and_falls_with_memory():
    prof = mig.profiles_of(B300)
    mem = np.linspace(0.05, 0.6, 12)
    b = mig.mig_utilisation_bound(0.45, 0.3, mem, prof).utilisation_mig
    assert b.shape == (12,) and (np.diff(b) <= 1e-12).all() and (b <= 1).all()


def test_largest_shared_memory():
    # 3g.135gb takes 4 of 8 memory slices and fits twice: half the memory is the most that still shares
    assert mig.largest_shared_memory(B300) == 0.5
    assert mig.largest_shared_memory(B300[B300["max_instances"] == 1]) == 0.0


def test_four_for_seven_arithmetic():
    assert float(mig.gpus_ratio_from_utilisation(0.45, 0.80)) == pytest.approx(0.5625)
