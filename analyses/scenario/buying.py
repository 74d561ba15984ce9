"""What one training run takes and costs on each GPU generation, rented and owned: the one function
the buy-or-rent page, the cost chapter and the planner call for that figure (:func:`per_run`).

**The convention** (every page that shows the figure says so): a run's time is the planner's
(:func:`analyses.scenario.planning.plan`: the cheapest layout that meets the deadline, the fastest
where none does), failures and checkpoints included; its cost is the GPU-hours it occupies (GPUs ×
wall-clock hours) times the price of a GPU-hour. A *rented* GPU-hour is the neocloud rent with storage
and network; an *owned* one is the calendar-hour cost of an owned GPU (capital over the depreciation
period at the cost of capital, energy at the Chinese tariff of the documents' deployments, hosting,
staff), charged for the run's hours only: the owner's idle hours between runs are not the run's. An
owned GPU therefore beats renting only when it is busy more than :func:`break_even_utilisation` of
its calendar hours, which the pages show beside each answer. Money is USD here; pages convert it at
the scenario's exchange rate (:func:`in_currency`).

The documents' own workloads (:func:`documents_workloads`) are presets of ``data/plan_presets.csv``:
the model, tokens, deadline, precision and batch come from there (and through them from the claims
and the scenario); the GPU count is left to the planner on every generation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import scenario
from analyses.models import layouts, tco
from analyses.models import plan as pl
from analyses.scenario import costs, generations, planning, presets
from analyses.scenario.params import Param
from analyses.units import MB

CURRENCIES = ("RMB", "USD")
DEFAULT_CURRENCY = "RMB"  # the documents' currency: every page shows money in RMB unless a reader picks USD


def currency_params() -> tuple[Param, Param]:
    """The parameters of every page that shows money: its one currency and the exchange rate it
    converts at (the scenario's ``usd_cny``)."""
    shown = Param("currency", "str", DEFAULT_CURRENCY, "-", "currency of every amount on the page", choices=CURRENCIES)
    return shown, scenario.param("usd_cny")


REGION = costs.REGION  # owned GPUs pay the tariff of the documents' deployments, as in the cost chapter
RENT_CLASS = "neocloud"
PRECISIONS = ("bf16", "fp8")

# The documents' workloads, each a preset of data/plan_presets.csv with a reader's name for it.
WORKLOADS: tuple[tuple[str, str, str], ...] = (
    ("pretrain-13b", "doc000-13b-a100", "13B pretraining in about three weeks (000 part 2.1)"),
    ("pretrain-100b", "doc000-100b-4-8-nodes", "100B pretraining (000 parts 2.1 and 5)"),
    ("finetune-13b", "doc001-case-finetune", "monthly 13B fine-tune (001 part 4)"),
)
READER = "yours"

COLUMNS = (
    "workload",
    "label",
    "gpu",
    "basis",
    "precision",
    "n_gpus",
    "layout",
    "days",
    "days_lo",
    "days_hi",
    "meets_deadline",
    "gpu_hours",
    "usd_per_gpu_hour",
    "cost_usd",
    "cost_usd_lo",
    "cost_usd_hi",
    "break_even_utilisation",
    "sensitive_to",
    "sensitive_lo_usd",
    "sensitive_hi_usd",
    "cheapest",
)


@dataclass(frozen=True)
class Workload:
    """A training run to plan: its model, tokens and deadline (and where they come from)."""

    key: str
    label: str
    shape: pl.Shape
    tokens: float
    deadline_days: float
    batch_tokens: float | None = None  # the preset's global batch; None: the scenario's
    preset: str | None = None
    claims: tuple[str, ...] = ()


def documents_workloads(s: Mapping[str, float] | None = None) -> list[Workload]:
    """The documents' workloads (:data:`WORKLOADS`), each read from its preset at the scenario ``s``."""
    s = scenario.values() if s is None else s
    out = []
    for key, pid, label in WORKLOADS:
        p = presets.preset(pid, s)
        shape = (
            pl.Shape.from_params(p["n_params"]) if p["model_shape"] == "generic" else planning.shape(p["model_shape"])
        )
        batch = p.get("batch_million_tokens")
        out.append(
            Workload(
                key,
                label,
                shape,
                float(p["tokens"]),
                float(p["deadline_days"]),
                None if batch is None else float(batch) * MB,
                pid,
                tuple(p["claims"]),
            )
        )
    return out


def reader_workload(n_params: float, tokens: float, deadline_days: float, s: Mapping[str, float]) -> Workload:
    """A reader's run: a generic shape of ``n_params``, ``tokens`` (0: the scenario's tokens per
    parameter), in ``deadline_days``."""
    shape = pl.Shape.from_params(n_params)
    tokens = tokens or float(s["tokens_per_param"]) * n_params
    return Workload(READER, "your run", shape, float(tokens), float(deadline_days))


def gpus() -> list[str]:
    """The generations a buyer of the documents' servers weighs (A100 to B300 in 8-GPU nodes) that the
    planner can place and the scenario prices both ways (:func:`analyses.scenario.planning.priced_gpus`);
    a generation added to the data with its prices and cluster appears."""
    supported = set(planning.priced_gpus())
    return [g for g in generations.documents_span() if g in supported]


def not_covered() -> list[str]:
    """The generations of the documents' span the planner cannot place or price both ways yet (no
    InfiniBand cluster configuration, system price or rent in the data)."""
    supported = set(planning.priced_gpus())
    return [g for g in generations.documents_span() if g not in supported]


def precision_on(gpu: str, precision: str) -> str:
    """``precision`` where ``gpu`` offers it, else BF16 (A100 has no FP8 tensor cores)."""
    return precision if precision in generations.gpu(gpu).peak_flops_dense else "bf16"


def request(workload: Workload, s: Mapping[str, float], gpu: str, precision: str = "bf16", **fields: Any) -> pl.Request:
    """The planner request for ``workload`` on ``gpu`` at the page's convention (:data:`REGION`,
    :data:`RENT_CLASS`; ``fields`` may set any other planner field)."""
    fields = {"electricity_region": REGION, "rent_class": RENT_CLASS} | fields
    if workload.batch_tokens is not None:
        fields.setdefault("global_batch_tokens", workload.batch_tokens)
    else:
        fields.setdefault("global_batch_tokens", float(s["batch_million_tokens"]) * MB)
    return planning.request(
        workload.shape,
        workload.tokens,
        workload.deadline_days,
        s=s,
        gpus=(gpu,),
        precision=precision_on(gpu, precision),
        **fields,
    )


def break_even_utilisation(owned_usd_per_hour: float, rented_usd_per_hour: float) -> float:
    """The share of calendar hours an owned GPU must be busy for its busy hours to cost less than
    renting: its calendar-hour cost over the rent (above 1: owning never pays)."""
    return float(owned_usd_per_hour) / float(rented_usd_per_hour)


def _price_swings(req: pl.Request, gpu: str, basis: str, gpu_hours: float) -> dict[str, tuple[float, float]]:
    """Cost of the run (USD) with each price assumption of ``basis`` at the ends of its 90% range."""
    ranges = scenario.ranges(req.s)
    names = costs.inputs(gpu, req.rent_class, req.electricity_region, req.s)
    rented_only = {costs.rent_name(gpu, req.rent_class), *costs.RENTED_SHARED}
    out = {}
    for name in names:
        if (name in rented_only) != (basis == "rented"):
            continue
        r = ranges[name]
        lo, hi = (float(planning.hourly_cost(req, gpu, dict(req.s) | {name: v})[basis]) * gpu_hours for v in (r.low, r.high))
        out[f"{scenario.assumption(name).label} (90% range)"] = (lo, hi)
    return out


def _most_sensitive(
    req: pl.Request, row: pd.Series, basis: str, cost: float, times: pd.DataFrame
) -> tuple[str, float, float]:
    """The input whose range moves this run's cost most, and the cost at its two ends (USD)."""
    swings = _price_swings(req, row["gpu"], basis, float(row["gpu_hours"]))
    for t in times.itertuples(index=False):
        if str(t.input).startswith("price per GPU-hour"):
            continue  # the page splits the price into its assumptions (above)
        swings[str(t.input)] = (cost * t.days_a / row["days"], cost * t.days_b / row["days"])
    name = max(swings, key=lambda k: (abs(swings[k][1] - swings[k][0]), k))
    lo, hi = swings[name]
    return name, lo, hi


def per_run(
    req: pl.Request, plan: pl.Plan | None = None, workload: Workload | None = None, sensitivity: bool = True
) -> pd.DataFrame:
    """Time and cost of one run of ``req`` on each of its GPUs, rented and owned (:data:`COLUMNS`).

    ``plan`` is ``planning.plan(req)`` when the caller already has it (the planner chapter); each GPU's
    recommended layout, its 90% intervals (:func:`analyses.scenario.planning.intervals`) and, with
    ``sensitivity``, the input that moves its cost most. USD; ``cheapest`` is left False (see
    :func:`mark_cheapest`). A GPU on which the model fits no layout has no row.
    """
    p = planning.plan(req) if plan is None else plan
    rec = p.recommended
    if rec.empty:
        return pd.DataFrame(columns=COLUMNS)
    iv = planning.intervals(req, rec)
    rows = []
    for _, r in iv.iterrows():
        hours = float(r["gpu_hours"])
        prices = planning.hourly_cost(req, r["gpu"])
        times = planning.sensitivity(req, r) if sensitivity else pd.DataFrame(columns=["input", "days_a", "days_b"])
        for basis in tco.COST_BASES:
            cost = float(r[f"cost_{basis}"])
            name, lo, hi = _most_sensitive(req, r, basis, cost, times) if sensitivity else ("", np.nan, np.nan)
            rows.append(
                {
                    "workload": workload.key if workload else "",
                    "label": workload.label if workload else "",
                    "gpu": r["gpu"],
                    "basis": basis,
                    "precision": req.precision,
                    "n_gpus": int(r["n_gpus"]),
                    "layout": layouts.short_label(r),
                    "days": float(r["days"]),
                    "days_lo": float(r["days_lo"]),
                    "days_hi": float(r["days_hi"]),
                    "meets_deadline": bool(r["meets_deadline"]),
                    "gpu_hours": hours,
                    "usd_per_gpu_hour": float(prices[basis]),
                    "cost_usd": cost,
                    "cost_usd_lo": float(r[f"cost_{basis}_lo"]),
                    "cost_usd_hi": float(r[f"cost_{basis}_hi"]),
                    "break_even_utilisation": break_even_utilisation(prices["owned"], prices["rented"]),
                    "sensitive_to": name,
                    "sensitive_lo_usd": min(lo, hi),
                    "sensitive_hi_usd": max(lo, hi),
                    "cheapest": False,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def mark_cheapest(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``cheapest`` True on the cheapest row (central cost) of each workload and basis
    among those that meet the deadline (among all of them where none does)."""
    out = frame.copy()
    out["cheapest"] = False
    for _, idx in out.groupby(["workload", "basis"], sort=False).groups.items():
        rows = out.loc[idx]
        ok = rows[rows["meets_deadline"]]
        pool = ok if not ok.empty else rows
        pool = pool[np.isfinite(pool["cost_usd"])]
        if not pool.empty:
            out.loc[pool["cost_usd"].idxmin(), "cheapest"] = True
    return out


def buy_or_rent(
    workloads: Sequence[Workload],
    s: Mapping[str, float],
    generations_: Sequence[str] | None = None,
    precision: str = "bf16",
    **fields: Any,
) -> pd.DataFrame:
    """Time and cost per run of every workload on every generation (:func:`gpus` by default), rented
    and owned, with 90% ranges, the most sensitive input and the cheapest of each basis marked (USD).

    Each generation is planned at ``precision`` where it offers it (BF16 otherwise, see
    :func:`precision_on`); ``fields`` set other planner fields (``mc_samples``, ``max_gpus``, ...).
    """
    frames = []
    for w in workloads:
        for gpu in gpus() if generations_ is None else generations_:
            req = request(w, s, gpu, precision, **fields)
            frames.append(per_run(req, workload=w))
    frames = [f for f in frames if not f.empty]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    return mark_cheapest(frame)


def in_currency(usd: Any, currency: str, s: Mapping[str, Any]) -> Any:
    """An amount in USD in ``currency`` (RMB at the scenario's ``usd_cny``)."""
    if currency not in CURRENCIES:
        raise ValueError(f"currency must be one of {CURRENCIES}, got {currency!r}")
    return usd * np.asarray(s["usd_cny"], dtype=float) if currency == "RMB" else usd


def rate_to(unit: str, currency: str, s: Mapping[str, Any]) -> tuple[float, str]:
    """The factor that turns an amount in ``unit`` ("USD per GPU", "CNY per GPU-hour") into ``currency``,
    and the unit it then has ("RMB per GPU"); (1, ``unit``) for a unit that is not money or the rate
    itself ("CNY per USD")."""
    if currency not in CURRENCIES:
        raise ValueError(f"currency must be one of {CURRENCIES}, got {currency!r}")
    first, _, rest = str(unit).partition(" ")
    if first not in ("USD", "CNY", "RMB") or rest.startswith("per USD"):
        return 1.0, unit
    rate = float(np.asarray(s["usd_cny"], dtype=float))
    to_rmb = rate if first == "USD" else 1.0
    factor = to_rmb if currency == "RMB" else to_rmb / rate
    return factor, f"{currency} {rest}".strip()


def table_in_currency(frame: pd.DataFrame, currency: str, s: Mapping[str, Any]) -> pd.DataFrame:
    """The scenario's assumptions (:func:`analyses.scenario.table`) with every amount of money shown in
    ``currency`` (the parameters keep their own units)."""
    out = frame.copy()
    for i, unit in out["unit"].items():
        factor, shown = rate_to(unit, currency, s)
        if shown != unit:
            for col in ("low (5%)", "central", "high (95%)"):
                out.loc[i, col] = float(out.loc[i, col]) * factor
            out.loc[i, "unit"] = shown
    return out
