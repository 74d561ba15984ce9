"""Checks of the cost chapter's two case studies: document 000's recommender (part 4: 128 A100s swapped
for 96 B300s, the monthly bill, the yearly saving, the GMV) and document 001's customer-service firm
(part 4: an A100 rental of about 80 thousand RMB a month against two owned 4-GPU B300 servers).

Each case's figures come from :mod:`analyses.scenario.cases`, its arithmetic from
:mod:`analyses.chapters.tco.wiring`; like every check of the chapter (:mod:`analyses.chapters.tco.checks`,
which re-exports these), each returns a :class:`~analyses.verdicts.Finding`, vectorised in ``s``, and
the rule of the claim's kind decides the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyses import data, scenario
from analyses.chapters.tco import wiring
from analyses.chapters.tco.wiring import fleet_words, rmb, valuation_of
from analyses.scenario import cases, costs, frame, generations
from analyses.scenario.generations import NEW, OLD
from analyses.units import HOURS_PER_MONTH
from analyses.units.formats import amount, fmt, scalar, stated, stated_amount
from analyses.verdicts import (
    RULES,
    VERDICTS,
    Arithmetic,
    Finding,
    Reading,
    at_least,
    between,
    check,
    exactly,
    rounded,
    verdict_codes,
)

# --------------------------------------------------------------------------------------------
# 000 §4: the recommender case
# --------------------------------------------------------------------------------------------


@check("000-4-monthly-cost-47pct-3m-rmb")
def check_monthly_cost_47pct_3m_rmb(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: the firm's average monthly compute spend fell 47% against the baseline."""
    r = cases.recommender()
    valuation, other = valuation_of(cfg)
    frame.use(frame.fleet(cfg), frame.status_quo(claim.document), frame.PRICES)
    before, after = wiring.recommender_monthly_gpu_days()
    ratio = wiring.recommender_cost_ratio(s, valuation)
    alt = wiring.recommender_cost_ratio(s, other)
    fleet_ratio = wiring.recommender_fleet_ratio(s, valuation)
    price = costs.price_ratio(s, "owned", costs.fleet_basis(valuation))
    per_run = wiring.recommender_run_cost_ratio(s, valuation)
    stated_ratio = rounded(r.cost_ratio, 0.01)

    def recomputed() -> str:
        spend = [amount(scalar(x) * scalar(s["usd_cny"]), "RMB", 2) for x in wiring.recommender_monthly_usd(s, valuation)]
        return (
            f"a month's runs: {stated(r.runs_before)} × {stated(r.gpus_before)} {OLD}s × {stated(r.days_before)} days "
            f"= {fmt(before)} GPU-days before, {stated(r.runs_after)} × {stated(r.gpus_after)} {NEW}s × "
            f"{stated(r.days_after)} days = {fmt(after)} after; with {fleet_words(valuation)} a {NEW} GPU-hour costs "
            f"{fmt(scalar(price), 'x')} an {OLD}'s, so the spend goes from {spend[0]} to {spend[1]} a month, "
            f"{fmt(scalar(ratio), pct=True, sig=2)} of before; counting each fleet's every hour, "
            f"{fmt(scalar(fleet_ratio), pct=True, sig=2)}; {fleet_words(other)}, {fmt(scalar(alt), pct=True, sig=2)}"
        )

    def context(v: str) -> str:
        cut = f"-{stated(100 * (1 - r.cost_ratio))}% being {stated(100 * r.cost_ratio)}% of before"
        if v == "consistent":
            return f"monthly spend after / before, {cut}; the case's own runs and public prices allow the cut"
        spend_before, spend_after = (scalar(x) for x in wiring.recommender_monthly_usd(s, valuation))
        more = spend_after > spend_before
        # the charitable reading the claim's words (月均, a month's average) do not name: one run against one
        run = Finding(stated=stated_ratio, value=scalar(per_run), unit="fraction")
        per_run_verdict = VERDICTS[int(verdict_codes(run, RULES[claim.kind], 1)[0])]
        return (
            f"monthly spend after / before, {cut}; the case's own runs ({fmt(after / before, 'x', 2)} the GPU-days a month) "
            + (
                f"on a GPU-hour {fmt(scalar(price), 'x')} as dear make the {NEW} fleet cost more a month, not less"
                if more
                else f"cost {fmt(scalar(ratio), pct=True, sig=2)} of before, not the stated share"
            )
            + f"; priced per training run instead (one {NEW} run against one {OLD} run), the {NEW} run costs "
            f"{fmt(scalar(per_run), pct=True, sig=2)} of the {OLD} run, a cut of "
            f"{fmt(1 - scalar(per_run), pct=True, sig=2)}, which would {'still ' if per_run_verdict == v else ''}be "
            f"{per_run_verdict}; the verdict stays on the monthly spend the claim names"
        )

    return Finding(
        stated=stated_ratio,
        value=ratio,
        unit="fraction",
        recomputed=recomputed,
        context=context,
        reading=claim.reading or "",
        taken=f"the month's spend on the case's stated runs, {fleet_words(valuation)}",
        readings=(
            Reading(fleet_words(other), value=alt),
            Reading(f"each fleet's every hour ({stated(r.gpus_after)} {NEW}s against {stated(r.gpus_before)} {OLD}s)", value=fleet_ratio),
        ),
    )


@check("000-4-annual-saving-3m-rmb")
def check_annual_saving_3m_rmb(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: the upgrade saves more than 3 million RMB a year."""
    r = cases.recommender()
    valuation, other = valuation_of(cfg)
    frame.use(frame.fleet(cfg), frame.status_quo(claim.document), frame.PRICES)
    saving = wiring.recommender_annual_saving_rmb(s, valuation)
    cut = wiring.recommender_stated_cut_rmb(s, valuation)
    return Finding(
        stated=at_least(r.annual_saving_min_rmb),
        value=saving,
        unit="RMB",
        recomputed=lambda: (
            f"twelve months of the spend before less the spend after (the case's stated runs, {fleet_words(valuation)}): "
            f"{amount(scalar(saving), 'RMB', 2)} a year; the stated -{stated(100 * (1 - r.cost_ratio))}% of the spend "
            f"before would be {amount(scalar(cut), 'RMB', 2)}; {fleet_words(other)}, "
            f"{amount(scalar(wiring.recommender_annual_saving_rmb(s, other)), 'RMB', 2)}"
        ),
        context=lambda v: (
            "the upgrade does save that much a year"
            if v == "consistent"
            else (
                f"the {NEW} fleet costs more a year than the {OLD}s it replaced, so there is no saving"
                if scalar(saving) < 0
                else "the upgrade saves less than that a year"
            )
        ),
        reading=claim.reading or "",
        taken=f"the yearly spend before less after, {fleet_words(valuation)}",
        readings=(
            Reading(fleet_words(other), value=wiring.recommender_annual_saving_rmb(s, other)),
            Reading("the stated 47% cut taken as given, of the spend before", value=cut),
        ),
        sig=2,
    )


@check("000-4-gmv-8pct")
def check_gmv_8pct(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: better recommendations raised the feed's GMV by 8%."""
    gain = cases.recommender().gmv_increase
    return Finding(
        stated=rounded(100 * gain),
        value=None,
        unit="%",
        recomputed=f"+{stated(100 * gain)}% GMV: no cost or compute quantity determines it",
        context="a feed's revenue moves with the ranking model and the market, not with the hardware it trained on",
        reading=claim.reading or "",
    )


# --------------------------------------------------------------------------------------------
# 001 §4: the customer-service case
# --------------------------------------------------------------------------------------------


@check("001-4-rental-80k-rmb-month")
def check_rental_80k_rmb_month(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §4: hourly-billed cloud A100s cost about 80k RMB a month with storage and network."""
    frame.use(frame.status_quo(claim.document), frame.HARDWARE)
    c = cases.customer_service()
    bill = wiring.rental_rmb(s)
    return Finding(
        stated=rounded(c.rent_rmb_per_month, 10_000),
        value=bill,
        unit="RMB",
        recomputed=lambda: (
            f"{stated(c.gpus)} {OLD}s rented around the clock in China cost {amount(scalar(bill), 'RMB', 2)} a month with storage "
            f"and network; {stated_amount(c.rent_rmb_per_month)} rents "
            f"{fmt(c.rent_rmb_per_month / scalar(costs.rented_a100_china_cny(s) * HOURS_PER_MONTH), sig=2)} of them"
        ),
        context="a plausible bill for a cluster the size of the case's new one; the anecdote itself cannot be checked",
        reading=claim.reading or "",
        sig=2,
    )


@check("001-4-own-42k-vs-rent-80k")
def check_own_42k_vs_rent_80k(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §4: two owned 4-GPU B300 servers over 3 years cost 42k RMB a month, nearly half the rent."""
    frame.use(frame.HARDWARE, frame.PRICES)
    c = cases.customer_service()
    cost = wiring.own_rmb(s)

    def recomputed() -> str:
        r = scenario.ranges(cfg)["server_b300_usd_per_gpu"]
        months_life = 12 * c.depreciation_years
        rate = scalar(s["usd_cny"])  # the ledger's money is in the documents' RMB
        capital = c.gpus * r.low * rate / months_life
        return (
            f"{stated(c.gpus)} owned {NEW}s over {stated(c.depreciation_years)} years cost {amount(scalar(cost), 'RMB', 3)} a month "
            f"all in; the servers alone at the lowest public price ({amount(r.low * rate, 'RMB', 3)} per GPU) are "
            f"{amount(capital, 'RMB', 3)} a month; {stated_amount(c.own_rmb_per_month)} implies a system price of "
            f"{amount(scalar(wiring.own_implied_price(s)) * rate, 'RMB', 2)} per GPU"
        )

    saving = 100 * (1 - c.own_rmb_per_month / c.rent_rmb_per_month)
    return Finding(
        stated=rounded(c.own_rmb_per_month, 1000),
        value=cost,
        unit="RMB",
        recomputed=recomputed,
        context=lambda v: (
            f"depreciating {stated(c.gpus)} {NEW}s over {stated(c.depreciation_years)} years costs more than the stated sum "
            "before any power, hosting or staff; it needs a server price far below any public quote"
            if v != "consistent"
            else "public prices allow the stated monthly cost"
        ),
        arithmetic=(Arithmetic("the saving against the rental (%)", between(40, 50), saving),),
        reading=claim.reading or "",
    )


@check("001-4-two-4-gpu-b300-servers")
def check_two_4_gpu_b300_servers(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §4: the firm built two B300 servers of four GPUs each."""
    frame.use(frame.HARDWARE, frame.PRICES)
    c = cases.customer_service()
    smallest = float(generations.gpu(NEW).nvlink_domain_gpus)
    eight = smallest * costs.capex_per_gpu(s, NEW)
    return Finding(
        stated=exactly(c.gpus_per_server),
        value=smallest,
        unit="GPUs",
        recomputed=lambda: (
            f"{NEW} ships in {stated(smallest)}-GPU HGX and DGX B300 servers (data/gpus.csv); the 4-GPU trays of "
            f"GB300 NVL72 exist only inside its 72-GPU rack; one {stated(smallest)}-GPU server costs "
            f"{rmb(eight, s, 2)} with network and storage"
        ),
        context=lambda v: (
            f"no 4-GPU {NEW} server appears among NVIDIA's {NEW} platforms; the case's {stated(c.gpus)} GPUs fit one "
            f"{stated(smallest)}-GPU server, the count the case's cost rows price (two {stated(smallest)}-GPU servers would "
            "double the hardware)"
        ),
        reading=claim.reading or "",
        sig=1,
    )
