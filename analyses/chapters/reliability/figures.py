"""Charts of the reliability chapter, each drawn from a computed :class:`~analyses.chapters.reliability.Result`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analyses.chapters.reliability import Result
from analyses.models import reliability as rel
from analyses.pages import sliders
from analyses.pages.encodings import LABEL_SIZE, dashes, describe, end_labels, label_layer, number, percent, shapes
from analyses.units.formats import stated


def goodput_chart(res: Result) -> alt.LayerChart:
    """Goodput against checkpoint interval, the best interval and the stated policy intervals marked."""
    curve = res.curve.round({"interval_min": 3, "goodput": 5})
    marks = res.marks.round({"interval_min": 3, "goodput": 5})
    line = (
        alt.Chart(curve)
        .mark_line()
        .encode(
            x=alt.X("interval_min:Q", scale=alt.Scale(type="log"), title="checkpoint interval (minutes)"),
            y=alt.Y(
                "goodput:Q",
                scale=alt.Scale(zero=False),
                title="goodput (share of wall time kept)",
                axis=alt.Axis(format="%"),
            ),
        )
    )
    labels = list(marks["label"])
    points = (
        alt.Chart(marks)
        .mark_point(filled=True, size=80)
        .encode(
            x="interval_min:Q",
            y="goodput:Q",
            color=alt.Color("label:N", title=None, scale=alt.Scale(domain=labels)),
            shape=shapes("label:N", labels, title=None),
            tooltip=["label", alt.Tooltip("interval_min:Q", format=".1f"), alt.Tooltip("goodput:Q", format=".4f")],
        )
    )
    text = (
        "Line chart of goodput (the share of wall time kept) against the checkpoint interval in minutes (log scale), "
        "with marked points, each its own shape: "
        + "; ".join(f"{r.label} at {number(r.interval_min)} min, {percent(r.goodput, 1)}" for r in marks.itertuples())
        + "."
    )
    return describe((line + points).properties(width=520, height=300), text)


def failures_chart(res: Result) -> alt.LayerChart:
    """Interruptions per day against job size at each published log's rate and the scenario's, the
    fintech anecdote's "a crash every 5 days" as a dashed rule."""
    curves = res.failures.assign(
        GPUs=res.failures["GPUs"].round(1), **{"failures per day": res.failures["failures per day"].round(6)}
    )
    days = res.fintech.case.crash_interval_days
    rule = pd.DataFrame(
        {"failures per day": [round(1 / days, 6)], "label": [f"document: one crash every {stated(days)} days"]}
    )
    calibrations = list(dict.fromkeys(curves["calibration"]))
    lines = (
        alt.Chart(curves)
        .mark_line()
        .encode(
            x=alt.X("GPUs:Q", scale=alt.Scale(type="log"), title="GPUs in the job"),
            y=alt.Y("failures per day:Q", scale=alt.Scale(type="log"), title="interruptions per day"),
            color=alt.Color("calibration:N", title="rate of", scale=alt.Scale(domain=calibrations)),
            strokeDash=dashes("calibration:N", calibrations, title="rate of"),
        )
    )
    hline = (
        alt.Chart(rule).mark_rule(strokeDash=[6, 4], color="black").encode(y="failures per day:Q", tooltip=["label"])
    )
    ends = end_labels(curves, "GPUs", "failures per day", "calibration", log_y=True, gap=0.1)
    names = label_layer(ends, alt.X("x:Q", scale=alt.Scale(type="log")), alt.Y("y:Q", scale=alt.Scale(type="log")))
    last = curves.sort_values("GPUs", kind="stable").groupby("calibration", sort=False).tail(1)
    text = (
        f"Line chart (log scales) of interruptions per day against the GPUs in a job, one line per published failure "
        f"log and the scenario, each dashed differently and named at its end; at {number(last['GPUs'].max())} GPUs: "
        + "; ".join(
            f"{c} {number(v)} a day" for c, v in zip(last["calibration"], last["failures per day"], strict=True)
        )
        + f". The black dashed rule is the document's one crash every {stated(days)} days."
    )
    return describe((lines + hline + names).properties(width=520, height=300), text)


def causes_chart(res: Result) -> alt.Chart:
    """Llama 3's unexpected interruptions by cause, coloured by what server hardware could prevent."""
    frame = res.causes.assign(share=res.causes["share"].round(5))
    order = [t for t, _ in rel.PREVENTION_TIERS] + [rel.NOT_PREVENTABLE]
    # each bar carries a number naming its tier (1 = targeted by the documents' hardware features)
    frame = frame.assign(tier_no=frame["tier"].map({t: str(i + 1) for i, t in enumerate(order)}))
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X(
                "share:Q",
                title=f"share of {int(frame['count'].sum())} unexpected interruptions",
                axis=alt.Axis(format="%"),
            ),
            y=alt.Y("cause:N", sort="-x", title=None),
            color=alt.Color(
                "tier:N",
                title=None,
                scale=alt.Scale(domain=order),
                legend=alt.Legend(
                    orient="bottom",
                    columns=2,
                    labelLimit=320,
                    labelExpr="".join(f"datum.label == '{t}' ? '{i + 1}: {t}' : " for i, t in enumerate(order))
                    + "datum.label",
                ),
            ),
            tooltip=["cause", "category", "count", alt.Tooltip("share:Q", format=".1%"), "tier"],
        )
    )
    numbers = bars.mark_text(align="left", dx=3, fontSize=LABEL_SIZE).encode(text="tier_no:N", color=alt.value("black"))
    shares = frame.groupby("tier")["share"].sum().reindex(order).fillna(0)
    text = (
        f"Bar chart of Llama 3's {int(frame['count'].sum())} unexpected interruptions by cause, each bar numbered by "
        "what server hardware could prevent: "
        + "; ".join(f"{i + 1}, {t}: {percent(s)}" for i, (t, s) in enumerate(shares.items()))
        + "."
    )
    return describe((bars + numbers).properties(width=420, height=340), text)


def slider_charts(res: Result) -> tuple[alt.HConcatChart, ...]:
    """The chapter's slider figures (per-GPU rate, checkpoint write time, B300 failure ratio)."""
    return tuple(sliders.figure(s) for s in res.sliders)


# --------------------------------------------------------------------------------------------
# Validated against published logs
# --------------------------------------------------------------------------------------------

ROLE_WORDS = {"calibrate": "calibration (left out)", "validate": "validation", "context": "shown only"}


def _band(low: float, high: float) -> str:
    return "–" if low != low else f"{low:.3g}–{high:.3g}"


def rates_table(res: Result) -> pd.DataFrame:
    """Every interruption log against the model of its operations mode: published, fitted, the
    out-of-sample prediction (the fit without the log for calibration logs), its error and band."""
    v = res.rates
    return pd.DataFrame(
        {
            "log": v["log"],
            "mode": v["mode"] + np.where(v["operations"] != v["mode"], " (" + v["operations"] + ")", ""),
            "role": v["role"].map(ROLE_WORDS),
            "counts": v["kind"] + np.where(v["bound"] == "exact", "", ", " + v["bound"]),
            "published per GPU-year": v["published"],
            "model": v["fitted"],
            "vs model": v["fit_error"],
            "out of sample": v["predicted"],
            "error": v["error"],
            "90% band": [_band(lo, hi) for lo, hi in zip(v["band_low"], v["band_high"], strict=True)],
            "inside": v["inside"].map({True: "yes", False: "no"}).fillna("–"),
            "source": v["source"],
        }
    )


def goodput_table(res: Result) -> pd.DataFrame:
    """Published effective training time against the model's goodput for the run's GPUs and mode."""
    g = res.goodput_check
    return pd.DataFrame(
        {
            "run": g["run"],
            "GPUs": g["GPUs"],
            "mode": g["mode"],
            "published": g["published"],
            "reads": g["bound"].map({"lower": "at least", "approximate": "about", "exact": "exactly"}),
            "model": g["predicted"],
            "difference (points)": 100 * g["error"],
            "90% band": [f"{lo:.1%}–{hi:.1%}" for lo, hi in zip(g["band_low"], g["band_high"], strict=True)],
            "inside": g["inside"].map({True: "yes", False: "no"}),
            "source": g["source"],
        }
    )


def recovery_table(res: Result) -> pd.DataFrame:
    """Published time-to-recover bounds against the model's restart plus redone work."""
    r = res.recovery_check
    return pd.DataFrame(
        {
            "run": r["run"],
            "GPUs": r["GPUs"],
            "published (min)": r["published_min"],
            "reads": r["bound"].map({"upper": "at most", "lower": "at least", "exact": "exactly"}) + ", " + r["what"],
            "model (min)": r["predicted_min"],
            "error": r["error"],
            "90% band (min)": [f"{lo:.3g}–{hi:.3g}" for lo, hi in zip(r["band_low"], r["band_high"], strict=True)],
            "inside": r["inside"].map({True: "yes", False: "no"}),
            "source": r["source"],
        }
    )


def validation_chart(res: Result) -> alt.LayerChart:
    """Each log's published rate against the out-of-sample prediction with its 90% band (log scale)."""
    v = res.rates[res.rates["predicted"].notna()]
    frame = pd.DataFrame(
        {
            "log": v["label"],
            "mode": v["mode"],
            "role": v["role"].map(ROLE_WORDS),
            "published": v["published"].round(5),
            "predicted": v["predicted"].round(5),
            "low": v["band_low"].round(5),
            "high": v["band_high"].round(5),
        }
    )
    y = alt.Y("log:N", title=None, sort=list(frame["log"]))
    modes = sorted(frame["mode"].unique())
    scale = alt.Scale(type="log")
    bands = (
        alt.Chart(frame)
        .mark_rule(strokeWidth=3, opacity=0.5)
        .encode(x=alt.X("low:Q", scale=scale, title="interruptions per GPU-year of the log's kind"), x2="high:Q", y=y)
    )
    model = alt.Chart(frame).mark_tick(thickness=2, size=14, color="black").encode(x="predicted:Q", y=y)
    shown = (
        alt.Chart(frame)
        .mark_point(filled=True, size=70)
        .encode(
            x="published:Q",
            y=y,
            color=alt.Color("mode:N", title="operations", scale=alt.Scale(domain=modes)),
            shape=shapes("mode:N", modes, title="operations"),
            tooltip=["log", "mode", "role", "published", "predicted", "low", "high"],
        )
    )
    inside = v["inside"].astype(bool)
    text = (
        f"Dot plot of {len(frame)} published interruption rates (points, shape and colour by operations mode) "
        "against the model's out-of-sample prediction (black tick) and its prediction band (bar) on a log scale; "
        f"{int(inside.sum())} of {len(frame)} lie inside their band"
        + (f", outside: {', '.join(v.loc[~inside, 'label'])}" if (~inside).any() else "")
        + "."
    )
    return describe((bands + model + shown).properties(width=420, height=22 * len(frame)), text)
