"""The plan page's tables, built from one planner run (no planning here: :func:`analyses.chapters.plan.run`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import scenario
from analyses.models import gpu_hour_cost, layouts
from analyses.models import plan as pl
from analyses.scenario import planning
from analyses.units import GIB, MB


def _range_m(lo: float, hi: float) -> str:
    return f"{lo / MB:.2f}-{hi / MB:.2f}" if np.isfinite(lo) else "n/a"


def _basis_word(basis: str) -> str:
    """'calibrated', 'borrowed' or 'set' from a kernel-efficiency basis."""
    return next(w for w in ("calibrated", "borrowed", "set") if basis.startswith(w))


def recommended_table(recommended: pd.DataFrame, basis: Mapping[str, str]) -> pd.DataFrame:
    """The recommended layout per generation (with :func:`analyses.models.plan.intervals`' columns) and
    the 90% intervals of its days and costs; ``basis`` says where each kernel efficiency comes from."""
    rows = []
    for _, x in recommended.iterrows():
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
                "rented (M USD)": x["cost_rented"] / MB,
                "rented 5-95%": _range_m(x["cost_rented_lo"], x["cost_rented_hi"]),
                "owned (M USD)": x["cost_owned"] / MB,
                "owned 5-95%": _range_m(x["cost_owned_lo"], x["cost_owned_hi"]),
                "meets": bool(x["meets_deadline"]),
                "kernel eff.": x["kernel_efficiency"],
                "eff. from": _basis_word(basis[x["gpu"]]),
            }
        )
    return pd.DataFrame(rows)


# Assumptions only the presets read (the fine-tune of document 001's case)
PRESET_ASSUMPTIONS = ("finetune_tokens_per_sample", "finetune_epochs")


def assumptions_table(cfg: Mapping[str, Any], req: pl.Request) -> pd.DataFrame:
    """The scenario's assumptions the page reads (:func:`analyses.scenario.table` at ``cfg``): the
    batch, tokens per parameter, the time model's, the prices of the generations planned under the
    rent class and region chosen, and those the presets read."""
    prices = [n for g in req.gpus for n in gpu_hour_cost.inputs(g, req.rent_class, req.electricity_region, req.s)]
    own = {n for g in req.gpus for n in (gpu_hour_cost.server_name(g), gpu_hour_cost.rent_name(g, req.rent_class))}
    shared = [n for n in dict.fromkeys(prices) if n not in own]
    names = ["batch_million_tokens", "tokens_per_param", *pl.TIME_ASSUMPTIONS]
    names += [n for n in prices if n in own] + shared + list(PRESET_ASSUMPTIONS)
    return scenario.table(cfg).set_index("name").loc[names].reset_index()


def efficiency_table(p: pl.Plan) -> pd.DataFrame:
    """Where each generation's kernel efficiency comes from."""
    return pd.DataFrame({"GPU": list(p.efficiency_basis), "kernel efficiency": list(p.efficiency_basis.values())})


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
