"""The reliability chapter's glued numbers and phrases: :func:`glued` maps every name its page glues
to text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's
markdown. The phrases here branch on a verdict or a comparison, each ``fn(result) -> str``."""

from __future__ import annotations

from typing import Any

from analyses.chapters.reliability import MC_RUNS, MC_WORK_DAYS, SLUG, Result, checks
from analyses.models.uncertainty import INTERVAL_LEVEL
from analyses.pages import sliders
from analyses.units import SECONDS_PER_MINUTE, settle
from analyses.units.formats import duration, fmt, stated
from analyses.verdicts import RULES
from analyses.verdicts.sweeps import Slider

AGREEMENT_FACTOR = 2.0  # the logs "agree" when their per-GPU rates lie within this factor (the scenario's
# b300_failure_ratio range rests on the same factor)


def logs_sentence(res: Result) -> str:
    """Which published logs lie outside a factor of two of the scenario's rate."""
    ratio = res.logs.set_index("id")["rate vs scenario"]
    outside = ratio[(ratio > AGREEMENT_FACTOR) | (ratio < 1 / AGREEMENT_FACTOR)]
    if outside.empty:
        return f"Every log lies within a factor of {stated(AGREEMENT_FACTOR)} of the scenario's rate."
    names = ", ".join(f"{i} ({fmt(v, 'x', 2)})" for i, v in outside.items())
    return f"Logs outside a factor of {stated(AGREEMENT_FACTOR)} of the scenario's rate: {names}."


def policy_keeps(res: Result) -> str:
    """What the stated policy keeps of the best goodput, as the recommendation rule judges it."""
    kept = fmt(res.policy.ratio, pct=True, sig=3)
    if res.verdict(checks.POLICY) == "consistent":
        return f"the policy keeps {kept} of the best goodput, which serves its purpose"
    return f"the policy keeps only {kept} of the best goodput"


def policy_checkpoints(res: Result) -> str:
    """The policy's short checkpoints against its long ones for this job."""
    p = res.policy
    early = fmt(p.early_s / SECONDS_PER_MINUTE, "min", sig=2)
    late = fmt(p.late_s / SECONDS_PER_MINUTE, "min", sig=2)
    if p.goodput_early < p.goodput_late:
        return (
            f"{early} checkpoints cost more than they save ({fmt(p.goodput_early, pct=True, sig=4)} against "
            f"{fmt(p.goodput_late, pct=True, sig=4)} at {late})"
        )
    return f"{early} checkpoints do better than {late} ones for this job"


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


def cut_reach(res: Result) -> str:
    """Whether the table's stated cut is within reach of a server that removed every preventable
    interruption (within the capability tolerance the row is judged with; its verdict also weighs the
    credit the table gives B300)."""
    left = 1 - res.s["preventable_interruption_share"]
    allowed = (1 - res.cut_stated) * (1 + RULES["capability"].tolerance)
    return "within reach" if left <= allowed else "out of reach"


def clean_run_rate(res: Result) -> str:
    """The per-GPU rate the B300 job fails at: the scenario's, or a multiple of it."""
    ratio = res.s["b300_failure_ratio"]
    return (
        "the scenario's per-GPU rate" if settle(ratio) == 1 else f"{fmt(ratio, 'x', sig=2)} the scenario's per-GPU rate"
    )


def clean_run_ending(res: Result) -> str:
    """How the anecdote's clean run ends up: too unlikely for published failure rates, or plausible only
    as a smaller job; the ledger's verdict. Starts with its punctuation (":" or ",")."""
    f = res.fintech
    verdict = res.verdict(checks.FINTECH_001)
    if f.p_clean < checks.CLEAN_RUN_TAIL:
        return (
            f": the anecdote needs a job that fails at most once every {fmt(f.need_mtbf_days, 'days', 2)}, "
            f"less often than published failure rates allow; the ledger finds it {verdict}."
        )
    return (
        f", and the ledger finds the anecdote {verdict}, plausible only as a smaller job: one of the old job's "
        f"size failing as often would have a {fmt(f.p_clean_old, pct=True, sig=2)} chance of it."
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


def named_runs_within(res: Result) -> str:
    """Whether the three named runs' errors, in sample and left out, are all within the tolerance."""
    worst = max(abs(_row(res, ids)[c]) for ids in NAMED_RUNS.values() for c in ("fit_error", "error"))
    return "all within" if worst <= VALIDATION_TOLERANCE else "not all within"


def validation_misses(res: Result) -> str:
    """The end of the validation takeaway: the logs the band misses, if any (with the closing stop)."""
    v = res.rates
    scored = v[v["role"].isin(["calibrate", "validate"]) & v["predicted"].notna()]
    misses = scored.loc[~scored["inside"].astype(bool), "log"].tolist()
    return "; the misses: " + "; ".join(misses) + "." if misses else "."


def goodput_outside(res: Result) -> str:
    """The end of the goodput takeaway: the runs outside the band, if any (with the closing stop)."""
    g = res.goodput_check
    out = g.loc[~g["inside"].astype(bool), "run"].tolist()
    return f" (outside: {', '.join(out)})." if out else "."


# long: one line per name the page glues (a table of formatted values, not logic to split)
def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    logs = res.logs.set_index("id")
    opt, pol, fin, f = res.optimum, res.policy, res.fintech, res.fit
    auto, manual = f.rates["automated"], f.rates["manual"]
    out: dict[str, Any] = {
        "level": fmt(INTERVAL_LEVEL, pct=True, sig=2),
        # how often a large job fails
        "llama_all": fmt(int(logs.loc["llama3-405b-all", "interruptions"])),
        "llama_days": fmt(logs.loc["llama3-405b-all", "days"], "days", 2),
        "llama_gpus": fmt(int(logs.loc["llama3-405b-all", "GPUs"])),
        "opt_chron": fmt(int(logs.loc["opt-175b-chronicle-27pct", "interruptions"])),
        "opt_chron_days": fmt(logs.loc["opt-175b-chronicle-27pct", "days"], "days", 2),
        "opt_all": fmt(int(logs.loc["opt-175b-hardware-all", "interruptions"])),
        "opt_days": fmt(logs.loc["opt-175b-hardware-all", "days"], "days", 2),
        "opt_gpus": fmt(int(logs.loc["opt-175b-hardware-all", "GPUs"])),
        "bloom_lo": fmt(int(logs.loc["bloom-176b-gpu-failures-low", "interruptions"])),
        "bloom_hi": fmt(int(logs.loc["bloom-176b-gpu-failures-high", "interruptions"])),
        "bloom_days": fmt(logs.loc["bloom-176b-gpu-failures-low", "days"], "days", 3),
        "bloom_gpus": fmt(int(logs.loc["bloom-176b-gpu-failures-low", "GPUs"])),
        "rate_auto": fmt(auto, sig=3),
        "rate_manual": fmt(manual, sig=3),
        "rate_manual_vs_auto": fmt(manual / auto, "x", 2),
        "hardware_share": fmt(res.hardware_share, pct=True, sig=2),
        "mode": res.operations,
        "rate": fmt(res.rate, sig=3),
        "rate_low": fmt(res.rate_low, sig=3),
        "rate_high": fmt(res.rate_high, sig=3),
        "mtbf_years": fmt(res.per_gpu_mtbf_years, "years", 2),
        "logs_sentence": logs_sentence(res),
        "n_gpus": fmt(res.s["job_gpus"], "GPUs", 4),
        "job_mtbf_h": fmt(res.job_mtbf_s / 3600, "h", 3),
        "crash_every": fmt(fin.case.crash_interval_days, "days", 1),
        "gpus_5d": fmt(fin.gpus_at_rate, "GPUs", 2),
        "job_gpus": fmt(res.s["job_gpus"], sig=4),
        "job_mtbf": duration(res.job_mtbf_s),
        "big_gpus": f"{res.big_gpus:,}",
        "big_mtbf": duration(res.big_mtbf_s),
        # checkpoints
        "delta": fmt(res.s["checkpoint_write_s"], "s", 3),
        "restart": fmt(res.restart_s / 60, "min", 3),
        "young_min": fmt(opt.young_s / 60, "min", 3),
        "daly_min": fmt(opt.daly_s / 60, "min", 3),
        "exact_min": fmt(opt.exact_s / 60, "min", 3),
        "exact_h": fmt(opt.exact_s / 3600, "h", 2),
        "g_opt": fmt(opt.goodput_exact, pct=True, sig=4),
        "g_15": fmt(pol.goodput_early, pct=True, sig=4),
        "g_60": fmt(pol.goodput_late, pct=True, sig=4),
        "g_policy": fmt(pol.goodput_policy, pct=True, sig=4),
        "g_ratio": fmt(pol.ratio, pct=True, sig=3),
        "early_share": fmt(pol.early_share, pct=True, sig=2),
        "p_early": fmt(pol.early_s / 60, "min", 2),
        "p_late": fmt(pol.late_s / 60, "min", 2),
        "policy_keeps": policy_keeps(res),
        "policy_checkpoints": policy_checkpoints(res),
        # the simulation
        "mc_runs": fmt(MC_RUNS),
        "mc_days": fmt(MC_WORK_DAYS, "days", 2),
        "mc_takeaway": mc_takeaway(res),
        # the fintech anecdote
        "crash_days": fmt(fin.case.crash_interval_days, "days", 1),
        "clean_days": fmt(fin.case.run_days_no_fault, "days", 2),
        "crashes": fmt(fin.crashes, sig=2),
        "rec_h": fmt(fin.case.recovery_hours_per_crash, "h", 1),
        "saved_h": fmt(fin.saved_h, "h", 2),
        "window_h": fmt(fin.run_h, "h", 4),
        "saved_share": fmt(fin.saved_share, pct=True, sig=2),
        "rd_gain": fmt(fin.case.rd_efficiency_gain, pct=True, sig=2),
        "saved_stated": fmt(fin.case.hours_saved_001, "hours", 2),
        "b300_gpus": fmt(fin.b300_gpus, sig=2),
        "b300_mtbf": fmt(fin.b300_mtbf_days, "days", 2),
        "clean_rate": clean_run_rate(res),
        "p_clean": fmt(fin.p_clean, pct=True, sig=2),
        "clean_ending": clean_run_ending(res),
        "clean_verdict": res.verdict(checks.FINTECH_001),
        "rd_verdict": res.verdict(checks.RD_EFFICIENCY),
        # what hardware can prevent
        "cut_stated": fmt(res.cut_stated, pct=True, sig=2),
        "cut_times": fmt(1 / (1 - res.cut_stated), "x", 2),
        "tier1": fmt(res.preventable[0], pct=True, sig=3),
        "tier2": fmt(res.preventable[1], pct=True, sig=3),
        "tier3": fmt(res.preventable[2], pct=True, sig=3),
        "left_high": fmt(1 - res.preventable[2], pct=True, sig=3),
        "unexp_n": fmt(int(res.causes["count"].sum())),
        "preventable": fmt(res.s["preventable_interruption_share"], pct=True, sig=3),
        "remaining": fmt(1 - res.s["preventable_interruption_share"], pct=True, sig=3),
        "cut_reach": cut_reach(res),
        # recovery in minutes
        "all_int": fmt(int(logs.loc["llama3-405b-all", "interruptions"])),
        "all_days": fmt(logs.loc["llama3-405b-all", "days"], "days", 2),
        "bound_min": fmt(res.downtime_bound_s / 60, "min", 3),
        "eff_time": fmt(res.effective_time, pct=True, sig=2),
        "restart_auto": fmt(res.restart_min, "min", 2),
        "lost_late": fmt(res.lost_late_min, "min", 2),
    }
    # validated against published logs
    for key, ids in zip(("llama", "bloom", "opt"), NAMED_RUNS.values(), strict=True):
        r = _row(res, ids)
        out |= {
            f"named_{key}_mode": r["mode"],
            f"named_{key}_fit": _signed(r["fit_error"]),
            f"named_{key}_out": _signed(r["error"]),
        }
    v = res.rates
    scored = v[v["role"].isin(["calibrate", "validate"]) & v["predicted"].notna()]
    by_label = v.set_index("label")
    g = res.goodput_check
    llama_gpus = logs.loc["llama3-405b-all", "GPUs"]
    out |= {
        "named_within": named_runs_within(res),
        "tolerance": fmt(VALIDATION_TOLERANCE, pct=True, sig=2),
        "val_inside": fmt(int(scored["inside"].astype(bool).sum())),
        "val_scored": fmt(len(scored)),
        "val_misses": validation_misses(res),
        "rsc_spread": fmt(
            by_label.loc["rsc1-node-failures", "published"] / by_label.loc["rsc2-node-failures", "published"], "x", 2
        ),
        "rsc_job_gpus": fmt(int(by_label.loc["rsc-mttf-1024", "GPUs"])),
        "rsc_jobs_vs_model": fmt(by_label.loc["rsc-mttf-1024", "error"] + 1, "x", 2),
        # goodput
        "gp_inside": fmt(int(g["inside"].astype(bool).sum())),
        "gp_runs": fmt(len(g)),
        "gp_model_low": fmt(g["predicted"].min(), pct=True, sig=3),
        "gp_model_high": fmt(g["predicted"].max(), pct=True, sig=3),
        "gp_outside": goodput_outside(res),
        "scenario_job_gpus": fmt(int(res.s["job_gpus"]), "GPUs"),
        "scenario_goodput": fmt(res.goodput_scenario, pct=True, sig=3),
        "llama_vs_scenario_job": fmt(llama_gpus / res.s["job_gpus"], "x", 2),
    }
    for name, s in zip(("rate", "checkpoint", "ratio"), res.sliders, strict=True):
        out[f"cap_{name}"] = slider_caption(s)
    return out
