"""One definition per quantity: the named quantities several checks and chapters share.

Two rows of the ledger that speak of one quantity (the time an interruption costs, the time to get
a job running again, a job's busy share, goodput, the cost of an A100-hour, the B300/A100 speed-up
of a workload, runs a month) must compute it the same way. Each such quantity is one function,
marked here with :func:`named` where it is defined (:mod:`analyses.scenario.generations`,
:mod:`analyses.scenario.operations`, :mod:`analyses.scenario.costs`), with its definition in
words; the checks and chapters call that function and never recompute it from the scenario's raw
inputs (``tests/core/test_quantities.py`` reads every chapter module and fails on a raw read of
an input a quantity owns, or on a call of the model function it wraps).

While :func:`recording` is active, every call of a named quantity is noted with its arguments, so
the ledger can say which quantities a row uses and a test can compare every row that uses one.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# the modules that define named quantities (imported by :func:`registry`)
DEFINED_IN = ("analyses.scenario.generations", "analyses.scenario.operations", "analyses.scenario.costs")


@dataclass(frozen=True)
class Quantity:
    """A named quantity: what it is, its unit, where it is computed, and what it owns.

    ``owns`` are the scenario inputs only this quantity may read (a chapter reads them through it),
    ``wraps`` the model functions only its definition may call; ``audit`` is the entry of
    ``notes/audit-22.md``'s registry (R1-R16) it answers.
    """

    name: str
    label: str
    unit: str
    definition: str
    fn: Callable[..., Any] = field(compare=False)
    owns: tuple[str, ...] = ()
    wraps: tuple[str, ...] = ()
    audit: str = ""

    @property
    def module(self) -> str:
        return self.fn.__module__


_REGISTRY: dict[str, Quantity] = {}
_USED: contextvars.ContextVar[list[tuple[str, tuple[Any, ...]]] | None] = contextvars.ContextVar(
    "quantities_used", default=None
)


def _key(x: Any) -> Any:
    """An argument as a hashable note (arrays by shape only: the draws are not part of the identity)."""
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    shape = getattr(x, "shape", None)
    if shape is not None:
        return float(x) if shape == () else f"array{tuple(shape)}"
    return repr(x)


def named(
    name: str,
    label: str,
    unit: str,
    definition: str,
    owns: tuple[str, ...] = (),
    wraps: tuple[str, ...] = (),
    audit: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark ``fn(s, ...)`` as the one definition of quantity ``name``."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY and _REGISTRY[name].module != fn.__module__:
            raise ValueError(f"quantity '{name}' is defined twice: {_REGISTRY[name].module} and {fn.__module__}")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            used = _USED.get()
            if used is not None:
                note = (name, tuple(_key(a) for a in args[1:]) + tuple((k, _key(v)) for k, v in sorted(kwargs.items())))
                if note not in used:
                    used.append(note)
            return fn(*args, **kwargs)

        wrapper.quantity = name  # type: ignore[attr-defined]
        _REGISTRY[name] = Quantity(name, label, unit, definition, wrapper, owns, wraps, audit)
        return wrapper

    return mark


def registry() -> dict[str, Quantity]:
    """Every named quantity by name (importing the modules that define them)."""
    for module in DEFINED_IN:
        importlib.import_module(module)
    return dict(_REGISTRY)


def quantity(name: str) -> Quantity:
    """One named quantity; ``KeyError`` lists the names."""
    table = registry()
    if name not in table:
        raise KeyError(f"unknown quantity '{name}'; the registry has: {', '.join(table)}")
    return table[name]


def note(name: str, args: tuple[Any, ...]) -> None:
    """Note ``(name, args)`` in the active recording (a frame choice a row takes, :mod:`analyses.scenario.frame`)."""
    used = _USED.get()
    if used is not None and (name, args) not in used:
        used.append((name, args))


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """Note every named quantity called inside the block: a list of (name, arguments after ``s``)."""
    used: list[tuple[str, tuple[Any, ...]]] = []
    token = _USED.set(used)
    try:
        yield used
    finally:
        _USED.reset(token)
