"""How the Chinese edition writes a number with its unit (the style sheet, notes/zh-style.md): the
same significant figures as the English pages (:func:`analyses.units.formats.fmt`, settled values),
no thousands separators, Chinese unit words, large money and counts in 万 and 亿 (4.2万元, 1750亿,
1340万元 or 1.34亿元, never "1,340万元"), ranges with a full-width ～ and the unit once (2.5～3倍),
and dates as 2026年12月7日.

The words for verdicts, directions, kinds of claim and the scenario's inputs are data
(``data/terms_zh.csv``); this module holds only what a number needs: :data:`UNITS` maps the unit
names the checks and the scenario use to the Chinese written after the figure, and :func:`fill`
puts the figures of an English sentence into its reviewed Chinese translation
(``data/reasons_zh.csv``), so that no figure is ever retyped in Chinese.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from analyses.units import settle
from analyses.units.formats import fmt, stated

RANGE = "～"  # the range mark between two figures (full width)

# The unit names of the checks' findings and the scenario, and what follows a figure in Chinese.
# Units that are symbols in both languages (GB/s, TB/s, FLOP) are written straight after the
# digits, as the documents write them (900GB/s). Money is in 元 throughout: a USD price is
# converted before it is written (:func:`analyses.verdicts.robustness.in_ledger_currency`).
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
    # the scenario's units (a flip point's threshold), money already in 元
    "s": "秒",
    "µs": "微秒",
    "RMB per GPU": "元/卡",
    "RMB per GPU-hour": "元/卡时",
    "RMB per GPU per year": "元/（卡·年）",
    "RMB per kWh": "元/千瓦时",
    "RMB per kW per month": "元/（千瓦·月）",
    "CNY per GPU-hour": "元/卡时",
    "CNY per USD": "元/美元",
    "million tokens": "百万token",
    "tokens": "个token",
    "tokens/parameter": "个token/参数",
    "per GPU-year": "次/（卡·年）",
    "1/year": "/年",
    "epochs": "轮",
    "bytes": "字节",
    "sequences": "条序列",
    "fraction": "",
    "ratio": "",
    "Spearman": "",
}
# Units whose figures from 10,000 up are written in 万 and 亿 (money and counts), not in digits.
WAN_YI_UNITS = (
    "RMB",
    "RMB/month",
    "RMB per GPU",
    "RMB per GPU per year",
    "parameters",
    "entries",
    "tokens",
    "GPUs",
    "years",
    "runs",
    "experiments",
)


def punctuate(text: str) -> str:
    """Text carried from an English table (the figures as a document writes them, "千亿参数; 数百年")
    with its half-width separators made full-width, as a Chinese page prints it (千亿参数；数百年)."""
    return re.sub(r"\s*;\s*", "；", str(text))


def unit_word(unit: str) -> str:
    """The Chinese written after a figure in ``unit``; an unknown unit is kept as it is."""
    return UNITS.get(unit, f" {unit}")


def plain(value: float, sig: int = 3) -> str:
    """``value`` at ``sig`` significant figures as :func:`fmt` writes it, without thousands separators
    (7580, 1.20×10²⁴, 0.470)."""
    return str(fmt(value, "", sig)).replace(",", "")


def _short(value: float, sig: int) -> str:
    """``value`` at ``sig`` significant figures without trailing zeros after the point (4.2, not 4.20)."""
    text = plain(value, sig)
    return text.rstrip("0").rstrip(".") if "." in text and "×" not in text else text


def wan_yi(value: float, sig: int = 3) -> str:
    """A large figure in 万 (10⁴) or 亿 (10⁸) with ``sig`` significant figures: 42000 -> 4.2万,
    1.75e11 -> 1750亿, 1.34e7 -> 1340万; below 10,000 the figure itself (8750)."""
    value = settle(float(value))
    for size, word in ((1e8, "亿"), (1e4, "万")):
        if abs(value) >= size:
            return f"{_short(value / size, sig)}{word}"
    return _short(value, sig)


def wan_yi_large(value: float, sig: int = 3) -> str:
    """:func:`wan_yi`, with figures from 10¹² in 万亿 (2万亿, not 20000亿), as a page of sizes and
    token counts writes them."""
    value = settle(float(value))
    if abs(value) >= 1e12:
        return f"{_short(value / 1e12, sig)}万亿"
    return wan_yi(value, sig)


def number(value: float, unit: str, sig: int = 3) -> str:
    """A recomputed figure with its Chinese unit: ``fraction`` and ``%`` as percentages, ``x`` as 倍,
    money and counts in 万/亿, the rest as :func:`fmt` writes the digits (no separators)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "无"
    if isinstance(value, float) and math.isinf(value):
        return f"{'-' if value < 0 else ''}∞{unit_word(unit)}"
    if unit.startswith("fraction"):  # a share ("fraction", "fraction of server capex")
        return str(fmt(value, pct=True, sig=sig)).replace(",", "")
    if unit in ("%", "pct"):
        return str(fmt(value / 100.0, pct=True, sig=sig)).replace(",", "")
    if unit in WAN_YI_UNITS:
        return f"{wan_yi_large(value, sig)}{unit_word(unit)}"
    return f"{plain(value, sig)}{unit_word(unit)}"


def as_written(value: float, unit: str) -> str:
    """A stated figure as short as a document writes it (64天, 2.5倍, 45%, 8万元); a figure derived
    from stated ones (an implied ratio, more than four digits) keeps three significant figures."""
    short = f"{value:g}"
    if len(short.replace("-", "").replace(".", "").lstrip("0")) > 4:
        return number(value, unit, 3)
    if unit == "fraction":
        value, unit = 100.0 * value, "%"
    if unit in ("%", "pct"):
        return f"{stated(value)}%".replace(",", "")
    if unit in WAN_YI_UNITS:
        return f"{wan_yi_large(value, 4)}{unit_word(unit)}"
    return f"{stated(value)}{unit_word(unit)}".replace(",", "")


def _suffix(unit: str) -> str:
    return "%" if unit in ("fraction", "%", "pct") or unit.startswith("fraction") else unit_word(unit)


def join_range(a: str, b: str, unit: str) -> str:
    """Two ends of a range with the unit once: 2.5～3倍, 60%～80%, 23万～70万元."""
    if a == b:
        return a
    suffix = _suffix(unit)
    if suffix and suffix != "%" and a.endswith(suffix) and b.endswith(suffix):
        a = a[: -len(suffix)]
    return f"{a}{RANGE}{b}"


def interval(lo: float, hi: float, unit: str, sig: int = 3, written: bool = False, words: bool = False) -> str:
    """An interval in Chinese: 2.5～3倍, ≥90%, ≤50%, one figure when both ends agree (``written``:
    each end as the document writes it; ``words``: bounds as 至少90% and 不超过50%, for prose)."""
    one = (lambda x: as_written(x, unit)) if written else (lambda x: number(x, unit, sig))
    if math.isinf(lo) and math.isinf(hi):
        return "任意值"
    if math.isinf(hi):
        return f"{'至少' if words else '≥'}{one(lo)}"
    if math.isinf(lo):
        return f"{'不超过' if words else '≤'}{one(hi)}"
    return join_range(one(lo), one(hi), unit)


def percent(fraction: float, sig: int = 2) -> str:
    """A share as a percentage at ``sig`` figures, keeping its units digit (60%, 5%, 0.47%)."""
    text = str(fmt(fraction, pct=True, sig=sig)).replace(",", "")
    return re.sub(r"\.0+%$", "%", text)


def tolerance(t: float) -> str:
    """A rule's tolerance as the style sheet writes it: 10%, 25%, 5% (never 5.0%)."""
    return f"{stated(round(100 * t, 6))}%"


def date(day: datetime.date) -> str:
    """A date as 2026年12月7日 (no leading zeros, no spaces)."""
    return f"{day.year}年{day.month}月{day.day}日"


# --------------------------------------------------------------------------------------------
# The figures of an English sentence, put into its Chinese translation
# --------------------------------------------------------------------------------------------

# A figure as the English pages print it: 7,580; 0.47; 1.20×10²⁴; "4.3 million" (a money scale).
# Not a figure: digits that are part of a name (A100, 4M-token, OPT-175B, 1g.34gb).
NUMBER = re.compile(
    r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
    r"(?:\s(?:million|billion|trillion)\b)?(?![\w]|\.\d)"
)
SCALES = {"million": 1e6, "billion": 1e9, "trillion": 1e12}
_SUPER = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
SLOT = re.compile(r"\{(\d+)(?::(万|整|码))?\}")


@dataclass(frozen=True)
class Figure:
    """A figure of an English sentence: its value and how many significant figures it was printed to."""

    value: float
    sig: int
    scaled: bool  # written with a money scale word (million, billion)
    decimals: int  # decimal places as printed


def _parse(token: str) -> Figure:
    scale = 1.0
    for word, size in SCALES.items():
        if token.endswith(word):
            token, scale = token[: -len(word)].strip(), size
    mantissa = token.replace(",", "")
    exponent = 0
    if "×10" in mantissa:
        mantissa, power = mantissa.split("×10")
        exponent = int(power.translate(_SUPER))
    digits = mantissa.replace(".", "").lstrip("0") or "0"
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    sig = len(digits) if "." in mantissa else len(digits.rstrip("0")) or 1
    return Figure(float(mantissa) * 10**exponent * scale, max(sig, 1), scale > 1, decimals)


def figures(text: str) -> list[Figure]:
    """The figures of an English sentence in order; a range whose second end carries a scale word
    ("4.3–4.6 million") gives it to the first end too."""
    found = [(m.start(), m.end(), m.group()) for m in NUMBER.finditer(text)]
    out = [_parse(t) for _, _, t in found]
    for i in range(len(found) - 1):
        between = text[found[i][1] : found[i + 1][0]]
        if between in ("–", "-", " to ") and out[i + 1].scaled and not out[i].scaled:
            word = next(w for w in SCALES if found[i + 1][2].endswith(w))
            out[i] = Figure(out[i].value * SCALES[word], out[i].sig, True, out[i].decimals)
    return out


def skeleton(text: str) -> str:
    """An English sentence with each figure replaced by its slot ``{1}``, ``{2}`` ... (in order): the
    key under which its Chinese translation is kept."""
    count = iter(range(1, 10_000))
    return NUMBER.sub(lambda m: f"{{{next(count)}}}", text)


def slot(f: Figure, how: str | None) -> str:
    """One figure in Chinese: ``None`` its digits as printed (no separators; a money scale in 万/亿),
    ``万`` in 万/亿 from 10,000 up, ``整`` a whole number, ``码`` a document's three-digit code (001)."""
    if how == "整":
        return str(int(round(f.value)))
    if how == "码":  # a document's code, as the book writes it: 000, 001
        return f"{int(round(f.value)):03d}"
    if f.scaled or how == "万":
        return wan_yi_large(f.value, f.sig)
    if abs(f.value) >= 1e7 or (f.value != 0 and abs(f.value) < 1e-3):
        return plain(f.value, f.sig)
    return f"{f.value:.{f.decimals}f}"


def fill(template: str, found: Sequence[Figure], where: str = "") -> str:
    """``template`` (Chinese with slots ``{n}``, ``{n:万}``, ``{n:整}``, ``{n:码}``) with the English sentence's
    figures ``found`` in its slots; a slot beyond them raises a ValueError naming ``where``."""

    def put(m: re.Match) -> str:
        i = int(m.group(1))
        if not 1 <= i <= len(found):
            raise ValueError(f"{where}: slot {{{i}}} but the English sentence has {len(found)} figure(s)")
        return slot(found[i - 1], m.group(2))

    return SLOT.sub(put, template)


# --------------------------------------------------------------------------------------------
# The style sheet as checks (notes/zh-style.md): what no Chinese page may show
# --------------------------------------------------------------------------------------------

CJK = "\u4e00-\u9fff"
STYLE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ASCII identifier with an underscore (a parameter name)", re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b")),
    ("a pointer to the English reason instead of a reason", re.compile(r"英文版理由")),
    ("half-width punctuation between Chinese characters", re.compile(rf"[{CJK}][;,:!?]\s?[{CJK}]")),
    ("a thousands separator before 万 or 亿", re.compile(r"\d,\d{3}(?:\.\d+)?\s?[万亿]")),
    ("a thousands separator in a Chinese figure", re.compile(rf"\d,\d{{3}}(?:\.\d+)?[{CJK}%]")),
    ("an en dash between figures (ranges take ～)", re.compile(r"\d\s?–\s?\d")),
    ("more figures than the English prints", re.compile(r"\d\.\d{3,}(?:倍|个月|天|年)")),
    ("a date not written as 2026年12月7日", re.compile(r"\d +年|年 +\d|月 +\d|\d月0\d日|年0\d月")),
    (
        "a term the style sheet replaces",
        re.compile(
            r"新兴云|步长模型|(?<!又称)(?<!、)回收期|(?<![又称、])自有(?:方案|成本|GPU|服务器|合算)?|(?<![又称、])自建(?:成本|方案|服务器)"
        ),
    ),
    ("a build or developer note in reader copy", re.compile(r"在构建时插入|中补上这几行|不需要改代码")),
)
_PAIRS = {"（": "）", "(": ")", "“": "”", "《": "》", "【": "】", "[": "]"}


def unbalanced(text: str) -> str:
    """The first bracket or quote of ``text`` left open or closed without an opening one, or ""."""
    stack: list[str] = []
    closing = {v: k for k, v in _PAIRS.items()}
    for ch in text:
        if ch in _PAIRS:
            stack.append(ch)
        elif ch in closing:
            if not stack or stack[-1] != closing[ch]:
                return ch
            stack.pop()
    return stack[-1] if stack else ""


def style_faults(text: str) -> list[str]:
    """Every breach of the style sheet in ``text`` (visible Chinese text), each as "rule: excerpt"."""
    faults = []
    for rule, pattern in STYLE_RULES:
        for m in pattern.finditer(text):
            faults.append(f"{rule}: …{text[max(0, m.start() - 12) : m.end() + 12]}…")
    if bracket := unbalanced(text):
        faults.append(f"an unbalanced bracket or quote {bracket!r}")
    return faults
