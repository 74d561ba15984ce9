"""Sentences of the cost chapter (captions and takeaways), each ``fn(result) -> str``: conclusions are
computed from the :class:`Result`, never typed."""

from __future__ import annotations

from analyses.chapters.tco import NEW, OLD, Result
from analyses.chapters.tco.figures import _page_slider
from analyses.chapters.tco.wiring import TCO_ROW
from analyses.pages import currency as pages_currency
from analyses.pages import sliders
from analyses.units.formats import amount, fmt, in_words, months, percent, stated, times


def _cheaper(ratio: float) -> str:
    return "cheaper" if ratio < 1 else "dearer"


def stack_caption(res: Result) -> str:
    """Caption sentence of the cost stack: capital's share of owned cost and the new GPU's rent against owning."""
    row = res.stack.set_index("gpu")
    capital = (row["server"] + row["network_storage"]) / row["owned total"]
    rent = row.loc[NEW, "rented (incl. storage/network)"] / row.loc[NEW, "owned total"]
    return (
        f"Capital is {percent(capital.min())} to {percent(capital.max())} of the owned cost; "
        f"the {NEW}'s rent is {times(rent)} its owned cost."
    )


def gpu_hour_takeaway(res: Result) -> str:
    """Takeaway of the GPU-hour section: the new GPU against the old per hour, owned and rented."""
    own, rent = res.price_ratio_owned.central, res.price_ratio_rented.central
    text = f"a {NEW} GPU-hour costs {times(own)} an {OLD} GPU-hour owned and {times(rent)} rented"
    if own > 1 and rent > 1:
        return text + "; any saving must come from doing more work per hour."
    return text + f"; at these prices the {NEW} is not dearer by the hour in every mode."


def _pfd(res: Result) -> dict[str, float]:
    return dict(zip(res.pflop_day["option"], res.pflop_day["central"], strict=True))


def pflop_day_caption(res: Result) -> str:
    """Caption sentence: the cheapest useful compute at this run."""
    pfd = _pfd(res)
    best = min(pfd, key=pfd.get)
    gpu, mode = best.split(" ")
    return f"At these assumptions {'an' if mode == 'owned' else 'a'} {mode} {gpu} is the cheapest useful compute."


def pflop_day_takeaway(res: Result) -> str:
    """Takeaway of the PFLOP-day section: the new GPU against the old per useful FLOP, owned and rented."""
    pfd = _pfd(res)
    own = pfd[f"{NEW} owned"] / pfd[f"{OLD} owned"]
    rent = pfd[f"{NEW} rented"] / pfd[f"{OLD} rented"]
    lo, hi = res.documents_speedup
    at_docs = res.same_task_documents
    return (
        f"per useful FLOP the {NEW} is {_cheaper(own)} than the {OLD} owned ({times(own)}) and {_cheaper(rent)} rented "
        f"({times(rent)}); with the documents' own {stated(lo)}-{stated(hi)}× it would be {_cheaper(min(at_docs))} owned "
        f"({times(at_docs[0])}-{times(at_docs[1])}): every cost claim below stands or falls on the speed-up it assumes."
    )


def tco_row_takeaway(res: Result) -> str:
    """Takeaway of the TCO row (000 §3): the same task's cost ratio against the table's stated share."""
    low, high = res.tco_row_stated
    st = res.same_task
    lo, hi = res.documents_speedup
    docs = res.same_task_documents
    return (
        f"for the same task an owned {NEW} cluster costs {percent(st.central)} of an {OLD} cluster "
        f"({percent(st.low)} to {percent(st.high)}), which the cost rule judges {res.verdict(TCO_ROW)} with the table's "
        f"{percent(low)}-{percent(high)}; the table's own {stated(lo)}-{stated(hi)}× would give "
        f"{percent(docs[0])}-{percent(docs[1])}, {'more' if min(docs) > 1 else 'less'} than the {OLD}'s cost."
    )


def recommender_fit(res: Result) -> str:
    """The case's runs per month against its run length: a monthly average (月均), rounded."""
    r = res.recommender
    rate = r.runs_per_month_after
    said = stated(r.runs_after)
    if round(rate) == round(float(r.runs_after)):  # a stated count: compared as a whole number (data may move an ulp)
        return (
            f"back to back, runs of {stated(r.days_after)} days fit {fmt(rate, sig=3)} times in an average month, which "
            f"the case's monthly average of {said} rounds"
        )
    return (
        f"back to back, runs of {stated(r.days_after)} days fit {fmt(rate, sig=3)} times in an average month, not the "
        f"case's {said}"
    )


def recommender_caption(res: Result) -> str:
    """Caption sentence: which reading of "monthly compute cost" comes nearest to the stated figure."""
    frame = res.recommender_readings
    target = 1 - res.recommender.cut
    inside = frame[(frame["5%"] <= target) & (frame["95%"] >= target)]["reading"].tolist()
    nearest = frame.loc[(frame["central"] / target).map(lambda v: abs(float(v) - 1)).idxmin(), "reading"]
    if inside:
        return f"The stated {percent(target)} lies inside the range of: {'; '.join(inside)}. Nearest: {nearest}."
    return f"No reading's range reaches the stated {percent(target)}; the nearest is {nearest}."


def recommender_takeaway(res: Result) -> str:
    """Takeaway of document 000's case."""
    r = res.recommender
    cut = percent(r.cut)
    first = (
        f"at the case's own GPU-days one full training costs {percent(r.cost_ratio.central)} of before, and a {cut} cut "
        f"needs a {NEW} GPU-hour at {times(r.need_price_ratio)} an {OLD}'s (public: {times(r.price_ratio.central)})"
    )
    at = r.at_scenario.central
    if at < 1 - r.cut:
        than = "a larger saving than stated"
    elif at < 1:
        than = "a smaller saving than stated"
    else:
        than = "no saving at all"
    second = f"at the scenario's speed-up the same run would cost {percent(at)}, {than}"
    return f"{first}; {second}."


def customer_takeaway(res: Result) -> str:
    """Takeaway of document 001's case: the wiring monthly cost against the stated cost and the rental."""
    c = res.customer
    own = c.own_rmb.central
    first = (
        f"the {in_words(c.gpus)} {NEW}s cost {res.money(own)} a month all in, "
        f"{'above' if own > c.own_stated_rmb else 'at or below'} the stated {res.stated_money(c.own_stated_rmb)}"
    )
    rent = res.stated_money(c.rent_stated_rmb)
    if own >= c.rent_stated_rmb:
        return first + f"; against the {rent} rental the case's saving reverses."
    return first + f"; against the {rent} rental they save {percent(1 - own / c.rent_stated_rmb)}."


def tornado_caption(res: Result) -> str:
    """Caption sentence: the input that moves document 001's cost most, and whether any reaches the stated cost."""
    tor, c = res.tornado, res.customer
    top = tor.iloc[0]["input"]
    low = tor[["at_low", "at_high"]].min(axis=1)
    reach = "no single input brings it near" if (low > c.own_stated_rmb).all() else "some inputs alone bring it to"
    return f"{top[0].upper() + top[1:]} moves the answer most; {reach} the stated {res.stated_money(c.own_stated_rmb)} (orange, dashed)."


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


def payback_takeaway(res: Result) -> str:
    """Takeaway of the payback section: the scenario's speed-up against the documents' own."""
    low, high = res.payback_window
    central = res.payback.set_index("case")["central"]
    ours, docs = central.iloc[0], central.iloc[3:5]
    if ours <= high:
        where = f"within the {stated(high)} months the documents allow" + (
            f" (faster than their {stated(low)}-month lower end)" if ours < low else ""
        )
    else:
        where = f"beyond the documents' {stated(low)}-{stated(high)} months"
    return (
        f"bought to do the same work as rented {OLD}s, a {NEW} "
        + (f"pays back in {months(ours)}" if months(ours) != "never" else "never pays back")
        + " at the scenario's speed-up, "
        f"{where}; at the documents' own speed-up it takes {months(docs.min())} to {months(docs.max())}."
    )


def run_sentence(res: Result) -> str:
    """One run of the chapter's workload: what it costs on each generation, and which is cheaper."""
    run = res.run.set_index(["gpu", "basis"])
    parts = []
    for basis in ("rented", "owned"):
        old, new = run.loc[(OLD, basis)], run.loc[(NEW, basis)]
        cheaper = NEW if new["cost"] < old["cost"] else OLD
        parts.append(
            f"{basis}, {int(new['n_gpus']):,} {NEW}s take {fmt(new['days'], 'days', 2)} and cost "
            f"{amount(new['cost'], res.unit, 3)} against {amount(old['cost'], res.unit, 3)} for "
            f"{int(old['n_gpus']):,} {OLD}s in {fmt(old['days'], 'days', 2)}: {cheaper} is cheaper"
        )
    return f"for the {res.run_label}, " + "; ".join(parts) + "."


def training_takeaway(res: Result) -> str:
    """Takeaway of "several million": the model sizes whose compute the stated band buys."""
    lo, hi = res.several_million
    n_lo, n_hi = (n / 1e9 for n in res.several_million_sizes)
    return (
        f"{res.stated_money(lo)} to {res.stated_money(hi)} is the compute of a {fmt(n_lo, sig=2)}-{fmt(n_hi, sig=2)}B "
        f"model on owned {OLD}s; electricity and depreciation of a smaller model's run cost less, and labour comes on top."
    )


def inefficiency_sentence(res: Result) -> str:
    """Document 001 §1: the share of paid GPU time that yields no model FLOPs, with and without MFU."""
    return (
        f"{percent(res.wasted_share)} of paid {OLD} time yields no model FLOPs when the FLOPs a busy job leaves unused "
        f"count; idle hours and reruns alone are {percent(res.idle_share)}"
        f"{', short of half' if res.idle_share < 0.5 else ''}."
    )


def slider_caption(res: Result, index: int) -> str:
    """Caption of slider figure ``index``."""
    return sliders.caption(_page_slider(res, index), "tco")


def currency_sentence(res: Result) -> str:
    """The page's currency and the rate it converts at, with its source and date."""
    return pages_currency.currency_sentence(res.unit, res.s)
