"""Tests of analyses.models.mig against NVIDIA's MIG profile tables and packing bounds."""

import numpy as np
import pytest

from analyses import data
from analyses.models import mig


@pytest.mark.parametrize("gpu", ["A100", "H100", "H200", "B200", "B300"])
def test_profiles_match_the_mig_user_guide(gpu):
    # NVIDIA MIG user guide: 7 instances at most (Supported GPUs table); 1g profiles fit 7 times,
    # 7g once; the 7g profile takes all 7 compute and 8 memory slices.
    prof = data.mig_profiles(gpu).set_index("compute_slices")
    assert prof["max_instances"].max() == 7 == data.gpu(gpu).mig_max_instances
    assert prof.loc[7, "memory_eighths"] == 8 and prof.loc[7, "max_instances"] == 1
    # max_instances of each profile alone equals what first-fit packs onto one GPU
    for row in data.mig_profiles(gpu).itertuples():
        n = row.max_instances
        assert mig.pack_first_fit([row.compute_slices] * n, [row.memory_eighths] * n) == 1


def test_b300_profile_sizes():
    # B300 1g.34gb ... 7g.269gb (NVIDIA GPU Operator v25.3.0 profile list, via aws PR 403).
    names = list(data.mig_profiles("B300")["profile"])
    assert names[0] == "1g.34gb" and names[-1] == "7g.269gb"


def test_first_fit_respects_the_lower_bound_and_is_near_it():
    rng = np.random.default_rng(7)
    prof = data.mig_profiles("B300")
    for _ in range(50):
        c, m = mig.draw_jobs(rng, 60, 0.7, 0.2, 0.2, 0.9)
        a = mig.assign_profiles(c, m, prof)
        ff = mig.pack_first_fit(a["compute_slices"], a["memory_eighths"])
        lb = mig.lower_bound_gpus(a["compute_slices"], a["memory_eighths"])
        assert lb <= ff <= lb * 1.1 + 1  # first-fit decreasing stays within ~10% of the bound here


def test_whole_gpu_utilisation_is_mean_demand_and_mig_helps():
    s = mig.simulate(data.mig_profiles("B300"), snapshots=50, seed=1)
    # 70% small jobs at ~20% compute, 30% large at 90%: expected whole-GPU utilisation 0.41.
    assert s["util_whole"].mean() == pytest.approx(0.7 * 0.2 + 0.3 * 0.9, abs=0.02)
    assert (s["util_mig"] > s["util_whole"]).all()
    assert (s["util_mig"] <= s["util_mig_bound"] + 1e-12).all()


def test_four_for_seven_arithmetic():
    assert float(mig.gpus_ratio_from_utilisation(0.45, 0.80)) == pytest.approx(0.5625)
    assert 4 / 7 == pytest.approx(0.5714, abs=1e-4)
