"""The chapters' charts in Chinese: the English chart functions' very specs, their words translated.

A Chinese page shows a chapter's chart by calling the chapter's own figure function on the chapter's
own result (:data:`CHARTS`), so the marks are the English chart's to the pixel; :func:`localise` then
puts every visible word into Chinese from ``data/charts_zh.csv``: titles, axis and legend titles,
the accessible description, text marks, category values in the data (and the sort orders, scale
domains and expressions that name them, so the encodings still match). A row's ``en`` is the
English with each figure as a slot (:func:`analyses.units.zh.skeleton`) and ``zh`` the Chinese
with the same slots, filled from the English of this very run (:func:`analyses.units.zh.fill`); a
row ``en = field:<name>`` keeps the values of that field as they are (names of runs and models).
:func:`untranslated` lists what a chart would still show in English, which the tests require empty.
:func:`html` draws a localised chart with the page's shared, offline chart library in SVG, so its
Chinese text takes the book's CJK web font.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

import altair as alt

from analyses import data
from analyses.chapters import config
from analyses.pages import charts
from analyses.units import zh

# Each Chinese page's charts: (chapter slug, figure function of its figures.py).
CHARTS: dict[str, tuple[tuple[str, str], ...]] = {
    "scaling-gap": (("scaling-gap", "centuries"),),
    "memory": (("memory", "zero_chart"),),
    "throughput": (("throughput", "ladder_chart"),),
    "scaling-efficiency": (("scaling-efficiency", "validation"),),
    "utilisation": (("utilisation", "mig_chart"),),
    "reliability": (("reliability", "goodput_chart"),),
    "experiments": (("experiments", "timeline_chart"),),
    "tco": (("tco", "payback_chart"), ("tco", "stack_chart")),
    "plan": (("plan", "breakdown_chart"),),
    "validation": (("validation", "mfu_chart"),),
    "peers": (("peers", "diff_chart"),),
    "buy-or-rent": (("buy-or-rent", "cost_chart"),),
}
WORD = re.compile(r"[a-z]{3,}")  # an English word a reader would see
TEXT_KEYS = ("title", "description", "text", "subtitle")  # keys whose string values are visible words
NAME_KEYS = ("sort", "domain")  # lists of category values, which follow the data's translation
EXPR_KEYS = ("test", "calculate", "filter", "expr", "labelExpr")  # expressions that may quote a category
SKIP_KEYS = (
    "field",
    "type",
    "$schema",
    "format",
    "name",
    "aggregate",
    "scheme",
    "orient",
    "align",
    "baseline",
    "as",
    "range",
)
# keys whose string values are Vega keywords (colours, anchors, shapes), never words a reader sees
KEYWORD_KEYS = (
    "color",
    "stroke",
    "fill",
    "labelAnchor",
    "labelFontWeight",
    "labelOrient",
    "x",
    "y",
    "shape",
    "fontWeight",
)
FONT = '"Noto Sans SC Subset", sans-serif'  # the book's CJK web font (tools/subset_font.py)


@functools.cache
def _rows() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for r in data.table("charts_zh").itertuples():
        out.setdefault(r.chart, {})[r.en] = "" if str(r.zh) == "nan" else str(r.zh)
    return out


def key(slug: str, function: str) -> str:
    """A chart's name in ``data/charts_zh.csv``: ``tco.payback_chart``."""
    return f"{slug}.{function}"


@functools.cache
def result(slug: str) -> Any:
    """A chapter's result at its defaults, computed once per process."""
    module = importlib.import_module(f"analyses.chapters.{slug.replace('-', '_')}")
    return module.compute(config(slug))


def english(slug: str, function: str) -> dict:
    """The English chart's Vega-Lite spec, made by the chapter's own figure function."""
    figures = importlib.import_module(f"analyses.chapters.{slug.replace('-', '_')}.figures")
    chart = getattr(figures, function)(result(slug))
    return chart.to_dict() if isinstance(chart, alt.TopLevelMixin) else chart


def _kept(words: dict[str, str]) -> set[str]:
    return {en.split(":", 1)[1] for en in words if en.startswith("field:")}


def _translate(text: str, words: dict[str, str], where: str) -> str | None:
    """``text`` in Chinese: the row whose ``en`` is its skeleton, or (for a long description that lists
    every point) the row whose ``en`` ends in … and begins its skeleton; None when there is none."""
    skeleton = zh.skeleton(text)
    found = words.get(skeleton)
    if found is None:
        found = next((v for k, v in words.items() if k.endswith("…") and skeleton.startswith(k[:-1])), None)
    if found is None:
        return None
    return zh.fill(found, zh.figures(text), where)


def _walk(x: Any, words: dict[str, str], kept: set[str], where: str, parent: str, missing: list[str]) -> Any:
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k in SKIP_KEYS or k in kept or (k in KEYWORD_KEYS and isinstance(v, str)):
                out[k] = v
            elif k in EXPR_KEYS and isinstance(v, str):
                out[k] = re.sub(
                    r"'([^']*)'", lambda m: "'" + (_translate(m.group(1), words, where) or m.group(1)) + "'", v
                )
            else:
                out[k] = _walk(v, words, kept, where, k, missing)
        return out
    if isinstance(x, list):
        return [_walk(v, words, kept, where, parent, missing) for v in x]
    if isinstance(x, str):
        done = _translate(x, words, where)
        if done is not None:
            return done
        if WORD.search(x) and not x.startswith(("data-", "http")):
            missing.append(f"[{parent}] {zh.skeleton(x)}")
        return x
    return x


def _localised(slug: str, function: str) -> tuple[dict, list[str]]:
    spec = english(slug, function)
    name = key(slug, function)
    words = _rows().get(name, {})
    missing: list[str] = []
    out = _walk(spec, words, _kept(words), f"data/charts_zh.csv, chart {name}", "", missing)
    return out, missing


def untranslated(slug: str, function: str) -> list[str]:
    """Every string of the chart that would still show an English word, as its skeleton."""
    return sorted(set(_localised(slug, function)[1]))


class MissingChartWords(LookupError):
    """A chart's English word with no Chinese in data/charts_zh.csv."""


def localise(slug: str, function: str) -> dict:
    """The chart's spec with every visible word in Chinese and the book's CJK font."""
    spec, missing = _localised(slug, function)
    if missing:
        name = key(slug, function)
        raise MissingChartWords(
            f"data/charts_zh.csv has no Chinese for {len(missing)} string(s) of chart {name}: "
            + "; ".join(sorted(set(missing))[:5])
            + " (add rows: chart, en with figures as {1} {2} ..., zh with the same slots)"
        )
    spec.setdefault("config", {})["font"] = FONT
    return spec


def description(spec: dict) -> str:
    """The chart's Chinese description (its accessible name), "" if it has none."""
    return str(spec.get("description", ""))


def html(slug: str, function: str) -> str:
    """The localised chart as the book draws charts (:func:`analyses.pages.charts.chart_html`), in SVG."""
    spec = charts.chart_spec(localise(slug, function))
    versions = {"vega": alt.VEGA_VERSION, "vega-lite": alt.VEGALITE_VERSION, "vega-embed": alt.VEGAEMBED_VERSION}
    div = f"altair-viz-{charts.digest(spec, 20)}"
    return charts.chart_html(spec, div, versions, {"actions": False, "renderer": "svg"})
