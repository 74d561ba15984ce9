"""How the Chinese edition writes a number with its unit: the same digits as the English pages
(:func:`analyses.units.formats.fmt`, settled values), Chinese unit words, and money, counts of
parameters and other large counts in 万 and 亿 as the documents write them (4.2万元, 1750亿).

The words for verdicts, directions and kinds of claim are data (``data/terms_zh.csv``); this module
holds only what a number needs: :data:`UNITS` maps the unit names the checks use (``Finding.unit``)
to the Chinese written after the figure.
"""

from __future__ import annotations

import math

from analyses.units import settle
from analyses.units.formats import fmt, stated

# The unit names of the checks' findings and what follows a figure in Chinese. Units that are
# symbols in both languages (GB/s, TB/s, FLOP) are written straight after the digits, as the
# documents write them (900GB/s).
UNITS: dict[str, str] = {
    "x": "倍",
    "×": "倍",
    "days": "天",
    "years": "年",
    "months": "个月",
    "h": "小时",
    "min": "分钟",
    "microseconds": "微秒",
    "GPUs": "张GPU",
    "generations": "代",  # GPU architecture generations (000 §3, 001 §2.1: 上一代)
    "experiments": "次实验",
    "runs": "次",
    "runs/month": "次/月",
    "updates/month": "次更新/月",
    "entries": "条",
    "instances": "个实例",
    "parameters": "参数",
    "RMB": "元",
    "RMB/month": "元/月",
    "GB": "GB",
    "GB/s": "GB/s",
    "TB/s": "TB/s",
    "PB": "PB",
    "FLOP": " FLOP",
    "": "",
    # the scenario's units (a flip point's threshold)
    "s": "秒",
    "µs": "微秒",
    "USD per GPU": "美元/GPU",
    "USD per GPU-hour": "美元/GPU时",
    "USD per GPU per year": "美元/GPU·年",
    "USD per kWh": "美元/千瓦时",
    "USD per kW per month": "美元/千瓦·月",
    "CNY per GPU-hour": "元/GPU时",
    "CNY per USD": "元/美元",
    "million tokens": "百万token",
    "tokens": "token",
    "tokens/parameter": "token/参数",
    "per GPU-year": "次/GPU·年",
    "1/year": "/年",
    "epochs": "轮",
    "bytes": "字节",
    "ratio": "",
    "Spearman": "",
}
# Units whose large figures are written in 万 and 亿 (money and counts), not powers of ten.
WAN_YI_UNITS = ("RMB", "RMB/month", "parameters", "entries")


def unit_word(unit: str) -> str:
    """The Chinese written after a figure in ``unit``; an unknown unit is kept as it is."""
    return UNITS.get(unit, f" {unit}")


def wan_yi(value: float, sig: int = 3) -> str:
    """A large figure in 万 (10⁴) or 亿 (10⁸) with ``sig`` significant figures: 42000 -> 4.2万,
    1.75e11 -> 1,750亿; below 10,000 the figure itself."""
    value = settle(float(value))
    for size, word in ((1e8, "亿"), (1e4, "万")):
        if abs(value) >= size:
            return f"{_digits(value / size, sig)}{word}"
    return _digits(value, sig)


def wan_yi_large(value: float, sig: int = 3) -> str:
    """:func:`wan_yi`, with figures from 10¹² in 万亿 (2万亿, not 20,000亿), as a page of sizes and
    token counts writes them."""
    value = settle(float(value))
    if abs(value) >= 1e12:
        return f"{_digits(value / 1e12, sig)}万亿"
    return wan_yi(value, sig)


def _digits(value: float, sig: int) -> str:
    """``value`` at ``sig`` significant figures without trailing zeros after the point (4.2, not 4.20)."""
    text = str(fmt(value, "", sig))
    return text.rstrip("0").rstrip(".") if "." in text else text


def number(value: float, unit: str, sig: int = 3) -> str:
    """A recomputed figure with its Chinese unit: ``fraction`` and ``%`` as percentages, ``x`` as 倍,
    money and large counts in 万/亿, the rest as :func:`fmt` writes the digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "无"
    if isinstance(value, float) and math.isinf(value):
        return f"{'-' if value < 0 else ''}∞{unit_word(unit)}"
    if unit.startswith("fraction"):  # a share ("fraction", "fraction of server capex")
        return str(fmt(value, pct=True, sig=sig))
    if unit in ("%", "pct"):
        return str(fmt(value / 100.0, pct=True, sig=sig))
    if unit in WAN_YI_UNITS:
        return f"{wan_yi(value, sig)}{unit_word(unit)}"
    return f"{fmt(value, '', sig)}{unit_word(unit)}"


def as_written(value: float, unit: str) -> str:
    """A stated figure as short as a document writes it (64天, 2.5倍, 45%, 8万元); a figure derived
    from stated ones (an implied ratio, more than four digits) keeps three significant figures."""
    short = f"{value:g}"
    if len(short.replace("-", "").replace(".", "").lstrip("0")) > 4:
        return number(value, unit, 3)
    if unit == "fraction":
        value, unit = 100.0 * value, "%"
    if unit in ("%", "pct"):
        return f"{stated(value)}%"
    if unit in WAN_YI_UNITS:
        return f"{wan_yi(value, 4)}{unit_word(unit)}"
    return f"{stated(value)}{unit_word(unit)}"


def interval(lo: float, hi: float, unit: str, sig: int = 3, written: bool = False) -> str:
    """An interval in Chinese: 2.5–3倍, ≥90%, ≤50%, one figure when both ends agree (``written``:
    each end as the document writes it)."""
    one = (lambda x: as_written(x, unit)) if written else (lambda x: number(x, unit, sig))
    if math.isinf(lo) and math.isinf(hi):
        return "任意值"
    if math.isinf(hi):
        return f"≥{one(lo)}"
    if math.isinf(lo):
        return f"≤{one(hi)}"
    a, b = one(lo), one(hi)
    if a == b:
        return a
    suffix = unit_word(unit) if unit not in ("fraction", "%", "pct") else "%"
    if suffix and a.endswith(suffix) and b.endswith(suffix):
        a = a[: -len(suffix)]
    return f"{a}–{b}"
