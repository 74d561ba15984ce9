"""Chapter ``scaling-efficiency``: how well training scales across GPUs and networks.

Checks document 000's interconnect and scaling claims (sections 2.2, 2.3, 3, 5, 6): NVLink-C2C
and NVSwitch bandwidths, the "+50%" comparison, "64 -> 256 GPUs gave 2.1x", ">90% at a thousand
GPUs", the >=200 Gbps network and the 4-8-node plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Config, Param, Rule, precision_rule
from analyses.models import scaling, throughput
from analyses.site.notebook import fmt, in_words, stated
from analyses.verdicts import Verdict, check


def _cluster_names() -> list[str]:
    return list(data.table("cluster_configs")["name"])


SPEC = ChapterSpec(
    slug="scaling-efficiency",
    title="Scaling efficiency",
    params=(
        Param("gpu", "str", "B300", "-", "GPU of your cluster", choices=data.gpu_names),
        Param("precision", "str", "fp8", "-", "training precision", choices=("bf16", "fp8", "fp4")),
        Param(
            "compute_efficiency",
            "float",
            0.4,
            "fraction",
            "single-GPU share of peak with no parallel overhead",
            0.05,
            1.0,
        ),
        Param("gpus_min", "int", 8, "GPUs", "smallest cluster of the curve (the reference)", 1, 16384),
        Param("gpus_max", "int", 16384, "GPUs", "largest cluster of the curve", 8, 131072),
        Param("nic_gbit_per_s", "float", 800.0, "Gbit/s per GPU", "scale-out network per GPU (wire rate)", 1, 3200),
        Param(
            "nic_share",
            "float",
            0.95,
            "fraction",
            "achievable share of the NIC rate (nccl-tests busbw / wire)",
            0.1,
            1.0,
        ),
        Param("nvlink_gb_per_s", "float", 900.0, "GB/s per direction", "NVLink per GPU per direction", 1, 3600),
        Param("nvlink_share", "float", 0.94, "fraction", "achievable share of NVLink", 0.1, 1.0),
        Param("latency_us", "float", 2.0, "µs", "per-hop collective latency", 0.1, 1000),
        Param("model_params", "float", 13e9, "parameters", "model size", 1e8, 2e12),
        Param(
            "batch_tokens", "float", 4e6, "tokens", "global batch per step (at gpus_min when weak scaling)", 1e4, 1e9
        ),
        Param("seq_len", "int", 8192, "tokens", "sequence length (the microbatch tokens)", 128, 131072),
        Param("tp", "int", 1, "GPUs", "tensor-parallel size", 1, 72),
        Param("pp", "int", 1, "GPUs", "pipeline-parallel size", 1, 128),
        Param("overlap", "float", 0.5, "fraction", "share of the gradient all-reduce hidden behind compute", 0.0, 1.0),
        Param(
            "weak_scaling", "bool", False, "-", "grow the batch with the GPU count (weak) instead of fixing it (strong)"
        ),
        Param(
            "tokens_per_param", "float", 20.0, "tokens/parameter", "pretraining tokens for the node-plan check", 1, 1000
        ),
    ),
    rules=(
        precision_rule("gpu", "precision"),
        Rule(("gpus_min", "gpus_max"), lambda c: None if c.gpus_max >= c.gpus_min else "gpus_max must be >= gpus_min"),
        Rule(("gpu", "tp"), lambda c: _tp_problem(c)),
        Rule(("tp", "pp", "gpus_min"), lambda c: _replica_problem(c)),
    ),
)


def _model_kwargs(cfg: Mapping[str, Any]) -> dict:
    return {
        "params": cfg["model_params"],
        "compute_efficiency": cfg["compute_efficiency"],
        "tp": cfg["tp"],
        "pp": cfg["pp"],
        "microbatch_tokens": cfg["seq_len"],
        "overlap": cfg["overlap"],
    }


def user_kwargs(cfg: Mapping[str, Any]) -> dict:
    """Step-time arguments for the reader's own cluster (the parameters)."""
    return _model_kwargs(cfg) | {
        "peak_flops": data.gpu(cfg["gpu"]).peak_flops(cfg["precision"]),
        "nvlink_bytes_per_s": cfg["nvlink_gb_per_s"] * 1e9 * cfg["nvlink_share"],
        "nic_bytes_per_s": cfg["nic_gbit_per_s"] * 1e9 / 8 * cfg["nic_share"],
        "gpus_per_node": 8,
        "nvlink_domain_gpus": data.gpu(cfg["gpu"]).nvlink_domain_gpus,
        "latency_s": cfg["latency_us"] * 1e-6,
    }


def _tp_problem(cfg: Config) -> str | None:
    domain = data.gpu(cfg["gpu"]).nvlink_domain_gpus
    if cfg["tp"] > domain:
        return f"tensor parallelism stays within one NVLink domain: tp at most {domain} on {cfg['gpu']}"
    return None


def _replica_problem(cfg: Config) -> str | None:
    if cfg["tp"] * cfg["pp"] > cfg["gpus_min"]:
        return f"the reference cluster must hold one model replica: gpus_min >= tp x pp = {cfg['tp'] * cfg['pp']}"
    return None


# The reference B300 cluster of data/cluster_configs.csv that the documents' B300 claims run on.
B300_CLUSTER = "B300 + 800G IB"
ETHERNET_CLUSTER = "A100 + 100GbE"  # the reference cluster of the 64 -> 256 GPU Ethernet anecdote
THOUSAND_GPUS = 1024  # "about a thousand GPUs" of the NCCL claim, as a power of two


def b300_cluster_label() -> str:
    """The reference B300 cluster in prose: "B300 with 800G IB" (GPU and NIC rate from ``cluster_configs``)."""
    row = data.table("cluster_configs").set_index("name").loc[B300_CLUSTER]
    return f"{row['gpu']} with {stated(row['nic_gbit_per_s_per_gpu'])}G IB"


def config_kwargs(cfg: Mapping[str, Any], name: str, precision: str | None = None) -> dict:
    """Step-time arguments for a reference cluster of ``cluster_configs``."""
    row = data.table("cluster_configs").set_index("name").loc[name].to_dict()
    g = data.gpu(row["gpu"])
    # the chapter's precision where the cluster's GPU offers it, else its best below (fp8, then bf16)
    offered = [p for p in (cfg["precision"], "fp8", "bf16") if p in g.peak_flops_dense]
    prec = precision or offered[0]
    return _model_kwargs(cfg) | scaling.cluster_kwargs(row, g.peak_flops(prec))


def gpu_counts(cfg: Mapping[str, Any]) -> np.ndarray:
    lo, hi = cfg["gpus_min"], max(cfg["gpus_max"], cfg["gpus_min"])
    return np.unique(np.round(np.geomspace(lo, hi, 40)).astype(int))


def curves(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Scaling-efficiency curves (strong or weak per ``weak_scaling``) for every reference cluster and yours."""
    n = gpu_counts(cfg)
    frames = []
    sets = [(name, config_kwargs(cfg, name)) for name in _cluster_names()] + [
        ("your cluster (parameters)", user_kwargs(cfg))
    ]
    for name, kw in sets:
        c = scaling.scaling_curve(
            n, cfg["gpus_min"], weak=cfg["weak_scaling"], tokens_per_step=cfg["batch_tokens"], **kw
        )
        frames.append(
            pd.DataFrame({"cluster": name, "GPUs": n, "efficiency": c["efficiency"], "speed-up": c["speedup"]})
        )
    return pd.concat(frames, ignore_index=True)


def curves_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Efficiency against GPU count, with the documents' points."""
    frame = curves(cfg)
    eth, nccl = data.claim("000-2.3-64-to-256-gpus-2p1x"), data.claim("000-2.3-nccl-90pct-linear-1000-gpus")
    n0, n1, speedup = eth.value("gpus_before"), eth.value("gpus_after"), eth.value("speedup_actual_x")
    pct, order = nccl.value("scaling_efficiency_min_pct"), nccl.value("gpus_order")
    pts = pd.DataFrame(
        [
            {
                "GPUs": n1,
                "efficiency": speedup / (n1 / n0),
                "point": f"000 §2.3: {stated(n0)}->{stated(n1)} gave {stated(speedup)}x",
            },
            {
                "GPUs": order,
                "efficiency": pct / 100,
                "point": f"000 §2.3: >{stated(pct)}% at ~{stated(order)}",
            },
        ]
    )
    lines = (
        alt.Chart(frame)
        .mark_line()
        .encode(
            x=alt.X("GPUs:Q", scale=alt.Scale(type="log"), title="GPUs"),
            y=alt.Y("efficiency:Q", scale=alt.Scale(domain=[0, 1.05]), title="scaling efficiency"),
            color=alt.Color("cluster:N", title=None),
            tooltip=["cluster", "GPUs", alt.Tooltip("efficiency:Q", format=".2f")],
        )
    )
    marks = (
        alt.Chart(pts)
        .mark_point(shape="diamond", size=140, filled=True, color="black")
        .encode(x="GPUs:Q", y="efficiency:Q", tooltip=["point"])
    )
    return (lines + marks).properties(width=520, height=300)


def ethernet_case(cfg: Mapping[str, Any]) -> dict[str, float]:
    """64 -> 256 A100 over ordinary Ethernet (strong scaling) and the inverse answers."""
    claim = data.claim("000-2.3-64-to-256-gpus-2p1x")
    n0, n1, target = claim.value("gpus_before"), claim.value("gpus_after"), claim.value("speedup_actual_x")
    kw = config_kwargs(cfg, ETHERNET_CLUSTER, "bf16")
    model = float(scaling.scaling_curve([n1], n0, weak=False, tokens_per_step=cfg["batch_tokens"], **kw)["speedup"][0])
    share = data.table("cluster_configs").set_index("name").loc[ETHERNET_CLUSTER, "nic_achievable_share"]
    try:
        b = scaling.solve_nic_bandwidth_for_speedup(
            target, n0, n1, weak=False, tokens_per_step=cfg["batch_tokens"], **kw
        )
        gbit = b * 8 / 1e9 / share
    except ValueError:
        gbit = float("nan")
    return {
        "model_speedup": model,
        "nic_gbit_for_target": gbit,
        "comm_share": scaling.communication_share_for_speedup(target, n1 / n0),
    }


def ninety_percent_bandwidth(cfg: Mapping[str, Any], n_gpus: float = THOUSAND_GPUS) -> float:
    """NIC Gbit/s per GPU (wire) needed to keep 90% strong-scaling efficiency from gpus_min to ``n_gpus`` on your cluster."""
    kw = user_kwargs(cfg)
    ratio = n_gpus / cfg["gpus_min"]
    try:
        b = scaling.solve_nic_bandwidth_for_speedup(
            0.9 * ratio, cfg["gpus_min"], n_gpus, weak=cfg["weak_scaling"], tokens_per_step=cfg["batch_tokens"], **kw
        )
    except ValueError:
        return float("nan")
    return b * 8 / 1e9 / cfg["nic_share"]


def validation() -> pd.DataFrame:
    """Model vs published measurements (calibrated on role=calibrate rows)."""
    return scaling.model_vs_measurement(
        data.table("scaling_benchmarks"), data.table("cluster_configs"), lambda g, p: data.gpu(g).peak_flops(p)
    )


def validation_chart() -> alt.LayerChart:
    frame = validation()
    base = alt.Chart(frame).encode(
        x=alt.X("measured:Q", scale=alt.Scale(type="log"), title="published"),
        y=alt.Y("predicted:Q", scale=alt.Scale(type="log"), title="model"),
    )
    pts = base.mark_point(filled=True, size=80).encode(
        color=alt.Color("role:N"),
        shape=alt.Shape("quantity:N", title=None),
        tooltip=["id", "quantity", alt.Tooltip("error:Q", format="+.1%")],
    )
    diag = (
        alt.Chart(pd.DataFrame({"v": [0.5, 4000]})).mark_line(strokeDash=[4, 3], color="grey").encode(x="v:Q", y="v:Q")
    )
    return (diag + pts).properties(width=400, height=320)


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def _nvlink(name: str) -> float:
    return float(data.gpu(name).nvlink_bytes_per_s_per_direction) / 1e9


@check("000-2.2-nvlink-c2c-900")
def _c2c(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return Verdict(
        f"HGX B300 GPU-GPU NVLink5 {fmt(_nvlink('B300'), 'GB/s')} per direction; NVLink-C2C is a Grace CPU-GPU link only",
        "inconsistent",
        "NVLink-C2C joins a Grace CPU to its GPU and does not exist on an HGX B300 server; parameter synchronisation between B300 GPUs runs over NVLink5 and NVSwitch.",
    )


@check("000-2.3-nvswitch-900-any-pair")
def _nvswitch(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    per_dir = _nvlink("B300")
    ok = abs(per_dir - claim.value("bandwidth_any_pair_gb_s")) < 1
    return Verdict(
        f"B300 NVLink5 through NVSwitch: {fmt(per_dir, 'GB/s')} per direction ({fmt(2 * per_dir, 'GB/s')} both ways)",
        "consistent" if ok else "inconsistent",
        f"Read per direction, {fmt(claim.value('bandwidth_any_pair_gb_s'), 'GB/s')} between any two GPUs of an "
        f"{data.gpu('B300').nvlink_domain_gpus}-GPU NVSwitch node is right."
        if ok
        else "The figure differs from NVLink5.",
    )


@check("000-3-table-bandwidth")
def _plus50(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    a100, b300 = _nvlink("A100"), _nvlink("B300")
    return Verdict(
        f"per direction {fmt(a100, 'GB/s')} -> {fmt(b300, 'GB/s')} (+{fmt(b300 / a100 - 1, pct=True)}); both ways {fmt(2 * a100, 'GB/s')} -> {fmt(2 * b300, 'GB/s')}",
        "inconsistent",
        f"The table sets A100's bidirectional {fmt(claim.value('a100_nvlink_gb_s'), 'GB/s')} against a per-direction "
        f"(and mislabelled C2C) {fmt(claim.value('b300_c2c_gb_s'), 'GB/s')}; like with like, B300 NVLink is "
        f"{fmt(b300 / a100, 'x', sig=2)} A100's, +{fmt(b300 / a100 - 1, pct=True)} not +{fmt(claim.value('increase_pct') / 100, pct=True, sig=2)}.",
    )


@check("000-2.3-internode-latency-microseconds")
def _latency(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    cl = data.table("cluster_configs")
    ib = cl[cl["network"] == "infiniband"]["latency_us"].median()
    tcp = cl[cl["network"] == "ethernet-tcp"]["latency_us"].median()
    return Verdict(
        f"RDMA (InfiniBand/RoCE) about {fmt(ib, 'µs')} per hop; kernel TCP about {fmt(tcp, 'µs')}",
        "consistent",
        "RDMA fabrics do reach microsecond-level small-message latency; plain TCP Ethernet does not.",
    )


def _efficiency_at(cfg: Mapping[str, Any], kw: dict, n: float, weak: bool, n0: float | None = None) -> float:
    n0 = n0 or cfg["gpus_min"]
    return float(scaling.scaling_curve([n], n0, weak=weak, tokens_per_step=cfg["batch_tokens"], **kw)["efficiency"][0])


@check("000-2.3-64-to-256-gpus-2p1x")
def _ethernet(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    e = ethernet_case(cfg)
    stated, node = fmt(claim.value("speedup_actual_x"), "x", sig=2), data.gpu("A100").nvlink_domain_gpus
    ok = np.isfinite(e["nic_gbit_for_target"]) and 1 <= e["nic_gbit_for_target"] <= 200
    return Verdict(
        f"model ({ETHERNET_CLUSTER}, strong scaling): {fmt(e['model_speedup'], 'x')}; {stated} needs {fmt(e['nic_gbit_for_target'], 'Gbit/s')} per GPU ({fmt(node * e['nic_gbit_for_target'], 'Gbit/s')} per {node}-GPU server); "
        f"communication share at {int(claim.value('gpus_after'))} = {fmt(e['comm_share'], pct=True)}",
        "consistent" if ok else "implausible",
        f"On the {ETHERNET_CLUSTER} cluster the model keeps most of the gain, but {fmt(node * e['nic_gbit_for_target'], 'Gbit/s')} "
        f"of network per server reproduces {stated}, so the anecdote is plausible; the case itself cannot be checked."
        if ok
        else f"Reproducing {stated} needs a network bandwidth outside the plausible Ethernet range.",
    )


REFERENCE_GPUS = 64  # the smallest cluster the documents scale from (their 64-GPU anecdotes)


def published_retention() -> dict[str, float]:
    """Per-GPU throughput kept by published runs when the same job moved to more GPUs.

    From ``scaling_benchmarks``: within each benchmark with model TFLOP/s per GPU at two or more
    GPU counts, the value at the largest count over the value at the smallest. Returns the range of
    those ratios and of the larger GPU counts.
    """
    bench = data.table("scaling_benchmarks")
    tf = bench[bench["metric"] == "model_tflops_per_gpu"]
    ratios, sizes = [], []
    for _, rows in tf.groupby("benchmark"):
        if len(rows) < 2:
            continue
        rows = rows.sort_values("n_gpus")
        ratios.append(rows["value"].iloc[-1] / rows["value"].iloc[0])
        sizes.append(rows["n_gpus"].iloc[-1])
    return {"ratio_min": min(ratios), "ratio_max": max(ratios), "gpus_min": min(sizes), "gpus_max": max(sizes)}


@check("000-2.3-nccl-90pct-linear-1000-gpus")
def _ninety(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    kw = config_kwargs(cfg, B300_CLUSTER)
    weak = _efficiency_at(cfg, kw, THOUSAND_GPUS, True, REFERENCE_GPUS)
    strong = _efficiency_at(cfg, kw, THOUSAND_GPUS, False, REFERENCE_GPUS)
    need = claim.value("scaling_efficiency_min_pct") / 100
    pub = published_retention()
    return Verdict(
        f"model {REFERENCE_GPUS} -> {THOUSAND_GPUS:,} {b300_cluster_label()}: {fmt(weak, pct=True)} when the batch grows, "
        f"{fmt(strong, pct=True)} at a fixed batch; published runs at {fmt(pub['gpus_min'])}-{fmt(pub['gpus_max'])} "
        f"GPUs keep {fmt(pub['ratio_min'], pct=True, sig=2)}-{fmt(pub['ratio_max'], pct=True, sig=2)}",
        "consistent" if weak >= need else "inconsistent",
        f"Published large runs keep {fmt(pub['ratio_min'], pct=True, sig=2)}-{fmt(pub['ratio_max'], pct=True, sig=2)} "
        f"of their per-GPU throughput on InfiniBand-class networks and the model agrees when the batch grows with "
        f"the cluster{'' if strong >= need else f'; at a fixed batch it falls below {fmt(need, pct=True, sig=2)}'}."
        if weak >= need
        else f"The model predicts less than {fmt(need, pct=True, sig=2)}.",
    )


@check("000-6-near-linear-scaling")
def _near_linear(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    kw = config_kwargs(cfg, B300_CLUSTER)
    e = _efficiency_at(cfg, kw, THOUSAND_GPUS, True, REFERENCE_GPUS)
    return Verdict(
        f"model {REFERENCE_GPUS} -> {THOUSAND_GPUS:,} {b300_cluster_label()}, batch growing: {fmt(e, pct=True)}",
        "consistent" if e >= 0.85 else "inconsistent",
        "Near-linear growth holds with a well-provisioned RDMA network and a batch that grows with the cluster; it comes from the network, not from B300 itself.",
    )


NODE_PLAN = "000-5-node-plan-time"


@check("000-5-network-200gbps")
def _net200(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    kw = config_kwargs(cfg, B300_CLUSTER)
    row = data.table("cluster_configs").set_index("name").loc[B300_CLUSTER]
    gbit = claim.value("network_min_gbps")
    per_gpu = gbit * 1e9 / 8 * row["nic_achievable_share"]  # bytes/s achieved
    plan = data.claim(NODE_PLAN)
    n0 = plan.value("gpus_per_node")  # one node: the reference
    n1 = plan.value("nodes_high") * n0  # the largest cluster of the 4-8-node plan
    kw200 = kw | {"nic_bytes_per_s": per_gpu}
    e200 = _efficiency_at(cfg, kw200, n1, False, n0)
    e_node = _efficiency_at(cfg, kw | {"nic_bytes_per_s": per_gpu / row["gpus_per_node"]}, n1, False, n0)
    target = 0.9  # the efficiency this book asks of the plan
    dgx = data.gpu("B300").nic_bytes_per_s_per_gpu * 8 / 1e9  # Gbit/s per GPU as shipped
    g = stated(gbit)
    return Verdict(
        f"{stated(n0)} -> {stated(n1)} B300 ({stated(cfg['model_params'] / 1e9)}B, fixed batch): "
        f"{fmt(e200, pct=True)} at {g} Gbit/s per GPU, {fmt(e_node, pct=True)} at {g} Gbit/s per node",
        "consistent" if e200 >= target else "inconsistent",
        f"{g} Gbit/s per GPU keeps the {stated(plan.value('nodes_low'))}-{stated(plan.value('nodes_high'))}-node plan "
        f"above {fmt(target, pct=True, sig=2)}, though DGX B300 ships {stated(dgx)} per GPU; read as {g} per node it "
        "would bottleneck."
        if e200 >= target
        else f"At {g} Gbit/s the network is the bottleneck.",
    )


@check("000-5-node-plan-time")
def _node_plan(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    n = claim.value("params")
    gpus = np.array([claim.value("nodes_low"), claim.value("nodes_high")]) * claim.value("gpus_per_node")
    kw = config_kwargs(cfg, B300_CLUSTER) | {"params": n}
    eff = scaling.scaling_curve(
        gpus, claim.value("gpus_per_node"), weak=False, tokens_per_step=cfg["batch_tokens"], **kw
    )["efficiency"]
    flops = throughput.training_flops(n, n * cfg["tokens_per_param"])
    days = (
        throughput.time_to_train_s(flops, gpus, kw["peak_flops"], cfg["compute_efficiency"] * eff)
        / throughput.SECONDS_PER_DAY
    )
    return Verdict(
        f"{stated(n / 1e9)}B params × {fmt(cfg['tokens_per_param'])} tokens/param: {fmt(days[0], 'days', 2)} on "
        f"{stated(gpus[0])} GPUs, {fmt(days[1], 'days', 2)} on {stated(gpus[1])} (efficiency {fmt(eff[1], pct=True)})",
        "consistent",
        f"{in_words(claim.value('nodes_low')).capitalize()} to {in_words(claim.value('nodes_high'))} B300 nodes train a "
        f"compute-optimal {stated(n / 1e9)}B model in days at high efficiency; 'balances cost' is a judgement the book "
        "does not score.",
    )


@check("000-6-poc-4-8-gpus")
def _poc(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    lo, hi = claim.value("poc_gpus_low"), claim.value("poc_gpus_high")
    st = scaling.step_time(n_gpus=int(hi), tokens_per_step=cfg["batch_tokens"], **config_kwargs(cfg, B300_CLUSTER))
    return Verdict(
        f"on one {stated(hi)}-GPU node the NIC carries no traffic; exposed communication {fmt(float(st.communication_share[()]), pct=True)} of the step",
        "consistent",
        f"A {stated(lo)}-{stated(hi)}-GPU proof of concept measures per-GPU throughput fairly, but it cannot reveal multi-node scaling, which needs at least two nodes.",
    )


# --------------------------------------------------------------------------------------------
# Prose: sentences whose conclusion depends on the data and parameters
# --------------------------------------------------------------------------------------------


def ethernet_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the Ethernet anecdote: the network per server that reproduces the stated speed-up."""
    claim = data.claim("000-2.3-64-to-256-gpus-2p1x")
    stated = fmt(claim.value("speedup_actual_x"), "x", sig=2)
    gbit = ethernet_case(cfg)["nic_gbit_for_target"]
    per_server = data.gpu("A100").nvlink_domain_gpus * gbit
    if not np.isfinite(gbit):
        return f"no network bandwidth reproduces the {stated} story in the model."
    return f"the {stated} story is what {fmt(per_server, 'Gbit/s')} of network per server produces: a network problem, not a GPU one."


def worst_validation() -> str:
    """The validation row with the largest error and the calibration row it was predicted from."""
    val = validation()
    rows = val[val["role"] == "validate"]
    worst = rows.loc[rows["error"].abs().idxmax()]
    cal = val[(val["role"] == "calibrate") & (val["gpu"] == worst["gpu"]) & (val["precision"] == worst["precision"])]
    text = f"{worst['benchmark']} on {int(worst['n_gpus']):,} {worst['gpu']}s"
    if len(cal):
        c = cal.iloc[0]
        text += f", calibrated on {c['benchmark']} on {int(c['n_gpus']):,} GPUs"
    return text
