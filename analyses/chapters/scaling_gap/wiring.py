"""What the scaling-gap chapter fits and compares: growth trends, the generation table, the servers.

The fits depend only on the view parameters (window, confidence level, model set, GPU basis), so
they are computed once per combination; the generation table's stated compute and hardware are
read from its claims; the reference servers' peak FLOP/s from ``data/reference_servers.csv``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import data, units
from analyses.models import flops, growth
from analyses.scenario.generations import OLD, OLD_MFU, OLD_PRECISION
from analyses.scenario.params import ParamError
from analyses.verdicts import Interval, between, rounded

SLUG = "scaling-gap"
QUANTITIES = ("parameters", "training compute", "per-GPU FLOP/s")


# --------------------------------------------------------------------------------------------
# Growth wiring
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def _fits(key: tuple[Any, ...], data_dir: str) -> dict[str, growth.GrowthFit]:
    start, end, level, model_set, basis = key
    models = growth.model_points(data.models(), start, end)
    gpus = growth.gpu_points(data.gpus(), basis, start, end)
    record = model_set == "frontier"
    p = models[models["params_record"]] if record else models
    c = models[models["compute_flop"].notna()]
    c = c[c["compute_record"]] if record else c
    return {
        "parameters": growth.fit_exponential(p["t"], p["params"], level),
        "training compute": growth.fit_exponential(c["t"], c["compute_flop"], level),
        "per-GPU FLOP/s": growth.fit_exponential(gpus["t"], gpus["flop_per_s"], level),
    }


def fit_key(cfg: Mapping[str, Any]) -> tuple[Any, ...]:
    """The view parameters a fit depends on."""
    return (cfg["window_start"], cfg["window_end"], cfg["confidence"], cfg["model_set"], cfg["gpu_basis"])


def fits(cfg: Mapping[str, Any]) -> dict[str, growth.GrowthFit]:
    """Exponential wiring of parameters, training compute and per-GPU FLOP/s in the window (one fit
    per combination of the view parameters); :class:`ParamError` when the window is too short."""
    if cfg["window_end"] <= cfg["window_start"]:
        raise ParamError(
            SLUG, "window_end", f"expected a year after window_start ({cfg['window_start']}), got {cfg['window_end']}"
        )
    try:
        return _fits(fit_key(cfg), str(data.DATA_DIR))
    except ValueError as err:
        raise ParamError(
            SLUG,
            "window_start",
            f"expected a window with at least three models and three GPUs, got {cfg['window_start']}-"
            f"{cfg['window_end']} ({err})",
        ) from None


def model_points(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """The models behind the fits (:func:`analyses.models.growth.model_points`)."""
    return growth.model_points(data.models(), cfg["window_start"], cfg["window_end"])


def gpu_points(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """The GPUs behind the fits (:func:`analyses.models.growth.gpu_points`)."""
    return growth.gpu_points(data.gpus(), cfg["gpu_basis"], cfg["window_start"], cfg["window_end"])


# --------------------------------------------------------------------------------------------
# The generation table (document 000, part 1)
# --------------------------------------------------------------------------------------------

# Which row of data/models.csv each generation-table row names (the document's own labels).
GENERATION_ROWS = {
    "000-1-gen-2018-bert-base": "BERT-base",
    "000-1-gen-2020-gpt3": "GPT-3 175B",
    "000-1-gen-2023-llama-70b": "Llama 2 70B",
    "000-1-gen-2025-industry-models": None,
}
RATE_UNITS = {"tflops": units.TERA, "pflops": units.PETA}
DURATION_UNITS = {
    "days": units.SECONDS_PER_DAY,
    "weeks": units.DAYS_PER_WEEK * units.SECONDS_PER_DAY,
    "months": units.DAYS_PER_MONTH * units.SECONDS_PER_DAY,
}


def _one_figure(x: float) -> Interval:
    """A single round figure ("百", a hundred) as the interval its first significant figure covers."""
    return rounded(x, 10.0 ** math.floor(math.log10(abs(x))))


def stated_range(values: Mapping[str, float], stem: str, scales: Mapping[str, float], strict: bool = False) -> Interval:
    """``<stem>_<unit>`` or ``<stem>_<unit>_low/high`` of a claim in SI units. A single figure is read
    as the interval its rounding covers, or exactly when ``strict``."""
    for unit, scale in scales.items():
        key = f"{stem}_{unit}"
        if key in values:
            iv = Interval(values[key], values[key]) if strict else _one_figure(values[key])
            return between(iv.lo * scale, iv.hi * scale)
        if f"{key}_low" in values:
            return between(values[f"{key}_low"] * scale, values[f"{key}_high"] * scale)
    raise KeyError(f"claim states no {stem}")


def stated_compute(claim: data.Claim, strict: bool = False) -> Interval:
    """FLOP implied by a row's 'rate × duration' descriptor (rate interval × duration interval)."""
    rate = stated_range(claim.values, "compute_rate", RATE_UNITS, strict)
    duration = stated_range(claim.values, "duration", DURATION_UNITS, strict)
    return between(rate.lo * duration.lo, rate.hi * duration.hi)


def class_models(claim: data.Claim) -> pd.DataFrame:
    """Models of ``data/models.csv`` released from the row's year with total parameters in its range (each
    end read as its rounding: "万亿" covers Kimi K2's 1.04T), with their training compute (reported, else
    ``6·N_active·D``)."""
    year = int(claim.value("year"))
    models = growth.model_points(data.models(), year, max(year, int(data.models()["year"].max())))
    low, high = _one_figure(claim.value("params_low")).lo, _one_figure(claim.value("params_high")).hi
    size = models["params"].between(low, high)
    return models[size & models["compute_flop"].notna()].reset_index(drop=True)


def stated_hardware(claim: data.Claim) -> list[str]:
    """GPU names the row states (parsed from its ``stated`` text)."""
    match = re.search(r"hardware\s+'?([^';]+)", claim.stated)
    return re.findall(r"[A-Z]+\d+", match.group(1)) if match else []


def model_compute(name: str) -> float:
    """Training compute of a model of ``data/models.csv``: reported, else ``6·N·D``."""
    row = data.model(name)
    flop = row["training_flop"]
    if flop is None or np.isnan(flop):
        flop = float(flops.training_flops(row["params"], row["training_tokens"]))
    return float(flop)


def current_hardware(claim: data.Claim) -> list[str]:
    """The stated GPUs that were NVIDIA's newest or previous generation in the row's year."""
    year = int(claim.value("year"))
    gpus = data.gpus()
    return [g for g in stated_hardware(claim) if 0 <= growth.newer_generations(gpus, g, year) <= 1]


def trained_on(name: str) -> str:
    """The GPU a model was trained on (or its hardware in words where it is not an NVIDIA GPU)."""
    row = data.model(name)
    gpu = row["gpu"]
    return str(gpu) if isinstance(gpu, str) and gpu else str(row["hardware"])


# --------------------------------------------------------------------------------------------
# The ordinary server (document 000, part 0)
# --------------------------------------------------------------------------------------------


def server_row(name: str) -> dict[str, Any]:
    """One row of ``reference_servers`` as a dict."""
    servers = data.table("reference_servers")
    return servers[servers["name"] == name].iloc[0].to_dict()


def server_flop_per_s(name: str) -> float:
    """Peak FLOP/s of a reference server (CPU: sockets × cores × base clock × FLOP/cycle; GPU: n × peak)."""
    row = server_row(name)
    if row["kind"] == "cpu":
        per_core = row["clock_ghz"] * units.GIGA * row["flop_per_cycle_per_core"]
        return float(row["units"] * row["cores_per_socket"] * per_core)
    return float(row["units"] * data.gpu(row["gpu"]).peak_flops(row["precision"]))


def server_share(s: Mapping[str, Any], name: str) -> Any:
    """The scenario's sustained share of a server's peak: a CPU server's, or an A100 server's MFU."""
    row = server_row(name)
    if row["kind"] == "cpu":
        return s["cpu_sustained_share"]
    if (row["gpu"], row["precision"]) == (OLD, OLD_PRECISION):
        return s[OLD_MFU]
    raise ValueError(f"the scenario has no sustained share for server '{name}' ({row['gpu']} {row['precision']})")


def server_years(s: Mapping[str, Any], params: float, name: str, tokens_per_param: Any = None) -> Any:
    """Years one server needs to train ``params`` on ``tokens_per_param`` tokens each (the scenario's
    when None), at the scenario's sustained share of its peak."""
    tpp = s["tokens_per_param"] if tokens_per_param is None else tokens_per_param
    flop = flops.training_flops(params, params * np.asarray(tpp))
    return growth.years_of_compute(flop, server_flop_per_s(name), server_share(s, name))
