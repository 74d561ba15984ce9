"""What every command checks before anything runs: the data, the claims against their checks, and
the Chinese edition's words against what the book writes.

The tables themselves (types, constraints, keys, references: ``claims_zh`` names claims, and every
claim has its Chinese row) are checked by :func:`analyses.data.validate`. What only the code knows
is checked here: every verdict, direction, kind, feature and scenario input has its Chinese word in ``data/terms_zh.csv``
and that table names no other; every English word of the calculator (``WORDS_EN``), each of the
documents' workloads and each currency has its row in ``data/calculator_zh.csv``, and that table
holds no key the page never reads. A fault is one :class:`~analyses.data.DataError` line naming
file, row and column, so a deleted row fails here instead of the page falling back to English.
"""

from __future__ import annotations

from collections.abc import Iterable

from analyses import data, verdicts
from analyses.chapters import ledger
from analyses.pages.calculator import WORDS_EN
from analyses.scenario import buying

PREFIXES = ("input", "unit", "choice", "workload", "money", "currency")  # keys the calculator builds (money: its units by currency)
# the words only a page in another language reads (pages/calculator.py: its messages in that language)
TRANSLATED_ONLY = ("message", "not_a_number", "separator", "allowed_choices", "allowed_integer", "allowed_range")


def validate(chapter: str | None = None) -> None:
    """Every data table, the claim rows against the checks (of ``chapter``, or of the book), and the
    Chinese words; raises :class:`~analyses.data.DataError` (one line)."""
    data.validate()
    ledger.verify(chapter)
    words_zh()


def words_zh() -> None:
    """The Chinese edition's words cover exactly what the book writes (see the module's docstring)."""
    kinds = data.schema("claims").columns[data.schema("claims").column_names.index("kind")].allowed or ()
    wanted = [("verdict", v) for v in verdicts.VERDICTS] + [("direction", d) for d in verdicts.DIRECTIONS]
    wanted += [("kind", k) for k in kinds] + [("feature", f) for f in data.table("features")["feature"]]
    wanted += [("input", name) for name in data.table("scenario")["name"]]
    _covers("terms_zh", "term", wanted, by="group")
    keys = [*WORDS_EN, *TRANSLATED_ONLY, *(f"workload:{w[0]}" for w in buying.WORKLOADS), f"workload:{buying.READER}"]
    keys += [f"choice:{c}" for c in buying.CURRENCIES]
    frame = data.table("calculator_zh")
    for key in frame["key"]:
        prefix, colon, rest = str(key).partition(":")
        known = key in keys if not colon or prefix == "workload" else prefix in PREFIXES and rest
        if not known:
            file, row = data.where("calculator_zh", "key", key)
            message = f"'{key}' is a key the calculator never reads; keys: its English words, {', '.join(p + ':...' for p in PREFIXES)}"
            raise data.DataError(file, message, row, "key")
    _covers("calculator_zh", "key", [("", k) for k in keys])


def _covers(table: str, column: str, wanted: Iterable[tuple[str, str]], by: str | None = None) -> None:
    """Table ``table`` has a row for each (``by`` value, ``column`` value) of ``wanted`` and, where
    ``by`` is given, no row of those groups that ``wanted`` lacks."""
    frame = data.table(table)
    wanted = list(wanted)
    have = [(str(r[by]) if by else "", str(r[column])) for _, r in frame.iterrows()]
    file = data.where(table, column, None)[0]
    if by is not None:
        for group, value in have:
            if (group, value) not in wanted:
                allowed = [v for g, v in wanted if g == group]
                message = f"'{value}' is no {group} the book writes; {group}s: {data.allowed_text(allowed)}"
                raise data.DataError(file, message, data.where(table, column, value)[1], column)
    for group, value in wanted:
        if (group, value) not in have:
            what = f"{group} '{value}'" if by else f"'{value}'"
            raise data.DataError(file, f"no row for {what}, which the Chinese edition writes", column=column)
