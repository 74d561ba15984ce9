"""Sentences of the validation page, each read from a computed :class:`~analyses.chapters.validation.Result`
(they branch on which runs the bands miss), and :func:`glued`, every number and phrase the page glues."""

from __future__ import annotations

from typing import Any

from analyses.chapters.validation import TARGET_INSIDE, TARGET_MEDIAN, TARGET_WORST, Result, row_count
from analyses.units.formats import fmt


def _pct(x: float) -> str:
    return fmt(x, pct=True, sig=2)


def headline(res: Result) -> str:
    """The grouped cross-validation figures (each row predicted by a fit that never saw its source),
    steady state and whole runs apart, beside in-sample; then issue 21's three targets on them, met or
    not, and before."""
    h, met = res.headline, res.met
    return (
        f"predicted by fits that never saw their publication (grouped cross-validation), the {h['steady_rows']:.0f} "
        f"steady-state throughputs miss by a median {_pct(h['steady_median'])} (worst {_pct(h['steady_worst'])}; "
        f"{_pct(h['steady_inside'])} inside their 90% band; in sample {_pct(h['steady_median_in_sample'])}), "
        f"the {h['whole_rows']:.0f} whole runs' GPU-hours by a median {_pct(h['whole_median'])} (worst "
        f"{_pct(h['whole_worst'])}; {_pct(h['whole_inside'])} inside; in sample {_pct(h['whole_median_in_sample'])}); "
        f"at the layout the planner would pick instead of the printed one the steady state misses by a median "
        f"{_pct(h['pick_median'])} (worst {_pct(h['pick_worst'])}). Together, "
        f"on its {h['rows']:.0f} scored rows the model's median error is {_pct(h['median'])} "
        f"(target at most {_pct(TARGET_MEDIAN)}, {'met' if met['median'] else 'missed'}; before {_pct(h['median_before'])}), "
        f"its worst {_pct(h['worst'])} (target at most {_pct(TARGET_WORST)}, {'met' if met['worst'] else 'missed'}; "
        f"before {_pct(h['worst_before'])}), and the published value lies inside the row's 90% band for "
        f"{_pct(h['inside'])} of them (target at least {_pct(TARGET_INSIDE)}, {'met' if met['inside'] else 'missed'})"
        + outliers_clause(res)
    )


def outliers_clause(res: Result) -> str:
    """The rows past the worst-error target, by run, or nothing when there are none."""
    o = res.outliers
    if o.empty:
        return ""
    runs = ", ".join(
        f"{i} ({'+' if e > 0 else ''}{fmt(e, pct=True, sig=2)})" for i, e in zip(o["id"], o["error"], strict=True)
    )
    return f"; the {len(o)} rows past {_pct(TARGET_WORST)}, each with its reason in the tables below: {runs}"


def band_sentence(res: Result) -> str:
    """The planner's 90% band on a planned time, in words: over every run, and by class of plan."""
    lo, hi = res.band
    return (
        f"over every published run at its printed layout a planned step time's 90% band runs from {fmt(lo, 'x', 2)} "
        f"to {fmt(hi, 'x', 2)} the plan: the model is more often optimistic than pessimistic, and the band says so "
        "instead of mirroring it; a plan carries the band of its own class (below)"
    )


def _class(res: Result, plan: str, layout: str) -> Any:
    c = res.classes
    return c[(c["plan"] == plan) & (c["layout"] == layout) & (c["stack"] == "named")].iloc[0]


def class_sentence(res: Result) -> str:
    """What the bands by class say: where issue 33's x1.6 is met and where the data do not allow it."""
    small = _class(res, "dense, under 100B, Hopper", "picked")
    large = _class(res, "dense, 100B and over, Hopper", "pinned")
    large_pick = _class(res, "dense, 100B and over, Hopper", "picked")
    moe = _class(res, "moe, 100B and over, Blackwell", "picked")
    moe_sources = res.step.loc[res.step["arch"] == "moe", "cv_group"].nunique()

    def band(r: Any, side: str) -> str:
        return f"{fmt(r[side + ' lo'], 'x', 3)}-{fmt(r[side + ' hi'], 'x', 3)}"

    return (
        f"a dense model under 100B parameters, layout left to the planner, carries {band(small, 'steady')} on its step "
        f"time and {band(small, 'whole')} on its whole run (the band of the {small['band runs']} runs of its class, "
        f"which held {_pct(small['coverage'])} of its Hopper runs when each source was left out); a dense model of 100B "
        f"or more at its own layout {band(large, 'steady')} and {band(large, 'whole')}; both within issue 33's "
        f"x1.6. At the planner's pick a dense model of 100B or more carries {band(large_pick, 'steady')}: the "
        f"layouts such runs publish are often far slower than the pick (torchtitan's 405B demonstrations ran 1F1B "
        f"with eight micro-batches and full recomputation), so a planner of such a run should pin the layout it will "
        f"run. A mixture of experts has {moe_sources} sources of its own, too few for a band: it takes every "
        f"run's, stretched to hold its own, {band(moe, 'steady')} on Blackwell; the plan says where its band is "
        "wider than x1.6"
    )


def misses_sentence(res: Result) -> str:
    """How many validation rows lie outside their band, and which."""
    m = res.misses
    if m.empty:
        return "every validation row lies inside its band"
    kinds = ", ".join(f"{n} {k} rows" for k, n in m["kind"].value_counts().items())
    explained = int((m["note"].fillna("") != "").sum())
    return (
        f"{len(m)} validation rows lie outside their 90% band ({kinds}); {explained} of them carry their reason in "
        "the tables above (a speed-up carries the reason of the run of its pair that misses)"
    )


def speedup_sentence(res: Result) -> str:
    """The scenario's speed-up and its band, from the model."""
    lo, hi, n = res.speedup_band
    x = res.workloads.iloc[0]
    return (
        f"the model puts a B300 in FP8 at {fmt(x['speed-up'], 'x')} an A100 in BF16 per GPU on the reference workload "
        f"({res.reference}); widened by its errors on {n} published same-recipe speed-ups "
        f"({fmt(lo - 1, pct=True, sig=2)} to +{fmt(hi - 1, pct=True, sig=2)}), {fmt(x['low (5%)'], 'x')} to "
        f"{fmt(x['high (95%)'], 'x')}"
    )


def mfu_caption(res: Result) -> str:
    """Caption of the MFU chart."""
    return (
        "Predicted against published MFU (model FLOPs: 6·N_active + 12·L·d·s per token) of every run that prints its "
        "layout and throughput. Validation rows are predictions of a fit that never saw them; calibration rows are "
        "predicted by the fit that left each out. Dashed: predicted = published; grey: the 90% band of the model's "
        "out-of-sample errors. A point below the diagonal is a run the model finds slower than it was."
    )


def glued(res: Result) -> dict[str, Any]:
    """Every number and phrase the validation page glues, by name, formatted for the page."""
    return {
        "n_runs": fmt(row_count()),
        "headline": headline(res),
        "level": fmt(res.level, pct=True, sig=2),
        "n_cal": fmt(len(res.calibration_rows)),
        "cap_mfu": mfu_caption(res),
        "band_sentence": band_sentence(res),
        "class_sentence": class_sentence(res),
        "speedup_sentence": speedup_sentence(res),
        "misses": misses_sentence(res),
    }
