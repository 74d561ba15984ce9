"""What every command checks before anything runs: the data, the claims against their checks, and
the Chinese edition's words against what the book writes.

The tables themselves (types, constraints, keys, references: ``claims_zh`` names claims, and every
claim has its Chinese row) are checked by :func:`analyses.data.validate`. What only the code knows
is checked here: every verdict, direction, kind, feature and scenario input has its Chinese word in
``data/terms_zh.csv`` and that table names no other; ``data/calculator_zh.csv`` holds exactly the
keys the Chinese buy-or-rent page reads (:func:`calculator_keys`: the calculator's English words,
each of the documents' workloads and each currency, and each input's label, unit and choices,
derived from the inputs the calculator declares, so a new input needs its Chinese row). A fault is
one :class:`~analyses.data.DataError` line naming file, row and column, so a deleted row fails here
instead of the page falling back to English or its build failing.
"""

from __future__ import annotations

from collections.abc import Iterable

from analyses import chapters, data, verdicts
from analyses.chapters import ledger
from analyses.models.formula import LogGrid, System
from analyses.pages import calculator as calculator_page
from analyses.pages.calculator import WORDS_EN
from analyses.scenario import buying
from analyses.scenario import calculator as wiring

# A grid that spans every model size and GPU count: which inputs the formulas read depends on a
# generation being timed by a grid (as on the page), not on the grid's values.
STAND_IN_GRID = LogGrid((1.0, 1e30), (1.0, 1e12), ((1.0, 1.0), (1.0, 1.0)))
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
    sysm = calculator_system()
    keys = calculator_keys(sysm)
    known = set(keys) | {f"input:{i.name}" for i in sysm.inputs}  # one generation's own label is allowed
    frame = data.table("calculator_zh")
    for key in frame["key"]:
        if key not in known:
            file, row = data.where("calculator_zh", "key", key)
            message = f"'{key}' is a key the calculator never reads; keys: {data.allowed_text(keys)}"
            raise data.DataError(file, message, row, "key")
    _covers("calculator_zh", "key", [("", k) for k in keys])


def calculator_system() -> System:
    """The buy-or-rent page's calculator as :func:`analyses.scenario.calculator.system` declares it: the
    page's generations, each timed by a grid as on the page (:data:`STAND_IN_GRID`), the workload bounded
    by the chapter's parameters."""
    gens = buying.gpus()
    grids = dict.fromkeys(gens, STAND_IN_GRID)
    bounds = {p.name: p for p in chapters.spec("buy-or-rent").params if p.name in wiring.WORKLOAD}
    return wiring.system(gens, workload=bounds, grids=grids, wall_clock=True)


def calculator_keys(sysm: System) -> list[str]:
    """The keys the Chinese buy-or-rent page reads from ``data/calculator_zh.csv``: the English words
    (``WORDS_EN``, money units and currencies among them) and those only another language writes, the
    documents' workloads and the reader's, each currency's name, and for each input of ``sysm`` its label
    (``input:<name>``, a generation's name as ``{gpu}`` where several generations have the input), its
    choices (``choice:<label>``; the currency's are the page's own) and, unless it holds money (written
    with the ``money:`` words), its unit as the page shows it (``unit:<unit>``, a fraction in per cent)."""
    gens = [g.lower() for g in buying.gpus()]
    names = {i.name for i in sysm.inputs}
    money = calculator_page.money_inputs(sysm, buying.gpus())
    keys = [*WORDS_EN, *TRANSLATED_ONLY, *(f"workload:{w[0]}" for w in buying.WORKLOADS), f"workload:{buying.READER}"]
    keys += [f"choice:{c}" for c in buying.CURRENCIES]
    for i in sysm.inputs:
        shared = [i.name.replace(g, "{gpu}") for g in gens if g in i.name]
        generic = next((n for n in shared if sum(n.replace("{gpu}", g) in names for g in gens) > 1), None)
        keys.append(f"input:{generic or i.name}")
        if i.name not in money:
            keys.append(f"unit:{calculator_page.PERCENT_UNITS.get(i.unit, i.shown_unit)}")
        keys += [f"choice:{label}" for label, _ in i.choices if i.name != "currency"]
    return list(dict.fromkeys(keys))


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
