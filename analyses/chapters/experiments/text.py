"""The experiments chapter's glued numbers and phrases: :func:`glued` maps every name its page glues
to text formatted through :mod:`analyses.units.formats`; the sentences live in the notebook's
markdown, and the phrases here branch on a verdict or a comparison, each ``fn(result) -> str``."""

from __future__ import annotations

from typing import Any

from analyses import units
from analyses.chapters.experiments import SLUG, Result
from analyses.pages import sliders
from analyses.scenario import generations
from analyses.scenario.generations import NEW
from analyses.units.formats import fmt, in_words
from analyses.verdicts.sweeps import Slider

SWEEP = "001-2.5-hyperparam-sweep-36-to-9-days"
WEEKLY = "000-4-monthly-to-weekly-updates"


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


def rounds_sentence(res: Result) -> str:
    """Does a single early cut reach the 7B anecdote's reduced number of tuning rounds?"""
    if min(res.single_cut.values()) <= res.rounds_after:
        return "A single early cut already lands there"
    return "A single early cut does not reach it"


def cadence(res: Result) -> str:
    """The update cadence as the rule reads the weekly claim."""
    if res.verdict(WEEKLY) == "consistent":
        return (
            "an update every full run is on the order of a week, as the case's 周级 says, though not every seven days"
        )
    return "full retraining cannot keep a weekly cadence"


def slider_caption(s: Slider) -> str:
    """Caption of the speed-up slider."""
    return sliders.caption(s, SLUG, "The sweep's verdict as the B300 cluster's per-GPU speed-up moves.")


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the chapter's page glues, by name, formatted for the page."""
    sw, es, cfg = res.sweep, res.early, res.cfg
    return {
        # the sweep
        "n_runs": fmt(sw.case.configs, sig=2),
        "per_run": fmt(sw.case.run_days, "days", 2),
        "old_conc": fmt(sw.old_concurrent_days, "days", 3),
        "serial": fmt(sw.case.serial_days, "days", 2),
        "target": fmt(sw.case.parallel_days, "days", 2),
        "stated_x": fmt(sw.stated_speedup, "x", 2),
        "ratio_need": fmt(sw.required_ratio, sig=2),
        "speedup": fmt(float(generations.speedup(res.s, "pretrain")), "x", 3),
        "b300_conc": fmt(sw.b300_concurrent_days, "days", 3),
        "b300_x": fmt(sw.speedup, "x", 3),
        "k_conc": str(int(sw.case.concurrent_runs)),
        "k_conc_words": in_words(sw.case.concurrent_runs),
        "sweep_takeaway": sweep_takeaway(res),
        # the efficiency model
        "slice_gpus": fmt(sw.slice_gpus, "GPU", 1),
        "m_gpus": fmt(sw.gpus, "GPUs", 2),
        "mfu_slice": fmt(sw.mfu_slice, pct=True, sig=3),
        "m_full": fmt(sw.e_full, pct=True, sig=3),
        "m_slice": fmt(sw.e_slice, pct=True, sig=3),
        "ratio_model": fmt(sw.e_slice / sw.e_full, sig=3),
        "model_takeaway": model_takeaway(res),
        # early stopping
        "eta": str(cfg["sh_eta"]),
        "r0": fmt(cfg["sh_min_budget"], pct=True, sig=2),
        "rung_sizes": " -> ".join(str(v) for v in es.rung_configs),
        "sh_full": fmt(es.full_runs, sig=2),
        "sh_frac": fmt(es.fraction, pct=True, sig=3),
        "sh_gpud": fmt(es.gpu_days, "GPU-days", 3),
        "all_gpud": fmt(es.gpu_days_all, "GPU-days", 3),
        "sh_wall": fmt(es.wall_days, "days", 2),
        "rank_corr": fmt(res.s["early_stop_rank_correlation"], sig=2),
        "p_best": fmt(es.p_best_kept, pct=True, sig=2),
        "regret": fmt(es.regret_when_missed, sig=2),
        "cut_third": fmt(res.single_cut["third"], sig=2),
        "cut_half": fmt(res.single_cut["half"], sig=2),
        "rounds_before": fmt(res.rounds_before),
        "rounds_after": fmt(int(res.rounds_after)),
        "rounds_sentence": rounds_sentence(res),
        # runs per month
        "days_per_month": fmt(units.DAYS_PER_MONTH, sig=3),
        "cadence": cadence(res),
        "cap_speedup": slider_caption(res.sliders[0]),
    }
