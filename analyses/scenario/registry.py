"""The registry of derived assumptions: one registered function per derivation, evaluated in dependency order.

A row of ``data/scenario.csv`` either types its range (``typed``) or names a derivation
(``price``, ``mfu``, ``model_speedup``, ...) and its argument. Each derivation is one function,
registered here under its name with :func:`derivation`, that declares the assumptions it reads;
:func:`derive` evaluates every row after the rows it reads (:mod:`graphlib`), so a derivation never
asks the scenario for values in the middle of being derived, and a cycle between rows is an error
that names it. The registered functions live in :mod:`analyses.scenario.derivations`.

A derivation that ``follows`` its inputs is derived again when a reader moves one of them (a chapter
that sets ``restart_s`` gets the goodput that follows); the others keep their derived range.
"""

from __future__ import annotations

import graphlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from analyses import data
from analyses.models.uncertainty import Range

Row = Mapping[str, Any]  # a row of data/scenario.csv, as a record


@dataclass(frozen=True)
class Derived:
    """What a derivation gives a row: its range, its sources (``;``-separated ids) and their date.

    ``sources`` None: the union of the sources of the assumptions it reads."""

    range: Range
    sources: str | None
    date: str = ""


@dataclass(frozen=True)
class Derivation:
    """A registered derivation: ``fn(row, inputs) -> Derived`` with ``inputs`` the ranges of the
    assumptions ``reads(row)`` names; ``follows`` re-derives it when a reader moves one of them."""

    name: str
    fn: Callable[[Row, Mapping[str, Range]], Derived]
    reads: Callable[[Row], tuple[str, ...]]
    follows: bool = False


REGISTRY: dict[str, Derivation] = {}


def derivation(
    name: str, reads: tuple[str, ...] | Callable[[Row], tuple[str, ...]] = (), follows: bool = False
) -> Callable[[Callable[[Row, Mapping[str, Range]], Derived]], Callable[[Row, Mapping[str, Range]], Derived]]:
    """Register ``fn(row, inputs) -> Derived`` as derivation ``name``, reading the assumptions ``reads``
    (names, or a function of the row that gives them)."""

    def register(fn: Callable[[Row, Mapping[str, Range]], Derived]) -> Callable[[Row, Mapping[str, Range]], Derived]:
        if name in REGISTRY:
            raise ValueError(
                f"derivation '{name}' is registered twice: {REGISTRY[name].fn.__module__} and {fn.__module__}"
            )
        REGISTRY[name] = Derivation(name, fn, reads if callable(reads) else (lambda _row, names=reads: names), follows)
        return fn

    return register


def text(x: Any) -> str:
    """A table cell as text ('' for an empty cell)."""
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def fault(name: str, message: str, column: str) -> data.DataError:
    """A DataError naming the row of assumption ``name`` in data/scenario.csv."""
    file, row = data.where("scenario", "name", name)
    return data.DataError(file, f"assumption '{name}': {message}", row, column)


def of(row: Row) -> Derivation:
    """The registered derivation of ``row``; a DataError naming the row when there is none."""
    kind = row["derivation"]
    if kind not in REGISTRY:
        raise fault(
            row["name"], f"unknown derivation '{kind}'; the registered ones: {', '.join(REGISTRY)}", "derivation"
        )
    return REGISTRY[kind]


def order(rows: Mapping[str, Row]) -> list[str]:
    """The rows' names in an order where every row comes after the rows it reads (table order where
    free); a DataError names a row that reads an unknown assumption, or a cycle of rows."""
    graph: dict[str, tuple[str, ...]] = {}
    for name, row in rows.items():
        reads = of(row).reads(row)
        unknown = [r for r in reads if r not in rows]
        if unknown:
            raise fault(
                name, f"its derivation '{row['derivation']}' reads '{unknown[0]}', which is no assumption", "derivation"
            )
        graph[name] = reads
    sorter = graphlib.TopologicalSorter(graph)
    try:
        sorter.prepare()
    except graphlib.CycleError as err:
        cycle = err.args[1]
        raise fault(cycle[0], f"derivations read each other in a cycle: {' -> '.join(cycle)}", "derivation") from None
    position = {name: i for i, name in enumerate(rows)}
    out: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=position.__getitem__)
        out += ready
        sorter.done(*ready)
    return out


def derive(rows: Mapping[str, Row]) -> dict[str, Derived]:
    """Every row's :class:`Derived`, each derivation fed the ranges of the rows it reads."""
    out: dict[str, Derived] = {}
    for name in order(rows):
        row = rows[name]
        d = of(row)
        got = d.fn(row, {r: out[r].range for r in d.reads(row)})
        if got.sources is None:
            inherited = {s for r in d.reads(row) for s in data.SOURCE_SPLIT.split(out[r].sources or "") if s}
            got = Derived(got.range, ";".join(sorted(inherited)), got.date)
        out[name] = got
    return out


def follow(rows: Mapping[str, Row], names: list[str], ranges: dict[str, Range], moved: set[str]) -> dict[str, Range]:
    """``ranges`` with every derivation that follows its inputs derived again where a reader moved one
    of them (``moved``: the names a reader set) and did not set the derived one itself; ``names`` is
    :func:`order` of ``rows``."""
    changed = set(moved)
    for name in names:
        row = rows[name]
        d = of(row)
        if name in ranges and d.follows and name not in moved and changed.intersection(d.reads(row)):
            ranges[name] = d.fn(row, {r: ranges[r] for r in d.reads(row)}).range
            changed.add(name)
    return ranges
