"""A claim's machine-readable figures (``values`` in data/claims.csv) and the rules across its fields.

``values`` is ``name=number; ...`` (names carry units: ``params=1e11; server_years_low=200``). The
rules a Table Schema cannot state, checked as the claims load:

- each name once (a repeated one would let the last silently win);
- a range's ends in order: ``x_low`` (``..._low_...``) at most its ``x_high``;
- ``stated`` agrees with ``values``: every figure ``stated`` writes (``100B``, ``2-3x``, ``-64%``,
  ``1/3``, ``15 min``) is one of the values, up to a power of ten of a unit prefix (B = 1e9,
  GB vs TB), a percentage, or a unit of time (60, 3,600, 24, 7, 12), so editing one without the
  other fails. Digits inside a name (A100, FP8, HBM3e, GPT-3) are not figures.

Each fault is a :class:`DataError` naming file, row and column.
"""

from __future__ import annotations

import math
import re
from typing import Any

from analyses.table_schema import SOURCE_SPLIT, DataError, cut

# a figure: digits not glued to a word before them (A100, GPT-3), a fraction (1/3), a multiplier
# suffix (K, M, B, T) when no letter follows it (175B params, but 1.5TB is terabytes)
FIGURE = re.compile(
    r"(?<![A-Za-z0-9.,/])(?<![A-Za-z]-)(\d+(?:,\d{3})*(?:\.\d+)?)(?:/(\d+))?(?:\s?([KMBT])(?![A-Za-z]))?(?![\d/])"
)
MULTIPLIERS = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
# a value may carry a stated figure in another unit: SI prefixes, percent, and units of time
SCALES = (
    1.0,
    1e3,
    1e-3,
    1e6,
    1e-6,
    1e9,
    1e-9,
    1e12,
    1e-12,
    100.0,
    0.01,
    60.0,
    1 / 60,
    3600.0,
    1 / 3600,
    24.0,
    7.0,
    12.0,
)


def parse_values(text: str | None, where: str = "values") -> dict[str, float]:
    """Parse ``'a_x=10; b_days=3.5'`` into ``{'a_x': 10.0, 'b_days': 3.5}``; ValueError names a
    malformed pair, a number that is not finite, or a name given twice."""
    out: dict[str, float] = {}
    for part in SOURCE_SPLIT.split(text if isinstance(text, str) else ""):
        if not part:
            continue
        name, sep, number = (p.strip() for p in part.partition("="))
        if name in out:
            raise ValueError(f"{where}: '{name}' is stated twice ({name}={out[name]:g}, then {cut(part)})")
        try:
            if not sep or not name or len(number) > 40:
                raise ValueError
            out[name] = float(number)
        except ValueError:
            raise ValueError(f"{where}: '{cut(part)}' is not name=number") from None
        if not math.isfinite(out[name]):
            raise ValueError(f"{where}: '{cut(part)}' is not a finite number")
    return out


def stated_figures(stated: str) -> list[tuple[str, float]]:
    """Each figure ``stated`` writes, as written and as a number (``175B`` -> 1.75e11, ``1/3`` -> 0.333)."""
    out = []
    for m in FIGURE.finditer(stated):
        number = float(m.group(1).replace(",", ""))
        if m.group(2):
            number /= float(m.group(2))
        out.append((m.group(0).strip(), number * MULTIPLIERS.get(m.group(3) or "", 1.0)))
    return out


def _carries(values: list[float], figure: float) -> bool:
    return any(math.isclose(v, figure * s, rel_tol=2e-3) for v in values for s in SCALES)


def check(rec: dict[str, Any], values: dict[str, float]) -> None:
    """The cross-field rules of one claim row ``rec`` (with ``_file`` and ``_row``) whose ``values`` parsed."""
    file, row = rec["_file"], rec["_row"]
    for name, low in values.items():
        high_name = name.replace("_low", "_high", 1) if "_low" in name else None
        if high_name in values and low > values[high_name]:
            message = (
                f"{name}={low:g} is above {high_name}={values[high_name]:g}; a range's low end is at most its high end"
            )
            raise DataError(file, message, row, "values")
    numbers = list(values.values())
    for text, figure in stated_figures(str(rec.get("stated") or "")):
        if not _carries(numbers, figure):
            shown = "; ".join(f"{k}={v:g}" for k, v in values.items()) or "nothing"
            message = (
                f"'{text}' is a figure none of the values carries (values: {cut(shown, 120)}); "
                "edit 'values' with 'stated' (see analyses/claim_values.py)"
            )
            raise DataError(file, message, row, "stated")
