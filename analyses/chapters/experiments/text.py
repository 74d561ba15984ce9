"""Sentences of the experiments chapter (takeaways and captions), each read from a computed Result."""

from __future__ import annotations

from analyses.chapters.experiments import SLUG, Result
from analyses.pages import sliders
from analyses.scenario.generations import NEW
from analyses.units.formats import fmt, in_words
from analyses.verdicts.sweeps import Slider

SWEEP = "001-2.5-hyperparam-sweep-36-to-9-days"
WEEKLY = "000-4-monthly-to-weekly-updates"


def timeline_sentence(res: Result) -> str:
    """When each schedule of the timeline ends."""
    sw = res.sweep
    return (
        f"Serially the sweep ends after {fmt(sw.case.serial_days, 'days', 2)}; "
        f"{in_words(sw.case.concurrent_runs)} at a time on the same cluster after {fmt(sw.old_concurrent_days, 'days', 3)}, "
        f"which only reorders the work; on {NEW} after {fmt(sw.b300_concurrent_days, 'days', 3)}."
    )


def sweep_takeaway(res: Result) -> str:
    """What shortens the sweep: concurrency or the per-GPU speed-up."""
    sw = res.sweep
    if res.verdict(SWEEP) != "implausible":
        return (
            f"concurrency helps people see results together but saves only what smaller runs gain in efficiency "
            f"(e_slice/e_full = {fmt(sw.e_slice / sw.e_full, sig=3)}); the stated {fmt(sw.stated_speedup, 'x', 2)} "
            f"comes from {NEW}'s per-GPU speed, which at {fmt(sw.per_gpu, 'x')} allows "
            f"{fmt(sw.speedup, 'x', 3)}."
        )
    return (
        f"at {fmt(sw.per_gpu, 'x')} per GPU the concurrent sweep takes {fmt(sw.b300_concurrent_days, 'days', 3)}: "
        f"the stated {fmt(sw.case.parallel_days, 'days', 2)} needs {fmt(sw.required_speedup, 'x', 2)} or a smaller search."
    )


def model_takeaway(res: Result) -> str:
    """Can the efficiency a slice gains explain the stated saving on the same cluster?"""
    sw = res.sweep
    ratio = sw.e_slice / sw.e_full
    if ratio >= sw.required_ratio:
        return f"the efficiency a slice gains ({fmt(ratio, sig=3)}) would give the stated saving on the same cluster."
    return (
        f"a cluster of {fmt(sw.gpus, sig=2)} GPUs already runs one job at {fmt(sw.e_full, pct=True, sig=3)} efficiency, so "
        f"splitting it into slices gains {fmt(ratio, 'x', 3)}, not the {fmt(sw.required_ratio, 'x', 2)} the stated days need."
    )


def early_takeaway(res: Result) -> str:
    """What early stopping saves and what it risks at the scenario's rank correlation."""
    e = res.early
    return (
        f"early stopping cuts the sweep to the compute of {fmt(e.full_runs, sig=2)} full runs and "
        f"{fmt(e.wall_days, 'days', 2)} on {NEW}, but keeps the best configuration with probability "
        f"{fmt(e.p_best_kept, pct=True, sig=2)} at a rank correlation of {fmt(res.s['early_stop_rank_correlation'], sig=2)}: "
        "how safe it is depends on how well short runs predict long ones."
    )


def rounds_sentence(res: Result) -> str:
    """Does a single early cut reach the 7B anecdote's reduced number of tuning rounds?"""
    if min(res.single_cut.values()) <= res.rounds_after:
        return "A single early cut already lands there"
    return "A single early cut does not reach it"


def runs_takeaway(res: Result) -> str:
    """The monthly counts against the run lengths, and the update cadence as the rule reads it."""
    weekly = res.verdict(WEEKLY)
    cadence = (
        "an update every full run is on the order of a week, as the case's 周级 says, though not every seven days"
        if weekly == "consistent"
        else "full retraining cannot keep a weekly cadence"
    )
    return f"the monthly counts follow from the run lengths after rounding; {cadence}."


def slider_caption(s: Slider) -> str:
    """Caption of the speed-up slider."""
    return sliders.caption(s, SLUG, "The sweep's verdict as the B300 cluster's per-GPU speed-up moves.")
