"""Chapter ``scaling-gap``: how fast models, training compute and per-GPU FLOP/s really grow.

Checks document 000's opening claims (parts 0 and 1): "10x model vs 2x hardware" (per year in
part 0, per 18 months in part 1), the table of model generations, and "a 100B-parameter model
would keep an ordinary server busy for centuries".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from analyses import data
from analyses.chapters.params import ChapterSpec, Config, Param, Rule
from analyses.models import growth
from analyses.site.notebook import fmt
from analyses.verdicts import Verdict, check

GPU_BASES = ("fp32", "tensor16", "lowest")


def _server_names() -> list[str]:
    return list(data.table("reference_servers")["name"])


SPEC = ChapterSpec(
    slug="scaling-gap",
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
            choices=GPU_BASES,
        ),
        Param("tokens_per_param", "float", 20.0, "tokens/parameter", "training tokens per parameter", 1, 1000),
        Param("server", "str", "cpu-2s-epyc-7763", "-", "the 'ordinary server'", choices=_server_names),
        Param("server_utilisation", "float", 0.5, "fraction", "share of the server's peak sustained", 0.01, 1.0),
    ),
    rules=(
        Rule(
            ("window_start", "window_end", "model_set", "gpu_basis"),
            lambda cfg: _window_problem(cfg),
        ),
    ),
)

MIN_FIT_POINTS = 3  # growth.fit_exponential: a trend with an interval needs 3 points in 2 or more years


def _window_problem(cfg: Config) -> tuple[tuple[str, ...], str] | str | None:
    """Why the fitting window cannot be used (None when every fit has enough points)."""
    if cfg["window_end"] < cfg["window_start"]:
        return ("window_start", "window_end"), "window_end must not be before window_start"
    short = [
        f"{name} has {len(t)} point(s) in {len(set(np.floor(t)))} year(s)"
        for name, (t, _) in fit_points(cfg).items()
        if len(t) < MIN_FIT_POINTS or len(set(t)) < 2
    ]
    if short:
        return (
            f"each trend needs at least {MIN_FIT_POINTS} points in 2 or more years to fit with an interval, "
            f"but in {cfg['window_start']}-{cfg['window_end']} {'; '.join(short)}; widen the window"
        )
    return None


# --------------------------------------------------------------------------------------------
# Data preparation
# --------------------------------------------------------------------------------------------


def decimal_year(dates: pd.Series) -> np.ndarray:
    """'2020-05' -> 2020.375 (mid-month); '2020' -> 2020.5."""
    out = []
    for text in dates.astype(str):
        parts = text.split("-")
        year = int(parts[0])
        month = int(parts[1]) if len(parts) > 1 else 7
        out.append(year + (month - 0.5) / 12)
    return np.array(out)


def model_points(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Models in the window with decimal year, params, compute and whether each set a record."""
    frame = data.models().copy()
    frame["t"] = decimal_year(frame["date"])
    flop = frame["training_flop"].to_numpy(dtype=float, copy=True)
    missing = np.isnan(flop)
    active = frame["active_params"].fillna(frame["params"]).to_numpy(dtype=float)
    flop[missing] = growth.training_flop(active[missing], frame["training_tokens"].to_numpy(dtype=float)[missing])
    frame["compute_flop"] = flop
    frame = frame[(frame["year"] >= cfg["window_start"]) & (frame["year"] <= cfg["window_end"])].copy()
    frame["params_record"] = growth.running_max_frontier(frame["t"], frame["params"])
    ok = frame["compute_flop"].notna()
    frame["compute_record"] = False
    frame.loc[ok, "compute_record"] = growth.running_max_frontier(frame.loc[ok, "t"], frame.loc[ok, "compute_flop"])
    return frame.reset_index(drop=True)


def gpu_points(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """GPUs launched in the window with the per-GPU dense FLOP/s of the chosen basis."""
    frame = data.gpus().copy()
    frame["t"] = decimal_year(frame["launch_date"])
    cols = {p: f"peak_tflops_dense_{p}" for p in data.PRECISIONS}
    if cfg["gpu_basis"] == "fp32":
        tflops = frame[cols["fp32"]]
    elif cfg["gpu_basis"] == "tensor16":
        tflops = frame[[cols["bf16"], cols["fp16"]]].max(axis=1)
    else:
        tflops = frame[list(cols.values())].max(axis=1)
    frame["flop_per_s"] = tflops * data.TERA
    frame = frame[(frame["launch_year"] >= cfg["window_start"]) & (frame["launch_year"] <= cfg["window_end"])]
    return frame[frame["flop_per_s"].notna()].reset_index(drop=True)


def fit_points(cfg: Mapping[str, Any]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The (decimal year, value) points each trend is fitted to: parameters, training compute, per-GPU FLOP/s."""
    models = model_points(cfg)
    gpus = gpu_points(cfg)
    record = cfg["model_set"] == "frontier"
    p = models[models["params_record"]] if record else models
    c = models[models["compute_flop"].notna()]
    c = c[c["compute_record"]] if record else c
    return {
        "parameters": (p["t"].to_numpy(float), p["params"].to_numpy(float)),
        "training compute": (c["t"].to_numpy(float), c["compute_flop"].to_numpy(float)),
        "per-GPU FLOP/s": (gpus["t"].to_numpy(float), gpus["flop_per_s"].to_numpy(float)),
    }


def fits(cfg: Mapping[str, Any]) -> dict[str, growth.GrowthFit]:
    """Fitted exponential trends for parameters, training compute and per-GPU FLOP/s."""
    return {name: growth.fit_exponential(t, y, cfg["confidence"]) for name, (t, y) in fit_points(cfg).items()}


def rates_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Fitted growth per year and per 18 months with intervals, window and point count."""
    rows = []
    for name, fit in fits(cfg).items():
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


def window_sensitivity(cfg: Mapping[str, Any], starts: tuple[int, ...] = (2015, 2017, 2019, 2021)) -> pd.DataFrame:
    """Growth per 18 months for several window starts (window end from ``cfg``)."""
    rows = []
    for start in starts:
        if start >= cfg["window_end"] - 1:
            continue
        sub = dict(cfg) | {"window_start": start}
        try:
            fitted = fits(sub)
        except ValueError:
            continue
        for name, fit in fitted.items():
            central, low, high = fit.factor(18)
            rows.append({"window start": start, "quantity": name, "x per 18 months": central, "low": low, "high": high})
    return pd.DataFrame(rows)


def published_trends() -> pd.DataFrame:
    """Epoch AI and other published rates, with their windows and sources."""
    return data.growth_trends()[
        ["quantity", "rate_x_per_year", "rate_low_x_per_year", "rate_high_x_per_year", "window", "source"]
    ]


# --------------------------------------------------------------------------------------------
# Charts
# --------------------------------------------------------------------------------------------


def scissors_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Log-scale growth since the window start: fitted trends (solid, points) vs stated rates (dashed)."""
    fitted = fits(cfg)
    start = float(cfg["window_start"])
    years = np.linspace(start, float(cfg["window_end"]) + 1, 30)
    lines, points = [], []
    for name, fit in fitted.items():
        base = fit.predict(start)
        lines.append(pd.DataFrame({"year": years, "growth": fit.predict(years) / base, "series": f"fitted: {name}"}))
    models, gpus = model_points(cfg), gpu_points(cfg)
    if cfg["model_set"] == "frontier":
        models = models[models["params_record"]]
    points.append(
        pd.DataFrame(
            {
                "year": models["t"],
                "growth": models["params"] / fitted["parameters"].predict(start),
                "series": "fitted: parameters",
                "label": models["name"],
            }
        )
    )
    points.append(
        pd.DataFrame(
            {
                "year": gpus["t"],
                "growth": gpus["flop_per_s"] / fitted["per-GPU FLOP/s"].predict(start),
                "series": "fitted: per-GPU FLOP/s",
                "label": gpus["name"],
            }
        )
    )
    claim_18 = data.claim("000-1-param-growth-18mo")
    months = claim_18.value("period_months")
    for key, label in (
        ("model_growth_x", "stated: model 10x / 18 months"),
        ("gpu_growth_x", "stated: GPU 2x / 18 months"),
    ):
        rate = claim_18.value(key)
        lines.append(pd.DataFrame({"year": years, "growth": rate ** ((years - start) * 12 / months), "series": label}))
    frame = pd.concat(lines, ignore_index=True)
    dots = pd.concat(points, ignore_index=True)
    colour = alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom", columns=2))
    base = alt.Chart(frame).encode(
        x=alt.X("year:Q", title="year", scale=alt.Scale(zero=False), axis=alt.Axis(format="d")),
        y=alt.Y("growth:Q", scale=alt.Scale(type="log"), title=f"growth since {int(start)} (x)"),
        color=colour,
        strokeDash=alt.condition("indexof(datum.series, 'stated') >= 0", alt.value([6, 4]), alt.value([1, 0])),
    )
    scatter = (
        alt.Chart(dots)
        .mark_point(filled=True, size=40, opacity=0.6)
        .encode(
            x="year:Q", y=alt.Y("growth:Q", scale=alt.Scale(type="log")), color=colour, tooltip=["label:N", "year:Q"]
        )
    )
    return (base.mark_line() + scatter).properties(width=560, height=340)


def models_chart(cfg: Mapping[str, Any]) -> alt.Chart:
    """Training compute of notable models against date, records highlighted."""
    frame = model_points(cfg).dropna(subset=["compute_flop"])
    frame["set a record"] = frame["compute_record"].map({True: "record", False: "other"})
    return (
        alt.Chart(frame)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("t:Q", title="date", scale=alt.Scale(zero=False), axis=alt.Axis(format="d")),
            y=alt.Y("compute_flop:Q", scale=alt.Scale(type="log"), title="training compute (FLOP)"),
            color=alt.Color("set a record:N", title=None),
            tooltip=["name:N", "date:N", alt.Tooltip("compute_flop:Q", format=".2e"), "hardware:N"],
        )
        .properties(width=560, height=300)
    )


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
_RATE = {"tflops": 1e12, "pflops": 1e15}
_DURATION_S = {"days": 86_400.0, "weeks": 7 * 86_400.0, "months": 365.25 / 12 * 86_400.0}


def _range(values: Mapping[str, float], stem: str, units: Mapping[str, float]) -> tuple[float, float]:
    """Read ``<stem>_<unit>`` or ``<stem>_<unit>_low/high`` from a claim's values, scaled to SI."""
    for unit, scale in units.items():
        key = f"{stem}_{unit}"
        if key in values:
            return values[key] * scale, values[key] * scale
        if f"{key}_low" in values:
            return values[f"{key}_low"] * scale, values[f"{key}_high"] * scale
    raise KeyError(f"claim states no {stem}")


def stated_compute_range(claim: data.Claim) -> tuple[float, float]:
    """FLOP implied by the table's 'rate x duration' descriptor: (low, high)."""
    r_lo, r_hi = _range(claim.values, "compute_rate", _RATE)
    d_lo, d_hi = _range(claim.values, "duration", _DURATION_S)
    return r_lo * d_lo, r_hi * d_hi


def stated_hardware(claim: data.Claim) -> list[str]:
    """GPU names the row states (parsed from its ``stated`` text)."""
    match = re.search(r"hardware\s+'?([^';]+)", claim.stated)
    return re.findall(r"[A-Z]+\d+", match.group(1)) if match else []


def generation_table(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """Each generation-table row: stated compute range vs recomputed compute, stated vs actual hardware."""
    rows = []
    for claim_id, model_name in GENERATION_ROWS.items():
        claim = data.claim(claim_id)
        low, high = stated_compute_range(claim)
        if model_name is None:
            n_lo, n_hi = claim.value("params_low"), claim.value("params_high")
            tokens = cfg["tokens_per_param"]
            actual_lo, actual_hi = growth.training_flop(n_lo, tokens * n_lo), growth.training_flop(n_hi, tokens * n_hi)
            name, hardware, year = f"hypothetical {fmt(n_lo)}-{fmt(n_hi)} params", "-", claim.value("year")
        else:
            row = data.model(model_name)
            flop = row["training_flop"]
            if flop is None or np.isnan(flop):
                flop = float(growth.training_flop(row["params"], row["training_tokens"]))
            actual_lo = actual_hi = flop
            name, hardware, year = row["name"], row["hardware"], row["year"]
        rows.append(
            {
                "claim": claim_id,
                "model": name,
                "year stated": int(claim.value("year")),
                "year actual": int(year),
                "stated FLOP low": low,
                "stated FLOP high": high,
                "recomputed FLOP low": float(actual_lo),
                "recomputed FLOP high": float(actual_hi),
                "hardware stated": "/".join(stated_hardware(claim)) or "-",
                "hardware actual": hardware,
            }
        )
    return pd.DataFrame(rows)


def generation_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Stated compute ranges (bars) against recomputed training compute (points/ranges)."""
    frame = generation_table(cfg)
    frame["label"] = frame["model"] + " (" + frame["year stated"].astype(str) + ")"
    y = alt.Y("label:N", title=None, sort=None)
    stated = (
        alt.Chart(frame)
        .mark_bar(height=14, opacity=0.35, color="#d95f02")
        .encode(
            x=alt.X("stated FLOP low:Q", scale=alt.Scale(type="log"), title="training compute (FLOP)"),
            x2="stated FLOP high:Q",
            y=y,
        )
    )
    actual = (
        alt.Chart(frame)
        .mark_rule(strokeWidth=3, color="#1b9e77")
        .encode(x="recomputed FLOP low:Q", x2="recomputed FLOP high:Q", y=y)
    )
    dots = alt.Chart(frame).mark_point(filled=True, size=80, color="#1b9e77").encode(x="recomputed FLOP high:Q", y=y)
    return (stated + actual + dots).properties(width=520, height=180)


# --------------------------------------------------------------------------------------------
# "Centuries on an ordinary server" (document 000, part 0)
# --------------------------------------------------------------------------------------------


def server_flop_per_s(name: str) -> float:
    """Peak FLOP/s of a reference server (CPU: sockets x cores x clock x FLOP/cycle; GPU: n x peak)."""
    servers = data.table("reference_servers")
    row = servers[servers["name"] == name].iloc[0]
    if row["kind"] == "cpu":
        return float(row["units"] * row["cores_per_socket"] * row["clock_ghz"] * 1e9 * row["flop_per_cycle_per_core"])
    return float(row["units"] * data.gpu(row["gpu"]).peak_flops(row["precision"]))


def centuries(cfg: Mapping[str, Any]) -> dict[str, float]:
    """The claim's model on one server: parameters, 6ND FLOP, server FLOP/s and years needed."""
    n = data.claim("000-0-centuries").value("params")
    flop = float(growth.training_flop(n, cfg["tokens_per_param"] * n))
    server = server_flop_per_s(cfg["server"])
    return {
        "params": n,
        "flop": flop,
        "server_flop_per_s": server,
        "years": float(growth.years_of_compute(flop, server, cfg["server_utilisation"])),
    }


def server_years_grid(cfg: Mapping[str, Any], tokens_per_param: np.ndarray | None = None) -> pd.DataFrame:
    """Years one server needs for a 100B model, per server and tokens-per-parameter value."""
    claim = data.claim("000-0-centuries")
    n = claim.value("params")
    ratios = np.geomspace(1, 100, 25) if tokens_per_param is None else np.asarray(tokens_per_param, dtype=float)
    rows = []
    for name in data.table("reference_servers")["name"]:
        years = growth.years_of_compute(
            growth.training_flop(n, ratios * n), server_flop_per_s(name), cfg["server_utilisation"]
        )
        rows.append(pd.DataFrame({"server": name, "tokens per parameter": ratios, "years": years}))
    return pd.concat(rows, ignore_index=True)


def centuries_chart(cfg: Mapping[str, Any]) -> alt.LayerChart:
    """Server-years vs tokens per parameter, with the stated 'several hundred years' band."""
    claim = data.claim("000-0-centuries")
    grid = server_years_grid(cfg)
    band = pd.DataFrame({"low": [claim.value("server_years_low")], "high": [claim.value("server_years_high")]})
    lines = (
        alt.Chart(grid)
        .mark_line()
        .encode(
            x=alt.X("tokens per parameter:Q", scale=alt.Scale(type="log")),
            y=alt.Y("years:Q", scale=alt.Scale(type="log"), title="years on one server"),
            color=alt.Color("server:N", legend=alt.Legend(orient="bottom")),
        )
    )
    stated = alt.Chart(band).mark_rect(opacity=0.2, color="#d95f02").encode(y="low:Q", y2="high:Q")
    rule = alt.Chart(pd.DataFrame({"x": [cfg["tokens_per_param"]]})).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    return (stated + lines + rule).properties(width=520, height=300)


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def _within(value: float, low: float, high: float) -> bool:
    return low <= value <= high


def _growth_verdict(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    months = claim.value("period_months")
    fitted = fits(cfg)
    model_x = claim.value("model_growth_x")
    hw_key = "gpu_growth_x" if "gpu_growth_x" in claim.values else "hw_growth_x"
    hw_x = claim.value(hw_key)
    p, p_lo, p_hi = fitted["parameters"].factor(months)
    g, g_lo, g_hi = fitted["per-GPU FLOP/s"].factor(months)
    level = fmt(cfg["confidence"], pct=True, sig=2)
    recomputed = (
        f"parameters {fmt(p)}x (CI {fmt(p_lo)}-{fmt(p_hi)}), per-GPU {cfg['gpu_basis']} FLOP/s {fmt(g)}x "
        f"(CI {fmt(g_lo)}-{fmt(g_hi)}) per {fmt(months)} months, {cfg['window_start']}-{cfg['window_end']}"
    )
    model_ok, hw_ok = _within(model_x, p_lo, p_hi), _within(hw_x, g_lo, g_hi)
    c, c_lo, c_hi = fitted["training compute"].factor(months)
    parts = [
        f"the stated {fmt(model_x, sig=2)}x for model size is {'inside' if model_ok else 'outside'} the fitted {level} interval",
        f"the stated {fmt(hw_x, sig=2)}x for GPUs is {'inside' if hw_ok else 'outside'} it",
    ]
    if not model_ok and _within(model_x, c_lo, c_hi):
        parts.append(
            f"the {fmt(model_x, sig=2)}x matches training compute instead ({fmt(c)}x, CI {fmt(c_lo)}-{fmt(c_hi)})"
        )
    verdict = "consistent" if model_ok and hw_ok else "inconsistent"
    reason = "; ".join(parts)
    other = "000-1-param-growth-18mo" if math.isclose(months, 12) else "000-0-growth-10x-per-year"
    other_months = data.claim(other).value("period_months")
    if not math.isclose(other_months, months):
        reason += f"; document 000 also gives the same figures over {fmt(other_months, sig=2)} months, so its two statements cannot both hold"
        verdict = "inconsistent"
    return Verdict(recomputed, verdict, reason[0].upper() + reason[1:] + ".")


check("000-0-growth-10x-per-year", "000-1-param-growth-18mo")(_growth_verdict)


def _generation_verdict(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    row = generation_table(cfg).set_index("claim").loc[claim.id]
    low, high = row["stated FLOP low"], row["stated FLOP high"]
    a_lo, a_hi = row["recomputed FLOP low"], row["recomputed FLOP high"]
    centre = float(np.sqrt(a_lo * a_hi))
    compute_ok = _within(centre, low, high)
    recomputed = (
        f"stated {fmt(low)}-{fmt(high)} FLOP; recomputed {fmt(a_lo)}"
        + (f"-{fmt(a_hi)}" if a_hi != a_lo else "")
        + " FLOP"
    )
    problems = []
    if not compute_ok:
        ratio = centre / (high if centre > high else low)
        problems.append(
            f"the real training compute is {fmt(ratio if ratio > 1 else 1 / ratio)}x {'above' if ratio > 1 else 'below'} the stated range"
        )
    model_name = GENERATION_ROWS[claim.id]
    hw_note = ""
    if model_name is not None:
        stated_hw = stated_hardware(claim)
        actual_gpu = data.model(model_name)["gpu"]
        actual_gpu = actual_gpu if isinstance(actual_gpu, str) else ""
        recomputed += f"; trained on {row['hardware actual']}"
        if actual_gpu not in stated_hw:
            problems.append(
                f"{model_name} was trained on {actual_gpu or row['hardware actual']}, not {'/'.join(stated_hw)}"
            )
        if int(row["year actual"]) != int(row["year stated"]):
            problems.append(f"it was published in {row['year actual']}, not {row['year stated']}")
    else:
        hw_note = " (a hypothetical model, so only the arithmetic can be checked)"
    if problems:
        text = "; ".join(problems) + hw_note + "."
        return Verdict(recomputed, "inconsistent", text[0].upper() + text[1:])
    return Verdict(
        recomputed, "consistent", f"The stated range contains the recomputed compute and the hardware matches{hw_note}."
    )


check(*GENERATION_ROWS)(_generation_verdict)


PRACTICE_MIN_PARAMS = 1e10  # dense models at least this large set the tokens-per-parameter range seen in practice


@check("000-0-centuries")
def _check_centuries(claim: data.Claim, cfg: Mapping[str, Any]) -> Verdict:
    n, flop, years = (centuries(cfg)[k] for k in ("params", "flop", "years"))
    low, high = claim.value("server_years_low"), claim.value("server_years_high")
    recomputed = (
        f"{fmt(years)} years ({fmt(flop)} FLOP at {fmt(cfg['tokens_per_param'])} tokens/parameter on "
        f"{cfg['server']} at {fmt(cfg['server_utilisation'], pct=True)} of peak)"
    )
    # tokens per parameter that would make the stated range hold on this server
    per_token = 6 * n * n / (server_flop_per_s(cfg["server"]) * cfg["server_utilisation"] * growth.SECONDS_PER_YEAR)
    need_lo, need_hi = low / per_token, high / per_token
    practice = data.models().dropna(subset=["training_tokens"])
    practice = practice[practice["active_params"].isna() & (practice["params"] >= PRACTICE_MIN_PARAMS)]
    ratio = practice["training_tokens"] / practice["params"]
    p_lo, p_hi = float(ratio.min()), float(ratio.max())
    if _within(years, low, high):
        return Verdict(
            recomputed, "consistent", "With these assumptions the recomputed time falls inside the stated span."
        )
    if need_hi >= p_lo and need_lo <= p_hi:
        return Verdict(
            recomputed,
            "consistent",
            f"The stated span holds for {fmt(need_lo)}-{fmt(need_hi)} training tokens per parameter, inside the "
            f"{fmt(p_lo)}-{fmt(p_hi)} used by published dense models of {PRACTICE_MIN_PARAMS / 1e9:g}B+ parameters, though at {fmt(cfg['tokens_per_param'])} "
            f"tokens per parameter it {'understates' if years > high else 'overstates'} the time.",
        )
    return Verdict(
        recomputed,
        "inconsistent",
        f"The stated span needs {fmt(need_lo)}-{fmt(need_hi)} tokens per parameter, outside the {fmt(p_lo)}-{fmt(p_hi)} of published dense models of {PRACTICE_MIN_PARAMS / 1e9:g}B+ parameters.",
    )


# --------------------------------------------------------------------------------------------
# Prose: sentences whose conclusion depends on the data and parameters
# --------------------------------------------------------------------------------------------

_SHORT = {"parameters": "parameter counts", "training compute": "training compute", "per-GPU FLOP/s": "per-GPU FLOP/s"}


def _covering(cfg: Mapping[str, Any], months: float, factor: float) -> list[str]:
    """Fitted quantities whose confidence interval per ``months`` contains ``factor``."""
    return [_SHORT[name] for name, fit in fits(cfg).items() if _within(factor, *fit.factor(months)[1:])]


def _join(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def growth_takeaway(cfg: Mapping[str, Any]) -> str:
    """The growth section's takeaway, from the fitted rates and document 000's two stated rates."""
    fitted = fits(cfg)
    per_year = data.claim("000-0-growth-10x-per-year")
    per_18 = data.claim("000-1-param-growth-18mo")
    x = fmt(per_18.value("model_growth_x"), "x", sig=2)
    gap = fitted["training compute"].factor(12)[0] > fitted["per-GPU FLOP/s"].factor(12)[0]
    first = "the gap is real" if gap else "these fits show no gap"
    at_18 = _covering(cfg, per_18.value("period_months"), per_18.value("model_growth_x"))
    at_12 = _covering(cfg, per_year.value("period_months"), per_year.value("model_growth_x"))
    second = (
        f"the {x} per {fmt(per_18.value('period_months'), sig=2)} months fits {_join(at_18)}"
        if at_18
        else f"nothing measured grows {x} per {fmt(per_18.value('period_months'), sig=2)} months"
    )
    third = f"{_join(at_12)} does grow {x} a year" if at_12 else f"nothing grows {x} a year"
    return f"{first}, but {second}, and {third}."


def stated_line_sentence(cfg: Mapping[str, Any]) -> str:
    """Caption sentence: where the stated model rate sits against the fitted trends."""
    claim = data.claim("000-1-param-growth-18mo")
    covering = _covering(cfg, claim.value("period_months"), claim.value("model_growth_x"))
    if covering:
        return f"The stated model line lies within the confidence interval of {_join(covering)} only."
    above = all(
        fit.factor(claim.value("period_months"))[2] < claim.value("model_growth_x") for fit in fits(cfg).values()
    )
    return f"The stated model line climbs {'above every' if above else 'outside each'} measured trend."


def epoch_summary() -> dict[str, float]:
    """Epoch AI's summary rates (x per year): training compute (low, high) and 16-bit hardware FLOP/s."""
    trends = data.growth_trends()
    compute = trends[(trends["quantity"] == "training_compute") & (trends["source"] == "epoch-frontier-compute-2024")]
    compute = compute[compute["rate_low_x_per_year"].notna()].iloc[0]
    hardware = trends[trends["quantity"] == "gpu_flops_tensor16"].iloc[0]
    return {
        "compute_low": float(compute["rate_low_x_per_year"]),
        "compute_high": float(compute["rate_high_x_per_year"]),
        "hardware": float(hardware["rate_x_per_year"]),
    }


def _hardware_short(row: pd.Series) -> str:
    model = data.model(row["model"])
    if isinstance(model["gpu"], str) and model["gpu"]:
        return str(model["gpu"])
    return "TPUs" if "TPU" in str(model["hardware"]) else str(model["hardware"])


def generation_takeaway(cfg: Mapping[str, Any]) -> str:
    """The generation table's takeaway: which named rows' compute and hardware match the facts."""
    gen = generation_table(cfg)
    named = gen[~gen["model"].str.startswith("hypothetical")]
    inside = [
        str(r["model"])
        for _, r in named.iterrows()
        if _within(r["recomputed FLOP low"], r["stated FLOP low"], r["stated FLOP high"])
    ]
    wrong = [
        f"{r['model']} on {_hardware_short(r)}"
        for _, r in named.iterrows()
        if not any(h in str(r["hardware actual"]) for h in str(r["hardware stated"]).split("/"))
    ]
    compute = (
        f"the stated range contains the real training compute only for {_join(inside)}"
        if inside
        else "no stated range contains the real training compute"
    )
    words = {0: "none", 1: "one", 2: "two", 3: "three"}
    hardware = f"{words.get(len(wrong), len(wrong))} of the {words.get(len(named), len(named))} named models ran on different hardware than the table says"
    return f"{compute}, and {hardware}" + (f" ({'; '.join(wrong)})." if wrong else ".")


def centuries_caption(cfg: Mapping[str, Any]) -> str:
    """Caption sentence: a GPT-3-style token budget and the chapter's budget on the chapter's server."""
    claim = data.claim("000-0-centuries")
    gpt3 = data.model(GENERATION_ROWS["000-1-gen-2020-gpt3"])
    tpp = gpt3["training_tokens"] / gpt3["params"]
    years = server_years_grid(cfg, np.array([tpp, cfg["tokens_per_param"]]))
    years = years[years["server"] == cfg["server"]]["years"].to_numpy()
    band = (claim.value("server_years_low"), claim.value("server_years_high"))
    where = "inside" if _within(years[0], *band) else ("below" if years[0] < band[0] else "above")
    return (
        f"A GPT-3-style budget ({fmt(tpp, sig=2)} tokens per parameter) takes {fmt(years[0], 'years', sig=2)} on "
        f"{cfg['server']}, {where} the band; the chapter's budget takes {fmt(years[1], 'years', sig=2)}."
    )
