"""The plan chapter's wiring: its presets (``data/plan_presets.csv``: published runs and the documents'
scenarios, read by :mod:`analyses.scenario.presets`) and the page's tables built from one planner run.

:func:`merged` fills a chapter
configuration with its preset's values wherever the reader left a field at its default. The tables
(:func:`recommended_table` and the rest) only arrange a run's results: the planning is
:func:`analyses.chapters.plan.run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models import flops, layouts, memory, tco
from analyses.models import plan as pl
from analyses.scenario import buying, calibration, costs, planning, stacks
from analyses.scenario.params import Param
from analyses.scenario.presets import (  # noqa: F401 (the chapter's names for the presets)
    DOCUMENT_SCENARIO,
    NONE,
    PUBLISHED_RUN,
    of_kind,
    preset,
    preset_ids,
    resolve,
)
from analyses.units import GIB, MB, formats

# --------------------------------------------------------------------------------------------
# Presets
# --------------------------------------------------------------------------------------------

PUBLISHED_WITH_THROUGHPUT = "llama3-405b"  # the published run whose throughput rows are in the data

# Chapter parameters a preset sets, where the reader left them at their defaults (the batch is
# the preset's ``global_batch_tokens`` in millions)
FIELDS = (
    "model_shape",
    "n_params",
    "active_params",  # a preset's model is dense: the reader's mixture of experts is not carried into it
    "n_experts",
    "experts_active",
    "seq_len",
    "tokens",
    "gpus",
    "min_gpus",
    "max_gpus",
    "deadline_days",
    "precision",
    "batch_million_tokens",
    "stack",
)


def merged(cfg: Mapping[str, Any], s: Mapping[str, float], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``cfg`` with its preset's values filled in wherever a field equals its default in ``defaults``,
    plus ``holdout_sources`` (the preset's, else none)."""
    out = dict(cfg)
    out["holdout_sources"] = []
    if cfg["preset"] != NONE:
        p = preset(cfg["preset"], s)
        for name in FIELDS:
            if name in p and cfg[name] == defaults[name]:
                out[name] = p[name]
        out["holdout_sources"] = p["holdout_sources"]
    return out


# --------------------------------------------------------------------------------------------
# The planner request of a configuration
# --------------------------------------------------------------------------------------------

GENERIC = "generic"
GENERIC_SEQ_LEN = 4096  # sequence length of a generic shape when none is given
# Planner fields whose chapter parameter has another name, and the parameters a planner error involves
PARAM_OF_FIELD = {"global_batch_tokens": "batch_million_tokens", "virtual_stages": "interleave"}
SEARCH = "search"  # the value of recompute (and 0, -1 of the sizes) that leaves a part of the layout to the search
ARCH = ("n_layers", "d_model", "ffn_hidden", "n_heads", "n_kv_heads", "vocab", "shared_experts", "dense_layers")
ATTENTION = ("full", "sliding", "mla")
MLA_HEAD_DIMS = (192, 128)  # query-key (128 + 64 rotary) and value head sizes of DeepSeek-V2/V3's MLA
PIN_PARAMS = {  # plan parameter: (request pin, value that searches)
    "tp": ("tp", 0),
    "pp": ("pp", 0),
    "dp": ("dp", 0),
    "cp": ("cp", 0),
    "ep": ("ep", 0),
    "zero_stage": ("zero_stage", -1),
    "micro_batch": ("micro_batch", 0),
    "interleave": ("virtual_stages", 0),
    "recompute": ("recompute", SEARCH),
}


def request(cfg: Mapping[str, Any], defaults: Mapping[str, Any]) -> pl.Request:
    """The planner request of a (validated) chapter configuration: its preset filled in, the scenario
    at ``cfg``, the architecture, stack and pinned layout it gives (``defaults``: the chapter's parameter
    defaults, which a preset fills in); a wrong combination raises
    :class:`~analyses.models.plan.PlanError` naming the parameter."""
    s = scenario.values(cfg)
    m = merged(cfg, s, defaults)
    try:
        shape = shape_of(m, defaults["n_params"])
        kwargs = {k: m[k] for k in pl.REQUEST_FIELDS if k in m and k not in ("shape", "s")}
        kwargs |= {
            "gpus": tuple(m["gpus"]),
            "holdout_sources": tuple(m["holdout_sources"]),
            "tokens": m["tokens"] or s["tokens_per_param"] * shape.n_params,
            "global_batch_tokens": m["batch_million_tokens"] * MB,
            "pinned": pins(m),
        }
        return planning.request(shape=shape, s=s, **kwargs)
    except pl.PlanError as err:
        raise pl.PlanError(PARAM_OF_FIELD.get(err.field, err.field), err.detail) from None


def pins(m: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The layout parts ``m`` pins (the parameters of :data:`PIN_PARAMS` not at their searched value)."""
    return tuple((field_, m[name]) for name, (field_, search) in PIN_PARAMS.items() if m.get(name, search) != search)


def shape_of(m: Mapping[str, Any], default_n_params: float) -> pl.Shape:
    """The planner's shape of a merged configuration: a named shape, or a generic one from the parameters
    and whatever architecture fields are given (:data:`ARCH`, the attention); a reader who gives layers or
    width but leaves ``n_params`` at ``default_n_params`` has the parameters counted from the shape."""
    given = {k: m[k] for k in ARCH if m.get(k)}
    if m["model_shape"] != GENERIC:
        if m["active_params"] or given or m["attention"] != "full":
            at_fault = "active_params" if m["active_params"] else next(iter(given), "attention")
            raise pl.PlanError(
                at_fault,
                "a mixture of experts or an architecture field describes a generic shape: set model_shape generic "
                "(named shapes are dense and complete)",
            )
        return planning.shape(m["model_shape"], m["seq_len"] or None)
    seq_len = m["seq_len"] or GENERIC_SEQ_LEN
    base = pl.Shape.from_params(
        m["n_params"],
        seq_len,
        active_params=m["active_params"],
        n_experts=m["n_experts"],
        experts_active=m["experts_active"],
        vocab=m["vocab"],
    )
    layers, hidden = m["n_layers"] or base.layers, m["d_model"] or base.hidden
    heads = m["n_heads"] or max(1, hidden // pl.HEAD_SIZE)
    if hidden % heads:
        raise pl.PlanError("n_heads", f"the heads must divide d_model {hidden}, got {heads}")
    kv = m["n_kv_heads"] or heads
    if heads % kv:
        raise pl.PlanError("n_kv_heads", f"key/value heads must divide the {heads} heads, got {kv}")
    if m["dense_layers"] >= layers:
        raise pl.PlanError("dense_layers", f"expected fewer than the {layers} layers, got {m['dense_layers']}")
    qk, v = m["head_dim"], m["v_head_dim"]
    if m["attention"] == "mla":
        qk, v = qk or MLA_HEAD_DIMS[0], v or MLA_HEAD_DIMS[1]
    if m["attention"] == "sliding" and not m["window"]:
        raise pl.PlanError("window", "attention sliding needs its window (tokens)")
    n_params = base.n_params
    if (m["n_layers"] or m["d_model"]) and m["n_params"] == default_n_params and not base.moe:
        n_params = float(  # the reader gave the shape, not the count: count it
            memory.parameter_count(
                layers,
                hidden,
                heads,
                m["vocab"],
                seq_len,
                m["ffn_hidden"] or None,
                kv_heads=kv,
                gated_mlp=bool(m["ffn_hidden"]),
                tied_embeddings=False,
                rotary=True,
                bias=False,
                norm="rmsnorm",
            )
        )
    named = "MoE" if base.moe else ""
    return replace(
        base,
        name=base.name if not given else f"{n_params / 1e9:g}B {named} ({layers} layers × {hidden})".replace("  ", " "),
        n_params=n_params,
        params_active=base.params_active if base.moe else n_params,
        layers=int(layers),
        hidden=int(hidden),
        heads=int(heads),
        kv_heads=int(kv),
        ffn_hidden=int(m["ffn_hidden"]),
        moe_layers=int(layers - m["dense_layers"]),
        attention_width=int(round(float(flops.attention_width(hidden, heads, qk, v)))),
        window=int(m["window"]) if m["attention"] == "sliding" else 0,
    )


def related_claims(s: Mapping[str, float]) -> list[str]:
    """Claim ids the presets replay, in table order."""
    out: list[str] = []
    for pid in preset_ids():
        out += [c for c in preset(pid, s)["claims"] if c not in out]
    return out


def published_layout(s: Mapping[str, float]) -> str:
    """Tensor and pipeline sizes of the published run's largest throughput row (Llama 3 Table 4)."""
    bench = data.table("scaling_benchmarks")
    held = preset(PUBLISHED_WITH_THROUGHPUT, s)["holdout_sources"]
    row = bench[bench["source"].isin(held)].sort_values("n_gpus").iloc[-1]
    return f"TP{row['tp']} PP{row['pp']}"


# --------------------------------------------------------------------------------------------
# The page's tables
# --------------------------------------------------------------------------------------------


def _basis_word(basis: str) -> str:
    """'calibrated' or 'set' from a GEMM-ceiling basis (:func:`analyses.scenario.planning.efficiency_basis`)."""
    return next(w for w in ("calibrated", "set") if basis.startswith(w))


def recommended_table(
    recommended: pd.DataFrame,
    basis: Mapping[str, str],
    per_run: pd.DataFrame | None = None,
    currency: str = "USD",
    k: float = 1.0,
) -> pd.DataFrame:
    """The recommended layout per generation (with :func:`analyses.models.plan.intervals`' columns) and
    the 90% intervals of its days and costs; ``basis`` says where each GEMM efficiency ceiling comes from.

    The days and costs are read from ``per_run`` (:func:`analyses.scenario.buying.per_run`, the
    figure the buy-or-rent page and the cost chapter show) where given, in ``currency`` as prose writes
    it (``k``: USD to ``currency``)."""
    by = per_run.set_index(["gpu", "basis"]) if per_run is not None and len(per_run) else None
    rows = []
    for _, x in recommended.iterrows():
        money = {}
        for b in tco.COST_BASES:
            if by is not None:
                r = by.loc[(x["gpu"], b)]
                central, lo, hi = r["cost_usd"], r["cost_usd_lo"], r["cost_usd_hi"]
            else:
                central, lo, hi = x[f"cost_{b}"], x[f"cost_{b}_lo"], x[f"cost_{b}_hi"]
            money[f"{b} ({currency})"] = formats.money(central * k) if np.isfinite(central) else "n/a"
            money[f"{b} 90%"] = formats.span(lo * k, hi * k, currency, 2) if np.isfinite(lo) else "n/a"
        rows.append(
            {
                "GPU": x["gpu"],
                "GPUs": int(x["n_gpus"]),
                "TP·PP·DP ZeRO": layouts.short_label(x),
                "micro-batch": int(x["micro_batch"]),
                "interleave": int(x["virtual_stages"]),
                "recompute": x["recompute"],
                "memory (GiB)": x["mem_bytes"] / GIB,
                "MFU": x["mfu"],
                "goodput": x["goodput"],
                "days": x["days"],
                "days 5-95%": f"{x['days_lo']:.1f}-{x['days_hi']:.1f}",
                **money,
                "meets": bool(x["meets_deadline"]),
                "GEMM eff.": x["kernel_efficiency"],
                "eff. from": _basis_word(basis[x["gpu"]]),
            }
        )
    return pd.DataFrame(rows)


# Assumptions only the presets read (the fine-tune of document 001's case)
PRESET_ASSUMPTIONS = ("finetune_tokens_per_sample", "finetune_epochs")


def assumptions_table(cfg: Mapping[str, Any], req: pl.Request) -> pd.DataFrame:
    """The scenario's assumptions the page reads (:func:`analyses.scenario.table` at ``cfg``): the
    batch, tokens per parameter, the time model's, the prices of the generations planned under the
    rent class and region chosen, and those the presets read; money in the page's currency
    (``cfg["currency"]``, at the scenario's exchange rate), as every other amount on the page."""
    prices = [n for g in req.gpus for n in costs.inputs(g, req.rent_class, req.electricity_region, req.s)]
    own = {n for g in req.gpus for n in (costs.server_name(g), costs.rent_name(g, req.rent_class))}
    shared = [n for n in dict.fromkeys(prices) if n not in own]
    names = ["batch_million_tokens", "tokens_per_param", *pl.TIME_ASSUMPTIONS]
    names += [n for n in prices if n in own] + shared + list(PRESET_ASSUMPTIONS)
    frame = scenario.table(cfg).set_index("name").loc[names].reset_index()
    return buying.table_in_currency(frame, cfg.get("currency", buying.DEFAULT_CURRENCY), req.s)


def efficiency_table(p: pl.Plan) -> pd.DataFrame:
    """Where each generation's GEMM efficiency ceiling comes from."""
    return pd.DataFrame({"GPU": list(p.efficiency_basis), "GEMM efficiency ceiling": list(p.efficiency_basis.values())})


def breakdown_table(p: pl.Plan) -> pd.DataFrame:
    """Days per part of the recommended layout of each generation (long form)."""
    frames = [pl.breakdown(r, p.request).assign(gpu=r["gpu"]) for _, r in p.recommended.iterrows()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["part", "days", "share", "gpu"])


def out_of_sample(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`published_comparison` that exclude the run's own throughput."""
    return frame[frame["run's own throughput"] != "in the calibration"].reset_index(drop=True)


def front_table(p: pl.Plan) -> pd.DataFrame:
    """Each generation's Pareto front with its intervals and a ``layout`` label."""
    if p.front.empty:
        return p.front
    front = planning.intervals(p.request, p.front)
    return front.assign(layout=[layouts.label(x) for _, x in front.iterrows()])


def cloud_table(p: pl.Plan) -> pd.DataFrame:
    """One dot per generation and GPU count (its cheapest layout) up to four deadlines or fronts out."""
    if p.layouts.empty:
        return pd.DataFrame(columns=["gpu", "days", "cost"])
    sample = p.layouts.sort_values("cost", kind="stable").drop_duplicates(["gpu", "n_gpus"])
    limit = 4 * max(p.request.deadline_days, p.front["days"].min())
    return sample.loc[sample["days"] <= limit, ["gpu", "n_gpus", "days", "cost"]].reset_index(drop=True)


def published_row(pid: str, meta: Mapping[str, Any], label: str, p: pl.Plan) -> dict[str, Any]:
    """One row of the published-runs table: the preset ``pid``'s run (``meta``: its preset row) planned
    as ``p``, its planned GPU-hours against the published ones (``label``: whether the run's own
    throughput rows were in the calibration)."""
    row: dict[str, Any] = {"preset": pid, "run": meta["label"], "run's own throughput": label}
    if p.recommended.empty:  # a reader's framework memory may leave no layout that fits
        row |= {"basis": "", "layout": "does not fit in memory", "planned GPU-hours": np.nan}
    else:
        r = p.recommended.iloc[0]
        row |= {
            "GEMM efficiency": r["kernel_efficiency"],
            "basis": p.efficiency_basis[r["gpu"]],
            "layout": layouts.label(r),
            "MFU": r["mfu"],
            "goodput": r["goodput"],
            "days": r["days"],
            "planned GPU-hours": r["gpu_hours"],
        }
    return row | {
        "published GPU-hours": meta["compare_gpu_hours"],
        "error": row["planned GPU-hours"] / meta["compare_gpu_hours"] - 1.0,
        "GPUs": meta["max_gpus"],
        "tokens": meta["tokens"],
    }


def scenario_row(pid: str, meta: Mapping[str, Any], req: pl.Request, p: pl.Plan) -> dict[str, Any]:
    """One row of the documents' scenarios table: the preset ``pid`` planned as ``p`` (GPUs, layout,
    days against the stated ones, cost in USD), or "does not fit in memory"."""
    row = {
        "preset": pid,
        "scenario": meta["label"],
        "parameters": req.shape.n_params,
        "tokens": req.tokens,
        "stated days": req.deadline_days,
    }
    if p.recommended.empty:
        return row | {"TP·PP·DP ZeRO": "does not fit in memory"}
    r = p.recommended.iloc[0]
    return row | {
        "GPUs": int(r["n_gpus"]),
        "TP·PP·DP ZeRO": layouts.short_label(r),
        "planned days": r["days"],
        "meets": bool(r["meets_deadline"]),
        "cost (USD)": r["cost"],
    }


def stack_choices() -> list[str]:
    """The training stacks a reader may name: each row's id and its aliases."""
    frame = stacks.stack_table()
    aliases = [a for x in frame["aliases"].fillna("") for a in str(x).split(";") if a]
    return [*frame["id"], *aliases]


def price_params(gpus: tuple[str, ...]) -> tuple[Param, ...]:
    """The scenario's prices of each generation of ``gpus`` (system, neocloud and hyperscaler
    rents where the scenario has them) and both electricity tariffs, as parameters."""
    names = scenario.assumptions()
    wanted = [costs.server_name(g) for g in gpus]
    wanted += [costs.rent_name(g, c) for c in tco.RENT_CLASSES for g in gpus]
    wanted += [costs.ELECTRICITY[r] for r in ("china", "us")]
    return tuple(scenario.param(n, f"{names[n].label} (scenario)") for n in wanted if n in names)


def band(req: pl.Request, best: pd.Series | None) -> tuple[float, float]:
    """The whole-run band (factors on a planned time) of the recommended option's class, or every run's."""
    if best is None:
        return calibration.band()
    return calibration.band(errs=planning.validation_errors(req, best["gpu"]))
