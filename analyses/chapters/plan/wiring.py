"""The plan chapter's wiring: its presets (``data/plan_presets.csv``: published runs and the documents'
scenarios, read by :mod:`analyses.scenario.presets`) and the page's tables built from one planner run.

:func:`merged` fills a chapter
configuration with its preset's values wherever the reader left a field at its default. The tables
(:func:`recommended_table` and the rest) only arrange a run's results: the planning is
:func:`analyses.chapters.plan.run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, scenario
from analyses.models import layouts, tco
from analyses.models import plan as pl
from analyses.scenario import buying, costs, planning
from analyses.scenario.presets import (  # noqa: F401 (the chapter's names for the presets)
    DOCUMENT_SCENARIO,
    NONE,
    PUBLISHED_RUN,
    of_kind,
    preset,
    preset_ids,
    resolve,
)
from analyses.units import GIB, formats

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
