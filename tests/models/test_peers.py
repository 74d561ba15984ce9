"""The peer-comparison appendix: our side of the committed table is what our models compute now,
the peers' side reproduces where they are installed, and every large difference is explained."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from analyses import data
from analyses.chapters import peers as ch
from analyses.models import peers

PEERS_INSTALLED = all(importlib.util.find_spec(m) for m in ("llm_analysis", "mlsysim"))


@pytest.fixture(scope="module")
def table():
    return data.measurements("peer_comparison")


def test_our_side_is_what_our_models_compute_now(table):
    now = peers.recompute_ours(table, data.model_shapes())
    # written with 10 significant digits (tools/peer_compare.py)
    np.testing.assert_allclose(table["ours"].to_numpy(float), now, rtol=1e-9)


def test_the_table_covers_the_grid(table):
    configs = {peers.config_id(c) for c in peers.grid(data.model_shapes())}
    assert set(table["config"]) == configs
    assert set(table["tool"]) == set(peers.TOOLS)
    assert set(table["source"]) == set(peers.SOURCES.values())


def test_every_difference_beyond_the_threshold_is_explained(table):
    t = peers.with_differences(table)
    default = ch.SPEC.param("threshold").default
    assert ch.unexplained(t, default) == []
    tiny = 1e-6  # above the table's 10-significant-digit rounding
    assert ch.unexplained(t, tiny) == [], "a difference the page would list at threshold 0 has no explanation"
    assert "UNEXPLAINED" not in ch.differences(t, tiny)["why"].to_list()


def test_known_differences_hold(table):
    """The page's causes, checked as arithmetic: MLSys·im's activations are ours / p; llm-analysis
    keeps fp32 gradients (our fp32_grads=True option); MLSys·im's model states equal ours."""
    f = ch.facts(peers.with_differences(table))
    assert f["act_ratio_times_p_min"] == pytest.approx(1.0, rel=1e-6)
    assert f["act_ratio_times_p_max"] == pytest.approx(1.0, rel=1e-6)
    assert f["grad_fp32_max_gap"] < 0.005  # left: biases/position embeddings llm-analysis omits
    assert f["mlsysim_states_max_diff"] < 1e-9
    assert f["llama_llm_analysis_diff"] < -0.2  # the missing SwiGLU gate


@pytest.mark.skipif(
    not PEERS_INSTALLED, reason="llm-analysis and mlsysim are not installed (pip install -e '.[bench]')"
)
def test_the_peers_side_reproduces(table):
    import importlib.metadata

    for tool, version in peers.TOOLS.items():
        if importlib.metadata.version(tool) != version:
            pytest.skip(f"{tool} {importlib.metadata.version(tool)} installed; the table is for {version}")
    shapes = {r["name"]: r for r in data.model_shapes().to_dict("records")}
    cache: dict[tuple[str, str], dict[str, float]] = {}
    got = []
    for r in table.to_dict("records"):
        key = (r["tool"], r["config"])
        if key not in cache:
            cache[key] = peers.peer(r["tool"], r, shapes)
        got.append(cache[key][r["quantity"]])
    np.testing.assert_allclose(table["peer"].to_numpy(float), np.asarray(got, float), rtol=1e-9, equal_nan=True)


@pytest.mark.skipif(not PEERS_INSTALLED, reason="mlsysim is not installed")
def test_fleet_figures_are_mlsysims():
    import warnings

    warnings.simplefilter("ignore")
    from mlsysim.systems.registry import Clusters

    for gpu, name in peers.MLSYSIM_FLEET.items():
        fleet = getattr(Clusters, name)
        f = peers.FLEETS[gpu]
        assert fleet.total_accelerators == 1024
        assert fleet.node.intra_node_bw.to("byte/s").magnitude == pytest.approx(f["nvlink_bytes_per_s"])
        link = (fleet.fabric.bandwidth / fleet.fabric.oversubscription_ratio).to("byte/s").magnitude
        assert link == pytest.approx(f["link_bytes_per_s"])
        assert fleet.fabric.latency.to("s").magnitude == pytest.approx(f["latency_s"])
        peak = fleet.node.accelerator.compute.precision_flops.get("bf16", fleet.node.accelerator.compute.peak_flops)
        assert peak.to("flop/s").magnitude == pytest.approx(f["peak_bf16"])
        assert data.gpu(gpu).peak_flops("bf16") == pytest.approx(f["peak_bf16"])
