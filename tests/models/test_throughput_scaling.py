"""Tests of analyses.models.throughput, the collectives of analyses.models.performance and
analyses.models.scaling_efficiency against closed forms and published figures."""

from __future__ import annotations

import numpy as np
import pytest

from analyses import units
from analyses.models import flops, throughput
from analyses.models import performance as pf
from analyses.models import scaling_efficiency as se


def test_6nd_matches_gpt3_table_d1():
    # GPT-3 paper Table D.1: 175B on 300B tokens = 3.14e23 FLOP; 6ND gives 3.15e23 (within 1%).
    assert flops.training_flops(174.6e9, 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_attention_term_is_palm_appendix_b():
    # 12·L·d·s per token on top of 6N: GPT-3 shape (96 layers, 12288, 2048) adds 2.9e10 per token.
    extra = flops.training_flops(0.0, 1.0, 96, 12288, 2048)
    assert extra == pytest.approx(12 * 96 * 12288 * 2048)


def test_megatron_eq4_gpt3_34_days():
    # Narayanan et al. 2021 sec. 5.1: 175B, 300B tokens, 1,024 A100 at 140 TFLOP/s -> about 34 days
    # with their 8·T·P (recompute) count; with 8 instead of 6 the model must reproduce 34 days (±3%).
    flops = 8 * 175e9 * 300e9
    days = throughput.time_to_train_s(flops, 1024, 312e12, 140 / 312) / units.SECONDS_PER_DAY
    assert days == pytest.approx(34, rel=0.03)


def test_implied_speedup_64x30_to_32x20_is_3x():
    assert throughput.implied_per_gpu_speedup(64, 30, 32, 20) == pytest.approx(3.0)
    assert throughput.time_reduction(30, 20) == pytest.approx(1 / 3)
    assert throughput.speedup_for_time_reduction([0.6, 0.7]) == pytest.approx([2.5, 1 / 0.3])


def test_amdahl_fp8_never_reaches_2x_and_inverts():
    s = throughput.amdahl_precision_speedup(0.4, 2.0)
    assert s == pytest.approx(1 / 0.8)
    assert throughput.matmul_share_from_speedup(s, 2.0) == pytest.approx(0.4)
    # the PyTorch MXFP8 result (1.22-1.28x at 2x peak) implies 36-44% of step time in matmuls
    share = throughput.matmul_share_from_speedup(np.array([1.22, 1.28]), 2.0)
    assert np.all((share > 0.3) & (share < 0.5))


def test_allreduce_is_nccl_busbw_convention():
    # nccl-tests PERFORMANCE.md: t = S/B · 2(n-1)/n; 8 ranks, 1 GB at 100 GB/s -> 17.5 ms.
    assert pf.allreduce_time_s(1e9, 100e9, 8) == pytest.approx(0.0175)
    # two-level with 1 node equals the NVLink ring; with k=1 it equals the NIC ring
    assert pf.hierarchical_allreduce_time_s(1e9, 8, 1, 100e9, 10e9) == pytest.approx(0.0175)
    assert pf.hierarchical_allreduce_time_s(1e9, 1, 4, 100e9, 10e9) == pytest.approx(0.15)


COEF = pf.with_values(pf.PRIOR, dp_overlap=0.0)  # the textbook anchors: bubble factor 1, nothing hidden


def _run(**over):
    """A 13B-class dense model (40 layers of 5,120, sequences of 4,096) on 8-GPU A100 nodes over TCP."""
    run = dict(
        params_active=13e9,
        params_total=13e9,
        n_layers=40,
        d_model=5120,
        seq_len=4096,
        kv_ratio=1.0,
        n_experts=0,
        experts_active=0,
        tp=1,
        pp=1,
        vp=1,
        ep=1,
        micro_batch=1,
        recompute="selective",
        zero3=False,
        die="A100",
        peak_flops=312e12,
        peak_flops_bf16=312e12,
        hbm_bytes_per_s=2.0e12,
        nvlink_bytes_per_s=235e9,
        nic_bytes_per_s=12.5e9 * 0.6,
        gpus_per_node=8,
        nvlink_domain_gpus=8,
        latency_s=5e-6,
    )
    return run | over


def test_split_adds_context_parallelism_only_past_one_sequence_per_rank():
    dp, cp = se.split(np.array([64, 1024, 4096]), 2, 1, 1024)
    np.testing.assert_allclose(dp, [32, 512, 1024])
    np.testing.assert_allclose(cp, [1, 1, 2])


def test_pipeline_bubble_closed_form():
    st = se.step(COEF, n_gpus=64, global_batch=64, **_run(pp=8))
    # 8 replicas, 8 micro-batches each: bubble = (p-1)/(v·m) of compute = 7/8 (bubble factor 1)
    assert float(st.bubble_s / st.compute_s) == pytest.approx(7 / 8)


def test_weak_scaling_beats_strong_scaling():
    n = np.array([64, 256, 1024])
    weak = se.efficiency(COEF, n, 64, weak=True, global_batch=1024, **_run())
    strong = se.efficiency(COEF, n, 64, weak=False, global_batch=1024, **_run())
    assert np.all(weak[1:] > strong[1:])
    assert np.all(np.diff(strong) < 0)
    assert float(se.efficiency(COEF, 64, 64, weak=False, global_batch=1024, **_run())) == pytest.approx(1.0)


def test_inverse_nic_bandwidth_reproduces_target():
    b = se.nic_for_speedup(COEF, 2.1, 64, 256, weak=False, global_batch=1024, **_run())
    got = se.speedup(COEF, 256, 64, weak=False, global_batch=1024, **_run(nic_bytes_per_s=b))
    assert float(got) == pytest.approx(2.1, rel=1e-4)
    assert se.communication_share_for_speedup(2.1, 4) == pytest.approx(0.475)
    with pytest.raises(ValueError):  # more than the ideal: no network gives it
        se.nic_for_speedup(COEF, 4.5, 64, 256, weak=False, global_batch=1024, **_run())


def test_network_share_kept_closed_form():
    # two 8-GPU nodes, pure data parallelism, nothing hidden, no latency:
    # kept = (compute + NVLink all-reduce) / (compute + two-level all-reduce)
    run = _run(latency_s=0.0)
    st = se.step(COEF, n_gpus=16, global_batch=1024, **run)
    grads = 2.0 * 13e9
    nvlink = pf.allreduce_time_s(grads, run["nvlink_bytes_per_s"], 8)
    nic = pf.allreduce_time_s(grads / 8, run["nic_bytes_per_s"], 2)
    kept = se.network_share_kept(COEF, n_gpus=16, global_batch=1024, **run)
    assert float(kept) == pytest.approx(float((st.compute_s + nvlink) / (st.compute_s + nvlink + nic)))
    assert float(se.network_share_kept(COEF, n_gpus=8, global_batch=1024, **run)) == pytest.approx(1.0)


def test_efficiency_broadcasts_over_scenario_draws():
    shares = np.array([0.3, 0.6, 0.95])
    eff = se.efficiency(COEF, 256, 64, weak=False, global_batch=1024, **_run(nic_bytes_per_s=12.5e9 * shares))
    assert eff.shape == (3,) and np.all(np.diff(eff) > 0)  # a better NIC share scales better
    overlap = pf.with_values(COEF, dp_overlap=np.array([0.0, 0.5, 0.9]))
    eff = se.efficiency(overlap, 256, 64, weak=False, global_batch=1024, **_run())
    assert eff.shape == (3,) and np.all(np.diff(eff) > 0)  # and so does more overlap
