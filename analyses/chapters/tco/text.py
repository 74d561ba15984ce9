"""The cost chapter's glued numbers and phrases: :func:`glued` maps every name its page glues to text
formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's markdown. The
phrases here are the words that branch on a comparison or a verdict, each ``fn(result) -> str``."""

from __future__ import annotations

from typing import Any

from analyses import units
from analyses.chapters.tco import NEW, OLD, Result
from analyses.chapters.tco.figures import _page_slider
from analyses.chapters.tco.wiring import TCO_ROW
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages import currency as pages_currency
from analyses.pages import sliders
from analyses.units.formats import amount, fmt, in_words, months, percent, stated, times


def _cheaper(ratio: float) -> str:
    return "cheaper" if ratio < 1 else "dearer"


def gpu_hour_conclusion(res: Result) -> str:
    """What the GPU-hour prices mean: the new GPU dearer by the hour owned and rented, or not."""
    if res.price_ratio_owned.central > 1 and res.price_ratio_rented.central > 1:
        return "any saving must come from doing more work per hour"
    return f"at these prices the {NEW} is not dearer by the hour in every mode"


def _pfd(res: Result) -> dict[str, float]:
    return dict(zip(res.pflop_day["option"], res.pflop_day["central"], strict=True))


def pflop_day_cheapest(res: Result) -> str:
    """The cheapest useful compute at this run, with its article ("an owned B300")."""
    pfd = _pfd(res)
    gpu, mode = min(pfd, key=pfd.get).split(" ")
    return f"{'an' if mode == 'owned' else 'a'} {mode} {gpu}"


def recommender_fit(res: Result) -> str:
    """The case's runs per month against its run length: a monthly average (月均), rounded."""
    r = res.recommender
    said = stated(r.runs_after)
    if round(r.runs_per_month_after) == round(
        float(r.runs_after)
    ):  # a stated count: compared whole (data may move an ulp)
        return f"which the case's monthly average of {said} rounds"
    return f"not the case's {said}"


def recommender_caption(res: Result) -> str:
    """Caption sentence: which reading of "monthly compute cost" comes nearest to the stated figure."""
    frame = res.recommender_readings
    target = 1 - res.recommender.cut
    inside = frame[(frame["5%"] <= target) & (frame["95%"] >= target)]["reading"].tolist()
    nearest = frame.loc[(frame["central"] / target).map(lambda v: abs(float(v) - 1)).idxmin(), "reading"]
    if inside:
        return f"The stated {percent(target)} lies inside the range of: {'; '.join(inside)}. Nearest: {nearest}."
    return f"No reading's range reaches the stated {percent(target)}; the nearest is {nearest}."


def recommender_than(res: Result) -> str:
    """The scenario's run against the stated cut: a larger saving, a smaller one, or none."""
    r = res.recommender
    at = r.at_scenario.central
    if at < 1 - r.cut:
        return "a larger saving than stated"
    if at < 1:
        return "a smaller saving than stated"
    return "no saving at all"


def customer_above(res: Result) -> str:
    """Document 001's owned cost against its stated cost."""
    c = res.customer
    return "above" if c.own_rmb.central > c.own_stated_rmb else "at or below"


def customer_saving(res: Result) -> str:
    """Document 001's owned B300s against the rental they replace: the saving, or its reversal."""
    c = res.customer
    own = c.own_rmb.central
    if own >= c.rent_stated_rmb:
        return "the case's saving reverses"
    return f"they save {percent(1 - own / c.rent_stated_rmb)}"


def tornado_reach(res: Result) -> str:
    """Whether any single input of the tornado brings document 001's cost to the stated one."""
    tor, c = res.tornado, res.customer
    low = tor[["at_low", "at_high"]].min(axis=1)
    return "no single input brings it near" if (low > c.own_stated_rmb).all() else "some inputs alone bring it to"


def payback_caption(res: Result) -> str:
    """Which payback cases land within the documents' window (central estimate at most its upper end)."""
    _, high = res.payback_window
    pb = res.payback
    inside = list(pb[pb["central"] <= high]["case"])
    window = fmt(high, "months", 2)
    if not inside:
        return f"No case pays back within {window} at these assumptions."
    if len(inside) == len(pb):
        return f"Every case pays back within {window} at these assumptions."
    names = [f"“{c}”" for c in inside]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"At these assumptions only {joined} pay{'s' if len(names) == 1 else ''} back within {window}."


def _payback_central(res: Result) -> Any:
    return res.payback.set_index("case")["central"]


def payback_ours(res: Result) -> str:
    """The scenario's payback as a verb phrase ("pays back in 3.1 months", "never pays back")."""
    ours = months(_payback_central(res).iloc[0])
    return f"pays back in {ours}" if ours != "never" else "never pays back"


def payback_where(res: Result) -> str:
    """The scenario's payback against the documents' window."""
    low, high = res.payback_window
    ours = _payback_central(res).iloc[0]
    if ours <= high:
        return f"within the {stated(high)} months the documents allow" + (
            f" (faster than their {stated(low)}-month lower end)" if ours < low else ""
        )
    return f"beyond the documents' {stated(low)}-{stated(high)} months"


def fleet_words(res: Result) -> str:
    """How the page values the firm's existing A100s, in a few words."""
    return "at book value" if res.valuation == "book" else "at today's second-hand price"


def china_glued(res: Result) -> dict[str, str]:
    """The China section's glued figures: the dates of the export rules and the Chinese market's prices."""
    rules = res.export_controls.set_index("id")
    prices = res.china_prices.set_index("id")
    b200 = prices.loc["b200-server-china-2025"]
    rent = prices.loc["a100-rent-china-2024"]
    return {
        "rule_2022": str(rules.loc["bis-2022-10", "effective"]),
        "rule_2022_fr": str(rules.loc["bis-2022-10", "locator"]),
        "rule_2023": str(rules.loc["bis-2023-11", "effective"]),
        "rule_2023_fr": str(rules.loc["bis-2023-11", "locator"]),
        "rule_h20": str(rules.loc["h20-2025-04", "effective"]),
        "rule_2026": str(rules.loc["bis-2026-01", "effective"]),
        "b200_china": f"{res.money(b200['low'], 'USD', 2)} to {res.money(b200['high'], 'USD', 2)} per GPU",
        "a100_rent_china_small": f"{res.money(rent['low'], 'USD', 2)} per GPU-hour",
        "a100_rent_china_large": f"{res.money(rent['high'], 'USD', 2)}",
    }


def run_cheaper(res: Result, basis: str) -> str:
    """The generation whose run of the chapter's workload costs less on ``basis`` (rented or owned)."""
    run = res.run.set_index(["gpu", "basis"])
    return NEW if run.loc[(NEW, basis), "cost"] < run.loc[(OLD, basis), "cost"] else OLD


def idle_share(res: Result) -> str:
    """The share of paid time lost to idle hours and reruns, and whether it falls short of half."""
    return percent(res.idle_share) + (", short of half" if res.idle_share < 0.5 else "")


def slider_caption(res: Result, index: int) -> str:
    """Caption of slider figure ``index``."""
    return sliders.caption(_page_slider(res, index), "tco")


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    money, stated_money = res.money, res.stated_money
    row = res.stack.set_index("gpu")
    capital = (row["server"] + row["network_storage"]) / row["owned total"]
    per_hour = f"{res.unit}/GPU-h"
    out: dict[str, Any] = {
        "level": fmt(INTERVAL_LEVEL, pct=True, sig=2),
        "currency-sentence": pages_currency.currency_sentence(res.unit, res.s),
        # the GPU-hour
        "own_a100_h": fmt(row.loc[OLD, "owned total"], per_hour, 3),
        "own_b300_h": fmt(row.loc[NEW, "owned total"], per_hour, 3),
        "rent_a100_h": fmt(row.loc[OLD, "rented (incl. storage/network)"], per_hour, 3),
        "rent_b300_h": fmt(row.loc[NEW, "rented (incl. storage/network)"], per_hour, 3),
        "b300_capital_share": fmt(capital[NEW], pct=True, sig=2),
        "capital_min": percent(capital.min()),
        "capital_max": percent(capital.max()),
        "b300_rent_vs_own": times(row.loc[NEW, "rented (incl. storage/network)"] / row.loc[NEW, "owned total"]),
        "years": fmt(res.s["depreciation_years"], "years", 2),
        "hours_year": fmt(units.HOURS_PER_YEAR, "hours", 4),
        "days_year": fmt(units.DAYS_PER_YEAR, "days", 5),
        "rate": fmt(res.s["cost_of_capital"], pct=True, sig=2),
        "hour_ratio_owned": times(res.price_ratio_owned.central),
        "hour_ratio_rented": times(res.price_ratio_rented.central),
        "gpu_hour_conclusion": gpu_hour_conclusion(res),
        # the useful PFLOP-day
        "util": fmt(res.busy_share, pct=True, sig=2),
        "goodput": fmt(res.goodput, pct=True, sig=3),
        "speedup": fmt(res.speedup, "x", 3),
        "mfu_a100": fmt(res.mfu[OLD], pct=True, sig=2),
        "mfu_b300": fmt(res.mfu[NEW], pct=True, sig=2),
        "pfd_cheapest": pflop_day_cheapest(res),
    }
    pfd = res.pflop_day.set_index("option")
    for option in pfd.index:
        key = option.replace(" ", "_")
        out[f"pfd_{key}"] = amount(pfd.loc[option, "central"], res.unit, 3)
        out[f"pfd_{key}_lo"] = amount(pfd.loc[option, "5%"], res.unit, 2)
        out[f"pfd_{key}_hi"] = amount(pfd.loc[option, "95%"], res.unit, 2)
    central = _pfd(res)
    own = central[f"{NEW} owned"] / central[f"{OLD} owned"]
    rent = central[f"{NEW} rented"] / central[f"{OLD} rented"]
    docs = res.bought_documents
    out |= {
        "pfd_owned_word": _cheaper(own),
        "pfd_owned_ratio": times(own),
        "pfd_rented_word": _cheaper(rent),
        "pfd_rented_ratio": times(rent),
        "docs_owned_word": _cheaper(min(docs)),
        "docs_owned_ratio_lo": times(docs[0]),
        "docs_owned_ratio_hi": times(docs[1]),
    }
    # the TCO row of document 000's table
    lo, hi = res.tco_row_stated
    x_lo, x_hi = res.documents_speedup
    docs = res.same_task_documents
    out |= {
        "tco_row_low": fmt(lo, pct=True, sig=2),
        "tco_row_high": fmt(hi, pct=True, sig=2),
        "price_ratio": fmt(res.tco_price_ratio.central, "x", 2),
        "fleet_words": fleet_words(res),
        "same_task": fmt(res.same_task.central, pct=True, sig=2),
        "same_task_lo": fmt(res.same_task.low, pct=True, sig=2),
        "same_task_hi": fmt(res.same_task.high, pct=True, sig=2),
        "docs_speedup": f"{stated(x_lo)}-{stated(x_hi)}×",
        "same_task_docs": f"{percent(docs[0])}-{percent(docs[1])}",
        "tco_row_verdict": res.verdict(TCO_ROW),
        "docs_more_less": "more" if min(docs) > 1 else "less",
        "slider_speedup_caption": slider_caption(res, 0),
    }
    # case study 1: the recommender system of document 000
    r = res.recommender
    out |= {
        "c0_gpus_before": fmt(int(r.gpus_before)),
        "c0_gpus_after": fmt(int(r.gpus_after)),
        "c0_days_before": fmt(r.days_before, "days", 2),
        "c0_days_after": fmt(r.days_after, "days", 2),
        "c0_run_days": stated(r.days_after),
        "c0_gpu_days_before": fmt(int(r.gpu_days_before), "GPU-days"),
        "c0_gpu_days_after": fmt(int(r.gpu_days_after), "GPU-days"),
        "c0_speedup": fmt(r.gpu_days_before / r.gpu_days_after, "x", 3),
        "c0_cut": fmt(r.cut, pct=True, sig=2),
        "c0_ratio": fmt(r.cost_ratio.central, pct=True, sig=2),
        "c0_need": fmt(r.need_price_ratio, "x", 2),
        "c0_public": times(r.price_ratio.central),
        "c0_at_scenario": percent(r.at_scenario.central),
        "c0_than": recommender_than(res),
        "c0_saving": money(r.saving_rmb_year.central, "RMB", 2),
        "c0_saving_min": stated_money(r.annual_saving_min_rmb),
        "c0_runs_fit": fmt(r.runs_per_month_after, sig=3),
        "c0_fit": recommender_fit(res),
        "c0_caption": recommender_caption(res),
    }
    # case study 2: the customer-service fine-tune of document 001
    c = res.customer
    top = res.tornado.iloc[0]["input"]
    out |= {
        "c1_years": fmt(c.years, "years", 1),
        "c1_stated": stated_money(c.own_stated_rmb),
        "c1_rent": stated_money(c.rent_stated_rmb),
        "c1_own": money(c.own_rmb.central, "RMB", 3),
        "c1_own_lo": money(c.own_rmb.low, "RMB", 2),
        "c1_own_hi": money(c.own_rmb.high, "RMB", 2),
        "c1_capital": money(c.capital_low_rmb, "RMB", 3),
        "c1_implied": money(c.implied_price_usd, "USD", 2),
        "c1_price_low": money(c.price_low_usd, "USD", 3),
        "c1_price_high": money(c.price_high_usd, "USD", 3),
        "c1_rental": money(c.rental_rmb.central, "RMB", 2),
        "c1_rental_gpus": fmt(c.rental_gpus.central, sig=2),
        "c1_gpus": in_words(c.gpus),
        "c1_own_all_in": money(c.own_rmb.central),
        "c1_above": customer_above(res),
        "c1_saving": customer_saving(res),
        "tornado_top": top[0].upper() + top[1:],
        "tornado_reach": tornado_reach(res),
        "slider_price_caption": slider_caption(res, 1),
    }
    # payback
    lo, hi = res.payback_window
    central_pb = _payback_central(res)
    docs_pb = central_pb.iloc[4:6]
    out |= {
        "pay_low": fmt(lo, sig=1),
        "pay_high": fmt(hi, "months", 2),
        "hours_month": fmt(units.HOURS_PER_MONTH, "hours", 4),
        "pay_caption": payback_caption(res),
        "pay_ours": payback_ours(res),
        "pay_where": payback_where(res),
        "pay_docs_low": months(docs_pb.min()),
        "pay_docs_high": months(docs_pb.max()),
        "pay_001": months(central_pb.iloc[2]),
        "pay_000_other": months(central_pb.iloc[1]),
    }
    # the China context
    out |= china_glued(res)
    # one training run
    run = res.run.set_index(["gpu", "basis"])
    out["run_label"] = res.run_label
    for basis in ("rented", "owned"):
        for gpu, key in ((NEW, "new"), (OLD, "old")):
            line = run.loc[(gpu, basis)]
            out[f"run_{basis}_{key}_gpus"] = f"{int(line['n_gpus']):,}"
            out[f"run_{basis}_{key}_days"] = fmt(line["days"], "days", 2)
            out[f"run_{basis}_{key}_cost"] = amount(line["cost"], res.unit, 3)
        out[f"run_{basis}_cheaper"] = run_cheaper(res, basis)
    # the other cost claims
    band_lo, band_hi = res.several_million
    n_lo, n_hi = (n / 1e9 for n in res.several_million_sizes)
    out |= {
        "tpp": fmt(res.s["tokens_per_param"], sig=2),
        "several_low": stated_money(band_lo),
        "several_high": stated_money(band_hi),
        "several_sizes": f"{fmt(n_lo, sig=2)}-{fmt(n_hi, sig=2)}B",
        "wasted_share": percent(res.wasted_share),
        "idle_share": idle_share(res),
    }
    return out
