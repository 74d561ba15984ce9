"""One formula, two runtimes: systems of formulas in the restricted language of
:mod:`analyses.models.formula_language`, evaluated with numpy in Python and translated to JavaScript for
the page, from the same definitions.

A :class:`System` is a set of named :class:`Input` s (each with its allowed range), named constants,
log-log interpolation grids (:class:`LogGrid`) and named :class:`Formula` s, each an expression of the
language that may use inputs, constants and other formulas (in any order; a cycle is an error).
:meth:`System.evaluate` computes every formula with numpy, vectorised over arrays of inputs;
:meth:`System.to_js` writes one JavaScript expression (the runtime ``formula_runtime.js`` beside this
module, with the formulas in the same order of operations), so a page recomputes what the book
computed without a second hand-written copy of the arithmetic.

This module is pure: it reads no data or scenario; the calculator's formulas are
:mod:`analyses.models.calculator`, and the inputs' ranges come from whoever builds the system.
"""

from __future__ import annotations

import decimal
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analyses.models.formula_language import (  # noqa: F401  (the language's names, re-exported for callers)
    FUNCTIONS,
    NAME,
    NUM,
    RESERVED,
    SETTLE_DIGITS,
    FormulaError,
    JavaScript,
    LogGrid,
    Numpy,
    js_number,
    names_read,
    parse,
)

RUNTIME = Path(__file__).with_name("formula_runtime.js")  # the JavaScript around the generated formulas


class InputError(ValueError):
    """Inputs outside their allowed ranges (or unknown, or not numbers): ``errors`` lists one
    ``{"input", "value", "allowed", "message"}`` per offending input, as the JavaScript does."""

    def __init__(self, errors: Sequence[Mapping[str, Any]], known: Sequence[str] = ()):
        self.errors = [dict(e) for e in errors]
        message = "; ".join(e["message"] for e in self.errors)
        if known and any(e["allowed"] == "no such input" for e in self.errors):
            message += f" (inputs: {', '.join(known)})"
        super().__init__(message)


# --------------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------------


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def readable(x: float) -> str:
    """A bound as people read it, never in e-notation: its shortest digits with thousands separators
    (``131,072``, ``0.05``), and ``1×10¹⁵`` from 10¹⁵ up and below 10⁻⁴."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    _, digits, exp = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    text = "".join(map(str, digits))
    n = len(text) + exp  # the decimal point sits after n digits
    if 1e-4 <= abs(x) < 1e15:
        if n <= 0:
            out = "0." + "0" * -n + text
        else:
            whole, frac = (text + "0" * max(0, n - len(text)))[:n], text[n:]
            out = f"{int(whole):,}" + (f".{frac}" if frac else "")
    else:
        out = text[0] + ("." + text[1:] if len(text) > 1 else "") + "×10" + str(n - 1).translate(_SUPERSCRIPT)
    return ("-" if x < 0 else "") + out


@dataclass(frozen=True)
class Input:
    """One input of a system: its allowed range, default, and how a page shows it.

    ``choices`` (label, code) pairs make the input a choice: its value is one of the codes.
    ``integer`` inputs take whole numbers. A page shows the value divided by ``scale`` in
    ``display_unit`` (``scale=1e12``, "TFLOP/s" for a FLOP/s input); the bounds and ``allowed`` are
    in the input's own unit times ``1 / scale`` as shown.
    """

    name: str
    label: str
    unit: str
    default: float
    min: float
    max: float
    integer: bool = False
    choices: tuple[tuple[str, float], ...] = ()
    scale: float = 1.0
    display_unit: str | None = None

    def __post_init__(self) -> None:
        if not NAME.match(self.name) or self.name in RESERVED:
            raise FormulaError(
                self.name,
                f"'{self.name}' is not a plain ASCII name (no leading '__') or is reserved ({sorted(RESERVED)})",
            )
        if self.choices:
            object.__setattr__(self, "choices", tuple((str(k), float(v)) for k, v in self.choices))
            codes = [c for _, c in self.choices]
            object.__setattr__(self, "min", min(codes))
            object.__setattr__(self, "max", max(codes))
        if not (math.isfinite(self.min) and math.isfinite(self.max) and self.min <= self.max):
            raise FormulaError(self.name, f"input range [{self.min}, {self.max}] is not a finite interval")
        if not self.scale > 0:
            raise FormulaError(self.name, f"input scale must be positive, got {self.scale}")
        problem = self.problem(self.default)
        if problem:
            raise FormulaError(self.name, f"the default {self.default!r} is not allowed: expected {self.allowed}")

    @property
    def shown_unit(self) -> str:
        return self.display_unit if self.display_unit is not None else self.unit

    @property
    def allowed(self) -> str:
        """The allowed values in words, in the units a page shows ("a number from 0.05 to 1")."""
        if self.choices:
            return "one of " + ", ".join(label for label, _ in self.choices)
        kind = "a whole number" if self.integer else "a number"
        unit = (
            f" {self.shown_unit}" if self.shown_unit and self.shown_unit not in ("-", "fraction", "ratio", "x") else ""
        )
        lo, hi = readable(self.min / self.scale), readable(self.max / self.scale)
        return f"{kind} from {lo} to {hi}{unit}"

    def code(self, value: Any) -> Any:
        """``value`` with a choice's label replaced by its code."""
        if self.choices and isinstance(value, str):
            for label, code in self.choices:
                if label == value:
                    return code
        return value

    def bad(self, value: Any) -> np.ndarray | None:
        """A mask of the elements of ``value`` (a number or an array) that are not allowed; None
        when ``value`` is not numeric at all."""
        try:
            v = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
        except (TypeError, ValueError):
            return None
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(v)
            if self.choices:
                return bad | ~np.isin(v, [c for _, c in self.choices])
            bad |= (v < self.min) | (v > self.max)
            if self.integer:
                bad |= v != np.round(v)
        return bad

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not allowed ("not a number", "out of range"), or None."""
        bad = self.bad(value)
        if bad is None:
            return "not a number"
        return "out of range" if bad.any() else None

    def error(self, value: Any) -> dict[str, Any] | None:
        """The error record of ``value`` (as the JavaScript returns it, for the first offending
        element of an array), or None when it is allowed."""
        bad = self.bad(value)
        if bad is not None and not bad.any():
            return None
        shown = _shown(value, self.scale) if bad is None else _shown(np.ravel(value)[np.argmax(bad)], self.scale)
        return {
            "input": self.name,
            "value": shown,
            "allowed": self.allowed,
            "message": f"{self.label} must be {self.allowed}; got {shown}",
        }

    def spec(self) -> dict[str, Any]:
        """What the JavaScript needs to check and show this input."""
        return {
            "name": self.name,
            "label": self.label,
            "unit": self.shown_unit,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "integer": self.integer,
            "choices": [list(c) for c in self.choices],
            "scale": self.scale,
            "allowed": self.allowed,
        }


def _shown(value: Any, scale: float) -> str:
    """An offending value as the message shows it (the first bad element of an array)."""
    try:
        v = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError):
        return repr(value)[:40]
    if v.size == 0:
        return "nothing"
    x = float(v[0])
    return js_string(to_precision(x / scale, 6)) if math.isfinite(x) else "not a number"


def to_precision(x: float, digits: int) -> float:
    """JavaScript's ``Number(x.toPrecision(digits))``: the exact binary value rounded to ``digits``
    significant digits, halves away from zero."""
    if x == 0 or not math.isfinite(x):
        return x
    d = decimal.Decimal(x)
    quantum = decimal.Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float(d.quantize(quantum, rounding=decimal.ROUND_HALF_UP))


def js_string(x: float) -> str:
    """JavaScript's ``String(x)`` of a finite double (ECMA-262 Number::toString): the shortest
    round-trip digits, positional from 1e-6 to below 1e21, else ``1.5e+21`` / ``1.5e-7``."""
    if x == 0:
        return "0"
    sign, digits, exp = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    text = "".join(map(str, digits))
    n = len(text) + exp  # the decimal point sits after n digits
    out: str
    if -6 < n <= 21:
        if n <= 0:
            out = "0." + "0" * -n + text
        elif n >= len(text):
            out = text + "0" * (n - len(text))
        else:
            out = text[:n] + "." + text[n:]
    else:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        out = f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return ("-" if x < 0 else "") + out


@dataclass(frozen=True)
class Formula:
    """One named formula: ``expr`` in the grammar of this module; ``result`` formulas are what a
    page shows, the others intermediates. ``unit`` may hold ``{currency}``, which a page replaces
    with the chosen currency; ``infinite`` is how a page shows an infinite value ("never"); a page
    shows the value divided by ``scale`` in ``display_unit`` (the value itself stays in ``unit``)."""

    name: str
    expr: str
    label: str = ""
    unit: str = ""
    result: bool = True
    infinite: str = "∞"
    scale: float = 1.0
    display_unit: str | None = None

    @property
    def shown_unit(self) -> str:
        return self.display_unit if self.display_unit is not None else self.unit


def _compact(spec: dict[str, Any]) -> dict[str, Any]:
    """An input's spec without the words a page writes itself (its label and allowed values)."""
    return {k: v for k, v in spec.items() if k not in ("label", "allowed")}


def _json(value: Any) -> str:
    """JSON safe inside an HTML ``<script>`` element."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")


# --------------------------------------------------------------------------------------------
# A system of formulas
# --------------------------------------------------------------------------------------------


@dataclass
class System:
    """Inputs, constants, grids and formulas, checked together: every name known, no cycle, no input
    unused, each formula typed (a result may be a number or a condition)."""

    name: str
    inputs: Sequence[Input]
    formulas: Sequence[Formula]
    constants: Mapping[str, float] = field(default_factory=dict)
    grids: Mapping[str, LogGrid] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.inputs = tuple(self.inputs)
        self.formulas = tuple(self.formulas)
        self.constants = {k: float(v) for k, v in self.constants.items()}
        self.grids = dict(self.grids)
        self.input = {i.name: i for i in self.inputs}
        self.formula = {f.name: f for f in self.formulas}
        seen: dict[str, str] = {}
        for kind, names in (
            ("input", [i.name for i in self.inputs]),
            ("constant", list(self.constants)),
            ("grid", list(self.grids)),
            ("formula", [f.name for f in self.formulas]),
        ):
            for n in names:
                if not NAME.match(n) or n in RESERVED:
                    raise FormulaError(
                        n, f"'{n}' is not a plain ASCII name (no leading '__') or is reserved ({sorted(RESERVED)})"
                    )
                if n in seen:
                    raise FormulaError(n, f"the name is both a {seen[n]} and a {kind}")
                if n in FUNCTIONS:
                    raise FormulaError(n, f"the name of the function {n}() cannot name a {kind}")
                seen[n] = kind
        for n, v in self.constants.items():
            if math.isnan(v):
                raise FormulaError(n, "a constant cannot be NaN")
        values = set(self.input) | set(self.constants) | set(self.formula)
        self.parsed = {f.name: parse(f.name, f.expr, values, self.grids) for f in self.formulas}
        self.order = self._order()
        used = set().union(*(p.names for p in self.parsed.values())) if self.parsed else set()
        unused = [i for i in self.input if i not in used]
        if unused:
            raise FormulaError(unused[0], f"input{'s' if len(unused) > 1 else ''} {unused} read by no formula")

    def _order(self) -> tuple[str, ...]:
        """Formulas in an order where each follows the formulas it reads (definition order kept)."""
        order: list[str] = []
        state: dict[str, int] = {}

        def visit(name: str, path: tuple[str, ...]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = " -> ".join((*path[path.index(name) :], name))
                raise FormulaError(name, f"formulas read each other in a cycle: {cycle}")
            state[name] = 1
            for dep in sorted(self.parsed[name].names & set(self.formula)):
                visit(dep, (*path, name))
            state[name] = 2
            order.append(name)

        for f in self.formulas:
            visit(f.name, ())
        return tuple(order)

    @property
    def results(self) -> tuple[str, ...]:
        """The formulas a page shows, in definition order."""
        return tuple(f.name for f in self.formulas if f.result)

    def defaults(self) -> dict[str, float]:
        return {i.name: i.default for i in self.inputs}

    # ---------------------------------------------------------------------------------- Python

    def errors(self, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One error record per unknown or disallowed input of ``values`` (empty when all are allowed)."""
        out = []
        for name in values:
            if name not in self.input:
                out.append(
                    {
                        "input": name,
                        "value": _shown(values[name], 1.0),
                        "allowed": "no such input",
                        "message": f"unknown input '{name}'",
                    }
                )
        for i in self.inputs:  # in the order of declaration, as the JavaScript
            if i.name in values:
                e = i.error(i.code(values[i.name]))
                if e:
                    out.append(e)
        return out

    def evaluate(
        self, values: Mapping[str, Any] | None = None, *, check: bool = True, intermediates: bool = False
    ) -> dict[str, np.ndarray]:
        """Every result (and with ``intermediates`` every formula) at ``values``, numpy arrays broadcast
        together; an input missing from ``values`` takes its default, a choice may be given by label.

        With ``check`` (the default) an unknown or disallowed input raises :class:`InputError` (as the
        JavaScript returns an error object) and so does a result that is NaN.
        """
        values = dict(values or {})
        if check:
            errors = self.errors(values)
            if errors:
                raise InputError(errors, tuple(self.input))
        env: dict[str, Any] = {n: np.asarray(v, dtype=float) for n, v in self.constants.items()}
        for i in self.inputs:
            env[i.name] = np.asarray(i.code(values.get(i.name, i.default)), dtype=float)
        run = Numpy(env, self.grids)
        with np.errstate(all="ignore"):
            for name in self.order:
                env[name] = np.asarray(run(self.parsed[name].tree))
        wanted = [f.name for f in self.formulas if f.result or intermediates]
        if check:
            for name in wanted:
                if self.parsed[name].kind == NUM and np.any(np.isnan(env[name])):
                    raise InputError(
                        [{"input": "", "value": "", "allowed": "", "message": f"result '{name}' is not a number"}]
                    )
        return {name: env[name] for name in wanted}

    # ---------------------------------------------------------------------------------- JavaScript

    def to_js(self, comments: bool = True) -> str:
        """One JavaScript expression (no external script) evaluating to ``{compute, inputs, results,
        formulas}``. ``compute(values)`` takes an object of every input (numbers; choices by code) and
        returns ``{ok: true, values: {result: number, ...}}``, or ``{ok: false, errors: [{input,
        value, allowed, message}, ...]}`` naming each input that is missing, not a number, or outside
        its range (and each result that would be NaN): never a NaN. ``comments`` writes each formula's
        expression above its line and each input's and result's label and allowed values into the spec (a
        page short of bytes, which writes its own labels and messages, leaves them out: an error then names
        the input by its name; :meth:`describe` lists the formulas)."""
        ident = {i.name: f"i_{i.name}" for i in self.inputs}
        ident |= {n: f"k_{n}" for n in self.constants}
        ident |= {n: f"g_{n}" for n in self.grids}
        ident |= {f.name: f"f_{f.name}" for f in self.formulas}
        js = JavaScript(ident)
        body = []
        for name in self.order:
            f = self.formula[name]
            if comments:
                body.append(f"    // {name} = {' '.join(f.expr.split())}")
            body.append(f"    const {ident[name]} = {js(self.parsed[name].tree)};")
        used_grids = set().union(*(p.names for p in self.parsed.values())) & set(self.grids) if self.parsed else set()
        grids = []
        for n in sorted(used_grids):
            lx, ly, lz = self.grids[n].logs
            grids.append(
                f"  const {ident[n]} = {{lx: [{', '.join(map(js_number, lx))}], "
                f"ly: [{', '.join(map(js_number, ly))}], "
                f"lz: [{', '.join('[' + ', '.join(map(js_number, row)) + ']' for row in lz)}]}};"
            )
        constants = [f"  const {ident[n]} = {js_number(v)};" for n, v in self.constants.items()]
        reads = [f"    const {ident[i.name]} = v[{_json(i.name)}];" for i in self.inputs]
        results = [f.name for f in self.formulas if f.result]
        out = ", ".join(f"{_json(n)}: {ident[n]}" for n in results)
        meta = {
            "name": self.name,
            "inputs": [i.spec() if comments else _compact(i.spec()) for i in self.inputs],
            "results": results,
            "formulas": [
                {"name": f.name, "unit": f.shown_unit, "scale": f.scale, "infinite": f.infinite}
                | ({"label": f.label} if comments else {})
                for f in self.formulas
                if f.result
            ],
        }
        parts = {
            "@NAME": self.name,
            "@META": _json(meta),
            "@CONSTANTS": "\n".join(constants),
            "@GRIDS": "\n".join(grids),
            "@SETTLE_DIGITS": str(SETTLE_DIGITS),
            "@READS": "\n".join(reads),
            "@BODY": "\n".join(body),
            "@OUT": out,
        }
        template = RUNTIME.read_text(encoding="utf-8").rstrip("\n")
        source = re.sub("|".join(sorted(parts, key=len, reverse=True)), lambda m: parts[m.group(0)], template)
        return source.replace("</", "<\\/")

    def describe(self) -> list[dict[str, str]]:
        """Each formula as a reader may read it: name, expression, unit, label, shown or intermediate."""
        return [
            {
                "name": f.name,
                "expr": " ".join(f.expr.split()),
                "unit": f.unit,
                "label": f.label,
                "shown": "result" if f.result else "intermediate",
            }
            for f in (self.formula[n] for n in self.order)
        ]
