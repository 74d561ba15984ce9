"""The bottom layer: units and conventions, each stated once for the whole book (number formatting is
:mod:`analyses.units.formats`).

Time: a year is the Julian year of 365.25 days (the convention of growth-rate fits and of
8,766-hour TCO years), a month is a twelfth of it (30.44 days). Bytes: GB = 1e9 bytes, GiB = 2**30
bytes (HBM capacities are binary: NVIDIA's "GB" of HBM are GiB). FLOP/s are dense (no 2:4
sparsity). Link bandwidths are per direction unless a name says ``bidirectional``. A PFLOP-day is
1e15 FLOP/s sustained for one day.
"""

from __future__ import annotations

import math
from collections.abc import Container

MICROSECOND = 1e-6  # seconds
MILLISECOND = 1e-3  # seconds
SECONDS_PER_MINUTE = 60.0
MINUTES_PER_HOUR = 60.0
SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
SECONDS_PER_DAY = SECONDS_PER_HOUR * HOURS_PER_DAY
DAYS_PER_YEAR = 365.25
MONTHS_PER_YEAR = 12.0
DAYS_PER_MONTH = DAYS_PER_YEAR / MONTHS_PER_YEAR
DAYS_PER_WEEK = 7.0
HOURS_PER_YEAR = DAYS_PER_YEAR * HOURS_PER_DAY
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0
SECONDS_PER_YEAR = DAYS_PER_YEAR * SECONDS_PER_DAY

KB, MB, GB, TB, PB = 1e3, 1e6, 1e9, 1e12, 1e15
GIB = 2.0**30
GIGA, TERA, PETA = 1e9, 1e12, 1e15  # SI prefixes (a clock in GHz, FLOP/s in TFLOP/s)
BITS_PER_BYTE = 8.0


# Significant digits a number is settled to before a display rounds it or a discontinuous model
# step (a floor, a count of whole checkpoints) uses it: far below what is shown, far above the few
# ulps by which CPUs (AVX-512 or not) and summation orders differ.
SETTLE_DIGITS = 12


def settle(value: float) -> float:
    """``value`` rounded to :data:`SETTLE_DIGITS` significant digits.

    A result that is mathematically a short decimal (23.075 = 2.5 x 7.1 x 1.3) lands a few ulps
    either side of it depending on the CPU's code path: displayed with 2 decimals it would print
    23.07 on one machine and 23.08 on another, and a 30-day job cut into 15-minute segments would
    have 2,880 segments on one and 2,879 on the other. Settled first, both agree everywhere.
    """
    value = float(value)
    return float(f"{value:.{SETTLE_DIGITS}g}") if math.isfinite(value) else value


# Tensor formats of dense peak FLOP/s (data/gpus.csv's ``peak_tflops_dense_<format>`` columns), widest first.
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")


def precision_problem(
    gpu: str, offered: Container[str], precision: str, tensor_format: str | None = None
) -> str | None:
    """The book's one precision rule, in one sentence: ``None`` when ``gpu``, whose dense tensor
    throughput is listed in the formats ``offered``, can train at ``precision``, else what is wrong and
    what it offers. ``tensor_format`` is the format a recipe's matrix multiplies run in when
    ``precision`` names a recipe rather than a format (the memory model's ``bf16-mixed``). Chapter
    rules (:func:`analyses.scenario.params.precision_rule`) and the planner's request
    (:meth:`analyses.models.training_run.Request.validate`) both say it with these words."""
    wanted = tensor_format or precision
    if wanted in offered:
        return None
    recipe = f" (the {precision} recipe multiplies in {wanted})" if wanted != precision else ""
    return (
        f"{gpu} has no dense {wanted} tensor throughput in data/gpus.csv{recipe}; "
        f"it offers {', '.join(p for p in PRECISIONS if p in offered)}"
    )
