"""Sentences of the reliability chapter (takeaways and captions), each read from a computed Result."""

from __future__ import annotations

from analyses.chapters.reliability import SLUG, Result, checks
from analyses.pages import sliders
from analyses.units import SECONDS_PER_MINUTE, settle
from analyses.units.formats import duration, fmt, stated
from analyses.verdicts import RULES
from analyses.verdicts.sweeps import Slider

AGREEMENT_FACTOR = 2.0  # the logs "agree" when their per-GPU rates lie within this factor (the scenario's
# b300_failure_ratio range rests on the same factor)


def failures_takeaway(res: Result) -> str:
    """Job MTBF at the scenario's job size and at the calibrating run's size."""
    return (
        f"failures scale with GPU count: at the scenario's rate a job of {fmt(res.s['job_gpus'], sig=4)} GPUs is "
        f"interrupted every {duration(res.job_mtbf_s)}, one of {res.big_gpus:,} GPUs every {duration(res.big_mtbf_s)}."
    )


def logs_sentence(res: Result) -> str:
    """Which published logs lie outside a factor of two of the scenario's rate."""
    ratio = res.logs.set_index("id")["rate vs scenario"]
    outside = ratio[(ratio > AGREEMENT_FACTOR) | (ratio < 1 / AGREEMENT_FACTOR)]
    if outside.empty:
        return f"Every log lies within a factor of {stated(AGREEMENT_FACTOR)} of the scenario's rate."
    names = ", ".join(f"{i} ({fmt(v, 'x', 2)})" for i, v in outside.items())
    return f"Logs outside a factor of {stated(AGREEMENT_FACTOR)} of the scenario's rate: {names}."


def policy_takeaway(res: Result) -> str:
    """How the stated intervals compare with the best interval for this job, as the rule judges it."""
    p = res.policy
    early = fmt(p.early_s / SECONDS_PER_MINUTE, "min", sig=2)
    late = fmt(p.late_s / SECONDS_PER_MINUTE, "min", sig=2)
    first = (
        f"the policy keeps {fmt(p.ratio, pct=True, sig=3)} of the best goodput, which serves its purpose"
        if res.verdict(checks.POLICY) == "consistent"
        else f"the policy keeps only {fmt(p.ratio, pct=True, sig=3)} of the best goodput"
    )
    second = (
        f"{early} checkpoints cost more than they save ({fmt(p.goodput_early, pct=True, sig=4)} against "
        f"{fmt(p.goodput_late, pct=True, sig=4)} at {late})"
        if p.goodput_early < p.goodput_late
        else f"{early} checkpoints do better than {late} ones for this job"
    )
    return f"the right interval follows from checkpoint cost and failure rate; {first}, and {second}."


def mc_takeaway(res: Result) -> str:
    """Agreement of the simulation with the closed form, and how the spread moves with the interval."""
    mc = res.monte_carlo.dropna()
    if mc.empty:
        return "at this failure rate no interval lets a simulated job finish in reasonable time."
    diff = float((mc["Monte Carlo mean"] - mc["closed form"]).abs().max())
    ordered = mc.sort_values("minutes")
    spread = (ordered["MC 95%"] - ordered["MC 5%"]).to_numpy()
    wider = spread[-1] > spread[0]
    return (
        f"the simulated means differ from the closed form by at most {fmt(100 * diff, sig=2)} percentage points of "
        f"goodput; the spread between runs is {'wider' if wider else 'narrower'} for long intervals than for short ones"
        + (", where a single unlucky failure costs more." if wider else ".")
    )


def causes_sentence(res: Result) -> str:
    """What even a perfect server leaves, against the table's stated cut."""
    central = res.s["preventable_interruption_share"]
    # the table's cut against what removing every preventable interruption leaves, within the capability
    # tolerance the row is judged with (its verdict also weighs the credit the table gives B300)
    left, allowed = 1 - central, (1 - res.cut_stated) * (1 + RULES["capability"].tolerance)
    reach = "within reach" if left <= allowed else "out of reach"
    return (
        f"Even if server hardware removed every GPU and host failure ({fmt(central, pct=True, sig=3)}), "
        f"{fmt(1 - central, pct=True, sig=3)} of the interruptions would remain, so a {fmt(res.cut_stated, pct=True, sig=2)} "
        f"cut is {reach}"
    )


def clean_run_sentence(res: Result) -> str:
    """How likely the anecdote's clean run is for the B300 job that does the old job's work, at the
    scenario's per-GPU rate and B300 failure ratio, against a job of the old size; the ledger's verdict."""
    f = res.fintech
    days = fmt(f.case.run_days_no_fault, "days", sig=2)
    ratio = res.s["b300_failure_ratio"]
    rate = (
        "the scenario's per-GPU rate" if settle(ratio) == 1 else f"{fmt(ratio, 'x', sig=2)} the scenario's per-GPU rate"
    )
    text = (
        f"The same work on {fmt(f.b300_gpus, sig=2)} B300s, as many as the speed-up needs, fails every "
        f"{fmt(f.b300_mtbf_days, 'days', 2)} at {rate}, so {days} without a crash happen with probability "
        f"{fmt(f.p_clean, pct=True, sig=2)}"
    )
    verdict = res.verdict(checks.FINTECH_001)
    if f.p_clean < checks.CLEAN_RUN_TAIL:
        return (
            text + f": the anecdote needs a job that fails at most once every {fmt(f.need_mtbf_days, 'days', 2)}, "
            f"less often than published failure rates allow; the ledger finds it {verdict}."
        )
    return (
        text + f", and the ledger finds the anecdote {verdict}, plausible only as a smaller job: one of the old job's "
        f"size failing as often would have a {fmt(f.p_clean_old, pct=True, sig=2)} chance of it."
    )


def fintech_takeaway(res: Result) -> str:
    """The fintech section's takeaway: its arithmetic and the verdicts the ledger gives its three claims."""
    saved = res.verdict(checks.FINTECH_001)
    gain = res.verdict(checks.RD_EFFICIENCY)
    return (
        f"the {fmt(res.fintech.case.hours_saved_001, 'hours', 2)} saved add up, but the clean run itself is {saved} "
        f"(nothing public records it), and the {fmt(res.fintech.case.rd_efficiency_gain, pct=True, sig=2)} R&D "
        f"efficiency is {gain}: its own figures give {fmt(res.fintech.saved_share, pct=True, sig=2)}."
    )


def recovery_sentence(res: Result) -> str:
    """Restart and recomputed work per crash against Llama 3's bound."""
    return (
        f"In the scenario an automated restart takes {fmt(res.restart_min, 'min', 2)}, and with the "
        f"document's hourly checkpoints a crash costs {fmt(res.lost_late_min, 'min', 2)} with the recomputed work"
    )


def slider_caption(s: Slider) -> str:
    """Caption of a slider figure."""
    return sliders.caption(s, SLUG)


# --------------------------------------------------------------------------------------------
# Operations modes and the validation against published logs
# --------------------------------------------------------------------------------------------

VALIDATION_TOLERANCE = 0.30  # issue 21: each named run's interruption figure within 30% of its mode's model
NAMED_RUNS = {"Llama 3": "llama3-405b-all", "BLOOM-176B": "bloom-176b-gpu", "OPT-175B": "opt-175b-chronicle-27pct"}


def _row(res: Result, ids_start: str):
    v = res.rates
    return v[v["ids"].str.startswith(ids_start)].iloc[0]


def _signed(x: float) -> str:
    """A relative error with its sign (+15%, -20%)."""
    return ("+" if x >= 0 else "") + fmt(x, pct=True, sig=2)


def modes_sentence(res: Result) -> str:
    """The two modes' rates, their ratio and what the hardware share is."""
    f = res.fit
    auto, manual = f.rates["automated"], f.rates["manual"]
    return (
        f"Fitted on the calibration logs, a cluster with automated operations is interrupted "
        f"{fmt(auto, sig=3)} times per GPU-year (all causes) and one run by hand {fmt(manual, sig=3)} times, "
        f"{fmt(manual / auto, 'x', 2)} as often; {fmt(res.hardware_share, pct=True, sig=2)} of all interruptions are "
        "hardware (GPU, host and network faults, unplanned host downtime)"
    )


def named_runs_sentence(res: Result) -> str:
    """The three runs the issue names: error against their mode's model, in sample and left out."""
    parts = []
    for name, ids in NAMED_RUNS.items():
        r = _row(res, ids)
        parts.append(
            f"{name} ({r['mode']}) {_signed(r['fit_error'])} against the fit and {_signed(r['error'])} left out of it"
        )
    worst = max(abs(_row(res, ids)[c]) for ids in NAMED_RUNS.values() for c in ("fit_error", "error"))
    verdict = "all within" if worst <= VALIDATION_TOLERANCE else "not all within"
    return f"{'; '.join(parts)}: {verdict} {fmt(VALIDATION_TOLERANCE, pct=True, sig=2)}"


def validation_takeaway(res: Result) -> str:
    """How many out-of-sample predictions the band holds, and which it misses."""
    v = res.rates
    scored = v[v["role"].isin(["calibrate", "validate"]) & v["predicted"].notna()]
    inside = scored["inside"].astype(bool)
    misses = scored.loc[~inside, "log"].tolist()
    text = (
        f"{int(inside.sum())} of {len(scored)} out-of-sample predictions (calibration logs left out in turn, and "
        f"validation logs never fitted) lie in their 90% band"
    )
    if not misses:
        return text + "."
    return text + "; the misses: " + "; ".join(misses) + "."


def goodput_takeaway(res: Result) -> str:
    """The goodput validation in a sentence."""
    g = res.goodput_check
    inside = g["inside"].astype(bool)
    out = g.loc[~inside, "run"].tolist()
    text = (
        f"{int(inside.sum())} of {len(g)} published goodput figures lie in the model's 90% band; its central values "
        f"({fmt(g['predicted'].min(), pct=True, sig=3)}–{fmt(g['predicted'].max(), pct=True, sig=3)}) sit below "
        "what these operators report, because the scenario's checkpoint write and restart are those of a typical "
        "automated cluster, not of the best"
    )
    return text + (f" (outside: {', '.join(out)})." if out else ".")


def misses_sentence(res: Result) -> str:
    """Why the rate band misses what it misses: the RSC clusters' spread and RSC's research jobs."""
    v = res.rates.set_index("label")
    spread = v.loc["rsc1-node-failures", "published"] / v.loc["rsc2-node-failures", "published"]
    jobs = v.loc["rsc-mttf-1024", "error"] + 1
    return (
        f"The two RSC clusters' node-failure rates differ by {fmt(spread, 'x', 2)} from each other, so leaving the "
        f"higher one out leaves a band too narrow for it; and RSC's 1,024-GPU jobs fail {fmt(jobs, 'x', 2)} as often "
        "as the model says, because they are research jobs on a shared cluster whose failures include per-job causes "
        "(code, configuration, storage) that do not grow with the job's GPUs, while the book models dedicated "
        "pre-training runs."
    )


def scenario_goodput_sentence(res: Result) -> str:
    """The scenario's goodput: the model for the scenario's job, against Llama 3's larger job."""
    llama = res.logs.set_index("id").loc["llama3-405b-all", "GPUs"]
    return (
        f"The scenario's goodput, which the cost chapters use, is this model for the scenario's own job "
        f"({fmt(int(res.s['job_gpus']), 'GPUs')}, automated operations): {fmt(res.goodput_scenario, pct=True, sig=3)}, "
        f"not the {fmt(res.effective_time, pct=True, sig=2)} that Llama 3 reached on a job "
        f"{fmt(llama / res.s['job_gpus'], 'x', 2)} as large"
    )
