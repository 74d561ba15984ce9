"""Presentation helpers for chapters: one number formatter, glue, deterministic altair output.

Every number in a chapter's prose is glued through :func:`glue`, which formats it with
:func:`fmt`, the one place that fixes rounding and units. Charts are rendered by the ``book``
altair renderer, whose output ids derive from the chart spec so a re-execution of an unchanged
notebook writes identical outputs (nbval and ``git diff`` stay quiet).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import altair as alt
import pandas as pd

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class Text(str):
    """A string whose notebook display is itself (no quotes), for glued prose values."""

    def __repr__(self) -> str:
        return str(self)


def fmt(value: float, unit: str = "", sig: int = 3, pct: bool = False) -> Text:
    """Format a number for prose: ``sig`` significant figures, thousands separators, a unit.

    ``pct=True`` treats ``value`` as a fraction and prints a percentage (0.352 -> "35.2%").
    Magnitudes of 1e7 and above (or below 1e-3) use powers of ten: 3.1×10²³. A Python ``int``
    below 1e7 is a count and keeps every digit (45,076).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Text("n/a")
    if isinstance(value, float) and math.isinf(value):  # e.g. a payback that never comes
        return Text(f"{'-' if value < 0 else ''}∞ {unit}".strip())
    if isinstance(value, int) and not isinstance(value, bool) and not pct and abs(value) < 1e7:
        return Text(f"{value:,} {unit}".strip())  # a count: every digit, no decimals
    value = settle(float(value))
    if pct:
        value, unit = value * 100.0, "%"
    if value == 0:
        text = "0"
    elif abs(value) >= 1e7 or abs(value) < 1e-3:
        exponent = int(math.floor(math.log10(abs(value))))
        mantissa = round(value / 10**exponent, sig - 1)
        if abs(mantissa) >= 10:
            mantissa, exponent = mantissa / 10, exponent + 1
        text = f"{mantissa:.{max(sig - 1, 0)}f}×10{str(exponent).translate(SUPERSCRIPT)}"
    else:
        digits = max(sig - 1 - int(math.floor(math.log10(abs(value)))), 0)
        text = f"{round(value, digits):,.{digits}f}"
    if unit in ("%", "x", "×"):
        return Text(f"{text}{'×' if unit in ('x', '×') else '%'}")
    return Text(f"{text} {unit}".strip())


# Significant digits a number is settled to before any display rounding: far below what is shown
# (at most 6 digits) and far above the last bits of a double (about 16 digits), which differ
# between CPUs and after a one-ulp change of an input.
SETTLE_DIGITS = 12


def settle(value: float) -> float:
    """``value`` rounded to :data:`SETTLE_DIGITS` significant digits.

    A result that is mathematically a short decimal (23.075 = 2.5 x 7.1 x 1.3) lands a few ulps
    either side of it depending on the CPU's code path, and displayed with 2 decimals it would
    print 23.07 on one machine and 23.08 on another; settled first, it prints the same everywhere.
    """
    return float(f"{value:.{SETTLE_DIGITS}g}") if math.isfinite(value) else value


def _stable(spec: str) -> Any:
    """A table cell formatter: ``spec`` applied to the settled value, and a value that displays as
    zero displayed as 0 does ("-0.00%" from a -1e-17 rounding residue becomes "+0.00%")."""

    def formatter(value: Any) -> str:
        if not isinstance(value, float) or not math.isfinite(value):
            return spec.format(value)
        text = spec.format(settle(value))
        return text if any(c in "123456789" for c in text) else spec.format(0.0)

    return formatter


def stated(value: float) -> Text:
    """A document's stated figure as printed: whole numbers without decimals (64, not 64.0), others
    in their shortest form (2.5, 0.35)."""
    value = settle(float(value))
    return fmt(int(value)) if value.is_integer() else Text(f"{value:g}")


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def in_words(value: float) -> Text:
    """A stated count spelled out as prose does (six, ten); other values as :func:`stated` prints them."""
    value = settle(float(value))
    if value.is_integer() and 0 <= value < len(NUMBER_WORDS):
        return Text(NUMBER_WORDS[int(value)])
    return stated(value)


def glue(name: str, value: Any, unit: str = "", sig: int = 3, pct: bool = False) -> Any:
    """Glue ``value`` under ``name`` for ``{glue:}`name``` in markdown; numbers go through :func:`fmt`.

    Strings are glued as they are; charts and tables keep their rich display. Returns what was glued.
    """
    from myst_nb import glue as _glue

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = fmt(value, unit, sig, pct)
    elif isinstance(value, str):
        value = Text(value)
    _glue(name, value, display=False)
    return value


# Significant digits of every float in a chart's spec. A chart is at most about 1,000 pixels
# across, so 4 digits place every mark to the pixel; 6 keep tooltips and data exports at least as
# precise as any fact in data/ (datasheets and papers print 2-4 digits) while staying 10 orders of
# magnitude above the last bits of a double (about 1e-16 relative), which differ between CPUs
# (numpy's AVX-512 and AVX2 code paths) and after a one-ulp change of an input. A rounded value
# changes with those bits only when the value lies within 1e-16 of a 6-digit rounding boundary.
CHART_DIGITS = 6


# Below this magnitude a float in a chart is the rounding residue of a quantity that is zero by
# construction (the error of a calibration point: -5e-14 on one machine, -3.7e-12 after a one-ulp
# change of an input); no quantity the book charts is that small in its own units.
CHART_ZERO = 1e-9


def round_floats(value: Any, digits: int = CHART_DIGITS) -> Any:
    """``value`` (JSON-like: dicts, lists, numbers, strings) with every finite float rounded to
    ``digits`` significant digits (residues below :data:`CHART_ZERO` become 0); ints, strings
    and booleans as they are."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return value
        return 0.0 if abs(value) < CHART_ZERO else float(f"{settle(value):.{digits}g}")
    if isinstance(value, dict):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [round_floats(v, digits) for v in value]
    return value


def _digest(value: Any, n: int) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:n]


def _rename(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {k: _rename(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    return value


def chart_spec(spec: dict) -> dict:
    """A Vega-Lite spec as the book shows it: floats rounded (:data:`CHART_DIGITS`), and datasets,
    which altair names by a hash of their full-precision values, renamed by their rounded values."""
    spec = round_floats(spec)
    datasets = spec.get("datasets") or {}
    names = {old: f"data-{_digest(values, 32)}" for old, values in datasets.items()}
    if names:
        spec = _rename({k: v for k, v in spec.items() if k != "datasets"}, names)
        spec["datasets"] = {names[old]: values for old, values in datasets.items()}
    return spec


def _book_renderer(spec: dict, **kwargs: Any) -> dict[str, str]:
    """altair renderer: the default HTML output of the rounded spec, with an id derived from it."""
    from altair.utils.html import spec_to_html

    spec = chart_spec(spec)
    html = spec_to_html(
        spec,
        mode="vega-lite",
        vega_version=alt.VEGA_VERSION,
        vegaembed_version=alt.VEGAEMBED_VERSION,
        vegalite_version=alt.VEGALITE_VERSION,
        output_div=f"altair-viz-{_digest(spec, 20)}",
        embed_options={"actions": False},
        fullhtml=False,
        template="universal",
    )
    return {"text/html": html}


def setup() -> None:
    """Use the deterministic renderer and no row limit (the book's data are small)."""
    alt.renderers.register("book", _book_renderer)
    _ = alt.renderers.enable("book")
    alt.data_transformers.disable_max_rows()
    pd.set_option("display.max_rows", 200)


_CELL_CLASS = re.compile(r' class="(?:data|row_heading level0) row\d+ col\d+"| class="data row\d+ col\d+"')


class Table:
    """A styled table with deterministic HTML and a plain-text form (both compared by nbval).

    Both forms, and the id of the HTML table, come from the displayed (formatted) cells, never
    from the full-precision floats behind them, so the last bits of a float cannot change them.
    """

    def __init__(self, styler: Any, frame: pd.DataFrame):
        self._rows = [line.split(_SEP) for line in styler.to_string(delimiter=_SEP).splitlines()]
        self._styler, self._frame = styler.set_uuid(_digest(self._rows, 12)), frame

    def _repr_html_(self) -> str:
        # ids only where a cell has a style (pandas' cell_ids=False), and no per-cell position classes
        # (no stylesheet uses them): a wide table is half attributes otherwise
        self._styler.cell_ids = False
        return _CELL_CLASS.sub("", self._styler.to_html())

    def __repr__(self) -> str:
        header, *body = self._rows or [[]]
        shown = pd.DataFrame(body, columns=header) if header else pd.DataFrame()
        return shown.to_string(index=False, max_colwidth=60)


_SEP = "\x1f"  # ASCII unit separator: never inside a displayed cell


def table(frame: pd.DataFrame, **formats: str) -> Table:
    """A DataFrame shown without index, with per-column formats (``x="{:.1f}"``).

    Float columns without a format show six significant figures without trailing zeros (300, 0.78,
    1.75e+11) rather than pandas' fixed six decimals.
    """
    floats = {c: "{:.6g}" for c in frame.columns if pd.api.types.is_float_dtype(frame[c]) and c not in formats}
    stable = {c: _stable(spec) for c, spec in (floats | formats).items()}
    return Table(frame.style.hide(axis="index").format(stable, na_rep="–"), frame)


VERDICT_COLOURS = {
    "consistent": "#1b9e77",
    "inconsistent": "#d95f02",
    "implausible": "#e7298a",
    "unverifiable": "#7570b3",
    "pending": "#bbbbbb",
}


def verdict_table(ledger: pd.DataFrame) -> Table:
    """The ledger's human columns, verdict cells coloured."""
    cols = ["id", "section", "claim", "stated", "recomputed", "verdict", "reason"]
    shown = ledger[cols].rename(columns=str.capitalize)
    styler = shown.style.hide(axis="index").map(
        lambda v: f"color: {VERDICT_COLOURS.get(v, 'inherit')}; font-weight: bold", subset=["Verdict"]
    )
    return Table(styler, shown)
