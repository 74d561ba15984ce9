"""Chapter ``buy-or-rent``: what the documents' workloads, and a reader's, take and cost on each GPU
generation, rented and owned.

No claims of its own. For the documents' workloads (:func:`analyses.scenario.buying.documents_workloads`:
a 13B pretraining run in about three weeks, a 100B run, the monthly 13B fine-tune of document 001's
case, each a preset of ``data/plan_presets.csv``) and the reader's run set by the parameters, it calls
:func:`analyses.scenario.buying.buy_or_rent`, the one function the cost chapter and the planner call for
the same figure, and shows its answers in the reader's currency: time and cost per run with 90% ranges,
the cheapest generation of each basis, the utilisation above which owning beats renting, and the
input each answer is most sensitive to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from analyses import data, scenario
from analyses.chapters import ledger
from analyses.scenario import buying, calculator, costs
from analyses.scenario.params import ChapterSpec, Config, Param
from analyses.verdicts import robustness

SLUG = "buy-or-rent"


def _prices() -> tuple[Param, ...]:
    """The system price and neocloud rent of every generation the page plans, as parameters."""
    names = scenario.assumptions()
    wanted = [n for g in buying.gpus() for n in (costs.server_name(g), costs.rent_name(g))]
    return tuple(scenario.param(n) for n in wanted if n in names)


SPEC = ChapterSpec(
    slug=SLUG,
    title="What to buy or rent",
    params=(
        *buying.currency_params(),
        Param("n_params", "float", 7e9, "parameters", "your run: parameters of the model", 1e8, 2e12),
        Param(
            "tokens",
            "float",
            0.0,
            "tokens",
            "your run: training tokens (0: tokens per parameter × parameters)",
            0,
            1e14,
        ),
        Param("deadline_days", "float", 30.0, "days", "your run: wall-clock days it must finish in", 0.1, 365),
        Param(
            "precision",
            "str",
            "bf16",
            "-",
            "training precision on GPUs that offer it (A100 trains in bf16 either way)",
            choices=buying.PRECISIONS,
        ),
        Param("max_gpus", "int", 4096, "GPUs", "largest cluster to consider", 8, 16_384),
        scenario.param("tokens_per_param"),
        scenario.param("depreciation_years"),
        scenario.param("cost_of_capital"),
        scenario.param("electricity_usd_per_kwh"),
        *_prices(),
        Param("mc_samples", "int", 20_000, "draws", "Monte Carlo draws for the 90% intervals", 1000, 200_000),
        Param("seed", "int", 2026, "-", "Monte Carlo seed", 0, 2**31 - 1),
    ),
)

# The money columns of buying.buy_or_rent, by their name in the page's currency
MONEY = {
    "cost": "cost_usd",
    "cost_lo": "cost_usd_lo",
    "cost_hi": "cost_usd_hi",
    "sensitive_lo": "sensitive_lo_usd",
    "sensitive_hi": "sensitive_hi_usd",
    "per_gpu_hour": "usd_per_gpu_hour",
}


@dataclass(frozen=True)
class Result:
    """Everything the buy-or-rent page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    workloads: tuple[buying.Workload, ...]  # the documents' workloads, then the reader's
    runs: pd.DataFrame  # buying.buy_or_rent's rows with the money columns in the page's currency
    not_covered: tuple[str, ...]  # generations of the documents' span the planner cannot price yet
    rate: scenario.Assumption  # the exchange rate, with its source and date
    related: pd.DataFrame  # ledger rows of the claims the documents' workloads replay
    # What the page's calculator needs from the chapters, as data: the bounds of the reader's run (this
    # chapter's parameters) and the ledger's assessment of each case it replays (scenario.calculator.CASES)
    bounds: dict[str, Param]
    cases: dict[str, robustness.Assessment]

    @property
    def currency(self) -> str:
        return self.cfg["currency"]

    def of(self, workload: str) -> pd.DataFrame:
        """The rows of one workload."""
        return self.runs[self.runs["workload"] == workload].reset_index(drop=True)

    def cheapest(self, workload: str, basis: str) -> pd.Series | None:
        """The cheapest row of ``workload`` on ``basis`` (None when no generation fits)."""
        rows = self.of(workload)
        rows = rows[(rows["basis"] == basis) & rows["cheapest"]]
        return None if rows.empty else rows.iloc[0]

    def answer(self, workload: str) -> Answer | None:
        """The page's answer for ``workload`` (None when no generation fits): the cheapest rented and
        owned rows, and the rented row of the owned answer's GPU (what owning is weighed against)."""
        rented, owned = self.cheapest(workload, "rented"), self.cheapest(workload, "owned")
        if rented is None or owned is None:
            return None
        rows = self.of(workload)
        pair = rows[(rows["gpu"] == owned["gpu"]) & (rows["basis"] == "rented")].iloc[0]
        return Answer(rented, owned, pair)


class Answer(NamedTuple):
    """One workload's answer: the cheapest rented and owned rows, and the same GPUs rented."""

    rented: pd.Series
    owned: pd.Series
    owned_rented: pd.Series


def in_page_currency(frame: pd.DataFrame, cfg: Config, s: dict[str, float]) -> pd.DataFrame:
    """``frame`` (:func:`analyses.scenario.buying.buy_or_rent`) with its money columns in ``cfg.currency``
    (named without ``_usd``)."""
    out = frame.drop(columns=list(MONEY.values()))
    for col, usd in MONEY.items():
        out[col] = buying.in_currency(frame[usd].astype(float), cfg["currency"], s)
    return out


def workloads(cfg: Config, s: dict[str, float]) -> tuple[buying.Workload, ...]:
    """The documents' workloads and the reader's."""
    mine = buying.reader_workload(cfg["n_params"], cfg["tokens"], cfg["deadline_days"], s)
    return (*buying.documents_workloads(s), mine)


def compute(cfg: Config) -> Result:
    """Every workload on every generation, rented and owned, once."""
    s = scenario.values(cfg)
    ws = workloads(cfg, s)
    frame = buying.buy_or_rent(
        ws, s, precision=cfg["precision"], max_gpus=cfg["max_gpus"], mc_samples=cfg["mc_samples"], seed=cfg["seed"]
    )
    claims = [c for w in ws for c in w.claims]
    return Result(
        cfg=cfg,
        s=s,
        workloads=ws,
        runs=in_page_currency(frame, cfg, s),
        not_covered=tuple(buying.not_covered()),
        rate=scenario.assumption("usd_cny"),
        related=ledger.ledger(ids=list(dict.fromkeys(claims))),
        bounds={p.name: p for p in SPEC.params if p.name in calculator.WORKLOAD},
        cases={c.claim: ledger.evaluate(data.claim(c.claim), robust=False) for c in calculator.CASES},
    )
