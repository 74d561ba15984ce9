"""Chapter ``tco``: what B300 training really costs, the two case studies and payback.

Checks every cost claim of both documents (rows of data/claims.csv with chapter ``tco``): document
000's TCO row in its comparison table (part 3), its recommender case (part 4), the exploration
reserve (part 5) and payback (part 6); document 001's "several million" (part 0), "more than half
of cost is inefficiency" (part 1), the 7B anecdote (part 2.1), the customer-service case (part 4),
the effective-compute-cost metric and payback (part 6).

Every assumption comes from the book's scenario (prices, the B300/A100 speed-up, the A100's MFU,
utilisation, goodput, depreciation, cost of capital); :func:`compute` evaluates each quantity once,
at the scenario's central values and on one Monte Carlo sample of its ranges
(:func:`analyses.scenario.sample`), and the page only shows the :class:`Result`. Money is computed
in USD and shown in ``cfg.currency``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analyses import scenario
from analyses.chapters import ledger
from analyses.chapters.tco import wiring
from analyses.models import tco, uncertainty
from analyses.scenario import buying, cases, costs, frame, generations, operations
from analyses.scenario.generations import NEW, OLD
from analyses.scenario.params import ChapterSpec, Config, Param
from analyses.units import HOURS_PER_DAY, HOURS_PER_MONTH
from analyses.units.formats import amount, round_sig, stated, stated_amount
from analyses.verdicts.sweeps import Slider

SLUG = "tco"
GENERATIONS = tuple(costs.priced())  # the cost-per-GPU-hour table and chart: every priced GPU
CURRENCIES = buying.CURRENCIES

SPEC = ChapterSpec(
    slug=SLUG,
    title="What does a useful PFLOP-day cost?",
    params=(
        *buying.currency_params(),
        scenario.param(generations.SPEEDUP),
        scenario.param(generations.OLD_MFU),
        scenario.param("server_a100_usd_per_gpu"),
        scenario.param("server_b300_usd_per_gpu"),
        scenario.param("rent_a100_usd_per_gpu_hour"),
        scenario.param("rent_b300_usd_per_gpu_hour"),
        scenario.param("depreciation_years"),
        scenario.param("cost_of_capital"),
        scenario.param("electricity_usd_per_kwh"),
        scenario.param("pue"),
        scenario.param("utilisation"),
        scenario.param(costs.FLEET_AGE),
        Param(
            frame.PARAM,
            "str",
            frame.FLEET_VALUE,
            "-",
            "how an existing A100 fleet is valued: book (the book's rule) or market (second-hand price)",
            choices=frame.FLEET_VALUES,
        ),
        Param(
            "workload",
            "str",
            buying.WORKLOADS[0][0],
            "-",
            "a documents' workload whose run is priced on both generations (as on the buy-or-rent page)",
            choices=tuple(key for key, _, _ in buying.WORKLOADS),
        ),
        Param("mc_samples", "int", 20_000, "draws", "Monte Carlo draws for the page's 90% intervals", 1000, 200_000),
        Param("seed", "int", 2026, "-", "seed of the page's Monte Carlo draws", 0, 2**31 - 1),
    ),
)

# Every assumption the chapter's quantities read: drawn together for the page's intervals.
DRAWN = (
    generations.SPEEDUP,
    generations.OLD_MFU,
    "utilisation",
    "interruptions_per_gpu_year",
    "job_gpus",
    "checkpoint_write_s",
    "restart_s",
    "tokens_per_param",
    costs.LIST_PRICE,
    costs.FLEET_AGE,
    *(costs.server_name(g) for g in GENERATIONS),
    *(costs.rent_name(g) for g in GENERATIONS),
    "rent_a100_china_cny_per_gpu_hour",
    "electricity_usd_per_kwh",
    "pue",
    "hosting_usd_per_kw_month",
    "server_power_overhead",
    "network_storage_fraction",
    "rental_overhead_fraction",
    "staff_usd_per_gpu_year",
    "usd_cny",
    "depreciation_years",
    "cost_of_capital",
)

# The claims each slider follows.
# (the yardstick of 001 §6 judges the same ratio as the TCO row, and 001 §6's payback is 000 §6's:
# each is left out to keep the page light)
SPEEDUP_SLIDER = ("000-3-table-tco", "000-6-payback-6-12-months")
PRICE_SLIDER = ("001-4-own-42k-vs-rent-80k", "000-6-payback-6-12-months")
SLIDERS = ((generations.SPEEDUP, SPEEDUP_SLIDER), ("server_b300_usd_per_gpu", PRICE_SLIDER))


@dataclass(frozen=True)
class Summary:
    """A quantity at the scenario's central values and its 90% interval over the scenario's ranges."""

    central: float
    low: float
    high: float

    @classmethod
    def of(cls, values: np.ndarray) -> Summary:
        """``values[0]`` central, ``values[1:]`` the draws."""
        lo, _, hi = uncertainty.interval(values[1:])
        return cls(float(values[0]), lo, hi)


@dataclass(frozen=True)
class Recommender:
    """Document 000's case (part 4), wiring."""

    gpus_before: float
    gpus_after: float
    days_before: float
    days_after: float
    runs_after: float
    gpu_days_before: float  # one full training
    gpu_days_after: float
    cut: float  # the stated cut (fraction)
    annual_saving_min_rmb: float
    cost_ratio: Summary  # the month's spend after / before at the case's stated runs (the check's value)
    need_price_ratio: float  # B300/A100 price per GPU-hour that makes the stated cut true
    price_ratio: Summary  # owned B300 / the firm's A100 (frame's valuation) price per GPU-hour
    at_scenario: Summary  # one run after / before at the scenario's speed-up
    saving_rmb_year: Summary  # twelve months of spend before less after (RMB; negative: no saving)
    used_after: float  # GPU-days the stated runs need each month after
    available_after: float  # GPU-days the B300 cluster has in a month
    runs_per_month_after: float  # back-to-back runs of the new length in an average month (named quantity)


@dataclass(frozen=True)
class CustomerService:
    """Document 001's case (part 4), wiring."""

    gpus: float
    years: float
    own_stated_rmb: float
    rent_stated_rmb: float
    own_rmb: Summary  # the owned B300s a month, all in (the check's value)
    rental_rmb: Summary  # the same count of A100s rented around the clock in China
    rental_gpus: Summary  # A100s the stated rental buys around the clock
    implied_price_usd: float  # B300 system price per GPU that makes the stated cost true
    capital_low_rmb: float  # the servers alone a month at the lowest public price
    price_low_usd: float
    price_high_usd: float


@dataclass(frozen=True)
class Result:
    """Everything the cost page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    inputs: pd.DataFrame
    stack: pd.DataFrame  # cost per GPU-hour by component and generation, display currency
    pflop_day: pd.DataFrame  # cost per useful PFLOP-day, display currency
    mfu: dict[str, float]
    tco_row_stated: tuple[float, float]  # 000 §3: B300's TCO as a share of A100's, as stated
    valuation: str  # how the firm's existing A100 fleet is valued (analyses/scenario/frame.py)
    same_task: Summary  # owned B300 / the existing A100 fleet's cost for the same task (000 §3)
    same_task_documents: tuple[float, float]  # the same at the documents' 3x and 2.5x
    bought_documents: tuple[float, float]  # owned B300/A100, both bought now, for the same task at the documents' 3x, 2.5x
    tco_price_ratio: Summary  # owned B300 / the existing A100 fleet's cost per GPU-hour (000 §3, §4)
    documents_speedup: tuple[float, float]
    price_ratio_owned: Summary
    price_ratio_rented: Summary
    recommender: Recommender
    recommender_readings: pd.DataFrame
    customer: CustomerService
    tornado: pd.DataFrame
    payback: pd.DataFrame
    payback_window: tuple[float, float]  # the documents' stated 6-12 months
    frame: tuple[frame.Choice, ...]  # every choice of the buyer's frame at this run
    export_controls: pd.DataFrame  # the US export rules on advanced GPUs to China (data/export_controls.csv)
    china_prices: pd.DataFrame  # the price rows that describe the Chinese market (data/prices.csv)
    run: pd.DataFrame  # one run of cfg.workload on OLD and NEW, rented and owned (buying.per_run, page currency)
    run_label: str
    training: pd.DataFrame
    several_million: tuple[float, float]  # 001 §0: the stated band (RMB)
    several_million_sizes: tuple[float, float]  # parameters whose compute costs the band's ends
    wasted_share: float
    idle_share: float
    busy_share: float  # a job's busy share (the registry's named quantity)
    goodput: float  # training goodput (the registry's named quantity)
    speedup: float  # the per-GPU speed-up of dense pretraining (the registry's named quantity)
    ledger: pd.DataFrame
    sliders: tuple[Slider, ...]

    @property
    def unit(self) -> str:
        """The display currency."""
        return self.cfg["currency"]

    def money(self, x: float, unit: str = "RMB", sig: int = 3) -> str:
        """An amount computed in ``unit`` (RMB or USD) in the page's currency, as prose writes it."""
        factor, _ = buying.rate_to(unit, self.unit, self.s)
        return amount(x * factor, self.unit, sig)

    def stated_money(self, x: float) -> str:
        """A document's stated amount (RMB): as the document writes it, or in USD when the page is."""
        return stated_amount(x) if self.unit == "RMB" else self.money(x, "RMB", 2)

    def verdict(self, claim_id: str) -> str:
        """The ledger's verdict of one claim of this chapter."""
        return str(self.ledger.set_index("id").loc[claim_id, "verdict"])


# --------------------------------------------------------------------------------------------
# compute
# --------------------------------------------------------------------------------------------


def draws(cfg: Config) -> dict[str, np.ndarray]:
    """The scenario at ``cfg``: element 0 the central values, the rest ``cfg.mc_samples`` joint draws."""
    s = scenario.values(cfg)
    sample = scenario.sample(DRAWN, cfg["mc_samples"], cfg["seed"], cfg)
    return {k: np.concatenate([[s[k]], v]) for k, v in sample.items()}


def inputs_table(cfg: Config) -> pd.DataFrame:
    """The scenario's assumptions the chapter reads, with their ranges and sources (money in the page's
    currency)."""
    frame = scenario.table(cfg)
    frame = frame[frame["name"].isin(DRAWN)].reset_index(drop=True)
    return buying.table_in_currency(frame, cfg["currency"], scenario.values(cfg))


def stack_table(s: Mapping[str, float], k: float) -> pd.DataFrame:
    """Owned cost per GPU-hour by component and generation (central), with the rent, times ``k``."""
    rows = []
    for gpu in GENERATIONS:
        owned = costs.owned(s, gpu)
        row = {"gpu": gpu} | {c: k * float(getattr(owned, c)) for c in tco.COMPONENTS}
        row["owned total"] = k * float(owned.total)
        row["rented (incl. storage/network)"] = k * float(costs.rented(s, gpu))
        rows.append(row)
    return pd.DataFrame(rows)


def _shown(x: float) -> float:
    """A table cell as the page shows it: three significant figures (principle 9: round what is shown)."""
    return round_sig(x, 3)


def _summary_rows(items: Mapping[str, np.ndarray], k: np.ndarray | float, key: str) -> pd.DataFrame:
    rows = []
    for name, values in items.items():
        sm = Summary.of(np.asarray(values) * k)
        rows.append({key: name, "central": _shown(sm.central), "5%": _shown(sm.low), "95%": _shown(sm.high)})
    return pd.DataFrame(rows)


def _recommender(b: Mapping[str, np.ndarray], valuation: str) -> tuple[Recommender, pd.DataFrame]:
    r = cases.recommender()
    before, after = wiring.recommender_gpu_days()
    month_before, month_after = wiring.recommender_monthly_gpu_days()
    other = next(v for v in frame.FLEET_VALUES if v != valuation)
    basis = costs.fleet_basis(valuation)
    price = costs.price_ratio(b, "owned", basis)
    case = Recommender(
        gpus_before=r.gpus_before,
        gpus_after=r.gpus_after,
        days_before=r.days_before,
        days_after=r.days_after,
        runs_after=r.runs_after,
        gpu_days_before=before,
        gpu_days_after=after,
        cut=1 - r.cost_ratio,
        annual_saving_min_rmb=r.annual_saving_min_rmb,
        cost_ratio=Summary.of(wiring.recommender_cost_ratio(b, valuation)),
        need_price_ratio=float(tco.implied_price_ratio(r.cost_ratio, month_before, month_after)),
        price_ratio=Summary.of(price),
        at_scenario=Summary.of(costs.same_task_ratio(b, "owned", workload="recommender", old_basis=basis)),
        saving_rmb_year=Summary.of(wiring.recommender_annual_saving_rmb(b, valuation)),
        used_after=r.runs_after * after,
        available_after=r.gpus_after * HOURS_PER_MONTH / HOURS_PER_DAY,
        runs_per_month_after=float(operations.runs_per_month(None, r.days_after)),
    )
    words = {"book": f"{OLD}s at book value", "market": f"{OLD}s at today's second-hand price"}
    readings = _summary_rows(
        {
            f"the month's stated runs, {words[valuation]} (the ledger's reading)": wiring.recommender_cost_ratio(b, valuation),
            f"the month's stated runs, {words[other]}": wiring.recommender_cost_ratio(b, other),
            f"each fleet's every hour ({stated(r.gpus_before)} {OLD} vs {stated(r.gpus_after)} {NEW}), {words[valuation]}": (
                wiring.recommender_fleet_ratio(b, valuation)
            ),
            "one run at the scenario's speed-up instead of the case's days": costs.same_task_ratio(
                b, "owned", workload="recommender", old_basis=basis
            ),
        },
        1.0,
        "reading",
    )
    return case, readings


def _customer(b: Mapping[str, np.ndarray], cfg: Config) -> CustomerService:
    c = cases.customer_service()
    r = scenario.ranges(cfg)["server_b300_usd_per_gpu"]
    hour_cny = costs.old_hour_cost(b, "rent in China") * b["usd_cny"] * HOURS_PER_MONTH
    return CustomerService(
        gpus=c.gpus,
        years=c.depreciation_years,
        own_stated_rmb=c.own_rmb_per_month,
        rent_stated_rmb=c.rent_rmb_per_month,
        own_rmb=Summary.of(wiring.own_rmb(b)),
        rental_rmb=Summary.of(wiring.rental_rmb(b)),
        rental_gpus=Summary.of(c.rent_rmb_per_month / hour_cny),
        implied_price_usd=float(wiring.own_implied_price(b)[0]),
        capital_low_rmb=c.gpus * r.low * float(b["usd_cny"][0]) / (12 * c.depreciation_years),
        price_low_usd=r.low,
        price_high_usd=r.high,
    )


def tornado_table(cfg: Config) -> pd.DataFrame:
    """What moves document 001's owned monthly cost (RMB) most: each input at its 5th and 95th percentile."""
    s = scenario.values(cfg)
    ranges = {k: v for k, v in scenario.ranges(cfg).items() if k in DRAWN and not v.degenerate}
    case = cases.customer_service()
    frame = uncertainty.tornado(lambda **v: wiring.own_rmb(s | v, case), ranges)
    frame = frame[frame["swing"] > 0].copy()
    frame["input"] = frame["input"].map(lambda n: scenario.assumption(n).label)
    return frame.reset_index(drop=True)


def payback_cases(valuation: str = frame.FLEET_VALUE) -> dict[str, Callable[[Mapping[str, Any]], np.ndarray]]:
    """Payback (months) of one bought B300 doing the same work as the baseline, by case: each document's
    status quo (:func:`analyses.scenario.frame.status_quo`), an owned fleet at ``valuation``, and the rest."""
    lo, hi = wiring.documents_speedup()
    own = wiring.payback_baseline("000", valuation)
    other = next(v for v in frame.FLEET_VALUES if v != valuation)
    words = {"book": "at book value", "market": "at market value"}
    return {
        f"000: own {OLD}s {words[valuation]}": lambda b: wiring.payback_value(b, own),
        f"000: own {OLD}s {words[other]}": lambda b: wiring.payback_value(b, wiring.payback_baseline("000", other)),
        f"001: {OLD}s rented in China": lambda b: wiring.payback_value(
            b, wiring.payback_baseline("001"), workload="finetune"
        ),
        f"vs rent {OLD} at a neocloud, scenario speed-up": lambda b: wiring.payback_value(b, "rent"),
        f"vs rent {OLD} in China, documents' {stated(hi)}×": lambda b: wiring.payback_value(b, "rent in China", hi),
        f"vs rent {OLD} in China, documents' {stated(lo)}×": lambda b: wiring.payback_value(b, "rent in China", lo),
    }


def _payback(b: Mapping[str, np.ndarray], valuation: str) -> pd.DataFrame:
    _, high = cases.stated_payback_months()
    rows = []
    for name, fn in payback_cases(valuation).items():
        values = np.broadcast_to(fn(b), b["usd_cny"].shape)
        sm = Summary.of(values)
        rows.append(
            {
                "case": name,
                "central": sm.central,
                "5%": sm.low,
                "95%": sm.high,
                f"P(within {stated(high)} months)": float(np.mean(values[1:] <= high)),
            }
        )
    return pd.DataFrame(rows)


RUN_PRECISION = "bf16"  # a run's time on both generations: the planner's convention (buying.per_run)


def run_table(cfg: Config, s: Mapping[str, float]) -> tuple[pd.DataFrame, str]:
    """One run of the chapter's workload on :data:`OLD` and :data:`NEW`, rented and owned: the figure
    the buy-or-rent page and the planner give (:func:`analyses.scenario.buying.buy_or_rent`), with its
    money in the page's currency, and the workload's label."""
    w = next(w for w in buying.documents_workloads(s) if w.key == cfg["workload"])
    frame = buying.buy_or_rent([w], s, [OLD, NEW], RUN_PRECISION, mc_samples=cfg["mc_samples"], seed=cfg["seed"])
    out = frame[["gpu", "basis", "n_gpus", "days", "days_lo", "days_hi", "meets_deadline", "cheapest"]].copy()
    for col in ("cost_usd", "cost_usd_lo", "cost_usd_hi"):
        out[col.replace("_usd", "")] = buying.in_currency(frame[col], cfg["currency"], s)
    return out, w.label


def _training(b: Mapping[str, np.ndarray], currency: str) -> pd.DataFrame:
    """The check of "several million" (001 §0): the compute of pretraining the sizes its reading takes,
    on owned old-generation GPUs, by the closed form (6·N·D at the scenario's MFU and goodput, no
    deadline), in ``currency``."""
    rows = []
    for n in wiring.training_sizes():
        usd = costs.training_cost(b, n, OLD, "owned")
        sm = Summary.of(usd * b["usd_cny"] if currency == "RMB" else usd)
        rows.append(
            {
                "model": f"{stated(n / 1e9)}B",
                f"{OLD}-hours": _shown(costs.training_hours(b, n, OLD)[0]),
                f"cost ({currency})": _shown(sm.central),
                "5%": _shown(sm.low),
                "95%": _shown(sm.high),
            }
        )
    return pd.DataFrame(rows)


def compute(cfg: Config) -> Result:
    """Every table, figure input and number of the page at ``cfg`` (one pass, one Monte Carlo sample)."""
    s = scenario.values(cfg)
    b = draws(cfg)
    k = b["usd_cny"] if cfg["currency"] == "RMB" else 1.0
    pfd = {f"{gpu} {mode}": costs.pflop_day_cost(b, gpu, mode) for gpu in (OLD, NEW) for mode in ("owned", "rented")}
    lo, hi = wiring.documents_speedup()
    valuation = frame.fleet_value(cfg)
    basis = costs.fleet_basis(valuation)
    recommender, readings = _recommender(b, valuation)
    run, run_label = run_table(cfg, s)
    return Result(
        cfg=cfg,
        s=s,
        inputs=inputs_table(cfg),
        stack=stack_table(s, s["usd_cny"] if cfg["currency"] == "RMB" else 1.0),
        pflop_day=_summary_rows(pfd, k, "option"),
        mfu={gpu: float(generations.mfu(s, gpu)) for gpu in (OLD, NEW)},
        tco_row_stated=wiring.tco_row_stated(),
        valuation=valuation,
        same_task=Summary.of(costs.same_task_ratio(b, "owned", old_basis=basis)),
        same_task_documents=(
            float(costs.same_task_ratio(s, "owned", hi, old_basis=basis)),
            float(costs.same_task_ratio(s, "owned", lo, old_basis=basis)),
        ),
        bought_documents=(float(costs.same_task_ratio(s, "owned", hi)), float(costs.same_task_ratio(s, "owned", lo))),
        tco_price_ratio=Summary.of(costs.price_ratio(b, "owned", basis)),
        documents_speedup=(lo, hi),
        price_ratio_owned=Summary.of(costs.price_ratio(b, "owned")),
        price_ratio_rented=Summary.of(costs.price_ratio(b, "rented")),
        recommender=recommender,
        recommender_readings=readings,
        customer=_customer(b, cfg),
        tornado=tornado_table(cfg),
        payback=_payback(b, valuation),
        payback_window=cases.stated_payback_months(),
        frame=frame.all_choices(cfg),
        export_controls=wiring.export_controls(),
        china_prices=wiring.china_prices(),
        run=run,
        run_label=run_label,
        training=_training(b, cfg["currency"]),
        several_million=wiring.several_million_band(),
        several_million_sizes=tuple(float(n) for n in wiring.band_sizes(s)),
        wasted_share=float(costs.wasted_share(s)),
        idle_share=float(costs.idle_share(s)),
        busy_share=float(operations.busy_share(s)),
        goodput=float(operations.goodput(s)),
        speedup=float(generations.speedup(s, "pretrain")),
        ledger=ledger.ledger(SLUG, cfg),
        sliders=tuple(ledger.slider(name, ids, {SLUG: cfg}) for name, ids in SLIDERS),
    )
