"""Chapter ``memory``: what training a model of N parameters needs per GPU, and does it fit.

Checks document 000 part 2.2 (a 100B model needs about 400 GB for FP16 weights and over 1.5 TB
with gradients and Adam states; no single card holds it; B300's HBM3e holds bigger shards),
part 5's memory side of the 4-8 node plan for a 10B model, and document 001 part 2.2's HBM
bandwidth figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Config, Param, Rule
from analyses.models import memory
from analyses.site.notebook import fmt, stated
from analyses.verdicts import Verdict, check

GB = memory.GB
DEFAULT_MODELS = (
    "llama2-7b",
    "llama2-13b",
    "llama2-70b",
    "illustrative-100b",
    "gpt3-175b",
    "llama31-405b",
    "megatron-1t",
)
DEFAULT_GPUS = ("A100", "H100", "H200", "B200", "B300")

SPEC = ChapterSpec(
    slug="memory",
    title="Memory budgets",
    params=(
        Param(
            "preset",
            "str",
            "illustrative-100b",
            "-",
            "model shape (a row of data/model_shapes.csv)",
            choices=data.model_shape_names,
        ),
        Param(
            "precision",
            "str",
            "bf16-mixed",
            "-",
            "precision recipe of weights, gradients and optimizer states",
            choices=memory.PRECISIONS,
        ),
        Param(
            "optimizer", "str", "adam", "-", "Adam/AdamW (two moments) or SGD with momentum", choices=memory.OPTIMIZERS
        ),
        Param(
            "fp32_grads", "bool", False, "-", "count gradients in fp32 (18 bytes/param accounting) instead of ZeRO's 16"
        ),
        Param("zero_stage", "int", 1, "-", "ZeRO stage over the data-parallel group (3: FSDP full shard)", 0, 3),
        Param("gpu", "str", "B300", "-", "GPU type", choices=data.gpu_names),
        Param("n_gpus", "int", 64, "GPUs", "GPUs in the job (tp x pp x dp)", 1, 65536),
        Param("tp", "int", 8, "-", "tensor-parallel degree (within one NVLink domain)", 1, 72),
        Param("pp", "int", 4, "-", "pipeline-parallel stages (1F1B schedule)", 1, 256),
        Param("seq_len", "int", 4096, "tokens", "sequence length", 128, 1048576),
        Param("micro_batch", "int", 1, "sequences", "micro-batch per GPU", 1, 1024),
        Param("recompute", "str", "selective", "-", "activation recomputation", choices=memory.RECOMPUTE),
        Param("sequence_parallel", "bool", True, "-", "Megatron sequence parallelism alongside tensor parallelism"),
        Param("flash", "bool", True, "-", "fused (flash) attention that never stores the attention matrix"),
        Param(
            "overhead_gb",
            "float",
            5.0,
            "GB",
            "allowance per GPU for CUDA context, communication buffers and fragmentation (assumption)",
            0,
            100,
        ),
        Param(
            "models",
            "str_list",
            list(DEFAULT_MODELS),
            "-",
            "model shapes in the fit table and charts",
            choices=data.model_shape_names,
        ),
        Param("gpus", "str_list", list(DEFAULT_GPUS), "-", "GPU types in the fit table", choices=data.gpu_names),
        Param(
            "previous_gpu",
            "str",
            "A100",
            "-",
            "the 'previous generation' document 000 compares B300 with (its part 3 table uses A100)",
            choices=data.gpu_names,
        ),
        Param(
            "plan_preset",
            "str",
            "llama2-13b",
            "-",
            "shape whose activations stand in for part 5's 10B model (states use the stated 10B)",
            choices=data.model_shape_names,
        ),
    ),
    rules=(
        Rule(("n_gpus", "tp", "pp"), lambda c: _layout_problem(c)),
        Rule(("gpu", "tp"), lambda c: _domain_problem(c)),
        Rule(("preset", "tp", "pp"), lambda c: _split_problem(c)),
        Rule(
            ("preset", "previous_gpu", "seq_len", "micro_batch", "overhead_gb", "recompute"),
            lambda c: _fit_problem(c),
        ),
    ),
)


def _layout_problem(cfg: Config) -> str | None:
    if cfg["n_gpus"] % (cfg["tp"] * cfg["pp"]):
        return f"n_gpus must be a multiple of tp x pp = {cfg['tp'] * cfg['pp']} (data parallelism takes the rest)"
    return None


def _domain_problem(cfg: Config) -> str | None:
    domain = data.gpu(cfg["gpu"]).nvlink_domain_gpus
    if cfg["tp"] > domain:
        return f"tensor parallelism stays within one NVLink domain: tp at most {domain} on {cfg['gpu']}"
    return None


def _split_problem(cfg: Config) -> str | None:
    s = data.model_shape(cfg["preset"])
    heads = {int(s["heads"]), int(s["kv_heads"])}
    if any(h % cfg["tp"] for h in heads):
        allowed = [t for t in range(1, 73) if all(h % t == 0 for h in heads)]
        return (
            f"tensor parallelism splits the attention heads, so tp must divide {cfg['preset']}'s "
            f"{' and '.join(str(h) for h in sorted(heads, reverse=True))} heads: tp one of {', '.join(map(str, allowed))}"
        )
    if cfg["pp"] > s["layers"]:
        return f"each pipeline stage needs a layer: pp at most {int(s['layers'])} for {cfg['preset']}"
    return None


def _fit_problem(cfg: Config) -> str | None:
    missing = [g for g in (cfg["previous_gpu"], "B300") if min_gpus(cfg["preset"], g, cfg) is None]
    if missing:
        return (
            f"the chapter compares the smallest layout of {cfg['preset']} on {cfg['previous_gpu']} and on B300, but no "
            f"searched layout fits on {' or '.join(missing)}; choose a smaller preset, a shorter seq_len or micro_batch, "
            "more recomputation or a smaller overhead_gb"
        )
    return None


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def shape(name: str) -> dict[str, Any]:
    """A preset with its recomputed parameter count under ``n_params``."""
    r = data.model_shape(name)
    return r | {"n_params": memory.shape_parameter_count(r)}


def _recipe_kwargs(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"precision": cfg["precision"], "optimizer": cfg["optimizer"], "fp32_grads": cfg["fp32_grads"]}


def _act_kwargs(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {"sequence_parallel": cfg["sequence_parallel"], "recompute": cfg["recompute"], "flash": cfg["flash"]}


def usable_bytes(gpu: str, cfg: Mapping[str, Any]) -> float:
    """Usable HBM of one GPU less the framework allowance (bytes)."""
    return data.gpu(gpu).hbm_usable_bytes - cfg["overhead_gb"] * GB


# --------------------------------------------------------------------------------------------
# Does model X fit on N GPUs of type Y with layout Z?
# --------------------------------------------------------------------------------------------


def layout_check(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Memory per GPU of the configured model, GPU and layout, and whether it fits (GB)."""
    n, tp, pp = cfg["n_gpus"], cfg["tp"], cfg["pp"]
    if n % (tp * pp):
        raise ValueError(f"n_gpus={n} is not a multiple of tp x pp = {tp * pp}")
    s = shape(cfg["preset"])
    dp = n // (tp * pp)
    parts = memory.total_bytes_per_gpu(
        s["n_params"],
        s["layers"],
        cfg["seq_len"],
        cfg["micro_batch"],
        s["hidden"],
        s["heads"],
        zero_stage=cfg["zero_stage"],
        dp=dp,
        tp=tp,
        pp=pp,
        overhead_bytes=cfg["overhead_gb"] * GB,
        **_recipe_kwargs(cfg),
        **_act_kwargs(cfg),
    )
    out = {k: float(v) / GB for k, v in parts.items()}
    hbm = data.gpu(cfg["gpu"]).hbm_usable_bytes / GB
    return out | {
        "model": s["label"],
        "n_params": s["n_params"],
        "dp": dp,
        "usable_gb": hbm,
        "fits": out["total"] <= hbm,
    }


def layout_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`layout_check` as a two-column table (part, GB per GPU)."""
    c = layout_check(cfg)
    rows = [(k, c[k]) for k in ("weights", "gradients", "optimizer", "activations", "overhead", "total")]
    rows.append((f"usable HBM of one {cfg['gpu']}", c["usable_gb"]))
    return pd.DataFrame(rows, columns=["part", "GB per GPU"])


def fit_search(name: str, gpu: str, cfg: Mapping[str, Any]) -> pd.Series | None:
    """The smallest GPU count (and its layout) that fits preset ``name`` on ``gpu``; None if none does."""
    s = shape(name)
    tab = memory.fit_table(
        s,
        usable_bytes(gpu, cfg),
        seq_len=cfg["seq_len"],
        micro_batch=cfg["micro_batch"],
        max_tp=min(8, data.gpu(gpu).nvlink_domain_gpus),
        **_recipe_kwargs(cfg),
        **_act_kwargs(cfg),
    )
    return memory.smallest_fit(tab)


def _layout_text(best: pd.Series | None) -> str:
    if best is None:
        return "none up to the search limit"
    return f"{int(best['n_gpus'])} (TP{int(best['tp'])} PP{int(best['pp'])} DP{int(best['dp'])} ZeRO-{int(best['zero_stage'])})"


def gpus_needed_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Smallest GPU count per model (rows) and GPU type (columns), with the layout that achieves it."""
    rows = []
    for name in cfg["models"]:
        s = shape(name)
        row: dict[str, Any] = {"model": s["label"], "parameters (B)": s["n_params"] / 1e9}
        for gpu in cfg["gpus"]:
            row[gpu] = _layout_text(fit_search(name, gpu, cfg))
        rows.append(row)
    return pd.DataFrame(rows)


def min_gpus(name: str, gpu: str, cfg: Mapping[str, Any]) -> int | None:
    best = fit_search(name, gpu, cfg)
    return None if best is None else int(best["n_gpus"])


# --------------------------------------------------------------------------------------------
# Byte accounting per model and ZeRO curves
# --------------------------------------------------------------------------------------------


def accounting_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Unsharded bytes of each model (one replica, no parallelism), by part, in GB.

    Activations are for one micro-batch through all layers at the configured recomputation
    (without tensor parallelism, so sequence parallelism does not apply).
    """
    rows = []
    for name in cfg["models"]:
        s = shape(name)
        parts = memory.model_state_bytes_by_part(s["n_params"], **_recipe_kwargs(cfg))
        act = (
            memory.activation_bytes_per_layer(
                cfg["seq_len"],
                cfg["micro_batch"],
                s["hidden"],
                s["heads"],
                recompute=cfg["recompute"],
                flash=cfg["flash"],
            )
            * s["layers"]
        )
        for part, value in [*parts.items(), ("activations", act)]:
            rows.append(
                {"model": s["label"], "parameters (B)": s["n_params"] / 1e9, "part": part, "GB": float(value) / GB}
            )
    return pd.DataFrame(rows)


def accounting_chart(cfg: Mapping[str, Any]) -> alt.Chart:
    frame = accounting_table(cfg)
    order = [shape(n)["label"] for n in cfg["models"]]
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("model:N", sort=order, title=None),
            y=alt.Y("GB:Q", title="GB (one replica, unsharded)", scale=alt.Scale(type="symlog")),
            color=alt.Color("part:N", sort=[*memory.STATE_PARTS, "activations"], title="part"),
            order=alt.Order("part:N"),
            tooltip=["model", "part", alt.Tooltip("GB:Q", format=",.1f")],
        )
        .properties(width=520, height=300)
    )


def zero_curves(cfg: Mapping[str, Any], counts: tuple[int, ...] = tuple(2**k for k in range(0, 13))) -> pd.DataFrame:
    """Memory per GPU of the configured preset vs GPU count, for each ZeRO stage (configured tp, pp)."""
    s = shape(cfg["preset"])
    mp = cfg["tp"] * cfg["pp"]
    n = np.array([c for c in counts if c >= mp and c % mp == 0])
    rows = []
    for stage in range(4):
        parts = memory.total_bytes_per_gpu(
            s["n_params"],
            s["layers"],
            cfg["seq_len"],
            cfg["micro_batch"],
            s["hidden"],
            s["heads"],
            zero_stage=stage,
            dp=n // mp,
            tp=cfg["tp"],
            pp=cfg["pp"],
            overhead_bytes=cfg["overhead_gb"] * GB,
            **_recipe_kwargs(cfg),
            **_act_kwargs(cfg),
        )
        rows.append(pd.DataFrame({"GPUs": n, "ZeRO stage": f"ZeRO-{stage}", "GB per GPU": parts["total"] / GB}))
    return pd.concat(rows, ignore_index=True)


def zero_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    frame = zero_curves(cfg)
    hbm = pd.DataFrame({"GB": [data.gpu(g).hbm_usable_bytes / GB for g in cfg["gpus"]], "GPU": list(cfg["gpus"])})
    lines = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("GPUs:Q", scale=alt.Scale(type="log", base=2), title="GPUs (tp × pp × dp)"),
            y=alt.Y("GB per GPU:Q", scale=alt.Scale(type="log"), title="GB per GPU"),
            color=alt.Color("ZeRO stage:N"),
            tooltip=["GPUs", "ZeRO stage", alt.Tooltip("GB per GPU:Q", format=",.1f")],
        )
    )
    rules = alt.Chart(hbm).mark_rule(strokeDash=[4, 3], color="grey").encode(y="GB:Q", tooltip=["GPU", "GB"])
    labels = (
        alt.Chart(hbm).mark_text(align="left", dx=4, dy=-5, color="grey").encode(y="GB:Q", x=alt.value(0), text="GPU:N")
    )
    return (lines + rules + labels).properties(width=520, height=320)


def hundred_b_states_gpus(gpu: str, cfg: Mapping[str, Any], claim_id: str = "000-2.2-weights-400gb-total-1p5tb") -> int:
    """GPUs whose usable HBM (less the allowance) holds the claim's 100B model states, fully sharded."""
    states = float(memory.model_state_bytes(data.claim(claim_id).value("params"), **_recipe_kwargs(cfg)))
    return math.ceil(states / usable_bytes(gpu, cfg))


def hundred_b_table(cfg: Mapping[str, Any], claim_id: str = "000-2.2-weights-400gb-total-1p5tb") -> pd.DataFrame:
    """Per GPU type: how many GPUs a 100B model's states need, and the smallest full layout (configured preset)."""
    n = data.claim(claim_id).value("params")
    states = float(memory.model_state_bytes(n, **_recipe_kwargs(cfg)))
    rows = []
    for gpu in cfg["gpus"]:
        hbm = usable_bytes(gpu, cfg)
        rows.append(
            {
                "GPU": gpu,
                "usable GB (less allowance)": hbm / GB,
                "states only: GPUs (ZeRO-3)": math.ceil(states / hbm),
                f"{shape(cfg['preset'])['label']}: smallest layout": _layout_text(fit_search(cfg["preset"], gpu, cfg)),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Published figures reproduced
# --------------------------------------------------------------------------------------------


def param_count_table() -> pd.DataFrame:
    """Every preset's recomputed parameter count beside its published count, with the error."""
    rows = []
    for r in data.model_shapes().to_dict("records"):
        count = memory.shape_parameter_count(r)
        pub = r["published_params"]
        rows.append(
            {
                "model": r["label"],
                "recomputed (B)": count / 1e9,
                "published (B)": pub / 1e9 if pub == pub else float("nan"),
                "error": count / pub - 1 if pub == pub else float("nan"),
                "source": r["source"],
            }
        )
    return pd.DataFrame(rows)


def _activation_kwargs(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in text.split():
        k, v = item.split("=")
        out[k] = v == "True" if v in ("True", "False") else v
    return out


def published_check_table() -> pd.DataFrame:
    """Printed ZeRO and Korthikanti et al. figures beside the model's value and the error."""
    rows = []
    for r in data.memory_published().to_dict("records"):
        q = r["quantity"]
        if q == "model_state_gb_per_gpu":
            got = (
                float(
                    memory.model_state_bytes(
                        r["n_params"],
                        precision=r["precision"],
                        optimizer=r["optimizer"],
                        zero_stage=r["zero_stage"],
                        dp=r["dp"],
                        tp=r["tp"],
                        fp32_grads=r["fp32_grads"],
                    )
                )
                / GB
            )
        elif q == "bytes_per_param":
            got = memory.bytes_per_param(r["precision"], r["optimizer"], r["fp32_grads"])
        else:
            optimised, baseline = (_activation_kwargs(p) for p in r["config"].split(" vs "))
            args = (r["seq_len"], r["micro_batch"], r["hidden"], r["heads"])
            opt = float(memory.activation_bytes_per_layer(*args, tp=r["tp"], **optimised))
            base = float(memory.activation_bytes_per_layer(*args, tp=r["tp"], **baseline))
            got = 1 - opt / base if q == "activation_saving_fraction" else base / opt
        rows.append(
            {
                "figure": r["description"],
                "printed": r["value"],
                "model": got,
                "unit": r["unit"],
                "error": got / r["value"] - 1,
                "within print": abs(got - r["value"]) <= r["resolution"] / 2,
                "source": f"{r['source']}, {r['locator']}",
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Measured vs model (tools/measure_memory.py)
# --------------------------------------------------------------------------------------------


def measured_vs_model() -> pd.DataFrame:
    """Recorded CPU measurements beside the model's prediction and the relative error.

    States: weights + gradients + Adam states predicted by :func:`memory.model_state_bytes`
    (fp32 recipe: autocast keeps fp32 parameters). Activations: two accountings, the plain-PyTorch
    block (:func:`memory.torch_eager_activation_bytes_per_layer`) and Korthikanti's Megatron
    accounting (16-bit activations, 1-byte masks, dropout; doubled for fp32 rows; ``flash`` for SDPA).
    """
    m = data.measurements("memory_cpu_torch").copy()
    states = memory.model_state_bytes(m["n_params"].to_numpy(float), precision="fp32")
    rows = []
    for _, r in m.iterrows():
        per_layer_torch = float(
            memory.torch_eager_activation_bytes_per_layer(
                r["seq_len"], r["micro_batch"], r["hidden"], r["heads"], attention=r["attention"], dtype=r["dtype"]
            )
        )
        scale = 2.0 if r["dtype"] == "fp32" else 1.0  # the paper's bytes assume 16-bit activations
        korth = scale * float(
            memory.activation_bytes_per_layer(
                r["seq_len"], r["micro_batch"], r["hidden"], r["heads"], flash=r["attention"] == "sdpa"
            )
        )
        rows.append({"torch": per_layer_torch * r["layers"], "megatron": korth * r["layers"]})
    pred = pd.DataFrame(rows)
    m["states_model_bytes"] = states
    m["activations_torch_model_bytes"] = pred["torch"].to_numpy()
    m["activations_megatron_model_bytes"] = pred["megatron"].to_numpy()
    m["states_error"] = m["states_model_bytes"] / m["state_bytes"] - 1
    m["activations_torch_error"] = m["activations_torch_model_bytes"] / m["activation_bytes"] - 1
    m["activations_megatron_error"] = m["activations_megatron_model_bytes"] / m["activation_bytes"] - 1
    return m


def measured_error_table() -> pd.DataFrame:
    """Smallest and largest relative error of each accounting over the measured grid, by precision."""
    m = measured_vs_model()
    rows = []
    for dtype, g in m.groupby("dtype", sort=False):
        for name, col in [
            ("model states", "states_error"),
            ("activations: PyTorch block", "activations_torch_error"),
            ("activations: Korthikanti et al.", "activations_megatron_error"),
        ]:
            rows.append(
                {
                    "precision": dtype,
                    "accounting": name,
                    "configs": len(g),
                    "min error": g[col].min(),
                    "max error": g[col].max(),
                }
            )
    return pd.DataFrame(rows)


def measured_chart() -> alt.Chart:
    m = measured_vs_model()
    long = pd.concat(
        [
            pd.DataFrame(
                {
                    "accounting": "model states (exact)",
                    "measured MB": m["state_bytes"] / 1e6,
                    "error": m["states_error"],
                }
            ),
            pd.DataFrame(
                {
                    "accounting": "activations: PyTorch block",
                    "measured MB": m["activation_bytes"] / 1e6,
                    "error": m["activations_torch_error"],
                }
            ),
            pd.DataFrame(
                {
                    "accounting": "activations: Korthikanti (16-bit)",
                    "measured MB": m["activation_bytes"] / 1e6,
                    "error": m["activations_megatron_error"],
                }
            ),
        ],
        ignore_index=True,
    )
    long["config"] = list(m["config"]) * 3
    long["precision"] = list(m["dtype"]) * 3
    return (
        alt.Chart(long)
        .mark_point(filled=True, size=50)
        .encode(
            x=alt.X("measured MB:Q", scale=alt.Scale(type="log"), title="measured (MB)"),
            y=alt.Y("error:Q", axis=alt.Axis(format="%"), title="model / measured − 1"),
            color="accounting:N",
            shape=alt.Shape("precision:N"),
            tooltip=["config", "accounting", alt.Tooltip("error:Q", format=".2%")],
        )
        .properties(width=520, height=300)
    )


# --------------------------------------------------------------------------------------------
# Claim checks
# --------------------------------------------------------------------------------------------


@check("000-2.2-weights-400gb-total-1p5tb")
def _check_weights_total(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    n = claim.value("params")
    w16, w32 = memory.RECIPES["fp16-mixed"].weight_bytes, memory.RECIPES["fp32"].weight_bytes
    b16, b18 = memory.bytes_per_param("fp16-mixed"), memory.bytes_per_param("fp16-mixed", fp32_grads=True)
    weights_fp16 = n * w16 / GB
    fp32_weights = n * w32 / GB
    total = float(memory.model_state_bytes(n, **_recipe_kwargs(cfg))) / GB
    total16, total18 = n * b16 / GB, n * b18 / GB
    stated_w, stated_total = claim.value("weights_fp16_gb"), claim.value("total_min_tb") * 1000
    recomputed = (
        f"FP16 weights {fmt(weights_fp16)} GB ({stated(w16)} bytes × {fmt(n)}); model states {fmt(total16 / 1000)}-{fmt(total18 / 1000)} TB "
        f"({stated(b16)}-{stated(b18)} bytes/parameter), {fmt(total / 1000)} TB with this chapter's recipe"
    )
    weights_ok = abs(stated_w / weights_fp16 - 1) < 0.25
    total_ok = total16 >= stated_total
    if weights_ok and total_ok:
        return Verdict(
            recomputed,
            "consistent",
            f"Both the weight figure and the total follow from {stated(w16)} and {stated(b16)}-{stated(b18)} bytes per parameter.",
        )
    return Verdict(
        recomputed,
        "inconsistent",
        f"FP16 weights of {fmt(n)} parameters take {fmt(weights_fp16)} GB, not {fmt(stated_w)} GB (FP32 weights would take "
        f"{fmt(fp32_weights)} GB); the over-{fmt(stated_total / 1000)} TB total does hold"
        + ("." if total_ok else f" only above {fmt(total16 / 1000)} TB."),
    )


@check("000-2.2-one-card-cannot-hold")
def _check_one_card(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    total = claim.value("total_min_tb") * 1e12
    largest = max(data.gpu_names(), key=lambda g: data.gpu(g).hbm_usable_bytes)
    hbm = data.gpu(largest).hbm_usable_bytes
    recomputed = f"{fmt(total / 1e12)} TB vs {fmt(hbm / GB)} GB usable on the largest GPU in the table ({largest}): {fmt(total / hbm)}× too big; at least {math.ceil(total / hbm)} GPUs for the states alone"
    if total > hbm:
        return Verdict(
            recomputed,
            "consistent",
            f"Even the largest GPU in the table ({largest}) holds only 1/{fmt(total / hbm, sig=2)} of the stated total, so the states must be sharded over GPUs.",
        )
    return Verdict(recomputed, "inconsistent", f"One {largest} holds the stated total.")


@check("000-2.2-hbm3e-capacity")
def _check_hbm_capacity(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    b300, prev = data.gpu("B300"), data.gpu(cfg["previous_gpu"])
    b200 = data.gpu("B200")
    hbm_type = str(data.gpus().set_index("name").loc["B300", "hbm_type"])
    ratio, ratio_b200 = b300.hbm_bytes / prev.hbm_bytes, b300.hbm_bytes / b200.hbm_bytes
    recomputed = (
        f"B300 {hbm_type} {fmt(b300.hbm_bytes / GB)} GB ({fmt(b300.hbm_usable_bytes / GB)} usable) vs {cfg['previous_gpu']} "
        f"{fmt(prev.hbm_bytes / GB)} GB: {fmt(ratio)}×; vs B200: {fmt(ratio_b200)}×"
    )
    if "HBM3e" in hbm_type and ratio > 1.2:
        return Verdict(
            recomputed,
            "consistent",
            f"B300 does carry HBM3e with {fmt(ratio)}× the capacity of the {cfg['previous_gpu']} the document compares with ({fmt(ratio_b200)}× a B200), so each GPU holds a larger shard.",
        )
    return Verdict(
        recomputed,
        "inconsistent",
        "The capacity gain over the previous generation is small or the memory type differs.",
    )


@check("000-5-node-plan-memory")
def _check_node_plan(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    n = claim.value("params")
    per_node = int(claim.value("gpus_per_node"))
    low, high = int(claim.value("nodes_low")) * per_node, int(claim.value("nodes_high")) * per_node
    s = shape(cfg["plan_preset"]) | {"n_params": n}
    tab = memory.fit_table(
        s,
        usable_bytes("B300", cfg),
        seq_len=cfg["seq_len"],
        micro_batch=cfg["micro_batch"],
        **_recipe_kwargs(cfg),
        **_act_kwargs(cfg),
    )
    best = memory.smallest_fit(tab)
    states = float(memory.model_state_bytes(n, **_recipe_kwargs(cfg))) / GB
    need = None if best is None else int(best["n_gpus"])
    recomputed = (
        f"{fmt(n)} parameters: states {fmt(states)} GB; smallest B300 layout {_layout_text(best)} "
        f"(activations of the {s['label']} shape, {cfg['seq_len']} tokens) vs the plan's {low}-{high} GPUs"
    )
    if need is not None and need <= low:
        return Verdict(
            recomputed,
            "consistent",
            f"Memory is no constraint: {need} B300 GPU(s) hold the model, so {low}-{high} GPUs have room to spare (the node count is set by throughput, not memory).",
        )
    return Verdict(recomputed, "inconsistent", f"Memory alone needs {need} GPUs, more than the plan's {low}.")


@check("001-2.2-hbm-over-8tbs")
def _check_hbm_bandwidth(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    stated = claim.value("hbm_bandwidth_min_tb_s")
    used = data.gpu("B300").hbm_bytes_per_s / 1e12
    dis = data.gpu_spec_disagreements()
    values = dis[(dis["gpu"] == "B300") & (dis["field"] == "hbm_bandwidth_tb_per_s")]["value"].astype(float).tolist()
    best = max([used, *values])
    recomputed = f"B300 HBM bandwidth {fmt(used)} TB/s (datasheet, HGX B300); highest published figure {fmt(best)} TB/s"
    if best > stated:
        return Verdict(recomputed, "consistent", f"A published figure exceeds {fmt(stated)} TB/s.")
    return Verdict(
        recomputed,
        "inconsistent",
        f"No NVIDIA figure exceeds {fmt(stated)} TB/s: the HGX B300 datasheet gives {fmt(used)} TB/s and the chip blog {fmt(best)} TB/s, so 'more than {fmt(stated)}' overstates it.",
    )


# --------------------------------------------------------------------------------------------
# Prose: sentences whose conclusion depends on the data and parameters
# --------------------------------------------------------------------------------------------


def hundred_b_takeaway(cfg: Mapping[str, Any], claim_id: str = "000-2.2-weights-400gb-total-1p5tb") -> str:
    """The GPU-count takeaway: does one GPU, or one B300 node, hold the claim's model states?"""
    n = data.claim(claim_id).value("params")
    states = float(memory.model_state_bytes(n, **_recipe_kwargs(cfg)))
    single = any(0 < usable_bytes(gpu, cfg) >= states for gpu in cfg["gpus"])
    b300 = hundred_b_states_gpus("B300", cfg, claim_id)
    node = data.gpu("B300").nvlink_domain_gpus
    first = "a single GPU can hold" if single else "no single GPU holds"
    second = "but a B300 node does" if b300 <= node else f"and not even a B300 node of {node} GPUs does"
    text = (
        f"{first} the states of a {fmt(n / 1e9, sig=2)}B-parameter model for training, {second} "
        f"(states alone need {b300} B300s)"
    )
    prev, b = min_gpus(cfg["preset"], cfg["previous_gpu"], cfg), min_gpus(cfg["preset"], "B300", cfg)
    label = shape(cfg["preset"])["label"]
    if prev is None or b is None:
        return (
            text + f"; {label} fits no searched layout on {'the ' + cfg['previous_gpu'] if prev is None else 'B300'}."
        )
    return text + f"; for {label} the {cfg['previous_gpu']} needs {fmt(prev / b, 'x', sig=2)} as many GPUs as the B300."
