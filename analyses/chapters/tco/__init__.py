"""Chapter ``tco``: what B300 training really costs, the two case studies and payback.

Checks every cost claim of both documents (rows of data/claims.csv with chapter ``tco``): document
000's TCO row in its comparison table (part 3), its recommender case (part 4), the exploration
reserve (part 5) and payback (part 6); document 001's "several million" (part 0), "more than half
of cost is inefficiency" (part 1), the 7B anecdote (part 2.1), the customer-service case (part 4),
the effective-compute-cost metric and payback (part 6).

All money is computed in USD and shown in ``cfg.currency``; RMB figures the documents state are
converted at ``cfg.usd_cny``. Prices are ranges from data/prices.csv: a parameter sets a range's
central value and the table's relative spread is kept (:meth:`analyses.models.tco.Range.scaled`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Param
from analyses.models import tco
from analyses.models.tco import HOURS_PER_MONTH, Range
from analyses.site.notebook import fmt, in_words, stated
from analyses.verdicts import Verdict, check

BASELINE, NEW = "A100", "B300"
GENERATIONS = ("A100", "H100", "B200", "B300")
PRECISIONS = ("tf32", "bf16", "fp16")


def _central(price_id: str) -> float:
    return data.price(price_id).central


SPEC = ChapterSpec(
    slug="tco",
    title="What does a useful PFLOP-day cost?",
    params=(
        Param("currency", "str", "RMB", "-", "currency in which results are shown", choices=("USD", "RMB")),
        Param("usd_cny", "float", _central("usd-cny"), "CNY per USD", "exchange rate", 5.0, 9.0),
        Param(
            "rent_a100_usd_per_gpu_hour",
            "float",
            _central("a100-rent-neocloud"),
            "USD per GPU-hour",
            "A100 80GB on-demand rent (neocloud), before storage and network",
            0.1,
            20.0,
        ),
        Param(
            "rent_b300_usd_per_gpu_hour",
            "float",
            _central("b300-rent-neocloud"),
            "USD per GPU-hour",
            "B300 on-demand rent (neocloud), before storage and network",
            0.5,
            40.0,
        ),
        Param(
            "server_a100_usd_per_gpu",
            "float",
            _central("a100-server"),
            "USD per GPU",
            "A100 system price per GPU (second-hand in 2026)",
            1000.0,
            100_000.0,
        ),
        Param(
            "server_b300_usd_per_gpu",
            "float",
            _central("b300-server"),
            "USD per GPU",
            "B300 8-GPU system price per GPU",
            5000.0,
            200_000.0,
        ),
        Param("depreciation_years", "float", 4.0, "years", "depreciation period of owned servers", 1.0, 10.0),
        Param("cost_of_capital", "float", 0.08, "1/year", "annual cost of capital (0: straight line)", 0.0, 0.5),
        Param(
            "electricity_usd_per_kwh",
            "float",
            _central("electricity-china"),
            "USD per kWh",
            "electricity price (default: average Chinese industrial tariff)",
            0.01,
            1.0,
        ),
        Param("pue", "float", _central("pue"), "ratio", "data-centre power usage effectiveness", 1.0, 3.0),
        Param("mfu", "float", 0.4, "fraction", "model FLOP utilisation of a busy, healthy job", 0.05, 1.0),
        Param("utilisation", "float", 0.7, "fraction", "share of paid GPU-hours a job is running", 0.05, 1.0),
        Param("goodput", "float", 0.9, "fraction", "share of run time not lost to failures and reruns", 0.1, 1.0),
        Param("precision", "str", "bf16", "-", "tensor precision for peak FLOP/s", choices=PRECISIONS),
        Param(
            "workload_pflop_days_per_month",
            "float",
            200.0,
            "PFLOP-days/month",
            "your plan: useful compute needed each month",
            1.0,
            1e6,
        ),
        Param("reference_params", "float", 7e9, "parameters", "'a large model' for the training-cost claim", 1e8, 2e12),
        Param("reference_tokens", "float", 2e12, "tokens", "training tokens of that model", 1e9, 1e14),
        Param("mc_samples", "int", 20_000, "draws", "Monte Carlo sample size", 1000, 200_000),
        Param("seed", "int", 2026, "-", "Monte Carlo seed (numpy PCG64)", 0, 2**31 - 1),
    ),
)


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def ranges(cfg: Mapping[str, Any]) -> dict[str, Range]:
    """Every uncertain input as a Range (USD unless named otherwise), centred on ``cfg``'s values."""

    def r(price_id: str, central: float | None = None) -> Range:
        row = data.price(price_id)
        base = Range(row.low, row.central, row.high)
        return base if central is None else base.scaled(central)

    return {
        "server_a100": r("a100-server", cfg["server_a100_usd_per_gpu"]),
        "server_b300": r("b300-server", cfg["server_b300_usd_per_gpu"]),
        "rent_a100": r("a100-rent-neocloud", cfg["rent_a100_usd_per_gpu_hour"]),
        "rent_b300": r("b300-rent-neocloud", cfg["rent_b300_usd_per_gpu_hour"]),
        "rent_a100_china_cny": r("a100-rent-china"),
        "network_storage": r("network-storage"),
        "rental_overhead": r("rental-overhead"),
        "electricity": r("electricity-china", cfg["electricity_usd_per_kwh"]),
        "pue": r("pue", cfg["pue"]),
        "hosting": r("hosting"),
        "power_overhead": r("server-power-overhead"),
        "staff": r("staff"),
        "usd_cny": r("usd-cny", cfg["usd_cny"]),
    }


INPUT_LABELS = {
    "server_a100": "A100 system price per GPU",
    "server_b300": "B300 system price per GPU",
    "rent_a100": "A100 rent per GPU-hour",
    "rent_b300": "B300 rent per GPU-hour",
    "rent_a100_china_cny": "A100 rent in China (CNY)",
    "network_storage": "network and storage share of capex",
    "rental_overhead": "storage/network on top of rent",
    "electricity": "electricity price",
    "pue": "PUE",
    "hosting": "hosting per kW-month",
    "power_overhead": "node power / GPU TDP",
    "staff": "staff per GPU-year",
    "usd_cny": "exchange rate",
}


def inputs_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """The price inputs with their ranges, units, dates and sources."""
    ids = {
        "server_a100": "a100-server",
        "server_b300": "b300-server",
        "rent_a100": "a100-rent-neocloud",
        "rent_b300": "b300-rent-neocloud",
        "rent_a100_china_cny": "a100-rent-china",
        "network_storage": "network-storage",
        "rental_overhead": "rental-overhead",
        "electricity": "electricity-china",
        "pue": "pue",
        "hosting": "hosting",
        "power_overhead": "server-power-overhead",
        "staff": "staff",
        "usd_cny": "usd-cny",
    }
    rows = []
    for name, rng in ranges(cfg).items():
        row = data.price(ids[name])
        rows.append(
            {
                "input": INPUT_LABELS[name],
                "low (5%)": rng.low,
                "central": rng.central,
                "high (95%)": rng.high,
                "unit": row.unit,
                "date": row.date,
                "source": row.source,
            }
        )
    return pd.DataFrame(rows)


def _peak(gpu: str, cfg: Mapping[str, Any]) -> float:
    return data.gpu(gpu).peak_flops(cfg["precision"])


def _owned(v: Mapping[str, Any], gpu: str, cfg: Mapping[str, Any], years: float | None = None) -> tco.OwnedCost:
    """Owned cost per GPU-hour (USD) of ``gpu`` with inputs ``v`` (floats or arrays)."""
    price = {"A100": v.get("server_a100"), "B300": v.get("server_b300")}.get(gpu)
    if price is None:
        price = _central(f"{gpu.lower()}-server")
    years = cfg["depreciation_years"] if years is None else years
    return tco.owned_cost_from_inputs(v, price, data.gpu(gpu).tdp_w, years, cfg["cost_of_capital"])


def _rented(v: Mapping[str, Any], gpu: str) -> np.ndarray:
    rent = {"A100": v.get("rent_a100"), "B300": v.get("rent_b300")}.get(gpu)
    if rent is None:
        rent = _central(f"{gpu.lower()}-rent-neocloud")
    return tco.rented_cost_per_gpu_hour(rent, v["rental_overhead"])


def simulate(fn: Callable[..., Any], cfg: Mapping[str, Any]) -> np.ndarray:
    """``fn(**inputs)`` on the chapter's Monte Carlo draws."""
    return tco.monte_carlo(fn, ranges(cfg), n=cfg["mc_samples"], seed=cfg["seed"])


def summarise(fn: Callable[..., Any], cfg: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """(central, 5th percentile, median, 95th percentile) of ``fn`` over the input ranges."""
    lo, med, hi = tco.interval(simulate(fn, cfg))
    return tco.central_value(fn, ranges(cfg)), lo, med, hi


def money(usd: float, cfg: Mapping[str, Any], sig: int = 3, per: str = "") -> str:
    """A USD amount in the chapter's currency, formatted."""
    unit = "RMB" if cfg["currency"] == "RMB" else "USD"
    value = usd * cfg["usd_cny"] if unit == "RMB" else usd
    return str(fmt(value, f"{unit}{per}", sig=sig))


def to_currency(usd: Any, cfg: Mapping[str, Any]) -> Any:
    return usd * cfg["usd_cny"] if cfg["currency"] == "RMB" else usd


def currency_unit(cfg: Mapping[str, Any]) -> str:
    return "RMB" if cfg["currency"] == "RMB" else "USD"


def _k(value: float) -> str:
    """A stated amount in thousands as the documents write it: 42000 -> "42k"."""
    return f"{stated(value / 1000)}k"


# --------------------------------------------------------------------------------------------
# Section 1: cost stack per GPU-hour
# --------------------------------------------------------------------------------------------

COMPONENTS = ("server", "network_storage", "energy", "hosting", "staff")


def cost_stack(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Owned cost per GPU-hour by component and generation (central inputs), with on-demand rent."""
    v = {k: r.central for k, r in ranges(cfg).items()}
    rows = []
    for gpu in GENERATIONS:
        owned = _owned(v, gpu, cfg)
        row = {"gpu": gpu} | {c: to_currency(float(getattr(owned, c)), cfg) for c in COMPONENTS}
        row["owned total"] = to_currency(float(owned.total), cfg)
        row["rented (incl. storage/network)"] = to_currency(float(_rented(v, gpu)), cfg)
        rows.append(row)
    return pd.DataFrame(rows)


def cost_stack_chart(cfg: Mapping[str, Any]) -> alt.Chart:
    frame = cost_stack(cfg)
    long = frame.melt(id_vars="gpu", value_vars=list(COMPONENTS), var_name="component", value_name="cost")
    rent = frame[["gpu", "rented (incl. storage/network)"]].rename(columns={"rented (incl. storage/network)": "cost"})
    unit = currency_unit(cfg)
    bars = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("gpu:N", sort=list(GENERATIONS), title=None),
            y=alt.Y("sum(cost):Q", title=f"{unit} per GPU-hour"),
            color=alt.Color("component:N", sort=list(COMPONENTS), title="owned, by component"),
            order=alt.Order("component:N"),
            tooltip=["gpu", "component", alt.Tooltip("cost:Q", format=".2f")],
        )
    )
    ticks = (
        alt.Chart(rent)
        .mark_tick(color="black", thickness=3, size=40)
        .encode(x=alt.X("gpu:N", sort=list(GENERATIONS)), y="cost:Q", tooltip=[alt.Tooltip("cost:Q", format=".2f")])
    )
    return (bars + ticks).properties(width=360, height=260)


# --------------------------------------------------------------------------------------------
# Section 2: cost per useful PFLOP-day
# --------------------------------------------------------------------------------------------


def pflop_day_fn(gpu: str, mode: str, cfg: Mapping[str, Any]) -> Callable[..., Any]:
    """Cost (USD) of one useful PFLOP-day on ``gpu`` owned or rented, as a function of the inputs."""

    def fn(**v: Any) -> Any:
        hourly = _owned(v, gpu, cfg).total if mode == "owned" else _rented(v, gpu)
        return tco.cost_per_effective_pflop_day(hourly, _peak(gpu, cfg), cfg["mfu"], cfg["utilisation"], cfg["goodput"])

    return fn


def pflop_day_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for gpu in (BASELINE, NEW):
        for mode in ("owned", "rented"):
            central, lo, med, hi = summarise(pflop_day_fn(gpu, mode, cfg), cfg)
            rows.append(
                {
                    "gpu": gpu,
                    "mode": mode,
                    "central": to_currency(central, cfg),
                    "5%": to_currency(lo, cfg),
                    "95%": to_currency(hi, cfg),
                }
            )
    return pd.DataFrame(rows)


def interval_chart(frame: pd.DataFrame, label: str, x_title: str, log: bool = False) -> alt.LayerChart:
    """Horizontal 90% intervals (rule) with central points, one row per ``label``."""
    scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    base = alt.Chart(frame).encode(y=alt.Y(f"{label}:N", title=None, sort=None))
    rule = base.mark_rule(strokeWidth=3).encode(x=alt.X("5%:Q", scale=scale, title=x_title), x2="95%:Q")
    point = base.mark_point(filled=True, size=80, color="black").encode(
        x="central:Q", tooltip=[label, alt.Tooltip("central:Q", format=".3g")]
    )
    return (rule + point).properties(width=420, height=30 * len(frame))


def pflop_day_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    frame = pflop_day_table(cfg)
    frame["option"] = frame["gpu"] + " " + frame["mode"]
    return interval_chart(frame, "option", f"{currency_unit(cfg)} per useful PFLOP-day (90% interval)")


# --------------------------------------------------------------------------------------------
# Case study of document 000 (recommender system, part 4)
# --------------------------------------------------------------------------------------------


def case000_facts() -> dict[str, float]:
    """The stated figures of document 000's case, read from the claims ledger."""
    gpus = data.claim("000-4-128-a100-to-96-b300")
    days = data.claim("000-4-training-days-28-to-11")
    util = data.claim("000-4-utilisation-58-to-87")
    runs = data.claim("000-4-experiments-1-to-3")
    cost = data.claim("000-4-monthly-cost-47pct-3m-rmb")
    return {
        "gpus_before": gpus.value("gpus_before"),
        "gpus_after": gpus.value("gpus_after"),
        "days_before": days.value("days_before"),
        "days_after": days.value("days_after"),
        "util_before": util.value("utilisation_before_pct") / 100,
        "util_after": util.value("utilisation_after_pct") / 100,
        "runs_before": runs.value("experiments_per_month_before"),
        "runs_after": runs.value("experiments_per_month_after"),
        "cost_ratio": 1 - cost.value("cost_reduction_pct") / 100,
        "annual_saving_rmb": cost.value("annual_saving_min_rmb"),
    }


def case000_gpu_days() -> dict[str, float]:
    f = case000_facts()
    return {
        "per run before": f["gpus_before"] * f["days_before"],
        "per run after": f["gpus_after"] * f["days_after"],
        "per month before": f["gpus_before"] * f["days_before"] * f["runs_before"],
        "per month after": f["gpus_after"] * f["days_after"] * f["runs_after"],
        "fleet month before": f["gpus_before"] * 365 / 12,
        "fleet month after": f["gpus_after"] * 365 / 12,
    }


def case000_readings() -> dict[str, tuple[float, float]]:
    """(GPU-days before, after) under the three readings of 'monthly compute cost'."""
    g = case000_gpu_days()
    return {
        "owned fleets, per month": (g["fleet month before"], g["fleet month after"]),
        "GPU-days used, per month": (g["per month before"], g["per month after"]),
        "per training run": (g["per run before"], g["per run after"]),
    }


def _ratio_fn(mode: str, cfg: Mapping[str, Any]) -> Callable[..., Any]:
    """B300 / A100 cost per GPU-hour, owned or rented."""

    def fn(**v: Any) -> Any:
        if mode == "owned":
            return _owned(v, NEW, cfg).total / _owned(v, BASELINE, cfg).total
        return _rented(v, NEW) / _rented(v, BASELINE)

    return fn


def public_ratio(mode: str, cfg: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """(central, 5%, median, 95%) of the public B300/A100 price ratio per GPU-hour."""
    return summarise(_ratio_fn(mode, cfg), cfg)


def case000_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """For each reading: the B300/A100 price ratio the stated -47% implies, and the rebuilt change."""
    f = case000_facts()
    rows = []
    for reading, (before, after) in case000_readings().items():
        implied = float(tco.implied_price_ratio(f["cost_ratio"], before, after))
        for mode in ("owned", "rented"):
            fn = _ratio_fn(mode, cfg)
            central, lo, _, hi = public_ratio(mode, cfg)
            change = summarise(lambda fn=fn, b=before, a=after, **v: fn(**v) * a / b - 1, cfg)
            rows.append(
                {
                    "reading": reading,
                    "prices": mode,
                    "implied B300/A100 price ratio": implied,
                    "public ratio (central)": central,
                    "public 5%": lo,
                    "public 95%": hi,
                    "rebuilt cost change": change[0],
                    "change 5%": change[1],
                    "change 95%": change[3],
                }
            )
    return pd.DataFrame(rows)


def implied_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """Implied price ratios (orange diamonds) against the public 90% intervals (bars)."""
    frame = frame.assign(case=frame["reading"] + " (" + frame["prices"] + ")")
    base = alt.Chart(frame).encode(y=alt.Y("case:N", title=None, sort=None))
    scale = alt.Scale(type="log")
    rule = base.mark_rule(strokeWidth=4, color="#1b9e77").encode(
        x=alt.X("public 5%:Q", scale=scale, title="B300 / A100 cost per GPU-hour (log)"), x2="public 95%:Q"
    )
    point = base.mark_point(shape="diamond", filled=True, size=120, color="#d95f02").encode(
        x="implied B300/A100 price ratio:Q",
        tooltip=["case", alt.Tooltip("implied B300/A100 price ratio:Q", format=".2f")],
    )
    return (rule + point).properties(width=420, height=28 * len(frame))


# --------------------------------------------------------------------------------------------
# Case study of document 001 (customer-service fine-tuning, part 4)
# --------------------------------------------------------------------------------------------


def case001_facts() -> dict[str, float]:
    own = data.claim("001-4-own-42k-vs-rent-80k")
    rent = data.claim("001-4-rental-80k-rmb-month")
    return {
        "gpus": own.value("servers") * own.value("gpus_per_server"),
        "years": own.value("depreciation_years"),
        "own_rmb_month": own.value("cost_after_rmb_per_month"),
        "rent_rmb_month": rent.value("cost_per_month_rmb"),
    }


def case001_own_rmb_fn(cfg: Mapping[str, Any]) -> Callable[..., Any]:
    """Monthly all-in cost (RMB) of the eight owned B300s depreciated over the stated 3 years."""
    f = case001_facts()

    def fn(**v: Any) -> Any:
        return f["gpus"] * _owned(v, NEW, cfg, years=f["years"]).total * HOURS_PER_MONTH * v["usd_cny"]

    return fn


def case001_implied_price(cfg: Mapping[str, Any]) -> float:
    """B300 system price per GPU (USD) at which the stated 42k RMB/month would be the full cost."""
    f = case001_facts()
    v = {k: r.central for k, r in ranges(cfg).items()}
    opex = float(_owned(v, NEW, cfg).opex) * HOURS_PER_MONTH
    target = f["own_rmb_month"] / v["usd_cny"] / f["gpus"]
    return float(
        tco.implied_server_price_per_gpu(target, opex, v["network_storage"], f["years"], cfg["cost_of_capital"])
    )


def case001_rental_gpus_fn() -> Callable[..., Any]:
    """Always-on A100s that 80k RMB a month rents in China (storage and network included)."""
    f = case001_facts()

    def fn(**v: Any) -> Any:
        return f["rent_rmb_month"] / (v["rent_a100_china_cny"] * (1 + v["rental_overhead"]) * HOURS_PER_MONTH)

    return fn


# --------------------------------------------------------------------------------------------
# Payback
# --------------------------------------------------------------------------------------------


def payback_labels() -> dict[str, str]:
    """Labels of the payback cases (also the keys of :func:`payback_fns`), built from the stated figures."""
    f0, f1 = case000_facts(), case001_facts()
    buy0, had0 = f"buy {stated(f0['gpus_after'])} {NEW}", stated(f0["gpus_before"])
    return {
        "000 vs rent": f"000: {buy0} vs rent {had0} {BASELINE}",
        "000 vs keep": f"000: {buy0} vs keep {had0} owned {BASELINE}",
        "001": f"001: buy {stated(f1['gpus'])} {NEW} vs rent at {_k(f1['rent_rmb_month'])} RMB/month",
        "plan": f"your plan: buy {NEW} vs rent {BASELINE}",
    }


def payback_fns(cfg: Mapping[str, Any]) -> dict[str, Callable[..., Any]]:
    """Payback (months) of buying B300s: document 000's case, document 001's case, the reader's plan."""
    f0, f1 = case000_facts(), case001_facts()
    hours_run_before = f0["days_before"] * 24 * f0["runs_before"]

    def case000_vs_rent(**v: Any) -> Any:
        capex = f0["gpus_after"] * v["server_b300"] * (1 + v["network_storage"])
        before = f0["gpus_before"] * hours_run_before * _rented(v, BASELINE)
        after = f0["gpus_after"] * _owned(v, NEW, cfg).opex * HOURS_PER_MONTH
        return tco.payback_months(capex, before, after)

    def case000_vs_keep(**v: Any) -> Any:
        capex = f0["gpus_after"] * v["server_b300"] * (1 + v["network_storage"])
        before = f0["gpus_before"] * _owned(v, BASELINE, cfg).opex * HOURS_PER_MONTH
        after = f0["gpus_after"] * _owned(v, NEW, cfg).opex * HOURS_PER_MONTH
        return tco.payback_months(capex, before, after)

    def case001(**v: Any) -> Any:
        capex = f1["gpus"] * v["server_b300"] * (1 + v["network_storage"])
        before = f1["rent_rmb_month"] / v["usd_cny"]
        after = f1["gpus"] * _owned(v, NEW, cfg).opex * HOURS_PER_MONTH
        return tco.payback_months(capex, before, after)

    def plan(**v: Any) -> Any:
        n_before = plan_gpus(BASELINE, cfg)
        n_after = plan_gpus(NEW, cfg)
        capex = n_after * v["server_b300"] * (1 + v["network_storage"])
        before = n_before * _rented(v, BASELINE) * HOURS_PER_MONTH
        after = n_after * _owned(v, NEW, cfg).opex * HOURS_PER_MONTH
        return tco.payback_months(capex, before, after)

    label = payback_labels()
    return {
        label["000 vs rent"]: case000_vs_rent,
        label["000 vs keep"]: case000_vs_keep,
        label["001"]: case001,
        label["plan"]: plan,
    }


def payback_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for name, fn in payback_fns(cfg).items():
        samples = simulate(fn, cfg)
        lo, med, hi = tco.interval(samples)
        rows.append(
            {
                "case": name,
                "central": tco.central_value(fn, ranges(cfg)),
                "5%": lo,
                "median": med,
                "95%": hi,
                f"P(within {stated_payback_months()[1]:g} months)": float(
                    np.mean(samples <= stated_payback_months()[1])
                ),
            }
        )
    return pd.DataFrame(rows)


PAYBACK_CLAIM = "000-6-payback-6-12-months"


def stated_payback_months() -> tuple[float, float]:
    """The documents' stated payback window (low, high) in months."""
    c = data.claim(PAYBACK_CLAIM)
    return c.value("payback_low_months"), c.value("payback_high_months")


PAYBACK_CAP_MONTHS = 120.0  # months at which the payback chart caps its histogram ("never" counts as the cap)


def payback_chart(cfg: Mapping[str, Any], cap_months: float = PAYBACK_CAP_MONTHS) -> alt.LayerChart:
    """Distribution of payback months per case (capped; 'never' shown at the cap)."""
    frames = []
    for name, fn in payback_fns(cfg).items():
        samples = np.minimum(simulate(fn, cfg), cap_months)
        counts, edges = np.histogram(samples, bins=np.arange(0, cap_months + 6, 6))
        frames.append(pd.DataFrame({"case": name, "months": edges[:-1], "share": counts / counts.sum()}))
    frame = pd.concat(frames, ignore_index=True)
    frame["months_end"] = frame["months"] + 6
    base = alt.Chart(frame)
    area = (
        base.transform_aggregate(n="count()", groupby=["case"])
        .mark_rect(opacity=0.25, color="#d95f02")
        .encode(x=alt.datum(stated_payback_months()[0]), x2=alt.datum(stated_payback_months()[1]))
    )
    bars = base.mark_bar().encode(
        x=alt.X("months:Q", title=f"payback (months; {cap_months:.0f} = never or later)"),
        x2="months_end:Q",
        y=alt.Y("share:Q", title="share of draws"),
        tooltip=["case", "months", alt.Tooltip("share:Q", format=".2f")],
    )
    return alt.layer(area, bars).properties(width=420, height=110).facet(row=alt.Row("case:N", title=None))


# --------------------------------------------------------------------------------------------
# The reader's plan
# --------------------------------------------------------------------------------------------


def plan_gpus(gpu: str, cfg: Mapping[str, Any]) -> float:
    return float(
        tco.gpus_for_workload(
            cfg["workload_pflop_days_per_month"], _peak(gpu, cfg), cfg["mfu"], cfg["utilisation"], cfg["goodput"]
        )
    )


def plan_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Monthly cost of the reader's workload: rent A100, rent B300, own B300 (90% intervals)."""
    options = {
        "rent A100": (BASELINE, "rented"),
        "rent B300": (NEW, "rented"),
        "own A100": (BASELINE, "owned"),
        "own B300": (NEW, "owned"),
    }
    rows = []
    for name, (gpu, mode) in options.items():
        n = plan_gpus(gpu, cfg)

        def fn(n=n, gpu=gpu, mode=mode, **v: Any) -> Any:
            hourly = _owned(v, gpu, cfg).total if mode == "owned" else _rented(v, gpu)
            return n * hourly * HOURS_PER_MONTH

        central, lo, _, hi = summarise(fn, cfg)
        rows.append(
            {
                "option": name,
                "GPUs": n,
                "central": to_currency(central, cfg),
                "5%": to_currency(lo, cfg),
                "95%": to_currency(hi, cfg),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Sensitivity
# --------------------------------------------------------------------------------------------


def tornado_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """What moves document 001's owned monthly cost most (RMB), one input at a time."""
    frame = tco.tornado(case001_own_rmb_fn(cfg), ranges(cfg))
    frame = frame[frame["swing"] > 0].copy()
    frame["input"] = frame["input"].map(INPUT_LABELS)
    return frame.reset_index(drop=True)


def tornado_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    frame = tornado_table(cfg)
    f = case001_facts()
    stated_rmb = f["own_rmb_month"]
    central = tco.central_value(case001_own_rmb_fn(cfg), ranges(cfg))
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            y=alt.Y("input:N", sort=list(frame["input"]), title=None),
            x=alt.X(
                "at_low:Q",
                title=f"monthly cost of the {stated(f['gpus'])} owned {NEW}s (RMB)",
                scale=alt.Scale(zero=False),
            ),
            x2="at_high:Q",
            tooltip=["input", alt.Tooltip("at_low:Q", format=",.0f"), alt.Tooltip("at_high:Q", format=",.0f")],
        )
    )
    rules = pd.DataFrame({"x": [central, stated_rmb], "what": ["central estimate", f"stated {_k(stated_rmb)}"]})
    lines = (
        alt.Chart(rules)
        .mark_rule(strokeDash=[4, 3])
        .encode(x="x:Q", color=alt.Color("what:N", scale=alt.Scale(range=["black", "#d95f02"]), title=None))
    )
    return (bars + lines).properties(width=420, height=22 * len(frame))


# --------------------------------------------------------------------------------------------
# Training cost of "a large model"
# --------------------------------------------------------------------------------------------


def training_cost_rmb_fn(cfg: Mapping[str, Any], params: float | None = None) -> Callable[..., Any]:
    """Rented-A100 compute cost (RMB) of training a dense model on ``6ND`` FLOP."""
    n = cfg["reference_params"] if params is None else params
    flop = 6 * n * cfg["reference_tokens"]
    hours = float(tco.training_gpu_hours(flop, _peak(BASELINE, cfg), cfg["mfu"], cfg["goodput"]))

    def fn(**v: Any) -> Any:
        return hours * _rented(v, BASELINE) * v["usd_cny"]

    return fn


def training_cost_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for n in (cfg["reference_params"], 13e9, 70e9):
        central, lo, _, hi = summarise(training_cost_rmb_fn(cfg, n), cfg)
        hours = float(
            tco.training_gpu_hours(6 * n * cfg["reference_tokens"], _peak(BASELINE, cfg), cfg["mfu"], cfg["goodput"])
        )
        rows.append({"parameters": n, "A100-hours": hours, "RMB central": central, "RMB 5%": lo, "RMB 95%": hi})
    return pd.DataFrame(rows).drop_duplicates("parameters").reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return str(fmt(x, pct=True, sig=2))


@check("000-3-table-tco")
def check_table_tco(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    speed = data.claim("000-3-table-throughput")
    s_lo, s_hi = speed.value("speedup_low_x"), speed.value("speedup_high_x")
    t_lo, t_hi = claim.value("tco_relative_low_pct") / 100, claim.value("tco_relative_high_pct") / 100
    implied_lo, implied_hi = t_lo * s_lo, t_hi * s_hi
    owned = public_ratio("owned", cfg)
    rented = public_ratio("rented", cfg)
    need = owned[0] / ((t_lo + t_hi) / 2)
    recomputed = (
        f"with the table's own {s_lo:g}-{s_hi:g}x speed-up, TCO at {_pct(t_lo)}-{_pct(t_hi)} needs a B300 GPU-hour "
        f"at {implied_lo:.2f}-{implied_hi:.2f}x an A100's; public ratio {owned[1]:.1f}-{owned[3]:.1f}x owned, "
        f"{rented[1]:.1f}-{rented[3]:.1f}x rented (90%); at the central owned ratio the claim needs a "
        f"{need:.1f}x per-GPU speed-up"
    )
    holds = implied_hi >= min(owned[1], rented[1])
    return Verdict(
        recomputed,
        "consistent" if holds else "implausible",
        "The same-task cost ratio is the price ratio divided by the speed-up; with the document's own speed-up the "
        "B300 GPU-hour would have to cost about what an A100's does, far below the public range."
        if not holds
        else "The implied price ratio lies within the public range.",
    )


@check("000-4-monthly-cost-47pct-3m-rmb")
def check_case000_cost(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    frame = case000_table(cfg)
    f = case000_facts()
    monthly = frame[frame["reading"] != "per training run"]
    plausible = bool((monthly["implied B300/A100 price ratio"] >= monthly["public 5%"]).any())
    per_run = frame[frame["reading"] == "per training run"].iloc[0]
    need_rmb = f["annual_saving_rmb"] / (12 * (1 - f["cost_ratio"]))
    fleet = summarise(
        lambda **v: f["gpus_before"] * _owned(v, BASELINE, cfg).total * HOURS_PER_MONTH * v["usd_cny"], cfg
    )
    g = case000_gpu_days()
    cut = stated(claim.value("cost_reduction_pct"))
    before, after = stated(f["gpus_before"]), stated(f["gpus_after"])
    recomputed = (
        f"-{cut}% per month needs B300/A100 price per GPU-hour of {monthly['implied B300/A100 price ratio'].min():.2f}-"
        f"{monthly['implied B300/A100 price ratio'].max():.2f}x (public {monthly['public 5%'].min():.1f}-"
        f"{monthly['public 95%'].max():.1f}x); per training run it needs "
        f"{per_run['implied B300/A100 price ratio']:.2f}x. "
        f">{stated(f['annual_saving_rmb'] / 1e6)}M RMB/year needs a baseline of {need_rmb:,.0f} RMB/month; "
        f"{before} owned {BASELINE}s cost {fleet[1]:,.0f}-{fleet[3]:,.0f} RMB/month. "
        f"{stated(f['runs_after'])} runs x {after} GPUs x {stated(f['days_after'])} days = "
        f"{g['per month after']:.0f} GPU-days "
        f"> {g['fleet month after']:.0f} available"
    )
    return Verdict(
        recomputed,
        "consistent" if plausible else "implausible",
        f"A {cut}% lower monthly bill with {after} {NEW}s instead of {before} {BASELINE}s needs a {NEW} GPU-hour "
        f"cheaper than an {BASELINE}'s "
        "(public ratio is several times higher); it comes near the public range only as a saving per training run, "
        "which is not what the table says."
        if not plausible
        else "The implied price ratio lies inside the public range under a monthly reading.",
    )


@check("000-4-gmv-8pct")
def check_gmv(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return Verdict(
        f"+{claim.value('gmv_increase_pct'):g}% GMV: no cost or compute quantity determines it",
        "unverifiable",
        "A business outcome of an unnamed company; nothing public links it to the hardware change.",
    )


@check("000-5-reserve-10-15pct-exploration")
def check_reserve(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    lo, hi = claim.value("reserve_low_pct") / 100, claim.value("reserve_high_pct") / 100
    return Verdict(
        f"reserving {_pct(lo)}-{_pct(hi)} raises the cost per production PFLOP-day by "
        f"{_pct(1 / (1 - lo) - 1)}-{_pct(1 / (1 - hi) - 1)}",
        "unverifiable",
        "A budgeting recommendation, not a factual claim; its price is shown so a reader can weigh it.",
    )


def _payback_verdict(claim: data.Claim, cfg: Mapping[str, Any], case: str) -> Verdict:
    lo_m, hi_m = claim.value("payback_low_months"), claim.value("payback_high_months")
    fn = payback_fns(cfg)[case]
    samples = simulate(fn, cfg)
    lo, med, hi = tco.interval(samples)
    share = float(np.mean(samples <= hi_m))

    def m(x: float) -> str:
        return "never" if not np.isfinite(x) else f"{x:.0f}"

    recomputed = f"{case}: payback {m(lo)}-{m(hi)} months (90%), median {m(med)}; P(<= {hi_m:g} months) = {share:.0%}"
    if share >= 0.05:
        return Verdict(recomputed, "consistent", f"A {lo_m:g}-{hi_m:g}-month payback lies within the recomputed range.")
    return Verdict(
        recomputed,
        "implausible",
        f"On compute cost alone the hardware repays itself in years, not {lo_m:g}-{hi_m:g} months; it needs "
        "rental prices or business gains far beyond the public ranges.",
    )


@check("000-6-payback-6-12-months")
def check_payback_000(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return _payback_verdict(claim, cfg, payback_labels()["000 vs rent"])


@check("001-6-payback-6-12-months")
def check_payback_001(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    return _payback_verdict(claim, cfg, payback_labels()["001"])


@check("001-0-several-million")
def check_several_million(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    lo_s, hi_s = claim.value("cost_low_rmb"), claim.value("cost_high_rmb")
    frame = training_cost_table(cfg)
    hits = (frame["RMB 95%"] >= lo_s) & (frame["RMB 5%"] <= hi_s)
    overlaps = bool(hits.any())
    parts = "; ".join(
        f"{p / 1e9:g}B: {a:,.0f}-{b:,.0f} RMB"
        for p, a, b in zip(frame["parameters"], frame["RMB 5%"], frame["RMB 95%"], strict=True)
    )
    if not overlaps:
        return Verdict(
            f"rented-A100 compute for {cfg['reference_tokens']:.1e} tokens (90%): {parts}",
            "inconsistent",
            "No model size in the range lands in the stated band.",
        )
    fits = frame["parameters"][hits] / 1e9
    sizes = f"{fits.min():g}B" + ("" if fits.min() == fits.max() else f"-{fits.max():g}B")
    biggest = frame.loc[frame["parameters"].idxmax()]
    ratio = biggest["RMB central"] / frame["RMB central"][hits].min()
    bigger = (
        ""
        if hits[frame["parameters"].idxmax()]
        else f"a {biggest['parameters'] / 1e9:g}B model costs about {in_words(round(ratio))} times more and "
    )
    return Verdict(
        f"rented-A100 compute for {cfg['reference_tokens']:.1e} tokens (90%): {parts}",
        "consistent",
        f"Several million RMB buys the compute for a {sizes} model on {cfg['reference_tokens'] / 1e12:g}T tokens, "
        f"so the order of magnitude holds; {bigger}labour comes on top.",
    )


@check("001-1-inefficiency-over-half-of-cost")
def check_inefficiency(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    u = data.claim("001-4-utilisation-55-to-89").value("utilisation_before_pct") / 100
    threshold = claim.value("inefficiency_cost_share_min_pct") / 100
    idle = 1 - u * cfg["goodput"]
    with_mfu = 1 - u * cfg["goodput"] * cfg["mfu"]
    recomputed = (
        f"at the document's own {_pct(u)} utilisation and {_pct(cfg['goodput'])} goodput, {_pct(idle)} of paid "
        f"GPU-hours yield nothing; counting MFU of {_pct(cfg['mfu'])}, {_pct(with_mfu)} of peak is unused"
    )
    return Verdict(
        recomputed,
        "consistent" if idle >= threshold else "unverifiable",
        "The supporting table is missing, but the document's own utilisation figures put the idle share at about half."
        if idle >= threshold
        else "The supporting table is missing and the document's own figures put the idle share below half.",
    )


@check("001-2.1-7b-rd-cost-55pct")
def check_7b(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    days = data.claim("001-2.1-7b-anecdote-days")
    runs = data.claim("001-2.1-7b-experiments-12-to-8")
    time_ratio = (runs.value("experiment_rounds_after") * days.value("days_b300")) / (
        runs.value("experiment_rounds_before") * days.value("days_a100")
    )
    target = 1 - claim.value("rd_cost_reduction_pct") / 100
    r = public_ratio("owned", cfg)[0]
    w = float(tco.share_for_ratio(target, time_ratio, r))
    gpu_ratio = target / (time_ratio * r)
    recomputed = (
        f"experiment-days fall to {_pct(time_ratio)} of before; at the central owned price ratio {r:.1f}x the "
        f"{_pct(target)} cost ratio needs labour >= {_pct(w)} of R&D cost, or a B300 cluster <= {_pct(gpu_ratio)} "
        f"of the A100 cluster's GPUs (a {days.value('days_a100') / days.value('days_b300') / gpu_ratio:.1f}x "
        "per-GPU speed-up)"
    )
    return Verdict(
        recomputed,
        "unverifiable",
        "The anecdote omits both clusters' GPU counts and the cost split; it holds only under the conditions shown.",
    )


@check("001-4-rental-80k-rmb-month")
def check_rental_80k(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    central, lo, _, hi = summarise(case001_rental_gpus_fn(), cfg)
    recomputed = (
        f"{claim.value('cost_per_month_rmb'):,.0f} RMB/month rents {lo:.1f}-{hi:.1f} A100s around the clock at "
        f"China cloud prices incl. storage and network (central {central:.1f})"
    )
    return Verdict(
        recomputed,
        "consistent",
        f"A plausible bill for the {stated(case001_facts()['gpus'])}-GPU scale of the case; the anecdote itself "
        "cannot be checked.",
    )


@check("001-4-own-42k-vs-rent-80k")
def check_own_42k(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    f = case001_facts()
    central, lo, _, hi = summarise(case001_own_rmb_fn(cfg), cfg)
    implied = case001_implied_price(cfg)
    price = data.price("b300-server")
    share = float(np.mean(simulate(case001_own_rmb_fn(cfg), cfg) <= f["own_rmb_month"]))
    straight = f["gpus"] * price.low * cfg["usd_cny"] / (12 * f["years"])
    own_k = _k(f["own_rmb_month"])
    recomputed = (
        f"{stated(f['gpus'])} owned {NEW}s over {f['years']:g} years cost {lo:,.0f}-{hi:,.0f} RMB/month "
        f"(90%; central {central:,.0f}); "
        f"straight-line depreciation alone at the lowest public price is {straight:,.0f} RMB/month; "
        f"{own_k} RMB/month implies a system price of {implied:,.0f} USD per GPU vs public "
        f"{price.low:,.0f}-{price.high:,.0f}; P(<= {own_k}) = {share:.0%}"
    )
    plausible = implied >= price.low * 0.9
    return Verdict(
        recomputed,
        "consistent" if plausible else "implausible",
        f"Depreciating {in_words(f['gpus'])} {NEW}s over {in_words(f['years'])} years alone exceeds {own_k} RMB a month; "
        "the stated cost needs a server price far below any public quote."
        if not plausible
        else "The implied server price is within the public range.",
    )


@check("001-6-effective-compute-cost-formula")
def check_metric(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    a = tco.central_value(pflop_day_fn(BASELINE, "owned", cfg), ranges(cfg))
    b = tco.central_value(pflop_day_fn(NEW, "owned", cfg), ranges(cfg))
    return Verdict(
        f"made precise as cost over a period / useful PFLOP-days in that period: owned A100 {money(a, cfg)}, "
        f"owned B300 {money(b, cfg)} per useful PFLOP-day",
        "consistent",
        "A sound metric once the investment is amortised over the same period as the compute it delivers.",
    )


# --------------------------------------------------------------------------------------------
# Both case studies, stated vs rebuilt
# --------------------------------------------------------------------------------------------


def case_comparison(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Each case's stated cost figures beside the rebuilt value and its 90% interval."""
    f0, f1 = case000_facts(), case001_facts()
    g = case000_gpu_days()

    def fleet_change(**v: Any) -> Any:
        return f0["gpus_after"] * _owned(v, NEW, cfg).total / (f0["gpus_before"] * _owned(v, BASELINE, cfg).total) - 1

    def used_change(**v: Any) -> Any:
        return g["per month after"] * _rented(v, NEW) / (g["per month before"] * _rented(v, BASELINE)) - 1

    def fleet_saving_rmb(**v: Any) -> Any:
        before = f0["gpus_before"] * _owned(v, BASELINE, cfg).total
        after = f0["gpus_after"] * _owned(v, NEW, cfg).total
        return (before - after) * HOURS_PER_MONTH * 12 * v["usd_cny"]

    def saving_001(**v: Any) -> Any:
        return 1 - case001_own_rmb_fn(cfg)(**v) / f1["rent_rmb_month"]

    rows = [
        (
            "000",
            "per-GPU speed-up (GPU-days per run)",
            f"{g['per run before'] / g['per run after']:.2f}x implied",
            None,
        ),
        ("000", "monthly cost change, owned fleets", f"{f0['cost_ratio'] - 1:+.0%}", fleet_change),
        ("000", "monthly cost change, rented GPU-days used", f"{f0['cost_ratio'] - 1:+.0%}", used_change),
        ("000", "annual saving, owned fleets (RMB)", f">{f0['annual_saving_rmb']:,.0f}", fleet_saving_rmb),
        (
            "001",
            f"monthly cost of {stated(f1['gpus'])} owned {NEW} (RMB)",
            f"{f1['own_rmb_month']:,.0f}",
            case001_own_rmb_fn(cfg),
        ),
        (
            "001",
            f"saving vs {_k(f1['rent_rmb_month'])} RMB/month rental",
            f"{1 - f1['own_rmb_month'] / f1['rent_rmb_month']:.0%}",
            saving_001,
        ),
        ("001", "A100s the rental buys, always on", f"{f1['rent_rmb_month']:,.0f} RMB/month", case001_rental_gpus_fn()),
    ]
    out = []
    for case, quantity, said, fn in rows:
        if fn is None:
            out.append({"case": case, "quantity": quantity, "stated": said, "rebuilt": "-", "90% interval": "-"})
            continue
        central, lo, _, hi = summarise(fn, cfg)
        pct = "change" in quantity or "saving vs" in quantity
        show = (lambda x: f"{x:+.0%}") if pct else (lambda x: f"{x:,.1f}" if abs(x) < 100 else f"{x:,.0f}")
        out.append(
            {
                "case": case,
                "quantity": quantity,
                "stated": said,
                "rebuilt": show(central),
                "90% interval": f"{show(lo)} to {show(hi)}",
            }
        )
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------------
# Prose: sentences whose conclusion depends on the prices and parameters
# --------------------------------------------------------------------------------------------


def _cheaper(ratio: float) -> str:
    return "cheaper" if ratio < 1 else "dearer"


def stack_caption(cfg: Mapping[str, Any]) -> str:
    """Caption sentence of the cost stack: capital's share of owned cost and the B300's rent against ownership."""
    row = cost_stack(cfg).set_index("gpu")
    capital = (row["server"] + row["network_storage"]) / row["owned total"]
    rent = row.loc[NEW, "rented (incl. storage/network)"] / row.loc[NEW, "owned total"]
    return (
        f"Capital is {fmt(capital.min(), pct=True, sig=2)} to {fmt(capital.max(), pct=True, sig=2)} of the owned cost; "
        f"the {NEW}'s rent is {fmt(rent, 'x', sig=2)} its owned cost."
    )


def gpu_hour_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the GPU-hour section: B300 against A100 per hour, owned and rented."""
    row = cost_stack(cfg).set_index("gpu")
    own = row.loc[NEW, "owned total"] / row.loc[BASELINE, "owned total"]
    rent = row.loc[NEW, "rented (incl. storage/network)"] / row.loc[BASELINE, "rented (incl. storage/network)"]
    text = (
        f"a {NEW} GPU-hour costs {fmt(own, 'x', sig=2)} an {BASELINE} GPU-hour owned and {fmt(rent, 'x', sig=2)} rented"
    )
    if own > 1 and rent > 1:
        return text + "; any saving must come from doing more work per hour."
    return text + "; at these prices the B300 is not dearer by the hour in every mode."


def _pfd(cfg: Mapping[str, Any]) -> pd.DataFrame:
    return pflop_day_table(cfg).set_index(["gpu", "mode"])["central"]


def pflop_day_caption(cfg: Mapping[str, Any]) -> str:
    """Caption sentence: the cheapest useful compute at the chapter's parameters."""
    gpu, mode = _pfd(cfg).idxmin()
    return (
        f"At these parameters {'an' if mode == 'owned' else 'a'} {mode} {gpu} is the cheapest useful compute, provided "
        f"it really reaches the same MFU as the others."
    )


def pflop_day_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the PFLOP-day section: B300 against A100 per useful FLOP, owned and rented."""
    pfd = _pfd(cfg)
    own = pfd[(NEW, "owned")] / pfd[(BASELINE, "owned")]
    rent = pfd[(NEW, "rented")] / pfd[(BASELINE, "rented")]
    return (
        f"per useful FLOP the {NEW} is {_cheaper(own)} than the {BASELINE} owned ({fmt(own, 'x', sig=2)}) and "
        f"{_cheaper(rent)} rented ({fmt(rent, 'x', sig=2)}) at the same MFU; every case below stands or falls on the "
        f"speed-up it assumes."
    )


def _log_gap(value: float, low: float, high: float) -> float:
    return 0.0 if low <= value <= high else float(min(abs(np.log(value / low)), abs(np.log(value / high))))


def implied_caption(frame: pd.DataFrame) -> str:
    """Caption sentence: which reading of 'monthly cost' puts the implied ratio in (or nearest) the public range."""
    gaps = frame.assign(
        gap=[_log_gap(r["implied B300/A100 price ratio"], r["public 5%"], r["public 95%"]) for _, r in frame.iterrows()]
    )
    gaps = gaps.groupby("reading", sort=False)["gap"].min()
    inside = list(gaps[gaps == 0].index)
    if inside:
        return f"Only the {' and '.join(inside)} reading{'s' if len(inside) > 1 else ''} land{'' if len(inside) > 1 else 's'} in the public range."
    return f"None lands in the public range; the {gaps.idxmin()} reading comes nearest."


def case000_fit_sentence() -> str:
    """Do the case's runs per month fit its own B300 cluster? (``{avail}``: the cluster's GPU-days a month)"""
    g = case000_gpu_days()
    if g["per month after"] > g["fleet month after"]:
        return "more than the {avail} the cluster has in a month, so the case's own experiment count does not fit its cluster either"
    return "within the {avail} the cluster has in a month"


def case000_takeaway(frame: pd.DataFrame) -> str:
    """Takeaway of document 000's case: the price ratio a monthly saving needs, and the nearest reading."""
    cut = fmt(1 - case000_facts()["cost_ratio"], pct=True, sig=2)
    used = float(frame[frame["reading"] == "GPU-days used, per month"]["implied B300/A100 price ratio"].iloc[0])
    text = f"a monthly bill {cut} lower needs a {NEW} GPU-hour at {fmt(used, 'x', sig=2)} the price of an {BASELINE} GPU-hour"
    gaps = {
        r["reading"]: _log_gap(r["implied B300/A100 price ratio"], r["public 5%"], r["public 95%"])
        for _, r in frame.iterrows()
    }
    nearest = min(gaps, key=gaps.get)
    if nearest == "per training run":
        return text + "; the figure reads as a per-run saving relabelled as a monthly one."
    return text + f"; of the readings, {nearest} fits public prices best."


def tornado_caption(cfg: Mapping[str, Any]) -> str:
    """Caption sentence: the input that moves document 001's cost most, and whether any reaches the stated cost."""
    tor = tornado_table(cfg)
    stated_rmb = case001_facts()["own_rmb_month"]
    top = tor.sort_values("swing", ascending=False).iloc[0]["input"]
    low = tor[["at_low", "at_high"]].min(axis=1)
    reach = "no single input brings it near" if (low > stated_rmb).all() else "some inputs alone bring it to"
    return f"{top[0].upper() + top[1:]} moves the answer most; {reach} the stated {fmt(stated_rmb, 'RMB', sig=2)} (orange)."


def case001_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of document 001's case: rebuilt monthly cost against the stated cost and the rental."""
    f = case001_facts()
    central = summarise(case001_own_rmb_fn(cfg), cfg)[0]
    first = (
        f"the {in_words(f['gpus'])} {NEW}s cost {fmt(central, 'RMB', sig=2)} a month all in, "
        f"{'above' if central > f['own_rmb_month'] else 'at or below'} the stated {fmt(f['own_rmb_month'], 'RMB', sig=2)}"
    )
    if central >= f["rent_rmb_month"]:
        return first + f"; against the {fmt(f['rent_rmb_month'], 'RMB', sig=2)} rental the case's saving reverses."
    saving = 1 - central / f["rent_rmb_month"]
    return (
        first
        + f"; against the {fmt(f['rent_rmb_month'], 'RMB', sig=2)} rental they save {fmt(saving, pct=True, sig=2)}."
    )


def payback_sentence(cfg: Mapping[str, Any]) -> str:
    """Which payback cases land in the documents' band (central estimate at most its upper end)."""
    high = data.claim("000-6-payback-6-12-months").value("payback_high_months")
    pb = payback_table(cfg)
    inside = list(pb[pb["central"] <= high]["case"])
    outside = list(pb[pb["central"] > high]["case"])
    if not inside:
        return f"No case pays back within {fmt(high, 'months', sig=2)} at these parameters."
    if not outside:
        return f"Every case pays back within {fmt(high, 'months', sig=2)} at these parameters."
    names = "; ".join(f"“{c}”" for c in inside)
    return f"At these parameters only {names} pay{'s' if len(inside) == 1 else ''} back within {fmt(high, 'months', sig=2)}; the others take longer."


def payback_takeaway(cfg: Mapping[str, Any]) -> str:
    """Takeaway of the payback section: the documents' own cases against the stated band."""
    claim = data.claim("000-6-payback-6-12-months")
    low, high = claim.value("payback_low_months"), claim.value("payback_high_months")
    pb = payback_table(cfg).set_index("case")
    docs = pb[~pb.index.str.startswith("your plan")]["central"]
    plan = pb[pb.index.str.startswith("your plan")]["central"].iloc[0]
    band = f"{low:g}-{high:g} months"
    first = (
        "with the speed-ups the documents themselves report, buying B300s repays itself in years, not months"
        if (docs > 2 * high).all()
        else f"with the speed-ups the documents themselves report, the fastest case pays back in {fmt(docs.min(), 'months', sig=2)}"
    )
    second = (
        f"the plan, which credits the B300 with its full datasheet speed-up at the same MFU, pays back in {fmt(plan, 'months', sig=2)}"
        f" ({'inside' if low <= plan <= high else ('below' if plan < low else 'above')} the stated {band})"
    )
    return f"{first}; {second}."
