"""Search that finds a figure however it is written: a Sphinx extension and its normaliser.

The audited documents write ``900GB/s``, ``6~12个月``, ``300万元``, ``2.5~3倍``; the book's English
pages write ``900 GB/s``, ``6-12 months``, ``3M RMB``, ``~2.5-3x``; a reader may type either, in
full-width forms (``９００ＧＢ／ｓ``) too. Sphinx's search splits all of these into unrelated pieces
(and drops bare numbers from a query), so none of them finds its claim. Here every figure becomes
one canonical search term, the same at index time (Python, :func:`index_terms`) and at query time
(JavaScript, ``figure_search.js``, run as Sphinx's ``splitQuery``):

- full-width forms become ASCII, ``～``/``〜``/``–``/``—`` become ``~`` or ``-``, text is lower-cased;
- a number with its magnitude is written ``<digits>e<exponent>``: ``300万``, ``3M``, ``3百万`` and
  ``3,000,000`` are all ``3e6``; ``千亿``, ``100B`` and ``1000亿`` are ``1e11``; ``4.2万`` and ``42k``
  are ``42e3``; a decimal point is ``p`` (``2.5`` is ``2p5``);
- a unit, with or without a space or hyphen, in either language, becomes a short code in front:
  ``900GB/s`` and ``900 GB/s`` are ``gbs900``; ``5天`` and ``5 days`` are ``d5``; ``300万元`` and
  ``3M RMB`` are ``cny3e6`` (:data:`UNITS`);
- a range, with ``~``, ``至``, ``到``, ``-`` or ``to``, is ``<low>to<high>``: ``6~12个月`` and
  ``6-12 months`` are ``mo6to12``, ``35%~45%`` and ``35%-45%`` are ``pct35to45``.

A page that uses a word of one of :data:`SYNONYMS` (payback, 回本, 回收期; rent, 租用; owned, 自建)
is indexed under all of them, so a reader's word finds the page that uses another.

At index time each figure is also kept without its unit (``6to12``), so a query without a unit
finds it; a query term matches an index term that contains it, as Sphinx's partial matching does.
Chinese runs are indexed by single characters and pairs of characters, and a Chinese query is
split into pairs, so ``风控`` finds ``风控模型`` without a dictionary (with jieba installed, the
Chinese search language adds its words too). Canonical terms end in a digit, so neither Sphinx's
Python stemmer nor its JavaScript one changes them.

The rules are data (:data:`UNITS`, :data:`MAGNITUDES`, :data:`FIGURE`); the JavaScript compiles the
same regular expression and tables, injected into ``language_data.js`` at build time, and
``tests/site/test_screens.py`` checks that both runtimes give the same terms. The ledger page's
text filter (``_static/audit.js``) uses the same JavaScript, so it matches figures the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sphinx.search.en import SearchEnglish
from sphinx.search.zh import SearchChinese

JS_FILE = Path(__file__).with_name("figure_search.js")

# Magnitude words and letters after a number, with their power of ten. Chinese ones first so the
# longest match wins (万亿 before 万).
MAGNITUDES: dict[str, int] = {
    "万亿": 12,
    "千亿": 11,
    "百亿": 10,
    "十亿": 9,
    "亿": 8,
    "千万": 7,
    "百万": 6,
    "十万": 5,
    "万": 4,
    "千": 3,
    "trillion": 12,
    "billion": 9,
    "million": 6,
    "thousand": 3,
    "t": 12,
    "b": 9,
    "m": 6,
    "k": 3,
}
# Magnitude words that stand for a number on their own (千亿参数: a hundred billion parameters).
BARE_MAGNITUDES = ("万亿", "千亿", "百亿", "十亿")

# Units after a number (lower case, after width folding) and the code each becomes.
UNITS: dict[str, str] = {
    "gb/s": "gbs",
    "tb/s": "tbs",
    "mb/s": "mbs",
    "gib/s": "gibs",
    "gbit/s": "gbps",
    "gbps": "gbps",
    "tbps": "tbps",
    "mbps": "mbps",
    "pb": "pb",
    "tb": "tb",
    "tib": "tib",
    "gb": "gb",
    "gib": "gib",
    "mb": "mb",
    "eflops": "eflops",
    "pflops": "pflops",
    "tflops": "tflops",
    "pflop/s": "pflops",
    "tflop/s": "tflops",
    "flops": "flops",
    "%": "pct",
    "倍": "x",
    "x": "x",
    "times": "x",
    "天": "d",
    "days": "d",
    "day": "d",
    "小时": "h",
    "hours": "h",
    "hour": "h",
    "hrs": "h",
    "h": "h",
    "分钟": "min",
    "minutes": "min",
    "minute": "min",
    "min": "min",
    "个月": "mo",
    "months": "mo",
    "month": "mo",
    "周": "wk",
    "weeks": "wk",
    "week": "wk",
    "年": "yr",
    "years": "yr",
    "year": "yr",
    "元": "cny",
    "rmb": "cny",
    "yuan": "cny",
    "cny": "cny",
    "美元": "usd",
    "usd": "usd",
    "张卡": "gpu",
    "卡": "gpu",
    "张": "gpu",
    "gpus": "gpu",
    "gpu": "gpu",
    "cards": "gpu",
    "card": "gpu",
    "台": "srv",
    "servers": "srv",
    "server": "srv",
    "节点": "node",
    "nodes": "node",
    "node": "node",
    "参数": "param",
    "parameters": "param",
    "parameter": "param",
    "params": "param",
    "param": "param",
    "微秒": "us",
    "毫秒": "ms",
    "ms": "ms",
    "秒": "s",
    "seconds": "s",
    "kw": "kw",
    "w": "w",
}


def _alternatives(words: list[str]) -> str:
    """A regex alternation of ``words``, longest first; Latin words may not run into a letter."""
    out = []
    for w in sorted(words, key=lambda w: (-len(w), w)):
        text = re.escape(w).replace("/", "\\/")
        out.append(f"{text}(?![a-z])" if w[-1].isascii() and w[-1].isalpha() else text)
    return "|".join(out)


_NUMBER = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?"
_WORD_MAGS = [m for m in MAGNITUDES if m.isascii() and len(m) > 1]
_MAG = "[ ]?(?:" + _alternatives(_WORD_MAGS) + ")|" + _alternatives([m for m in MAGNITUDES if m not in _WORD_MAGS])
_QUANTITY = f"(?:(?<![a-z0-9.])({_NUMBER})({_MAG})?|(?<!数)({'|'.join(BARE_MAGNITUDES)}))(?:[ -]?({_alternatives(list(UNITS))}))?"
# One figure: a quantity (number, magnitude, unit), and optionally a range's upper end. Groups:
# 1-4 the lower end (number, magnitude, bare magnitude, unit), 5-8 the upper end.
FIGURE = f"{_QUANTITY}(?:(?:[ ]*(?:~|至|到)[ ]*-?[ ]*|[ ]+to[ ]+-?|-(?=[0-9]))(?:{_QUANTITY}))?"
_FIGURE_RE = re.compile(FIGURE)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"\w+")  # Sphinx's own query split: runs of letters, digits and underscores
_DASHES = {0x2013: "-", 0x2014: "-", 0x2212: "-", 0x301C: "~", 0x3000: " "}


def fold(text: str) -> str:
    """Full-width ASCII forms as ASCII, dashes as ``-``, wave dashes as ``~``, lower case."""
    out = []
    for ch in text:
        cp = ord(ch)
        if 0xFF01 <= cp <= 0xFF5E:
            out.append(chr(cp - 0xFEE0))
        else:
            out.append(_DASHES.get(cp, ch))
    return "".join(out).lower()


def number_term(number: str, exponent: int = 0) -> str:
    """A number times ``10**exponent`` as a search term: ``("300", 4)`` is ``3e6``, ``("2.5", 0)``
    is ``2p5``, ``("900", 0)`` is ``900`` (trailing zeros become an exponent from three on)."""
    whole, _, frac = number.replace(",", "").partition(".")
    digits = (whole + frac).lstrip("0")
    exp = exponent - len(frac)
    if not digits:
        return "0"
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    if exp >= 3:
        return f"{digits}e{exp}"
    if exp >= 0:
        return digits + "0" * exp
    if len(digits) > -exp:
        return f"{digits[:exp]}p{digits[exp:]}"
    return "0p" + "0" * (-exp - len(digits)) + digits


def _quantity(number: str | None, magnitude: str | None, bare: str | None) -> str | None:
    if bare:
        return number_term("1", MAGNITUDES[bare])
    if number is None:
        return None
    return number_term(number, MAGNITUDES[magnitude.strip()] if magnitude else 0)


def figures(text: str) -> list[tuple[str, str]]:
    """The figures in ``text`` (folded first) as ``(unit code or "", canonical number or range)``."""
    out = []
    for m in _FIGURE_RE.finditer(fold(text)):
        g = m.groups()
        low, high = _quantity(*g[0:3]), _quantity(*g[4:7])
        unit = UNITS.get(g[7] or g[3] or "", "")
        out.append((unit, f"{low}to{high}" if high else str(low)))
    return out


def _plain(term: str) -> bool:
    return term.isdigit()  # Sphinx indexes bare numbers itself and drops them from queries


def figure_terms(text: str, with_bare: bool = True) -> list[str]:
    """Search terms of the figures in ``text``: the unit code with the number (``gbs900``), and,
    with ``with_bare``, the number alone too unless it is a plain integer (``6to12``, ``3e6``)."""
    out = []
    for unit, number in figures(text):
        if unit:
            out.append(unit + number)
        if (with_bare or not unit) and not _plain(number):
            out.append(number)
    return out


def cjk_terms(text: str, pairs_only: bool = False) -> list[str]:
    """Chinese runs as single characters and overlapping pairs (a one-character run as itself)."""
    out = []
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            out.append(run)
            continue
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
        if not pairs_only:
            out.extend(run)
    return out


def index_terms(text: str) -> list[str]:
    """What the index adds for ``text`` besides the language's own words: its figures and its
    Chinese characters and pairs."""
    folded = fold(text)
    return figure_terms(folded) + cjk_terms(folded)


def query_terms(query: str) -> list[str]:
    """A search query as terms (the JavaScript ``splitQuery`` does the same): its figures, then
    the rest split as Sphinx splits words, Chinese runs as pairs."""
    folded = fold(query)
    terms = figure_terms(folded, with_bare=False)
    rest = _CJK_RUN.sub(lambda m: f" {m.group()} ", _FIGURE_RE.sub(" ", folded))
    for word in _WORD.findall(rest):
        terms.extend(cjk_terms(word, pairs_only=True) if _CJK_RUN.fullmatch(word) else [word])
    return [t for t in terms if t]


# Words the documents and buyers use for one idea, in either language (the documents write 投资回报周期
# and 收回; a Chinese buyer types 回本 or 回收期; the English pages say payback, rent, owned). A page
# that uses any word of a group is indexed under every word of it, so 回本 finds the English and the
# Chinese payback pages and "rent" the pages that say 租用. Latin words match whole words; the
# stemmer then joins their forms (rented, renting).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "payback": (
        "payback",
        "pays back",
        "pay back",
        "pays for itself",
        "回本",
        "回本周期",
        "回收期",
        "投资回报",
        "收回",
    ),
    "rent": ("rent", "rented", "renting", "rental", "租", "租用", "租赁"),
    "own": ("owned", "owning", "自建", "自购", "自有", "购买", "采购"),
}
_SYNONYM_RES = {
    group: re.compile("|".join(rf"(?<![a-z]){re.escape(w)}(?![a-z])" if w.isascii() else re.escape(w) for w in words))
    for group, words in SYNONYMS.items()
}


def synonym_terms(text: str) -> list[str]:
    """The search terms of every word of each :data:`SYNONYMS` group that ``text`` uses a word of
    (what a query of any of those words looks up: :func:`query_terms`)."""
    folded = fold(text)
    out: list[str] = []
    for group, pattern in _SYNONYM_RES.items():
        if pattern.search(folded):
            out += [term for word in SYNONYMS[group] for term in query_terms(word)]
    return list(dict.fromkeys(out))


def js_config() -> dict[str, Any]:
    """The tables and pattern the JavaScript normaliser compiles."""
    return {
        "figure": FIGURE,
        "units": UNITS,
        "magnitudes": MAGNITUDES,
        "cjk": _CJK_RUN.pattern,
    }


def js_code() -> str:
    """``figure_search.js`` with its configuration filled in: defines ``auditSearch`` and Sphinx's
    ``splitQuery``."""
    return JS_FILE.read_text().replace("__FIGURE_SEARCH_CONFIG__", json.dumps(js_config(), ensure_ascii=False))


class _Figures:
    """Mixin for a Sphinx search language: index the figures and Chinese pairs of every text."""

    lang: str

    def split(self, input: str) -> list[str]:  # noqa: A002 (Sphinx's name)
        return super().split(fold(input)) + index_terms(input) + synonym_terms(input)  # type: ignore[misc]

    @property
    def js_splitter_code(self) -> str:  # type: ignore[override]
        return js_code()


class EnglishFigures(_Figures, SearchEnglish):
    """English search with figures normalised (registered for ``en``)."""


class ChineseFigures(_Figures, SearchChinese):
    """Chinese search (jieba's words where jieba is installed) with figures normalised and single
    characters kept (registered for ``zh``)."""

    def word_filter(self, stemmed_word: str) -> bool:
        return len(stemmed_word) > 1 or bool(_CJK_RUN.fullmatch(stemmed_word))


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point (``_config.yml``: ``extra_extensions``)."""
    app.add_search_language(EnglishFigures)
    app.add_search_language(ChineseFigures)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
