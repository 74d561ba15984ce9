"""Checks of the scaling-gap chapter: the stated growth rates, the generation table and the "several
hundred server-years" for a 100B model.

Growth rates are facts with fitted confidence intervals (the fit's interval is the finding's
intrinsic ``low``/``high``); the generation rows compare stated and real training compute and the
hardware generation; the server-years read the scenario's tokens per parameter and a server's
sustained share. Each check returns a :class:`~analyses.verdicts.Finding` and the rule of the
claim's kind decides; every check is vectorised in ``s``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import data
from analyses.chapters.scaling_gap import wiring
from analyses.models import flops, growth
from analyses.units import MONTHS_PER_YEAR, settle
from analyses.units.formats import fmt, in_words, stated
from analyses.verdicts import RULES, VERDICTS, Finding, Reading, between, check, exactly, verdict_codes


def rule_verdict(kind: str, finding: Finding) -> str:
    """The verdict the rule of ``kind`` gives ``finding``: how a second figure of a claim is judged
    (by the rule, not a private threshold)."""
    return VERDICTS[int(verdict_codes(finding, RULES[kind], 1)[0])]


def factor_text(factor: tuple[float, float, float]) -> str:
    """A fitted factor with its interval: "3.59× (2.60-4.95×)"."""
    central, low, high = factor
    return f"{fmt(central, 'x')} ({fmt(low)}-{fmt(high, 'x')})"


# --------------------------------------------------------------------------------------------
# Growth rates (parts 0 and 1)
# --------------------------------------------------------------------------------------------

OTHER_PERIOD = {
    "000-0-growth-10x-per-year": "000-1-param-growth-18mo",
    "000-1-param-growth-18mo": "000-0-growth-10x-per-year",
}
HEADLINE_BASIS = "lowest"  # the per-GPU FLOP/s a datasheet headlines: the lowest precision offered
BASIS_WORDS = {"fp32": "FP32", "tensor16": "16-bit tensor", "lowest": "lowest-precision"}


def per_period(months: float) -> str:
    """ "a year" or "per 18 months"."""
    return "a year" if settle(months) == MONTHS_PER_YEAR else f"per {stated(months)} months"


def hardware_growth(cfg: Mapping[str, Any], months: float) -> dict[str, tuple[float, float, float]]:
    """Per-GPU FLOP/s growth over ``months`` on the chapter's basis and on the headline basis."""
    bases = dict.fromkeys((cfg["gpu_basis"], HEADLINE_BASIS))
    return {b: wiring.fits(dict(cfg) | {"gpu_basis": b})["per-GPU FLOP/s"].factor(months) for b in bases}


# Other windows a reader may take for 每年 / 过去几年: the years of the documents' own first table rows
# (BERT in 2018 to GPT-3 in 2020), and the five years before the documents (2020-2025).
OTHER_WINDOWS = ((2015, 2020), (2020, 2025))


def _growth_parts(claim: data.Claim, cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The fitted growth over the claim's period in window ``cfg``: parameters, compute, per-GPU FLOP/s
    on each basis, which bases agree with the stated hardware figure, and the contradiction if none does."""
    months = claim.value("period_months")
    fitted = wiring.fits(cfg)
    hw_x = claim.value("gpu_growth_x" if "gpu_growth_x" in claim.values else "hw_growth_x")
    params, compute = (fitted[q].factor(months) for q in wiring.QUANTITIES[:2])
    hardware = hardware_growth(cfg, months)
    agree = [
        b
        for b, f in hardware.items()
        if rule_verdict(claim.kind, Finding(exactly(hw_x), f[0], low=f[1], high=f[2])) == "consistent"
    ]
    gpu_text = ", ".join(f"{BASIS_WORDS[b]} {factor_text(f)}" for b, f in hardware.items())
    per = per_period(months)
    return {
        "params": params,
        "compute": compute,
        "hardware": hardware,
        "agree": agree,
        "gpu_text": gpu_text,
        "contradiction": None if agree else f"per-GPU FLOP/s grew {gpu_text} {per}, not {stated(hw_x)}×",
    }


@check("000-0-growth-10x-per-year", "000-1-param-growth-18mo")
def check_growth_10x_per_year(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §0 and §1: models grow tenfold (a year; every 18 months) while hardware doubles."""
    months = claim.value("period_months")
    model_x = claim.value("model_growth_x")
    hw_x = claim.value("gpu_growth_x" if "gpu_growth_x" in claim.values else "hw_growth_x")
    p = _growth_parts(claim, cfg)
    params, compute, agree = p["params"], p["compute"], p["agree"]
    compute_ok = rule_verdict(claim.kind, Finding(exactly(model_x), compute[0], low=compute[1], high=compute[2]))
    level, per = fmt(cfg["confidence"], pct=True, sig=2), per_period(months)
    other = data.claim(OTHER_PERIOD[claim.id])
    hw_clause = (
        f"the stated {stated(hw_x)}× for hardware agrees with the fitted {' and '.join(BASIS_WORDS[b] for b in agree)} per-GPU FLOP/s"
        if agree
        else ""
    )
    readings = []
    for start, end in OTHER_WINDOWS:
        q = _growth_parts(claim, dict(cfg) | {"window_start": start, "window_end": end})
        readings.append(
            Reading(
                f"the {start}-{end} window",
                value=q["params"][0],
                low=q["params"][1],
                high=q["params"][2],
                contradiction=q["contradiction"],
            )
        )
    return Finding(
        stated=exactly(model_x),
        value=params[0],
        low=params[1],
        high=params[2],
        unit="x",
        recomputed=(
            f"parameters {factor_text(params)}, training compute {factor_text(compute)}, per-GPU FLOP/s {p['gpu_text']} "
            f"{per} ({cfg['window_start']}-{cfg['window_end']}, {level} intervals)"
        ),
        contradiction=p["contradiction"],
        context=lambda v: "; ".join(
            part
            for part in (
                "" if agree else f"parameters grew {factor_text(params)} {per}, not {stated(model_x)}×",
                f"the {stated(model_x)}× matches training compute instead"
                if compute_ok == "consistent"
                else f"training compute grew {factor_text(compute)}",
                hw_clause,
                f"document 000 gives the same figures {per_period(other.value('period_months'))} elsewhere, so its two "
                "statements cannot both hold",
            )
            if part
        ),
        reading=(
            "模型规模/参数量 read as the parameter counts of notable models; 硬件性能/单卡算力 as a GPU's dense peak "
            "FLOP/s at 16 bits or at the lowest precision it offers (the headline figure), whichever agrees; 约10倍 as "
            "tenfold within the fact tolerance"
        ),
        taken=f"the chapter's window, {cfg['window_start']}-{cfg['window_end']}",
        readings=tuple(readings),
        direction="overstates",
    )


# --------------------------------------------------------------------------------------------
# The generation table (part 1)
# --------------------------------------------------------------------------------------------

READING_GENERATION = (
    "训练算力需求 'rate × duration' read as sustained FLOP/s times wall time (数 = 2-9, a single round figure as the "
    "interval its rounding covers); 硬件代际 read as the hardware generation current in that year"
)


def _named_row(claim: data.Claim, model: str) -> Finding:
    year, real_year = int(claim.value("year")), int(data.model(model)["year"])
    compute = wiring.model_compute(model)
    stated_hw, current = wiring.stated_hardware(claim), wiring.current_hardware(claim)
    own = wiring.trained_on(model)
    problems = []
    if real_year != year:
        problems.append(f"{model} was published in {real_year}, not {year}")
    if not current:
        problems.append(f"{'/'.join(stated_hw)} was not a current GPU generation in {year}")
    default, strict = wiring.stated_compute(claim), wiring.stated_compute(claim, strict=True)
    readings = (
        ()
        if own in stated_hw
        else (
            Reading(
                f"硬件代际 as the hardware {model} itself trained on",
                contradiction="; ".join([*problems, f"{model} trained on {own}, not {'/'.join(stated_hw)}"]),
            ),
        )
    )
    return Finding(
        stated=default,
        value=compute,
        unit="FLOP",
        recomputed=f"{model}: {fmt(compute, 'FLOP')} (stated {fmt(default.lo)}-{fmt(default.hi, 'FLOP')}); trained on {own}",
        contradiction="; ".join(problems) or None,
        context=lambda v: (
            f"{'/'.join(current)} was the current or previous GPU generation in {year}"
            if current
            else f"the stated hardware does not fit {year}"
        ),
        reading=READING_GENERATION,
        taken="数 as 2-9 and 硬件代际 as the generation current that year",
        readings=readings,
        strict=strict if strict != default else None,
        sig=3,
    )


@check(*wiring.GENERATION_ROWS)
def check_gen_2018_bert_base(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §1 table: each generation row's model, compute need (estimate) and hardware."""
    model = wiring.GENERATION_ROWS[claim.id]
    if model is not None:
        return _named_row(claim, model)
    return _industry_row(claim, s)


def moe_count(models: Any) -> str:
    """ "all four are", "two of the four are": how many of ``models`` are mixtures of experts."""
    n, moe = len(models), int(models["active_params"].notna().sum())
    return f"all {in_words(n)} are" if moe == n else f"{in_words(moe)} of the {in_words(n)} are"


def _industry_row(claim: data.Claim, s: Mapping[str, Any]) -> Finding:
    """The 2025+ row: the real models of its year and size class against the stated compute; the dense
    compute-optimal reading (the scenario's tokens per parameter) in words."""
    lo, hi = claim.value("params_low"), claim.value("params_high")
    peers = wiring.class_models(claim)
    flop = peers["compute_flop"].to_numpy(dtype=float)
    default = wiring.stated_compute(claim)
    current = wiring.current_hardware(claim)

    def dense() -> str:
        tpp = float(s["tokens_per_param"])
        top = float(flops.training_flops(hi, hi * tpp))
        fits = float(growth.params_for_compute(default.hi, tpp))
        return (
            f"read as dense models trained on {fmt(tpp, sig=2)} tokens per parameter, only those up to about "
            f"{fmt(fits / 1e9, sig=2)}B parameters fit, and a {fmt(hi / 1e12, sig=2)}T-parameter model would need "
            f"{fmt(top / default.hi, 'x', 2)} the top of the range"
        )

    tpp = np.asarray(s["tokens_per_param"], dtype=float)
    dense_hi = flops.training_flops(hi, hi * tpp)
    return Finding(
        taken="千亿~万亿 as the real models of that class, mixtures of experts included",
        readings=(
            Reading(
                f"the class's largest, a dense {fmt(hi / 1e12, sig=2)}T-parameter model at the scenario's tokens per parameter",
                value=dense_hi,
            ),
        ),
        stated=default,
        value=float(np.exp(np.mean(np.log(flop)))),
        low=float(flop.min()),
        high=float(flop.max()),
        unit="FLOP",
        recomputed=lambda: (
            f"{len(peers)} models of {int(claim.value('year'))}+ with {fmt(lo / 1e9, sig=2)}B-{fmt(hi / 1e12, sig=2)}T "
            f"parameters ({', '.join(peers['name'])}): {fmt(flop.min())}-{fmt(flop.max(), 'FLOP')} (stated "
            f"{fmt(default.lo)}-{fmt(default.hi, 'FLOP')})"
        ),
        contradiction=None
        if current
        else f"{'/'.join(wiring.stated_hardware(claim))} was not current in {int(claim.value('year'))}",
        context=lambda v: (
            f"{moe_count(peers)} mixtures of experts, which train on far fewer FLOP than their total size suggests; "
            f"{dense()}"
        ),
        reading=f"{READING_GENERATION}; 行业大模型 千亿~万亿 read as the models released from that year with 100B-1T parameters",
    )


# --------------------------------------------------------------------------------------------
# Several hundred server-years (part 0)
# --------------------------------------------------------------------------------------------

UNDERTRAINED = wiring.GENERATION_ROWS["000-1-gen-2020-gpt3"]  # trained on far fewer tokens per parameter than compute-optimal


def undertrained_tokens_per_param() -> float:
    """Tokens per parameter of :data:`UNDERTRAINED` (``data/models.csv``)."""
    row = data.model(UNDERTRAINED)
    return float(row["training_tokens"] / row["params"])


ONE_GPU_SERVER = "a100-1gpu"  # the other reading of 普通服务器 (data/reference_servers.csv)


@check("000-0-centuries")
def check_centuries(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §0: a 100B model's training equals an ordinary server running for several hundred years."""
    n, server = claim.value("params"), cfg["server"]
    low, high = claim.value("server_years_low"), claim.value("server_years_high")
    years = wiring.server_years(s, n, server)
    share = wiring.server_share(s, server)
    flop_per_s = wiring.server_flop_per_s(server)

    def holds_at() -> str:
        need = growth.tokens_per_param_for_years(np.array([low, high]), n, flop_per_s, share)
        return f"{fmt(float(need[0]), sig=2)}-{fmt(float(need[1]), sig=2)}"

    return Finding(
        stated=between(low, high),
        value=years,
        unit="years",
        recomputed=lambda: (
            f"{fmt(years, 'years', 2)}: {fmt(float(flops.training_flops(n, n * s['tokens_per_param'])), 'FLOP')} "
            f"({fmt(s['tokens_per_param'], sig=2)} tokens per parameter) on {server} at "
            f"{fmt(share, pct=True, sig=2)} of its {fmt(flop_per_s / 1e12, 'TFLOP/s')} peak"
        ),
        context=lambda v: (
            f"the stated span holds at {holds_at()} tokens per parameter"
            + (
                ", far fewer than any compute-optimal run, so the document understates the time: its point, that no "
                "ordinary server could train such a model, holds even more strongly"
                if v != "consistent"
                else ""
            )
        ),
        reading="数百年 read as 200-900 years; 普通服务器 read as a dual-socket CPU server (peak at base clock)",
        taken="数百年 as 200-900 years, a run at the scenario's tokens per parameter",
        readings=(
            Reading(
                f"a run trained like {UNDERTRAINED} ({fmt(undertrained_tokens_per_param(), sig=2)} tokens per parameter)",
                value=wiring.server_years(s, n, server, undertrained_tokens_per_param()),
            ),
            Reading(
                "普通服务器 as a server with one A100 at its MFU",
                value=wiring.server_years(s, n, ONE_GPU_SERVER),
            ),
        ),
    )
