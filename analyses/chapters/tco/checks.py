"""Checks of the cost chapter: the TCO row, the two case studies, payback and the other money claims.

Each check recomputes its claim from the scenario (``s``: prices, the B300/A100 speed-up, the A100's
MFU, utilisation, goodput, depreciation and cost of capital) with :mod:`analyses.models.tco`, and
returns a :class:`~analyses.verdicts.Finding`; the rule of the claim's kind decides the verdict.
Every check is numpy-vectorised in ``s``. A saving or a payback compares the same output on both
sides: the same task, the same run, the work of the same GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from analyses import data, scenario
from analyses.chapters.tco.wiring import (
    SEVERAL_MILLION,
    TCO_ROW,
    band_sizes,
    documents_speedup,
    own_implied_price,
    own_rmb,
    payback_baseline,
    payback_value,
    rd_ratios,
    recommender_annual_saving_rmb,
    recommender_cost_ratio,
    recommender_fleet_ratio,
    recommender_monthly_gpu_days,
    recommender_monthly_usd,
    recommender_stated_cut_rmb,
    rental_rmb,
    reserve_markup,
    rmb,
    several_million_band,
    tco_row_stated,
    training_cost_rmb,
    training_sizes,
)
from analyses.models import tco
from analyses.scenario import cases, costs, frame, generations, operations
from analyses.scenario.generations import NEW, NEW_PRECISION, OLD, OLD_PRECISION, speedup
from analyses.units import HOURS_PER_MONTH
from analyses.units.formats import amount, fmt, months, scalar, stated, stated_amount
from analyses.verdicts import Arithmetic, Finding, Reading, at_least, at_most, between, check, exactly, rounded


def _at_documents(fn: Any) -> tuple[Reading, Reading]:
    """The claim recomputed at the documents' own per-GPU speed-up (000 §3: about 2.5-3x): ``fn(x)`` is its value."""
    lo, hi = documents_speedup()
    return (Reading(f"{stated(lo)}× per GPU", value=fn(lo)), Reading(f"{stated(hi)}×", value=fn(hi)))

# --------------------------------------------------------------------------------------------
# 000 §3: the TCO row of the comparison table
# --------------------------------------------------------------------------------------------


def _valuation(cfg: Mapping[str, Any]) -> tuple[str, str]:
    """(the frame's valuation of an existing fleet at ``cfg``, the reader's alternative)."""
    value = frame.fleet_value(cfg)
    return value, next(v for v in frame.FLEET_VALUES if v != value)


def _fleet_words(valuation: str) -> str:
    return f"its {OLD}s at book value" if valuation == "book" else f"its {OLD}s at today's second-hand price"


@check(TCO_ROW)
def check_table_tco(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §3: B300's TCO for the same task about 35-45% of the A100 baseline, over half lower."""
    lo, hi = tco_row_stated()
    valuation, other = _valuation(cfg)
    frame.use(frame.fleet(cfg), frame.status_quo(claim.document), frame.PRICES, frame.PRECISION)
    basis = costs.fleet_basis(valuation)
    ratio = costs.same_task_ratio(s, "owned", old_basis=basis)
    x_lo, x_hi = documents_speedup()
    price = costs.price_ratio(s, "owned", basis)
    x = speedup(s, "pretrain")

    def recomputed() -> str:
        own_hi, own_lo = (scalar(costs.same_task_ratio(s, "owned", v, old_basis=basis)) for v in (x_lo, x_hi))
        return (
            f"same task, {_fleet_words(valuation)} against {NEW}s bought today: a {NEW} GPU-hour costs "
            f"{fmt(scalar(price), 'x')} an {OLD}'s and does {fmt(scalar(x), 'x')} its work (the scenario's "
            f"{NEW_PRECISION.upper()}/{OLD_PRECISION.upper()} speed-up), so {NEW} costs {fmt(scalar(ratio), pct=True, sig=2)} "
            f"of {OLD}'s; with the table's own {stated(x_lo)}-{stated(x_hi)}× it would cost {fmt(own_lo, pct=True, sig=2)}-"
            f"{fmt(own_hi, pct=True, sig=2)}; {_fleet_words(other)}, "
            f"{fmt(scalar(costs.same_task_ratio(s, 'owned', old_basis=costs.fleet_basis(other))), pct=True, sig=2)}"
        )

    def context(v: str) -> str:
        p, r = scalar(price), scalar(ratio)
        dearer = scalar(costs.new_hour_cost(s, "owned")) > scalar(costs.old_hour_cost(s, basis))  # the words follow the figures
        hour = f"pays for its dearer GPU-hour ({fmt(p, 'x')})" if dearer else f"adds to a GPU-hour no dearer ({fmt(p, 'x')})"
        if v == "consistent":
            return f"{NEW}'s per-GPU speed-up {hour}, leaving the stated share"
        return (
            f"the per-GPU speed-up {hour} and puts {NEW}'s cost for the same task "
            f"{'below' if r < lo else 'above'} the stated share"
        )

    return Finding(
        stated=between(lo, hi),
        value=ratio,
        unit="fraction",
        recomputed=recomputed,
        context=context,
        arithmetic=(
            Arithmetic(
                f"the cost cut at {stated(100 * hi)}% of the baseline",
                at_least(claim.value("cost_reduction_min_pct")),
                100 * (1 - hi),
            ),
        ),
        reading=claim.reading or "",
        taken=f"both clusters owned, {_fleet_words(valuation)}, the {NEW}s bought today",
        readings=(
            Reading(_fleet_words(other), value=costs.same_task_ratio(s, "owned", old_basis=costs.fleet_basis(other))),
        ),
        documents=_at_documents(lambda v: costs.same_task_ratio(s, "owned", v, old_basis=basis)),
    )


# --------------------------------------------------------------------------------------------
# 000 §4: the recommender case
# --------------------------------------------------------------------------------------------


@check("000-4-monthly-cost-47pct-3m-rmb")
def check_monthly_cost_47pct_3m_rmb(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: the firm's average monthly compute spend fell 47% against the baseline."""
    r = cases.recommender()
    valuation, other = _valuation(cfg)
    frame.use(frame.fleet(cfg), frame.status_quo(claim.document), frame.PRICES)
    before, after = recommender_monthly_gpu_days()
    ratio = recommender_cost_ratio(s, valuation)
    alt = recommender_cost_ratio(s, other)
    fleet_ratio = recommender_fleet_ratio(s, valuation)
    price = costs.price_ratio(s, "owned", costs.fleet_basis(valuation))

    def recomputed() -> str:
        spend = [amount(scalar(x) * scalar(s["usd_cny"]), "RMB", 2) for x in recommender_monthly_usd(s, valuation)]
        return (
            f"a month's runs: {stated(r.runs_before)} × {stated(r.gpus_before)} {OLD}s × {stated(r.days_before)} days "
            f"= {fmt(before)} GPU-days before, {stated(r.runs_after)} × {stated(r.gpus_after)} {NEW}s × "
            f"{stated(r.days_after)} days = {fmt(after)} after; with {_fleet_words(valuation)} a {NEW} GPU-hour costs "
            f"{fmt(scalar(price), 'x')} an {OLD}'s, so the spend goes from {spend[0]} to {spend[1]} a month, "
            f"{fmt(scalar(ratio), pct=True, sig=2)} of before; counting each fleet's every hour, "
            f"{fmt(scalar(fleet_ratio), pct=True, sig=2)}; {_fleet_words(other)}, {fmt(scalar(alt), pct=True, sig=2)}"
        )

    def context(v: str) -> str:
        cut = f"-{stated(100 * (1 - r.cost_ratio))}% being {stated(100 * r.cost_ratio)}% of before"
        if v == "consistent":
            return f"monthly spend after / before, {cut}; the case's own runs and public prices allow the cut"
        spend_before, spend_after = (scalar(x) for x in recommender_monthly_usd(s, valuation))
        more = spend_after > spend_before
        return (
            f"monthly spend after / before, {cut}; the case's own runs ({fmt(after / before, 'x', 2)} the GPU-days a month) "
            + (
                f"on a GPU-hour {fmt(scalar(price), 'x')} as dear make the {NEW} fleet cost more a month, not less"
                if more
                else f"cost {fmt(scalar(ratio), pct=True, sig=2)} of before, not the stated share"
            )
        )

    return Finding(
        stated=rounded(r.cost_ratio, 0.01),
        value=ratio,
        unit="fraction",
        recomputed=recomputed,
        context=context,
        reading=claim.reading or "",
        taken=f"the month's spend on the case's stated runs, {_fleet_words(valuation)}",
        readings=(
            Reading(_fleet_words(other), value=alt),
            Reading(f"each fleet's every hour ({stated(r.gpus_after)} {NEW}s against {stated(r.gpus_before)} {OLD}s)", value=fleet_ratio),
        ),
    )


@check("000-4-annual-saving-3m-rmb")
def check_annual_saving_3m_rmb(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §4: the upgrade saves more than 3 million RMB a year."""
    r = cases.recommender()
    valuation, other = _valuation(cfg)
    frame.use(frame.fleet(cfg), frame.status_quo(claim.document), frame.PRICES)
    saving = recommender_annual_saving_rmb(s, valuation)
    cut = recommender_stated_cut_rmb(s, valuation)
    return Finding(
        stated=at_least(r.annual_saving_min_rmb),
        value=saving,
        unit="RMB",
        recomputed=lambda: (
            f"twelve months of the spend before less the spend after (the case's stated runs, {_fleet_words(valuation)}): "
            f"{amount(scalar(saving), 'RMB', 2)} a year; the stated -{stated(100 * (1 - r.cost_ratio))}% of the spend "
            f"before would be {amount(scalar(cut), 'RMB', 2)}; {_fleet_words(other)}, "
            f"{amount(scalar(recommender_annual_saving_rmb(s, other)), 'RMB', 2)}"
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
        taken=f"the yearly spend before less after, {_fleet_words(valuation)}",
        readings=(
            Reading(_fleet_words(other), value=recommender_annual_saving_rmb(s, other)),
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
# 000 §5: the exploration reserve
# --------------------------------------------------------------------------------------------


@check("000-5-reserve-10-15pct-exploration")
def check_reserve_10_15pct_exploration(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §5: reserve 10-15% of compute for exploring new scenarios."""
    lo, hi = claim.value("reserve_low_pct") / 100, claim.value("reserve_high_pct") / 100
    idle = 1 - operations.busy_share(s)
    return Finding(
        stated=between(lo, hi),
        value=None,
        unit="fraction",
        recomputed=lambda: (
            f"reserving {fmt(lo, pct=True, sig=2)}-{fmt(hi, pct=True, sig=2)} raises the cost per production PFLOP-day by "
            f"{fmt(scalar(reserve_markup(lo)), pct=True, sig=2)}-{fmt(scalar(reserve_markup(hi)), pct=True, sig=2)}; at the "
            f"scenario's utilisation {fmt(scalar(idle), pct=True, sig=2)} of the hours a job holds its GPUs are idle anyway"
        ),
        context=(
            "budgeting advice whose purpose (keeping ahead technically) has no measure; its price is shown so a reader "
            "can weigh it"
        ),
        reading=claim.reading or "",
    )


# --------------------------------------------------------------------------------------------
# 000 §6 and 001 §6: payback
# --------------------------------------------------------------------------------------------


@check("000-6-payback-6-12-months", "001-6-payback-6-12-months")
def check_payback_6_12_months(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Both documents, part 6: the hardware investment is usually recovered within 6-12 months, each
    against its own case's status quo (:func:`analyses.scenario.frame.status_quo`)."""
    lo, hi = claim.value("payback_low_months"), claim.value("payback_high_months")
    own = claim.document.startswith("000")
    valuation, other = _valuation(cfg)
    quo = frame.status_quo(claim.document)
    frame.use(*((frame.fleet(cfg),) if own else ()), quo, frame.PRICES, frame.PRECISION)
    workload = "pretrain" if own else "finetune"
    baseline = payback_baseline(claim.document, valuation)
    value = payback_value(s, baseline, workload=workload)
    x = speedup(s, workload)
    if own:
        alternatives = (
            (f"{_fleet_words(other)} (selling them frees their value)", payback_baseline(claim.document, other)),
            (f"against {OLD}s rented in China", "rent in China"),
        )
        was = (
            "instead of running the {x} owned " + OLD + "s whose work it does (" + _fleet_words(valuation) + ": "
            + ("their remaining depreciation is carried either way, so the upgrade saves their running cost)"
               if valuation == "book" else "selling them frees their value)")
        )
    else:
        alternatives = ((f"against {OLD}s rented at a neocloud", "rent"),)
        was = "instead of renting in China the {x} " + OLD + "s whose work it does"
    readings = tuple(Reading(label, value=payback_value(s, basis, workload=workload)) for label, basis in alternatives)

    def recomputed() -> str:
        others = "; ".join(f"{label}: {months(payback_value(s, basis, workload=workload))}" for label, basis in alternatives)
        return (
            f"one {NEW} bought ({rmb(costs.capex_per_gpu(s, NEW), s, 2)} with network and storage) "
            f"{was.format(x=fmt(scalar(x), 'x'))}, kept as busy "
            f"as they would be: {months(value)}; {others}; a {NEW} left unscheduled part of the month takes longer in "
            "proportion"
        )

    return Finding(
        stated=at_most(hi),
        value=value,
        unit="months",
        recomputed=recomputed,
        context=lambda v: (
            f"at the scenario's per-GPU speed-up one {NEW} saves enough of the status quo's cost to repay itself within "
            "the year, the same work on both sides"
            if v == "consistent"
            else f"doing the same work as the status quo, the {NEW} does not repay itself within {stated(hi)} months"
        ),
        reading=claim.reading or "",
        taken=(
            f"the status quo, the firm's own {OLD}s valued at {'book value' if valuation == 'book' else 'market value'}"
            if own
            else f"the status quo, {OLD}s rented in China"
        ),
        readings=readings,
        documents=_at_documents(lambda v: payback_value(s, baseline, speedup=v, workload=workload)),
        strict=between(lo, hi),
        sig=2,
    )


# --------------------------------------------------------------------------------------------
# 001 §0, §1, §2.1: training cost, inefficiency, the 7B anecdote
# --------------------------------------------------------------------------------------------


@check(SEVERAL_MILLION)
def check_several_million(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §0: electricity, depreciation and labour for one large model run to several million."""
    n_lo, n_hi = training_sizes()
    c_lo, c_hi = several_million_band()
    frame.use(frame.BOUGHT)
    small, large = training_cost_rmb(s, n_lo), training_cost_rmb(s, n_hi)

    def recomputed() -> str:
        fits = [scalar(n) / 1e9 for n in band_sizes(s)]
        return (
            f"compute alone on owned {OLD}s at {fmt(scalar(s['tokens_per_param']), sig=2)} tokens per parameter: "
            f"{stated(n_lo / 1e9)}B {amount(scalar(small), 'RMB', 2)}, {stated(n_hi / 1e9)}B {amount(scalar(large), 'RMB', 2)}; "
            f"{stated(c_lo / 1e6)}-{stated(c_hi / 1e6)} million RMB buys a {fmt(fits[0], sig=2)}-{fmt(fits[1], sig=2)}B model"
        )

    return Finding(
        stated=between(c_lo, c_hi),
        value=np.sqrt(small * large),
        low=small,
        high=large,
        unit="RMB",
        recomputed=recomputed,
        context="the order of magnitude holds for a large model, and labour comes on top of compute",
        reading=claim.reading or "",
        sig=2,
    )


@check("001-1-inefficiency-over-half-of-cost")
def check_inefficiency_over_half_of_cost(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §1: more than half of training cost is tied to inefficiency (table missing)."""
    frame.use(frame.UTILISATION["useful compute"])
    share = costs.wasted_share(s)
    return Finding(
        stated=at_least(claim.value("inefficiency_cost_share_min_pct") / 100),
        value=share,
        unit="fraction",
        recomputed=lambda: (
            f"1 - utilisation {fmt(scalar(operations.busy_share(s)), pct=True, sig=2)} × goodput "
            f"{fmt(scalar(operations.goodput(s)), pct=True, sig=3)} × {OLD} MFU {fmt(scalar(s[generations.OLD_MFU]), pct=True, sig=2)} "
            f"= {fmt(scalar(share), pct=True, sig=2)} of paid GPU time yields no model FLOPs; waits and reruns alone are "
            f"{fmt(scalar(costs.idle_share(s)), pct=True, sig=2)}"
        ),
        context=lambda v: (
            "the supporting table is missing, but data stalls and reruns together with the FLOPs a busy job leaves "
            "unused take more than half of paid GPU time"
            if v == "consistent"
            else "the supporting table is missing, and the waste the scenario gives falls short of half"
        ),
        reading=claim.reading or "",
        taken="效率低下 as all paid GPU time that yields no model FLOPs (waits, reruns and the FLOPs a busy job leaves unused)",
        readings=(Reading("only the GPU time lost to waits and reruns", value=costs.idle_share(s)),),
    )


@check("001-1-hidden-costs-far-above-hardware")
def check_hidden_costs_far_above_hardware(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §1: once training runs, hidden costs turn out far higher than the hardware itself."""
    frame.use(frame.BOUGHT, frame.UTILISATION["useful compute"])
    hour = costs.owned(s, OLD)
    waste = costs.wasted_share(s) * hour.total / hour.capital
    idle = costs.idle_share(s) * hour.total / hour.capital
    return Finding(
        stated=at_least(claim.value("hidden_over_hardware_min_x")),
        value=waste,
        unit="x",
        recomputed=lambda: (
            f"an owned {OLD}-hour costs {rmb(hour.total, s)} in all, {rmb(hour.capital, s)} of it the hardware's capital "
            f"charge; the {fmt(scalar(costs.wasted_share(s)), pct=True, sig=2)} of paid GPU time that yields no model "
            f"FLOPs costs {fmt(scalar(waste), 'x')} the capital charge (waits and reruns alone: {fmt(scalar(idle), 'x')})"
        ),
        context=lambda v: (
            "counting the FLOPs a busy job leaves unused, the waste does cost more than the hardware"
            if v == "consistent"
            else "the waste the scenario gives does not reach that multiple of the hardware"
        ),
        reading=claim.reading or "",
        taken="隐形成本 as all paid GPU time that yields no model FLOPs, at least 1.5 times the capital charge",
        readings=(Reading("隐形成本 as only the GPU time lost to waits and reruns", value=idle),),
    )


@check("001-2.1-7b-rd-cost-55pct")
def check_7b_rd_cost_55pct(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.1: the 7B start-up's total R&D cost fell by about 55%."""
    a = cases.startup_7b()
    target = 1 - a.rd_cost_cut
    frame.use(frame.BOUGHT, frame.PRICES, frame.PRECISION)

    def recomputed() -> str:
        r = {k: scalar(v) for k, v in rd_ratios(s).items()}
        need = scalar(tco.labour_share_for_ratio(target, r["labour"], r["compute_equal_counts"]))
        lo, hi = sorted((r["labour"], r["compute_scenario"]))
        return (
            f"experiment-days fall to {fmt(r['labour'], pct=True, sig=2)}; with equal GPU counts compute costs "
            f"{fmt(r['compute_equal_counts'], pct=True, sig=2)} of before and a {fmt(target, pct=True, sig=2)} total needs "
            f"labour at least {fmt(need, pct=True, sig=2)} of R&D cost; at the scenario's speed-up for the same work, "
            f"compute costs {fmt(r['compute_scenario'], pct=True, sig=2)} and any labour share gives "
            f"{fmt(lo, pct=True, sig=2)}-{fmt(hi, pct=True, sig=2)} of before"
        )

    return Finding(
        stated=rounded(target, 0.1),
        value=None,
        unit="fraction",
        recomputed=recomputed,
        context="the anecdote gives neither cluster's GPU count nor how R&D cost splits into labour and compute",
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
    bill = rental_rmb(s)
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
    cost = own_rmb(s)

    def recomputed() -> str:
        r = scenario.ranges(cfg)["server_b300_usd_per_gpu"]
        months_life = 12 * c.depreciation_years
        rate = scalar(s["usd_cny"])  # the ledger's money is in the documents' RMB
        capital = c.gpus * r.low * rate / months_life
        return (
            f"{stated(c.gpus)} owned {NEW}s over {stated(c.depreciation_years)} years cost {amount(scalar(cost), 'RMB', 3)} a month "
            f"all in; the servers alone at the lowest public price ({amount(r.low * rate, 'RMB', 3)} per GPU) are "
            f"{amount(capital, 'RMB', 3)} a month; {stated_amount(c.own_rmb_per_month)} implies a system price of "
            f"{amount(scalar(own_implied_price(s)) * rate, 'RMB', 2)} per GPU"
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


# --------------------------------------------------------------------------------------------
# 001 §6: the effective-compute-cost yardstick
# --------------------------------------------------------------------------------------------


@check("001-6-effective-compute-cost-formula")
def check_effective_compute_cost_formula(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §6: measure effective compute cost as total investment / effective TFLOPS-days."""
    frame.use(frame.status_quo(claim.document), frame.PRICES, frame.PRECISION, frame.UTILISATION["useful compute"])
    old = costs.pflop_day_cost(s, OLD, "rent in China")
    new = costs.pflop_day_cost(s, NEW, "owned", "finetune")
    saving = 1 - new / old
    owned_old = costs.pflop_day_cost(s, OLD, "owned")
    return Finding(
        stated=at_least(0.0),
        promise=f"a lower cost per useful FLOP on {NEW} than on the {OLD}s it replaces",
        value=saving,
        unit="fraction",
        recomputed=lambda: (
            f"made precise as the cost of a period's GPU-hours over the useful PFLOP-days they deliver: {OLD}s rented in "
            f"China (the document's own case) {rmb(old, s)}, owned {NEW}s {rmb(new, s)} per useful PFLOP-day at the "
            f"scenario's MFU of each ({fmt(scalar(generations.mfu(s, OLD)), pct=True, sig=2)} {OLD_PRECISION.upper()}, "
            f"{fmt(scalar(generations.mfu(s, NEW, 'finetune')), pct=True, sig=2)} {NEW_PRECISION.upper()}), a saving of "
            f"{fmt(scalar(saving), pct=True, sig=2)}; against owned {OLD}s {rmb(owned_old, s)}"
        ),
        context=lambda v: (
            "a sound yardstick once the investment is spread over the same period as the compute it delivers; it "
            f"shows {NEW} cheaper per useful FLOP, as the advice expects"
            if v == "consistent"
            else f"a sound yardstick, but at these figures it shows {NEW} dearer per useful FLOP"
        ),
        reading=claim.reading or "",
        taken=f"the firm's current compute as the document's own case has it, {OLD}s rented in China",
        readings=(Reading(f"{OLD}s the firm owns, at today's market price", value=1 - new / owned_old),),
        documents=_at_documents(lambda v: 1 - new * speedup(s, "finetune") / v / old),
    )


# --------------------------------------------------------------------------------------------
# 000 §1: energy efficiency, one of the five dimensions, never covered
# --------------------------------------------------------------------------------------------


@check("000-1-five-dimensions-energy-efficiency")
def check_five_dimensions_energy_efficiency(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §1: B300 answers on energy efficiency among five dimensions, a promise the document never
    takes up. Training work per kWh of GPU power on B300 over A100: the per-GPU speed-up times A100's TDP
    over B300's (datasheets; the same node overhead and PUE on both sides cancel)."""
    frame.use(frame.PRECISION)
    x = speedup(s, "pretrain")
    tdp_new, tdp_old = generations.gpu(NEW).tdp_w, generations.gpu(OLD).tdp_w
    ratio = x * tdp_old / tdp_new
    return Finding(
        stated=at_least(claim.value("work_per_energy_min_x")),
        value=ratio,
        unit="x",
        recomputed=lambda: (
            f"a {NEW} draws {fmt(tdp_new, 'W')} against an {OLD}'s {fmt(tdp_old, 'W')} and does {fmt(scalar(x), 'x')} its "
            f"training work, so {fmt(scalar(ratio), 'x')} the work per kWh of GPU power; at the documents' own "
            f"{stated(documents_speedup()[0])}× it would be {fmt(documents_speedup()[0] * tdp_old / tdp_new, 'x')}"
        ),
        context=lambda v: (
            "the document lists energy efficiency among its five dimensions and never returns to it; the book's own "
            f"figures bear it out, {NEW} doing more training work per kWh than {OLD}"
            if v == "consistent"
            else "the document lists energy efficiency among its five dimensions and never returns to it; at these "
            f"figures {NEW} does less training work per kWh than {OLD}"
        ),
        reading=claim.reading or "",
        documents=_at_documents(lambda v: v * tdp_old / tdp_new),
    )
