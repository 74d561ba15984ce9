"""The plan page's glued numbers and phrases (:func:`glued`: every name its page glues, formatted
through :mod:`analyses.units.formats`) and the command line's summary. The page's sentences that
branch on what fits and what meets the deadline (the recommendation, captions, takeaways) are phrases
here, each read from a computed result, so a reader's parameters change the words with the numbers."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analyses.chapters.plan import PUBLISHED_TOLERANCE, Result, Run
from analyses.chapters.plan.wiring import out_of_sample, recommended_table
from analyses.models import flops, layouts, uncertainty
from analyses.models import plan as pl
from analyses.pages.currency import rate_words
from analyses.scenario.generations import NEW, gpu
from analyses.units import HOURS_PER_DAY
from analyses.units.formats import billions, fmt, stated

# The documents' scenarios the takeaway compares (rows of data/plan_presets.csv)
ANECDOTE_A100, ANECDOTE_B300 = "doc000-13b-a100", "doc000-13b-b300"
NODES_10B, NODES_100B = "doc000-10b-4-8-nodes", "doc000-100b-4-8-nodes"
FINETUNE = "doc001-case-finetune"


def _run(res_or_run: Result | Run) -> Run:
    return res_or_run.run if isinstance(res_or_run, Result) else res_or_run


def money(res_or_run: Result | Run, usd: float, sig: int = 3) -> str:
    """An amount computed in USD in the page's currency, as prose writes it."""
    run = _run(res_or_run)
    return str(fmt(usd * run.money_factor, run.currency, sig))


def _cost(res_or_run: Result | Run, row: pd.Series) -> str:
    """The cost of a recommended layout, or why it has none (a generation without that rent)."""
    req = res_or_run.request
    if pd.isna(row["cost"]):
        return f"no {req.cost_basis} cost (the scenario has no {req.rent_class} rent for {row['gpu']})"
    return f"{money(res_or_run, row['cost'])} ({req.cost_basis})"


RECORD_FIGURES = ("tokens_per_s_per_gpu", "mfu", "step_s", "steady_gpu_hours", "gpu_hours", "days")
"""Each recommended option's figures that carry a 90% band in :func:`records` (``<name>_lo``, ``<name>_hi``)."""


def records(run: Run) -> list[dict[str, Any]]:
    """Every recommended option (one per GPU generation that fits) as a flat record, for ``--format
    csv|json``: the layout, the steady state (tokens/s per GPU, MFU on model FLOPs, step time,
    steady-state GPU-hours), the whole run (GPU-hours, wall-clock days), each with its 90% band, the
    goodput, the fitted terms (stack efficiency, attention kernel, campaign overhead) and both costs with
    their bands in the run's currency; ``recommended`` marks the overall recommendation."""
    req, rec = run.request, run.recommended
    best = run.plan.best
    k = run.money_factor
    by = run.per_run.set_index(["gpu", "basis"]) if len(run.per_run) else None
    out = []
    for _, x in rec.iterrows():
        r: dict[str, Any] = {
            "model": req.shape.name,
            "n_params": float(req.shape.n_params),
            "params_active": float(req.shape.params_active),
            "tokens": float(req.tokens),
            "precision": req.precision,
            "gpu": x["gpu"],
            "n_gpus": int(x["n_gpus"]),
            "layout": layouts.label(x),
            **{
                c: (str(x[c]) if c == "recompute" else int(x[c])) for c in layouts.COLUMNS if c not in ("gpu", "n_gpus")
            },
            "layout_pinned": req.layout_pinned,
            "stack": req.stack,
            "stack_efficiency": float(req.stack_efficiency),
            "attention_kernel": req.attention_kernel,
            "campaign_overhead": float(req.campaign_overhead),
            "memory_gib": float(x["mem_bytes"]) / 2**30,
        }
        for name in RECORD_FIGURES:
            r[name], r[f"{name}_lo"], r[f"{name}_hi"] = (float(x[name]), float(x[f"{name}_lo"]), float(x[f"{name}_hi"]))
        r["goodput"] = float(x["goodput"])
        r["band_class"] = str(x["band_class"])
        r["band_within_rule"] = bool(_within_rule(r))
        r["currency"] = run.currency
        for b in pl.COST_BASES:
            if by is not None and (x["gpu"], b) in by.index:
                c = by.loc[(x["gpu"], b)]
                central, lo, hi = c["cost_usd"], c["cost_usd_lo"], c["cost_usd_hi"]
            else:
                central, lo, hi = x[f"cost_{b}"], x[f"cost_{b}_lo"], x[f"cost_{b}_hi"]
            r[f"cost_{b}"], r[f"cost_{b}_lo"], r[f"cost_{b}_hi"] = (float(v) * k for v in (central, lo, hi))
        r["meets_deadline"] = bool(x["meets_deadline"])
        r["recommended"] = best is not None and x["gpu"] == best["gpu"] and int(x["n_gpus"]) == int(best["n_gpus"])
        out.append(r)
    return out


BAND_RULE = 1.6  # issue 33: a band wider than this factor on either side of its central figure fails a plan


def _within_rule(r: dict[str, Any]) -> bool:
    """Whether every band of a record lies within :data:`BAND_RULE` of its central figure on both sides."""
    return all(
        r[f"{n}_hi"] <= BAND_RULE * r[n] * (1 + 1e-9) and r[f"{n}_lo"] * BAND_RULE * (1 + 1e-9) >= r[n]
        for n in RECORD_FIGURES
    )


def figures_table(run: Run) -> pd.DataFrame:
    """The steady state and the whole run of each recommended option, each figure with its 90% band."""
    def band(r: dict[str, Any], n: str, f: Any) -> str:
        return f"{f(r[n])} ({f(r[n + '_lo'])}-{f(r[n + '_hi'])})"

    rows = []
    for r in records(run):
        rows.append(
            {
                "GPU": r["gpu"],
                "tokens/s/GPU": band(r, "tokens_per_s_per_gpu", lambda v: f"{v:,.0f}"),
                "MFU": band(r, "mfu", lambda v: f"{100 * v:.0f}%"),
                "step s": band(r, "step_s", lambda v: f"{v:.3g}"),
                "steady GPU-h": band(r, "steady_gpu_hours", lambda v: f"{v:,.3g}"),
                "run GPU-h": band(r, "gpu_hours", lambda v: f"{v:,.3g}"),
                "days": band(r, "days", lambda v: f"{v:.3g}"),
                "goodput": f"{100 * r['goodput']:.1f}%",
                "band from": r["band_class"] + ("" if r["band_within_rule"] else f" (wider than x{BAND_RULE:g})"),
            }
        )
    return pd.DataFrame(rows)


def summary(run: Run) -> str:
    """The recommendation as plain text for the terminal (``python -m analyses plan``)."""
    req, p = run.request, run.plan
    s = req.shape
    lines = [
        f"Plan: {s.name}, {s.n_params / 1e9:.1f}B parameters, {req.tokens:.3g} tokens, "
        f"deadline {req.deadline_days:g} days, {req.precision}, cost basis {req.cost_basis}",
    ]
    if p.no_fit:
        lines.append(f"No layout fits in memory on: {', '.join(p.no_fit)}")
    if p.recommended.empty:
        return "\n".join(lines)
    frame = recommended_table(run.recommended, run.plan.efficiency_basis, run.per_run, run.currency, run.money_factor)
    shown = frame.drop(columns=["memory (GiB)", "MFU", "goodput", "GEMM eff.", "eff. from"])
    lines.append(shown.to_string(index=False, na_rep="n/a", float_format=lambda x: f"{x:,.2f}"))
    lines.append("")
    lines.append(
        "Steady state and whole run (central, 90% band from grouped cross-validation on the published runs of "
        "the plan's class: 'band from'); "
        f"stack {req.stack} (efficiency {req.stack_efficiency:.2f}), "
        + ("layout pinned" if req.layout_pinned else "layout the planner's pick")
        + f", {req.attention_kernel} attention"
        + f", campaign overhead {100 * req.campaign_overhead:.1f}%:"
    )
    lines.append(figures_table(run).to_string(index=False))
    best = p.best
    verdict = "meets the deadline" if best["meets_deadline"] else "is the fastest, but misses the deadline"
    cost = _cost(run, best)
    lines.append(
        f"Recommended: {int(best['n_gpus'])} x {best['gpu']} ({layouts.label(best)}), "
        f"{best['days']:.1f} days, {cost}; it {verdict}."
    )
    return "\n".join(lines)


def recommendation(res: Result) -> str:
    """The recommendation in one sentence (or why there is none)."""
    req, best = res.request, res.best
    no_fit = f" No layout fits in memory on {', '.join(res.plan.no_fit)}." if res.plan.no_fit else ""
    if best is None:
        return (
            f"No layout of this model fits in the memory of any generation considered "
            f"({', '.join(req.gpus)}) between {req.min_gpus:,} and {req.max_gpus:,} GPUs: allow more GPUs "
            "(pipeline and ZeRO stages shard the model further) or a shorter sequence."
        )
    where = (
        "the cheapest layout that meets the deadline"
        if best["meets_deadline"]
        else f"the fastest layout, though no layout meets the {fmt(req.deadline_days, 'days')} deadline within {req.max_gpus:,} GPUs"
    )
    return (
        f"The recommendation, {where}, is {int(best['n_gpus']):,} × {best['gpu']} in the layout "
        f"{layouts.label(best)}: {fmt(best['days'], 'days')} and {_cost(res, best)}, at a model "
        f"FLOP utilisation of {fmt(best['mfu'], pct=True, sig=2)} and a goodput of "
        f"{fmt(best['goodput'], pct=True, sig=3)}.{no_fit}"
    )


def breakdown_caption(res: Result) -> str:
    """Caption of the breakdown chart: what takes the most time besides useful compute."""
    frame = res.breakdown[res.breakdown["part"] != "compute"]
    if frame.empty:
        return "Days of the recommended layout of each generation, by where they go (no layout fits)."
    top = frame.loc[frame["share"].idxmax()]
    return (
        f"Days of the recommended layout of each generation, by where they go. Besides useful compute, "
        f"the largest part is the {top['part']} of the {top['gpu']} layout, "
        f"{fmt(top['share'], pct=True, sig=2)} of its time."
    )


def sensitivity_caption(res: Result) -> str:
    """Caption of the tornado: the input that moves the cost most."""
    if res.sensitivity.empty:
        return "No layout fits in memory, so there is no cost to move."
    top = res.sensitivity.iloc[0]
    if pd.isna(top["cost_swing"]):
        return f"The recommended layout has {_cost(res, res.best)}, so there is no cost to move."
    low, high = sorted((top["cost_a"], top["cost_b"]))
    return (
        f"Cost of the recommended layout with each input at its two extremes, the others fixed; dashed: the "
        f"planned cost. The widest bar, {top['input']}, moves it from {money(res, low, 2)} to {money(res, high, 2)}: "
        "the input to pin down first."
    )


def validation_takeaway(res: Result) -> str:
    """Whether the out-of-sample published runs land within the tolerance."""
    rows = out_of_sample(res.comparison)
    unfit = rows[rows["error"].isna()]
    if not unfit.empty:
        runs = " and the ".join(unfit["run"])
        return f"the {runs} no longer fit in memory, so the planner cannot be checked on them at these settings"
    worst = rows.loc[rows["error"].abs().idxmax()]
    tol = fmt(PUBLISHED_TOLERANCE, pct=True, sig=2)
    if (rows["error"].abs() <= PUBLISHED_TOLERANCE).all():
        return (
            f"every published run lands within ±{tol} without its own throughput in the calibration; the largest "
            f"error, {fmt(worst['error'], pct=True, sig=2)}, is that of the {worst['run']}"
        )
    return (
        f"{worst['run']} misses the ±{tol} tolerance with an error of {fmt(worst['error'], pct=True, sig=2)}: "
        "at these settings the planner is not validated on it"
    )


def _scenario(res: Result, preset_id: str) -> pd.Series | None:
    rows = res.scenarios.set_index("preset")
    if preset_id not in rows.index or pd.isna(rows.loc[preset_id].get("GPUs")):
        return None
    return rows.loc[preset_id]


def _finish(row: pd.Series | None, gpu: str) -> str:
    if row is None:
        return f"no {gpu} layout fits"
    if row["meets"]:
        return f"{int(row['GPUs']):,} {gpu}s finish in {stated(row['stated days'])} days"
    return (
        f"even {int(row['GPUs']):,} {gpu}s take {fmt(row['planned days'], 'days')}, "
        f"beyond the stated {stated(row['stated days'])} days"
    )


def scenarios_takeaway(res: Result) -> str:
    """What the documents' scenarios need inside the planner."""
    a100, b300 = _scenario(res, ANECDOTE_A100), _scenario(res, ANECDOTE_B300)
    ten, hundred, tune = _scenario(res, NODES_10B), _scenario(res, NODES_100B), _scenario(res, FINETUNE)
    sentences = [
        f"With {fmt(res.s['tokens_per_param'], sig=2)} training tokens per parameter, the 13B anecdote of "
        f"document 000 (part 2.1) needs the cluster size as much as the generation: {_finish(a100, 'A100')}, "
        f"{_finish(b300, 'B300')}."
    ]
    if ten is not None and hundred is not None:
        largest = (
            f"trains in {fmt(hundred['planned days'], 'days')} on {int(hundred['GPUs'])} B300s"
            if hundred["meets"]
            else f"needs {fmt(hundred['planned days'], 'days')} even on {int(hundred['GPUs'])} B300s"
        )
        sentences.append(
            f"Read as a {billions(ten['parameters'], sig=2)}-parameter model, the 4-to-8-node plan of part 5 trains in "
            f"{fmt(ten['planned days'], 'days')} on {int(ten['GPUs'])} B300s; read as {billions(hundred['parameters'], sig=2)}, "
            f"it {largest}."
        )
    if tune is not None:
        hours, stated_hours = tune["planned days"] * HOURS_PER_DAY, tune["stated days"] * HOURS_PER_DAY
        bound = (
            f"so the stated time fits a corpus about {fmt(stated_hours / hours, 'x', 2)} larger: the whole accumulated "
            "corpus a full fine-tune (全量微调) covers, whose size the case does not give"
            if hours < stated_hours
            else "so computing that month's entries alone fills the stated time"
        )
        sentences.append(
            f"The fine-tune of document 001's case study (part 4), run on one month's new entries only, needs about "
            f"{fmt(hours, 'hours', 2)} of computing on its {int(tune['GPUs'])} B300s against the "
            f"{stated(tune['stated days'])} days stated, {bound}."
        )
    return " ".join(sentences)


REGIONS = {"china": "Chinese", "us": "US"}


def basis(res: Result) -> str:
    """The convention of every cost on the page (the book's one convention for a run's cost)."""
    req, run = res.request, res.run
    rate = "" if run.currency == "USD" else f", converted at {rate_words(res.s)}"
    return (
        f"Every cost on this page is in {run.currency}{rate}, and follows the book's one convention for a run, the "
        "one the buy-or-rent page and the cost chapter use: the GPU-hours the run occupies (GPUs × wall-clock "
        f"hours) times the price of a GPU-hour, rented ({req.rent_class} rent with storage and network) or owned (the "
        f"calendar-hour cost of an owned GPU at the {REGIONS.get(req.electricity_region, req.electricity_region)} "
        f"electricity tariff, charged for the run's hours only). Every generation trains in {req.precision.upper()}."
    )


def why(res: Result) -> str:
    """Why the recommendation is another generation than the documents' new one, when it is."""
    best, req = res.best, res.request
    if best is None or best["gpu"] == NEW or NEW not in set(res.run.per_run["gpu"]):
        return ""
    by = res.run.per_run.set_index(["gpu", "basis"])
    mine, theirs = by.loc[(best["gpu"], req.cost_basis)], by.loc[(NEW, req.cost_basis)]
    peak = gpu(NEW).peak_flops(req.precision) / gpu(best["gpu"]).peak_flops(req.precision)
    price = theirs["usd_per_gpu_hour"] / mine["usd_per_gpu_hour"]
    return (
        f"Why {best['gpu']} and not {NEW}: in {req.precision.upper()} a {NEW}'s dense peak is {fmt(peak, 'x', 2)} a "
        f"{best['gpu']}'s, while its GPU-hour costs {fmt(price, 'x', 2)} as much ({req.cost_basis}), so the run costs "
        f"{money(res, theirs['cost_usd'])} on {NEW} against {money(res, mine['cost_usd'])}. "
        f"{NEW}'s own gains are elsewhere (FP4, memory); set `precision` to fp8 to compare them in FP8."
    )


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the plan page glues, by name, formatted for the page."""
    req = res.request
    shape = req.shape
    training = flops.training_flops(shape.params_active, req.tokens, shape.layers, shape.hidden, shape.seq_len)
    out: dict[str, Any] = {
        "plan-model": shape.name,
        "plan-params": fmt(shape.n_params, sig=3),
        "plan-tokens": fmt(req.tokens, sig=3),
        "plan-batch": fmt(req.global_batch_tokens, sig=3),
        "plan-flop": fmt(float(training), "FLOP", 2),
        "plan-deadline": fmt(req.deadline_days, "days", 3),
        "plan-gpus": ", ".join(req.gpus),
        "plan-level": fmt(uncertainty.INTERVAL_LEVEL, pct=True, sig=2),
        "plan-n-layouts": fmt(len(res.plan.layouts)),
        "plan-n-candidates": fmt(res.plan.n_candidates),
        "plan-recommendation": recommendation(res),
        "plan-why": why(res),
        "plan-basis": basis(res),
        "cap-plan-breakdown": breakdown_caption(res),
        "cap-plan-sensitivity": sensitivity_caption(res),
        "plan-ckpt-factor": fmt(pl.CHECKPOINT_BANDWIDTH_FACTOR, sig=1),
    }
    comparison = res.comparison
    for _, row in out_of_sample(comparison).iterrows():
        pid = row["preset"]
        out |= {
            f"plan-{pid}-gpus": fmt(int(row["GPUs"])),
            f"plan-{pid}-tokens": fmt(row["tokens"], sig=3),
            f"plan-{pid}-published": fmt(row["published GPU-hours"], sig=4),
            f"plan-{pid}-basis": row["basis"],
            f"plan-{pid}-layout": row["layout"],
            # no "days" column when no published run fits in memory: "n/a", as the error
            f"plan-{pid}-days": fmt(row.get("days", float("nan")), "days", 3),
            f"plan-{pid}-planned": fmt(row["planned GPU-hours"], sig=3),
            f"plan-{pid}-error": fmt(row["error"], pct=True, sig=2),
        }
    inside = comparison[comparison["run's own throughput"] == "in the calibration"].iloc[0]
    out |= {
        "plan-llama-error-in": fmt(inside["error"], pct=True, sig=2),
        "plan-llama-paper-layout": res.published_layout,
        "plan-tolerance": fmt(PUBLISHED_TOLERANCE, pct=True, sig=2),
        "plan-band-lo": fmt(res.band[0], "x", 2),
        "plan-band-hi": fmt(res.band[1], "x", 2),
        "plan-band-class": res.band_class or "every published run",
        "plan-validation": validation_takeaway(res),
        "plan-scenarios": scenarios_takeaway(res),
    }
    return out
