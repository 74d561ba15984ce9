"""What a chapter's notebook calls: :func:`setup`, :func:`glue_all`, :func:`glue` and :func:`table`.

A chapter's numbers and computed phrases are glued by one call, :func:`glue_all` over its
``text.glued(res)`` (names to text already formatted by :mod:`analyses.units.formats`, the one place
that fixes rounding and units); figures, tables and the verdict box are glued one by one with
:func:`glue`. Tables format each
column by its meaning and never print e-notation. Charts are rendered by the ``book`` altair
renderer (:mod:`analyses.pages.charts`), whose output ids derive from the chart spec so a
re-execution of an unchanged notebook writes identical outputs (nbval and ``git diff`` stay quiet).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
from myst_nb import glue as _glue

from analyses.pages import charts
from analyses.pages.links import source_links
from analyses.units import settle
from analyses.units.formats import (
    HUGE,
    TINY,
    Text,
    count,
    fmt,
    money,
    power_of_ten,
    ratio,
    readable,
    share,
    year,
    yes_no,
)


def setup() -> None:
    """Use the deterministic renderer and no row limit (the book's data are small)."""
    alt.renderers.register("book", charts.render)
    _ = alt.renderers.enable("book")
    alt.data_transformers.disable_max_rows()
    pd.set_option("display.max_rows", 200)


def glue(name: str, value: Any, unit: str = "", sig: int = 3, pct: bool = False) -> Any:
    """Glue ``value`` under ``name`` for ``{glue:}`name``` in markdown; numbers go through :func:`fmt`.

    Strings are glued as they are; charts and tables keep their rich display. Returns what was glued.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = fmt(value, unit, sig, pct)
    elif isinstance(value, str):
        value = Text(value)
    _glue(name, value, display=False)
    return value


def glue_all(mapping: Mapping[str, Any]) -> None:
    """Glue every ``name -> text`` of ``mapping`` (a chapter's ``text.glued(res)``) for ``{glue:}`name```.

    The values are the page's numbers and phrases, already formatted through
    :mod:`analyses.units.formats`: a raw number is refused (its last bits would reach the page), naming it.
    """
    for name, value in mapping.items():
        if not isinstance(value, str):
            raise TypeError(
                f"glue_all: {name!r} is a {type(value).__name__}, not formatted text: format it with "
                "analyses.units.formats (fmt, percent, times, amount, ...) in the chapter's text.glued"
            )
        _glue(name, Text(value), display=False)


_CELL_CLASS = re.compile(r' class="(?:data|row_heading level0) row\d+ col\d+"| class="data row\d+ col\d+"')


class Table:
    """A styled table with deterministic HTML and a plain-text form (both compared by nbval).

    Both forms, and the id of the HTML table, come from the displayed (formatted) cells, never
    from the full-precision floats behind them, so the last bits of a float cannot change them.
    """

    def __init__(self, styler: Any, frame: pd.DataFrame):
        self._rows = [line.split(_SEP) for line in styler.to_string(delimiter=_SEP).splitlines()]
        self._styler, self._frame = styler.set_uuid(charts.digest(self._rows, 12)), frame

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


# --------------------------------------------------------------------------------------------
# Tables: each column formatted by its semantics, no e-notation
# --------------------------------------------------------------------------------------------

_SPEC = re.compile(r"^\{:(?P<flags>[+ ]?,?)(?:\.(?P<prec>\d+))?(?P<type>[gGeE])\}$")

KINDS: dict[str, Callable[[Any], str]] = {
    "count": count,
    "money": money,
    "share": share,
    "ratio": ratio,
    "year": year,
    "number": readable,
    "sci": lambda v: power_of_ten(v) if v and math.isfinite(v) and abs(v) >= 1000 else readable(v),
}
"""Column kinds that :func:`table` accepts by name (``table(df, price="money")``)."""

_MONEY = re.compile(r"usd|\$|€|price|cost|capex|opex|eur\b", re.I)
_SHARE = re.compile(r"share|fraction|\butil|mfu|goodput|percent|_pct\b|probability|^p\(", re.I)
_RATIO = re.compile(r"ratio|speed-?up|\bx\b|_x_|×", re.I)
_YEAR = re.compile(r"year|window start|released|\bdate\b", re.I)
_SOURCE = re.compile(r"^sources?\b|\bsources?$", re.I)


def column_kind(name: str, values: pd.Series) -> str:
    """The kind of a column from its name and values: ``year``, ``count``, ``money``, ``share``,
    ``ratio``, ``number`` (floats) or ``text``; a name mentioning a source is ``source``."""
    name = str(name)
    if _SOURCE.search(name) and not pd.api.types.is_numeric_dtype(values):
        return "source"
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        return "text"
    finite = values[np.isfinite(values.astype(float))]
    whole = bool((finite == finite.round()).all())
    if whole and len(finite) and _YEAR.search(name) and finite.between(1800, 2200).all():
        return "year"
    if _MONEY.search(name):
        return "money"
    if _SHARE.search(name) and len(finite) and finite.between(0, 1).all():
        return "share"
    if _RATIO.search(name):
        return "ratio"
    if pd.api.types.is_integer_dtype(values) or (whole and len(finite) and finite.abs().max() < HUGE):
        return "count"
    return "number"


def _from_spec(spec: str) -> Callable[[Any], str]:
    """A ``str.format`` spec as a cell formatter; ``g`` and ``e`` specs never print e-notation
    (``{:,.3g}`` keeps three significant figures: 6,250; ``{:.2e}`` gives 3.14×10²³)."""
    m = _SPEC.match(spec)
    if m is None:
        return lambda v: readable(v) if isinstance(v, float) and not math.isfinite(v) else spec.format(v)
    prec = int(m["prec"]) if m["prec"] is not None else 6
    sign = "+" in m["flags"]
    if m["type"] in "eE":

        def sci(v: float) -> str:
            if not math.isfinite(v) or v == 0 or TINY <= abs(v) < 1000:
                return readable(v, sig=prec + 1, sign=sign)
            return ("+" if sign and v > 0 else "") + power_of_ten(v, prec)

        return sci
    return lambda v: readable(v, sig=max(prec, 1), sign=sign)


def _formatter(fmt_: str | Callable[[Any], str]) -> Callable[[Any], str]:
    if callable(fmt_):
        return fmt_
    if fmt_ in KINDS:
        return KINDS[fmt_]
    if fmt_ == "source":
        return source_links
    if fmt_ == "text":
        return _text_cell
    return _from_spec(fmt_)


def _text_cell(value: Any) -> str:
    return source_links(value)  # free text may name sources too: they link like a source column


def table(frame: pd.DataFrame, **formats: str | Callable[[Any], str]) -> Table:
    """A DataFrame shown without index; each column formatted as a reader writes its numbers.

    A column's format is, in order: the one given here (a ``str.format`` spec such as
    ``"{:.1f}"``, a kind from :data:`KINDS` such as ``"money"``, ``"source"``, or a callable),
    else the kind :func:`column_kind` infers from its name and values: years plain (2025), counts
    and money with thousands separators (25,000; 6,250), shares as percentages (45%), ratios with
    two decimals, other numbers to four significant figures. No cell prints e-notation: ``g`` and
    ``e`` specs and huge or tiny numbers use powers of ten (3.1×10²³). Text cells are escaped and
    their e-notation rewritten; source ids in them link to their entry on the sources page.
    """
    chosen: dict[str, Callable[[Any], str]] = {}
    for col in frame.columns:
        if col in formats:
            chosen[col] = _settled(_formatter(formats[col]))
        else:
            kind = column_kind(col, frame[col])
            chosen[col] = yes_no if pd.api.types.is_bool_dtype(frame[col]) else _settled(_formatter(kind))
    return Table(frame.style.hide(axis="index").format(chosen, na_rep="–"), frame)


def _settled(fn: Callable[[Any], str]) -> Callable[[Any], str]:
    """``fn`` applied to the settled value (:func:`settle`), and a value that displays as zero shown
    as zero is ("-0.00%" from a -1e-17 rounding residue becomes "0.00%"): cells do not depend on
    the last bits of a float."""

    def formatter(value: Any) -> str:
        if not isinstance(value, float) or not math.isfinite(value):
            return fn(value)
        text = fn(settle(value))
        return text if any(c in "123456789" for c in text) else fn(0.0)

    return formatter
