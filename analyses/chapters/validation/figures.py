"""The validation page's charts and tables, drawn from a computed :class:`~analyses.chapters.validation.Result`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from analyses.chapters.validation import Result
from analyses.pages.encodings import describe, number
from analyses.pages.notebook import Table, table
from analyses.units.formats import round_sig_array

WIDTH = 520


def _round(x: pd.Series, sig: int = 4) -> np.ndarray:
    """``x`` to ``sig`` significant figures (what a chart shows never depends on the last bits)."""
    return round_sig_array(x, sig)


def _band(lo: float, hi: float) -> str:
    return f"{np.expm1(lo):+.0%} to {np.expm1(hi):+.0%}"


def mfu_chart(res: Result) -> alt.LayerChart:
    """Predicted against published MFU of every step-time row (model FLOPs), calibration and
    validation rows apart, with the diagonal and the 90% band of the model's out-of-sample errors."""
    step = res.step
    frame = pd.DataFrame(
        {
            "run": step["id"],
            "GPU": step["gpu"],
            "role": np.where(step["role"] == "calibrate", "calibration (left out of its own fit)", "validation"),
            "published MFU": _round(step["published_mfu"]),
            "predicted MFU": _round(step["predicted_mfu"]),
            "error": np.round(step["error"].to_numpy(float), 3) + 0.0,  # fixed decimals: a near-zero error shows as 0
        }
    )
    lo, hi = res.band
    grid = pd.DataFrame({"x": np.linspace(0.0, 0.75, 16)})
    grid = grid.assign(y=grid["x"], lo=_round(grid["x"] / hi), hi=_round(grid["x"] / lo))  # time band -> MFU band
    band = alt.Chart(grid).mark_area(opacity=0.15, color="#888888").encode(x="x:Q", y="lo:Q", y2="hi:Q")
    diagonal = alt.Chart(grid).mark_line(color="#555555", strokeDash=[4, 3]).encode(x="x:Q", y="y:Q")
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=45, opacity=0.8)
        .encode(
            x=alt.X("published MFU:Q", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 0.75])),
            y=alt.Y("predicted MFU:Q", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 0.75])),
            color=alt.Color("role:N", title=None, legend=alt.Legend(orient="bottom")),
            shape=alt.Shape("role:N", title=None),
            tooltip=[
                "run",
                "GPU",
                alt.Tooltip("published MFU:Q", format=".1%"),
                alt.Tooltip("predicted MFU:Q", format=".1%"),
                alt.Tooltip("error:Q", format="+.0%"),
            ],
        )
    )
    chart = (band + diagonal + points).properties(width=WIDTH, height=WIDTH * 0.8)
    inside = int(step["inside"].sum())
    text = (
        f"Scatter plot of predicted against published MFU for {len(step)} published runs, calibration and validation "
        f"rows in two colours and shapes, with the diagonal dashed and the model's 90% band shaded from "
        f"{number(lo, 2)} to {number(hi, 2)} times the predicted step time; {inside} of {len(step)} runs lie inside "
        "their own leave-one-source-out band."
    )
    return describe(chart, text)


def conversion_table(res: Result) -> Table:
    """Every published figure on the book's one FLOP definition."""
    return table(
        res.conversion,
        **{
            "printed TFLOP/s": "{:,.1f}",
            "printed MFU": "{:.1%}",
            "tokens/s per GPU": "{:,.1f}",
            "6N TFLOP/s": "{:,.1f}",
            "model TFLOP/s": "{:,.1f}",
            "MFU": "{:.1%}",
            "HFU": "{:.1%}",
        },
    )


def coefficient_table(res: Result) -> Table:
    """The fitted terms beside their anchors."""
    return table(res.coefficients[["coefficient", "meaning", "fitted", "anchor"]], fitted="{:.3g}", anchor="{:.3g}")


def step_table(res: Result) -> Table:
    """The step-time rows the reader chose: published and predicted, error, band, before."""
    s = res.step_shown
    frame = pd.DataFrame(
        {
            "run": s["id"],
            "role": s["role"],
            "GPU": s["gpu"],
            "GPUs": s["n_gpus"],
            "published tokens/s/GPU": s["published"],
            "predicted": s["predicted"],
            "published MFU": s["published_mfu"],
            "predicted MFU": s["predicted_mfu"],
            "error (time)": s["error"],
            "90% band": [_band(a, b) for a, b in zip(-s["band_hi"], -s["band_lo"], strict=True)],
            "inside": s["inside"],
            "error before": s["error_before"],
            # the first score is kept on tokens per second (predicted / published − 1): on the step time here
            "first score": 1.0 / (1.0 + s["first_score_error"]) - 1.0,
            "why (where it misses or assumes)": s["note"],
        }
    )
    return table(
        frame,
        **{
            "published tokens/s/GPU": "{:,.0f}",
            "predicted": "{:,.0f}",
            "published MFU": "{:.1%}",
            "predicted MFU": "{:.1%}",
            "error (time)": "{:+.0%}",
            "error before": "{:+.0%}",
            "first score": "{:+.0%}",
        },
    )


def whole_table(res: Result) -> Table:
    """Whole runs planned against their published GPU-hours or days."""
    w = res.whole
    frame = pd.DataFrame(
        {
            "run": w["id"],
            "GPU": w["gpu"],
            "GPUs": w["n_gpus"],
            "published": w["published"],
            "planned": w["predicted"],
            "unit": w["unit"],
            "error": w["error"],
            "figure counts": w["hours_counted"],
            "90% band": [_band(-b, -a) for a, b in zip(w["band_lo"], w["band_hi"], strict=True)],
            "inside": w["inside"],
            "error before": w["error_before"],
            "first score": w["first_score_error"],
            "layout": w["layout"],
            "goodput": w["goodput"],
            "why (where it misses or assumes)": w["note"],
        }
    )
    return table(
        frame,
        published="{:,.4g}",
        planned="{:,.4g}",
        error="{:+.0%}",
        **{"error before": "{:+.0%}", "first score": "{:+.0%}", "goodput": "{:.1%}"},
    )


def class_table(res: Result) -> Table:
    """The 90% band each class of plan carries (stack named), where it comes from and how often it held the
    published runs of that class it never saw."""
    c = res.classes[res.classes["stack"] == "named"]
    frame = pd.DataFrame(
        {
            "plan": c["plan"],
            "layout": c["layout"],
            "its runs": c["runs"],
            "sources": c["sources"],
            "held (grouped CV)": c["coverage"],
            "band from": c["band from"],
            "step time": [_factors(a, b) for a, b in zip(c["steady lo"], c["steady hi"], strict=True)],
            "whole run": [_factors(a, b) for a, b in zip(c["whole lo"], c["whole hi"], strict=True)],
            f"within x{RULE:g}": [
                "yes" if min(a, w) * RULE >= 1 and max(b, x) <= RULE else "no"
                for a, b, w, x in zip(c["steady lo"], c["steady hi"], c["whole lo"], c["whole hi"], strict=True)
            ],
        }
    )
    return table(frame, **{"held (grouped CV)": "{:.0%}"})


def _factors(lo: float, hi: float) -> str:
    return f"x{lo:.2f}-x{hi:.2f}"


RULE = 1.6  # issue 33: no band wider than this factor on either side of the central figure


def ratio_table(res: Result) -> Table:
    """Same-recipe speed-ups: published against predicted."""
    r = res.ratios
    frame = pd.DataFrame(
        {
            "newer / older run": r["id"],
            "GPUs": r["gpu"],
            "model": r["arch"],
            "published speed-up": r["published"],
            "predicted": r["predicted"],
            "error": r["error"],
            "inside": r["inside"],
            "error before": r["error_before"],
            "why (the reason of either run)": r["note"],
        }
    )
    return table(
        frame,
        **{"published speed-up": "{:.2f}×", "predicted": "{:.2f}×", "error": "{:+.0%}", "error before": "{:+.0%}"},
    )


def summary_table(res: Result) -> Table:
    """Rows, median and worst absolute error after and before, and the band's cover, per kind and role."""
    return table(
        res.summary,
        **{
            "median |error|": "{:.0%}",
            "worst |error|": "{:.0%}",
            "median |error| before": "{:.0%}",
            "worst |error| before": "{:.0%}",
            "inside 90% band": "{:.0%}",
        },
    )


def workload_table(res: Result) -> Table:
    """The speed-up each claim reads for its own workload, with its 90% band."""
    return table(res.workloads, **{"speed-up": "{:.1f}×", "low (5%)": "{:.1f}×", "high (95%)": "{:.1f}×"})


def calibration_row_table(res: Result) -> Table:
    """The declared calibration rows."""
    return table(res.calibration_rows)
