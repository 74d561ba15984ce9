"""The scaling-gap chapter's glued numbers and phrases: :func:`glued` maps every name its page glues
to text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's
markdown, and the phrases here (most of this chapter's takeaways: they name what the fits cover,
clause by clause) branch on a verdict or a comparison, each ``fn(res) -> str``."""

from __future__ import annotations

from typing import Any

from analyses import data
from analyses.chapters.scaling_gap import CENTURIES, PER_18_MONTHS, PER_YEAR, Result, wiring
from analyses.models import growth
from analyses.pages import sliders
from analyses.units.formats import fmt, in_words

SHORT = {"parameters": "parameter counts", "training compute": "training compute", "per-GPU FLOP/s": "per-GPU FLOP/s"}


def _covering(res: Result, months: float, factor: float) -> list[str]:
    """Fitted quantities whose confidence interval over ``months`` contains ``factor``."""
    return [SHORT[name] for name, fit in res.fits.items() if fit.factor(months)[1] <= factor <= fit.factor(months)[2]]


def join(names: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def growth_takeaway(res: Result) -> str:
    """The growth section's takeaway, from the fitted rates and document 000's two stated rates."""
    per_year, per_18 = data.claim(PER_YEAR), data.claim(PER_18_MONTHS)
    x = fmt(per_18.value("model_growth_x"), "x", sig=2)
    months = fmt(per_18.value("period_months"), sig=2)
    gap = res.factor("training compute", 12)[0] > res.factor("per-GPU FLOP/s", 12)[0]
    first = "the gap is real" if gap else "these fits show no gap"
    at_18 = _covering(res, per_18.value("period_months"), per_18.value("model_growth_x"))
    at_12 = _covering(res, per_year.value("period_months"), per_year.value("model_growth_x"))
    second = (
        f"the {x} per {months} months fits {join(at_18)}"
        if at_18
        else f"nothing measured grows {x} per {months} months"
    )
    window = f"{res.cfg['window_start']}-{res.cfg['window_end']}"
    if at_12:
        third = f"over {window} {join(at_12)} does grow {x} a year"
    else:
        third = f"over {window} nothing the book fits grows {x} a year"
    target = per_year.value("model_growth_x")
    earlier = []
    for (a, b), fits in res.other_windows.items():
        grew = [
            f"{SHORT[q]} {fmt(f[0], 'x', sig=2)}"
            for q, f in fits.items()
            if q != "per-GPU FLOP/s" and f[1] <= target <= f[2]
        ]
        if grew:
            earlier.append(f"in {a}-{b} {join(grew)} a year")
    if earlier and not at_12:
        third += f", though the window decides it: {join(earlier)}"
    return f"{first}, but {second}, and {third}."


def stated_line_sentence(res: Result) -> str:
    """Caption sentence: where the stated model rate sits against the fitted wiring."""
    claim = data.claim(PER_18_MONTHS)
    months, rate = claim.value("period_months"), claim.value("model_growth_x")
    covering = _covering(res, months, rate)
    if covering:
        return f"The stated model line lies within the confidence interval of {join(covering)} only."
    above = all(fit.factor(months)[2] < rate for fit in res.fits.values())
    return f"The stated model line climbs {'above every' if above else 'outside each'} measured trend."


def generation_takeaway(res: Result) -> str:
    """The generation table's takeaway: which named rows hold, and which models trained on other hardware."""
    named = res.generation[[wiring.GENERATION_ROWS[c] is not None for c in res.generation["claim"]]]
    verdicts = res.ledger.set_index("id")["verdict"]
    holding = [str(r["model"]) for _, r in named.iterrows() if verdicts.get(r["claim"]) == "consistent"]
    other = [
        f"{r['model']} on {short_hardware(str(r['trained on']))}"
        for _, r in named.iterrows()
        if not any(h in str(r["trained on"]) for h in str(r["hardware stated"]).split("/"))
    ]
    rows = f"the rows of {join(holding)} hold" if holding else "no named row holds"
    current = sum(r["current that year"] != "none" for _, r in named.iterrows())
    count = "every" if current == len(named) else f"{in_words(current)} of the {in_words(len(named))}"
    hardware = f"{count} stated hardware generation{'s were' if count != 'every' else ' was'} current in its year"
    if other:
        n = len(other)
        hardware += (
            f", though {in_words(n)} model{'s' if n != 1 else ''} trained on other hardware ({'; '.join(other)})"
        )
    return f"{rows}; {hardware}."


def short_hardware(text: str) -> str:
    """Training hardware in a few words: a GPU name, or "TPUs"."""
    return "TPUs" if "TPU" in text else text


def gpt3_where(res: Result) -> str:
    """Where a GPT-3-style token budget's server-years fall against the document's stated band."""
    claim = data.claim(CENTURIES)
    low, high, years = claim.value("server_years_low"), claim.value("server_years_high"), res.centuries.gpt3_years
    return "inside" if low <= years <= high else ("below" if years < low else "above")


def centuries_takeaway(res: Result) -> str:
    """Takeaway of the server-years section: whether the document over- or understates, and the
    tokens per parameter at which its "several hundred years" would hold."""
    claim = data.claim(CENTURIES)
    c = res.centuries
    low, high = claim.value("server_years_low"), claim.value("server_years_high")
    need = growth.tokens_per_param_for_years([low, high], c.params, c.server_flop_per_s, c.share)
    span = f"{fmt(float(need[0]), sig=2)}-{fmt(float(need[1]), sig=2)} tokens per parameter"
    if c.years > high:
        return (
            f"the document understates rather than exaggerates: at {fmt(res.s['tokens_per_param'], sig=2)} tokens per "
            f"parameter a 100B model needs {fmt(c.years, 'server-years', 2)}, and only {span} would bring it into "
            '"several hundred".'
        )
    if c.years < low:
        return f"the document overstates: {fmt(c.years, 'server-years', 2)}; its span needs {span}."
    return f"with these assumptions the stated span holds ({fmt(c.years, 'server-years', 2)}; it holds for {span})."


def slider_caption(res: Result) -> str:
    """Caption of the tokens-per-parameter slider."""
    return sliders.caption(res.sliders[0], "scaling-gap")


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    cfg, c = res.cfg, res.centuries
    out: dict[str, Any] = {
        "conf": fmt(cfg["confidence"], pct=True, sig=2),
        "n_models": fmt(res.fits["parameters"].n_points),
        "n_gpus": fmt(res.fits["per-GPU FLOP/s"].n_points),
        "w0": str(cfg["window_start"]),
        "w1": str(cfg["window_end"]),
    }
    for key, name in [("params", "parameters"), ("compute", "training compute"), ("gpu", "per-GPU FLOP/s")]:
        central, low, high = res.factor(name, 18)
        out |= {
            f"{key}_18": fmt(central, "x", 2),
            f"{key}_18_lo": fmt(low, "x", 2),
            f"{key}_18_hi": fmt(high, "x", 2),
            f"{key}_12": fmt(res.factor(name, 12)[0], "x", 2),
        }
    bert = res.generation.set_index("claim").loc["000-1-gen-2018-bert-base"]
    out |= {
        "stated_line": stated_line_sentence(res),
        "growth_takeaway": growth_takeaway(res),
        "ep_lo": fmt(res.epoch["compute_low"], "x", 2),
        "ep_hi": fmt(res.epoch["compute_high"], "x", 2),
        "ep_hw": fmt(res.epoch["hardware"] - 1, pct=True, sig=2),
        "bert_ratio": fmt(bert["recomputed FLOP low"] / bert["stated FLOP high"], "x", 2),
        "gen_takeaway": generation_takeaway(res),
        "n_100b": fmt(c.params, sig=2),
        "tpp": fmt(res.s["tokens_per_param"], sig=2),
        "flop_100b": fmt(c.flop, "FLOP", 2),
        "server_name": cfg["server"],
        "server_flops": fmt(c.server_tflop_per_s, "TFLOP/s", 3),
        "server_share": fmt(c.share, pct=True, sig=2),
        "server_years": fmt(c.years, "years", 2),
        "gpt3_tpp": fmt(c.gpt3_tokens_per_param, sig=2),
        "gpt3_years": fmt(c.gpt3_years, "years", 2),
        "gpt3_where": gpt3_where(res),
        "slider_caption": slider_caption(res),
        "centuries_takeaway": centuries_takeaway(res),
    }
    return out
