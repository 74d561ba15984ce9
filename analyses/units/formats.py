"""How the book writes numbers: one formatter set for the verdict rules, the checks, the page text
and the tables.

Prose figures go through :func:`fmt` (significant figures, thousands separators, a unit, powers of
ten for huge or tiny magnitudes); a document's own figure through :func:`stated`; table cells
through :func:`readable` and the cell kinds (:func:`count`, :func:`money`, :func:`share`,
:func:`ratio`, :func:`year`); prose amounts, percentages, speed-ups, durations and counts in
millions or billions through the helpers at the end. Every value is settled first
(:func:`analyses.units.settle`), so the last bits of a float never change what is printed.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from analyses.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, settle

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class Text(str):
    """A string whose notebook display is itself (no quotes), for glued prose values."""

    def __repr__(self) -> str:
        return str(self)


CURRENCIES = ("RMB", "USD", "CNY")
"""Units of money: a unit whose first word is one of these ("RMB", "USD per GPU-hour", "RMB/month")."""
MONEY_SCALES = ((1e9, "billion"), (1e6, "million"))


def is_money(unit: str) -> bool:
    """Whether ``unit`` is an amount of money (its first word a currency: "USD per GPU", "RMB/month")."""
    return re.split(r"[\s/]", str(unit).strip(), maxsplit=1)[0] in CURRENCIES


def fmt(value: float, unit: str = "", sig: int = 3, pct: bool = False) -> Text:
    """Format a number for prose: ``sig`` significant figures, thousands separators, a unit.

    ``pct=True`` treats ``value`` as a fraction and prints a percentage (0.352 -> "35.2%").
    Large figures round to ``sig`` figures too (126,431 at 3 -> "126,000"); a percentage keeps its
    units digit. Magnitudes of 1e7 and above (or below 1e-3) use powers of ten: 3.1×10²³. A Python
    ``int`` below 1e7 is a count and keeps every digit (45,076). Money (a unit :func:`is_money`) is
    never a power of ten: from a million up it is written in millions or billions ("12.3 million
    RMB", "1.2 million USD per GPU"), below that to ``sig`` figures ("126,000 RMB").
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Text("n/a")
    if isinstance(value, float) and math.isinf(value):  # e.g. a payback that never comes
        return Text(f"{'-' if value < 0 else ''}∞ {unit}".strip())
    if not pct and is_money(unit):
        x = round_sig(settle(float(value)), sig)
        for scale, word in MONEY_SCALES:
            if abs(x) >= scale:
                return fmt(x / scale, f"{word} {unit}", sig)
        value = x
    if isinstance(value, int) and not isinstance(value, bool) and not pct and abs(value) < 1e7:
        return Text(f"{value:,} {unit}".strip())  # a count: every digit, no decimals
    value = settle(float(value))
    if pct:
        value, unit = value * 100.0, "%"
    if value == 0:
        text = "0"
    elif abs(value) >= HUGE or abs(value) < TINY:
        text = power_of_ten(value, max(sig - 1, 0))
    else:
        # ``sig`` significant figures: decimals below the figure, zeros above it (126,431 -> 126,000);
        # a percentage keeps its units digit (118%, not 120%)
        places = sig - 1 - int(math.floor(math.log10(abs(value))))
        places = max(places, 0) if pct else places
        digits = max(places, 0)
        text = f"{round(value, places):,.{digits}f}"
    if unit in ("%", "x", "×"):
        return Text(f"{text}{'×' if unit in ('x', '×') else '%'}")
    return Text(f"{text} {unit}".strip())


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


# --------------------------------------------------------------------------------------------
# Readable numbers in tables: formats by column semantics, no e-notation
# --------------------------------------------------------------------------------------------

HUGE, TINY = 1e7, 1e-3  # beyond these a number is written as a power of ten (3.1×10²³), as in fmt
_E_NOTATION = re.compile(r"(?<![\w.])([-+]?\d+(?:\.\d+)?)[eE]([-+]?\d+)(?![\w.])")


def power_of_ten(value: float, decimals: int = 2) -> str:
    """``value`` as mantissa×10ⁿ with ``decimals`` decimals (3.14×10²³), never ``3.14e+23``."""
    if value == 0 or not math.isfinite(value):
        return readable(value)
    exponent = int(math.floor(math.log10(abs(value))))
    mantissa = round(value / 10**exponent, decimals)
    if abs(mantissa) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.{decimals}f}×10{str(exponent).translate(SUPERSCRIPT)}"


def readable(value: float, sig: int = 4, strip: bool = True, sign: bool = False) -> str:
    """A number as a reader writes it: ``sig`` significant figures with thousands separators (6,250;
    25,000; 0.78), trailing zeros dropped with ``strip``; magnitudes from 10⁷ (or below 10⁻³) as
    powers of ten (1.3×10¹⁰). Whole numbers keep every digit below 10⁷ (2,147,483,647 is written out
    only as an ``int``: see :func:`count`). NaN is "–", infinities "∞" and "−∞"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = float(value)
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    plus = "+" if sign and value > 0 else ""
    if value == 0:
        return "0"
    if abs(value) >= HUGE or abs(value) < TINY:
        text = power_of_ten(value, max(sig - 1, 0))
        if strip:
            text = re.sub(r"\.?0+×", "×", text)
        return plus + text
    digits = max(sig - 1 - int(math.floor(math.log10(abs(value)))), 0)
    text = f"{round(value, digits):,.{digits}f}"
    if strip and "." in text:
        text = text.rstrip("0").rstrip(".")
    return plus + ("0" if text in ("-0", "") else text)


def count(value: float) -> str:
    """A count or other whole number with thousands separators, every digit kept (2,147,483,647)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return readable(value)
    return f"{int(value):,}" if float(value).is_integer() else readable(value, sig=3)


def money(value: float, sig: int = 3) -> str:
    """An amount of money in a table cell whose header names the currency: the digits :func:`fmt`
    writes in prose (``sig`` significant figures, separators, millions and billions in words), so a
    figure reads the same in a table and in a sentence (7,580; 12.3 million; 2.49)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return readable(value)
    return str(fmt(float(value), "USD", sig)).replace(" USD", "")


def share(value: float) -> str:
    """A fraction as a percentage: 0.45 -> 45%, 0.452 -> 45.2%."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return readable(value)
    pct = value * 100
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 0.05 else f"{pct:.1f}%"


def ratio(value: float) -> str:
    """A ratio or speed-up, two decimals (1.36)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return readable(value)
    return f"{value:,.2f}"


def year(value: float) -> str:
    """A calendar year, without a thousands separator (2025)."""
    return readable(value) if value is None or not math.isfinite(float(value)) else str(int(value))


def yes_no(value: Any) -> str:
    """A truth value as a reader writes it."""
    return "yes" if bool(value) else "no"


def readable_text(text: Any) -> str:
    """Free text with any e-notation number rewritten as a reader writes it (2.0e+12 -> 2.0×10¹²,
    1e9 -> 10⁹): data tables' notes and check sentences carry such numbers."""

    def repl(m: re.Match[str]) -> str:
        mantissa, exponent = m.group(1), int(m.group(2))
        power = f"10{str(exponent).translate(SUPERSCRIPT)}"
        return power if mantissa.lstrip("+-") == "1" else f"{mantissa}×{power}"

    return _E_NOTATION.sub(repl, str(text))


# --------------------------------------------------------------------------------------------
# Prose: amounts, shares, multiples, durations
# --------------------------------------------------------------------------------------------


def scalar(x: Any) -> float:
    """A 0-d array or a number as a float (words are written at the central scenario)."""
    return float(np.asarray(x))


def round_sig(x: float, sig: int = 3) -> float:
    """``x`` rounded to ``sig`` significant figures (408,250 -> 408,000 at 3)."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return x
    return float(round(x, sig - 1 - int(math.floor(math.log10(abs(x))))))


def round_sig_array(x: Any, sig: int = 3) -> np.ndarray:
    """``x`` (array-like) rounded to ``sig`` significant figures; NaN and infinities pass through.

    The vectorised :func:`round_sig`: what a chart or a slider grid shows never depends on the last
    bits of a float. Below about 1e-300 the scale overflows, so those values round through text.
    """
    x = np.asarray(x, dtype=float)
    finite = np.isfinite(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mag = np.where(finite & (x != 0), np.floor(np.log10(np.abs(np.where(finite & (x != 0), x, 1.0)))), 0)
        scale = 10.0 ** (sig - 1 - mag)
        out = np.round(x * scale) / scale
    tiny = finite & ~np.isfinite(out)
    if tiny.any():
        out = np.where(tiny, np.vectorize(lambda v: float(f"{v:.{sig}g}"))(np.where(tiny, x, 0.0)), out)
    return np.where(finite, out, x)


def percent(x: Any, sig: int = 2) -> str:
    """A fraction as a percentage for prose (0.352 -> "35%")."""
    return str(fmt(scalar(x), pct=True, sig=sig))


def times(x: Any, sig: int = 2) -> str:
    """A multiple for prose (2.54 -> "2.5×")."""
    return str(fmt(scalar(x), "x", sig=sig))


def amount(x: Any, unit: str, sig: int = 3) -> str:
    """An amount of money with its unit, rounded to ``sig`` significant figures (money is not known to
    the yuan): "126,000 RMB", from a million up "12 million RMB"."""
    x = round_sig(scalar(x), sig)
    if abs(x) >= 1e6:
        return str(fmt(x / 1e6, f"million {unit}", sig))
    return str(fmt(x, unit, sig))


def millions_of(x: Any, unit: str, sig: int = 3) -> str:
    """An amount in millions whatever its size ("0.48 million USD", "12.3 million USD")."""
    return str(fmt(scalar(x) / 1e6, f"million {unit}", sig))


def stated_amount(x: float, unit: str = "RMB") -> str:
    """A document's stated amount as it writes it ("3 million RMB", "42,000 RMB")."""
    return f"{stated(x / 1e6)} million {unit}" if abs(x) >= 1e6 else f"{stated(x)} {unit}"


NEVER_MONTHS = 1200.0  # a payback of a century or more is written "never" (no server lasts that long)


def months(x: Any) -> str:
    """A payback in words ("5.7 months", "never")."""
    return "never" if scalar(x) >= NEVER_MONTHS else str(fmt(scalar(x), "months", 2))


def duration(seconds: float) -> str:
    """A duration in days when it is two days or more, else in hours."""
    if seconds >= 2 * SECONDS_PER_DAY:
        return fmt(seconds / SECONDS_PER_DAY, "days", sig=2)
    return fmt(seconds / SECONDS_PER_HOUR, "h", sig=2)


def millions(x: float) -> str:
    """A count in millions for prose, to two figures: 4e6 -> "4.0M"."""
    return f"{fmt(x / 1e6, sig=2)}M"


def billions(x: float, sig: int | None = None) -> str:
    """A parameter count in billions: as a document writes it (13e9 -> "13B"), or to ``sig`` figures."""
    return f"{stated(x / 1e9) if sig is None else fmt(x / 1e9, sig=sig)}B"


def span(low: float, high: float, unit: str = "", sig: int = 2) -> str:
    """A range with its unit once ("0.98–1.5 million RMB", "14–20 days"), each end as :func:`fmt`
    writes it; the unit is repeated only where the ends differ in scale ("98,000 RMB–1.5 million RMB")."""
    a, b = str(fmt(low, unit, sig)), str(fmt(high, unit, sig))
    number = re.match(r"^[-−]?[\d.,]+(?:×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?", b)
    suffix = b[number.end() :] if number else ""
    if suffix and a.endswith(suffix):
        a = a[: -len(suffix)].rstrip()
    return f"{a}–{b}"


# --------------------------------------------------------------------------------------------
# Chart descriptions: the sentence a chart's accessible name says (analyses.pages.encodings.describe)
# --------------------------------------------------------------------------------------------


def number(value: float, sig: int = 3) -> str:
    """``value`` to ``sig`` significant figures for a description: thousands separated, trailing
    zeros dropped, never in e-notation (1,230 not 1.23e+03; 0.0346; 0.5)."""
    v = settle(value)  # what is shown never depends on the last bits (a rounding boundary)
    if not math.isfinite(v) or v == 0:
        return "0" if v == 0 else str(v)
    magnitude = int(math.floor(math.log10(abs(v))))
    decimals = sig - 1 - magnitude
    rounded = round(v, decimals)
    text = f"{rounded:,.{max(decimals, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent_places(value: float, decimals: int = 0, sign: bool = False) -> str:
    """``value`` as a percentage for a description (settled first, like :func:`number`)."""
    return f"{settle(value):{'+' if sign else ''}.{decimals}%}"


def fixed(value: float, decimals: int = 0) -> str:
    """``value`` with ``decimals`` decimals and thousands separated (settled first)."""
    return f"{settle(value):,.{decimals}f}"
