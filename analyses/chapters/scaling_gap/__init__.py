"""Chapter ``scaling-gap``: how fast models, training compute and per-GPU FLOP/s really grow.

Checks document 000's opening claims (parts 0 and 1): "10x model vs 2x hardware" (a year in part 0,
per 18 months in part 1), the table of model generations, and "a 100B-parameter model would keep an
ordinary server busy for several hundred years". :func:`compute` fits the wiring, builds the tables
and runs the checks once; :mod:`.figures` and :mod:`.text` only read its :class:`Result`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyses import data, scenario, units
from analyses.chapters import ledger
from analyses.chapters.scaling_gap import checks, wiring
from analyses.models import flops, growth
from analyses.scenario.params import ChapterSpec, Config, Param, ParamError, Rule
from analyses.verdicts.sweeps import Slider

SLUG = wiring.SLUG
CENTURIES = "000-0-centuries"
PER_YEAR, PER_18_MONTHS = "000-0-growth-10x-per-year", "000-1-param-growth-18mo"
SLIDER_CLAIMS = (CENTURIES,)  # the claims whose verdict reads tokens per parameter


def _server_names() -> list[str]:
    return list(data.table("reference_servers")["name"])


def _window_problem(cfg: Config) -> tuple[tuple[str, ...], str] | str | None:
    """Why the fitting window cannot be used: each trend needs enough models and GPUs to fit."""
    if cfg["window_end"] < cfg["window_start"]:
        return ("window_start", "window_end"), "window_end must not be before window_start"
    try:
        wiring.fits(cfg)
    except ParamError as err:
        return str(err).split(": ", 1)[1]
    return None


SPEC = ChapterSpec(
    slug=SLUG,
    title="The scaling gap",
    params=(
        Param("window_start", "int", 2017, "year", "first year of the fitting window (inclusive)", 2010, 2024),
        Param("window_end", "int", 2025, "year", "last year of the fitting window (inclusive)", 2013, 2026),
        Param("confidence", "float", 0.9, "fraction", "two-sided confidence level of fitted rates", 0.5, 0.99),
        Param(
            "model_set",
            "str",
            "all",
            "-",
            "which models to fit: every notable model, or only those that set a new record",
            choices=("all", "frontier"),
        ),
        Param(
            "gpu_basis",
            "str",
            "tensor16",
            "-",
            "per-GPU FLOP/s to fit: FP32, best 16-bit tensor (BF16/FP16), or lowest precision offered",
            choices=growth.GPU_BASES,
        ),
        scenario.param("tokens_per_param"),
        Param("server", "str", "cpu-2s-epyc-7763", "-", "the 'ordinary server'", choices=_server_names),
        scenario.param("cpu_sustained_share"),
    ),
    rules=(Rule(("window_start", "window_end", "model_set", "gpu_basis"), lambda c: _window_problem(c)),),
)


@dataclass(frozen=True)
class Centuries:
    """A 100B model on one server: parameters, training FLOP, the server's peak and sustained share, years."""

    params: float
    flop: float
    server_flop_per_s: float
    share: float
    years: float
    gpt3_tokens_per_param: float
    gpt3_years: float

    @property
    def server_tflop_per_s(self) -> float:
        return self.server_flop_per_s / units.TERA


@dataclass(frozen=True)
class Result:
    """Everything the scaling-gap page shows, computed once."""

    cfg: Config
    s: dict[str, float]
    fits: dict[str, growth.GrowthFit]
    rates: pd.DataFrame
    window_sensitivity: pd.DataFrame
    published: pd.DataFrame
    epoch: dict[str, float]
    model_points: pd.DataFrame
    gpu_points: pd.DataFrame
    generation: pd.DataFrame
    centuries: Centuries
    server_years: pd.DataFrame
    other_windows: dict[tuple[int, int], dict[str, tuple[float, float, float]]]  # the growth rows' other readings
    ledger: pd.DataFrame
    sliders: tuple[Slider, ...]

    def factor(self, quantity: str, months: float) -> tuple[float, float, float]:
        """Fitted growth of ``quantity`` over ``months``: (central, low, high)."""
        return self.fits[quantity].factor(months)


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def rates_table(fitted: dict[str, growth.GrowthFit]) -> pd.DataFrame:
    """Fitted growth per year and per 18 months with intervals, window and point count."""
    rows = []
    for name, fit in fitted.items():
        y, y_lo, y_hi = fit.factor(12)
        m, m_lo, m_hi = fit.factor(18)
        rows.append(
            {
                "quantity": name,
                "points": fit.n_points,
                "window": f"{fit.start_year:.1f}-{fit.end_year:.1f}",
                "x per year": y,
                "x per year (CI)": f"{y_lo:.2f}-{y_hi:.2f}",
                "x per 18 months": m,
                "x per 18 months (CI)": f"{m_lo:.2f}-{m_hi:.2f}",
                "doubling (months)": fit.doubling_months,
            }
        )
    return pd.DataFrame(rows)


SENSITIVITY_STARTS = (2015, 2017, 2019, 2021)  # window starts refitted (end year from the parameters)


def window_sensitivity(cfg: Config) -> pd.DataFrame:
    """Growth per 18 months for several window starts (window end from ``cfg``)."""
    rows = []
    for start in SENSITIVITY_STARTS:
        if start >= cfg["window_end"] - 1:
            continue
        try:
            fitted = wiring.fits(dict(cfg) | {"window_start": start})
        except ValueError:
            continue
        for name, fit in fitted.items():
            central, low, high = fit.factor(18)
            rows.append({"window start": start, "quantity": name, "x per 18 months": central, "low": low, "high": high})
    return pd.DataFrame(rows, columns=["window start", "quantity", "x per 18 months", "low", "high"])


def published_trends() -> pd.DataFrame:
    """Epoch AI and other published rates, with their windows and sources."""
    return data.growth_trends()[
        ["quantity", "rate_x_per_year", "rate_low_x_per_year", "rate_high_x_per_year", "window", "source"]
    ]


def epoch_summary() -> dict[str, float]:
    """Epoch AI's summary rates (x per year): training compute (low, high) and 16-bit hardware FLOP/s."""
    t = data.growth_trends()
    compute = t[(t["quantity"] == "training_compute") & (t["source"] == "epoch-frontier-compute-2024")]
    compute = compute[compute["rate_low_x_per_year"].notna()].iloc[0]
    hardware = t[t["quantity"] == "gpu_flops_tensor16"].iloc[0]
    return {
        "compute_low": float(compute["rate_low_x_per_year"]),
        "compute_high": float(compute["rate_high_x_per_year"]),
        "hardware": float(hardware["rate_x_per_year"]),
    }


def generation_table(s: dict[str, float]) -> pd.DataFrame:
    """Each generation-table row: stated compute range against recomputed compute, stated hardware
    against the hardware the model trained on and whether the stated one was current that year."""
    rows = []
    for claim_id, model in wiring.GENERATION_ROWS.items():
        claim = data.claim(claim_id)
        stated = wiring.stated_compute(claim)
        if model is None:
            peers = wiring.class_models(claim)
            name, actual, year = f"industry 100B-1T ({len(peers)} models)", "-", claim.value("year")
            real_lo, real_hi = peers["compute_flop"].min(), peers["compute_flop"].max()
        else:
            row = data.model(model)
            name, actual, year = model, wiring.trained_on(model), row["year"]
            real_lo = real_hi = wiring.model_compute(model)
        rows.append(
            {
                "claim": claim_id,
                "model": name,
                "year stated": int(claim.value("year")),
                "year actual": int(year),
                "stated FLOP low": stated.lo,
                "stated FLOP high": stated.hi,
                "recomputed FLOP low": float(real_lo),
                "recomputed FLOP high": float(real_hi),
                "hardware stated": "/".join(wiring.stated_hardware(claim)) or "-",
                "current that year": "/".join(wiring.current_hardware(claim)) or "none",
                "trained on": actual,
            }
        )
    return pd.DataFrame(rows)


SERVER_GRID = np.geomspace(1, 100, 25)  # tokens per parameter of the server-years chart


def server_years_grid(s: dict[str, float], params: float) -> pd.DataFrame:
    """Years one server needs for a ``params`` model, per reference server and tokens per parameter."""
    frames = [
        pd.DataFrame(
            {
                "server": name,
                "tokens per parameter": SERVER_GRID,
                "years": wiring.server_years(s, params, name, SERVER_GRID),
            }
        )
        for name in _server_names()
    ]
    return pd.concat(frames, ignore_index=True)


def centuries(s: dict[str, float], cfg: Config) -> Centuries:
    """The 100B model on the chapter's server, and a GPT-3-style token budget for contrast."""
    n = data.claim(CENTURIES).value("params")
    gpt3 = data.model(wiring.GENERATION_ROWS["000-1-gen-2020-gpt3"])
    gpt3_tpp = float(gpt3["training_tokens"] / gpt3["params"])
    server = cfg["server"]
    return Centuries(
        params=n,
        flop=float(flops.training_flops(n, n * s["tokens_per_param"])),
        server_flop_per_s=wiring.server_flop_per_s(server),
        share=float(wiring.server_share(s, server)),
        years=float(wiring.server_years(s, n, server)),
        gpt3_tokens_per_param=gpt3_tpp,
        gpt3_years=float(wiring.server_years(s, n, server, gpt3_tpp)),
    )


def compute(cfg: Config) -> Result:
    """Fit, tabulate and judge everything the page shows, once."""
    s = scenario.values(cfg)
    fitted = wiring.fits(cfg)
    return Result(
        cfg=cfg,
        s=s,
        fits=fitted,
        rates=rates_table(fitted),
        window_sensitivity=window_sensitivity(cfg),
        published=published_trends(),
        epoch=epoch_summary(),
        model_points=wiring.model_points(cfg),
        gpu_points=wiring.gpu_points(cfg),
        generation=generation_table(s),
        centuries=centuries(s, cfg),
        server_years=server_years_grid(s, data.claim(CENTURIES).value("params")),
        other_windows={
            w: {q: f.factor(12) for q, f in wiring.fits(dict(cfg) | {"window_start": w[0], "window_end": w[1]}).items()}
            for w in checks.OTHER_WINDOWS
        },
        ledger=ledger.ledger(SLUG, cfg),
        sliders=(ledger.slider("tokens_per_param", SLIDER_CLAIMS, {SLUG: cfg}),),
    )


__all__ = ["SPEC", "Result", "checks", "compute"]
