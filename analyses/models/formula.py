"""One formula, two runtimes: a small restricted expression language evaluated with numpy in Python
and translated to JavaScript for the page, from the same definitions.

A :class:`System` is a set of named :class:`Input` s (each with its allowed range), named constants,
log-log interpolation grids (:class:`LogGrid`) and named :class:`Formula` s, each a Python expression
in the restricted grammar below that may use inputs, constants and other formulas (in any order; a
cycle is an error). :meth:`System.evaluate` computes every formula with numpy, vectorised over
arrays of inputs; :meth:`System.to_js` writes one JavaScript function computing the same formulas
in the same order of operations, so a page recomputes what the book computed without a second
hand-written copy of the arithmetic.

Grammar (Python's own syntax, parsed with :mod:`ast`; anything else is refused with an error that
names the formula and the construct)::

    expr   := number | name
            | expr ('+' | '-' | '*' | '/' | '**') expr | '-' expr | '+' expr
            | expr 'if' cond 'else' expr
            | func '(' expr {',' expr} ')'
    cond   := expr ('<' | '<=' | '>' | '>=' | '==' | '!=') expr {op expr}    (chains allowed)
            | cond 'and' cond | cond 'or' cond | 'not' cond | '(' cond ')'
    func   := min(a, b, ...) | max(a, b, ...) | where(cond, a, b)
            | log(a) | exp(a) | sqrt(a) | abs(a) | ceil(a) | floor(a)
            | interp_loglog(GRID, x, y)

``log`` is the natural logarithm. ``where(c, a, b)`` is ``a if c else b``. ``ceil`` and ``floor``
settle their argument to :data:`SETTLE_DIGITS` significant digits first (as
:func:`analyses.units.settle`), so that the last-bit differences between runtimes cannot move
a step. ``interp_loglog(GRID, x, y)`` interpolates a :class:`LogGrid` bilinearly in
``(log x, log y) -> log z``, clamped to the grid's edges. Conditions are typed: a comparison cannot
be added to a number and a number cannot be a condition.

Numbers are IEEE doubles in both runtimes and the JavaScript is fully parenthesised in the order
Python parses the expression, so ``+ - * /`` give the same bits; ``**``, ``log``, ``exp`` and
``sqrt`` may differ in the last bit between numpy's C library and the browser's.

This module is pure: it reads no data or scenario; the calculator's formulas are
:mod:`analyses.models.calculator`, and the inputs' ranges come from whoever builds the system.
"""

from __future__ import annotations

import ast
import decimal
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analyses.units import SETTLE_DIGITS  # the one precision every settled number uses

NAME = re.compile(r"(?!__)[A-Za-z_][A-Za-z0-9_]*\Z")  # no leading "__": a JavaScript key "__proto__" is special
RESERVED = frozenset({"ok", "errors", "values"})  # keys of the JavaScript result object

# function name -> (least arguments, most arguments or None)
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "min": (2, None),
    "max": (2, None),
    "where": (3, 3),
    "log": (1, 1),
    "exp": (1, 1),
    "sqrt": (1, 1),
    "abs": (1, 1),
    "ceil": (1, 1),
    "floor": (1, 1),
    "interp_loglog": (3, 3),
}
ALLOWED = (
    "numbers, names, + - * / **, unary minus, comparisons (< <= > >= == !=), and/or/not, "
    "'a if cond else b', " + ", ".join(f"{f}()" for f in FUNCTIONS)
)

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_NP_COMPARE = {
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
}
_JS_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "===", ast.NotEq: "!=="}
_NP_UNARY = {"log": np.log, "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs}
_JS_UNARY = {"log": "Math.log", "exp": "Math.exp", "sqrt": "Math.sqrt", "abs": "Math.abs"}
# Names people reach for, and what to write instead.
_CONSTRUCTS = {
    ast.Attribute: "attribute access (a.b)",
    ast.Subscript: "indexing (a[i])",
    ast.Lambda: "lambda",
    ast.ListComp: "a list comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.List: "a list",
    ast.Tuple: "a tuple",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment expression (:=)",
    ast.Starred: "unpacking (*a)",
    ast.Await: "await",
    ast.Yield: "yield",
}
_OPERATORS = {
    ast.Mod: "%",
    ast.FloorDiv: "//",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.Invert: "~",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}

NUM, BOOL = "number", "condition"


class FormulaError(ValueError):
    """A formula (or the system around it) is not in the language: names the formula and the construct."""

    def __init__(self, formula: str, message: str):
        self.formula = formula
        super().__init__(f"formula '{formula}': {message}")


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
            "message": f"{self.label} ({self.name}) must be {self.allowed}; got {shown}",
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


@dataclass(frozen=True)
class LogGrid:
    """A table ``z[i][j]`` over ascending positive ``x[i]`` and ``y[j]`` (for example achieved FLOP/s
    per GPU over model sizes and GPU counts), interpolated linearly in ``(log x, log y) -> log z``.

    ``interp_loglog`` clamps ``x`` and ``y`` to the grid's edges; a system that uses a grid should
    bound its inputs to the grid's span (:meth:`span`). A power law ``z = c x^p y^q`` is reproduced
    exactly between the nodes.
    """

    x: tuple[float, ...]
    y: tuple[float, ...]
    z: tuple[tuple[float, ...], ...]
    # significant digits the logs keep (both runtimes use the rounded logs; fewer bytes in a page)
    digits: int | None = None

    def __post_init__(self) -> None:
        x, y = np.asarray(self.x, dtype=float), np.asarray(self.y, dtype=float)
        z = np.asarray(self.z, dtype=float)
        for axis, v in (("x", x), ("y", y)):
            if v.ndim != 1 or len(v) < 2 or not np.all(v > 0) or not np.all(np.diff(v) > 0):
                raise FormulaError("LogGrid", f"{axis} must hold 2 or more positive, strictly increasing values")
        if z.shape != (len(x), len(y)) or not np.all(np.isfinite(z)) or not np.all(z > 0):
            raise FormulaError("LogGrid", f"z must be {len(x)} x {len(y)} positive finite values, got shape {z.shape}")
        object.__setattr__(self, "x", tuple(float(a) for a in x))
        object.__setattr__(self, "y", tuple(float(a) for a in y))
        object.__setattr__(self, "z", tuple(tuple(float(a) for a in row) for row in z))

    @classmethod
    def tabulate(cls, fn: Any, x: Sequence[float], y: Sequence[float]) -> LogGrid:
        """The grid of ``fn(x, y)`` (a vectorised model, such as achieved FLOP/s per GPU over model
        sizes and GPU counts) at every pair of ``x`` and ``y``."""
        xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        z = np.broadcast_to(np.asarray(fn(xs[:, None], ys[None, :]), dtype=float), (len(xs), len(ys)))
        return cls(tuple(xs), tuple(ys), z)

    @functools.cached_property
    def logs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``log x``, ``log y``, ``log z``: computed once in Python, written into the JavaScript as is."""
        logs = np.log(self.x), np.log(self.y), np.log(self.z)
        if self.digits is None:
            return logs
        round_ = np.frompyfunc(lambda v: float(f"{v:.{self.digits}g}"), 1, 1)
        return tuple(np.asarray(round_(a), dtype=float) for a in logs)  # type: ignore[return-value]

    def span(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """((x min, x max), (y min, y max))."""
        return (self.x[0], self.x[-1]), (self.y[0], self.y[-1])

    def __call__(self, x: Any, y: Any) -> np.ndarray:
        """Interpolated ``z`` at ``(x, y)`` (arrays broadcast), in the JavaScript's order of operations."""
        lx_grid, ly_grid, lz = self.logs
        lx, ly = np.broadcast_arrays(np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float)))
        i, t = _cell(lx_grid, lx)
        j, u = _cell(ly_grid, ly)
        a = lz[i, j] * (1.0 - t) + lz[i + 1, j] * t
        b = lz[i, j + 1] * (1.0 - t) + lz[i + 1, j + 1] * t
        return np.exp(a * (1.0 - u) + b * u)


def _cell(grid: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower node index and fraction of ``v`` (clamped) in ``grid``: the JavaScript's ``cell``."""
    v = np.minimum(np.maximum(v, grid[0]), grid[-1])
    i = np.clip(np.searchsorted(grid, v, side="right") - 1, 0, len(grid) - 2)
    return i, (v - grid[i]) / (grid[i + 1] - grid[i])


# --------------------------------------------------------------------------------------------
# Parsing and checking
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Parsed:
    tree: ast.expr
    kind: str  # NUM or BOOL
    names: frozenset[str]  # inputs, constants and formulas it reads


def _where(node: ast.AST) -> str:
    return f" at column {node.col_offset + 1}" if hasattr(node, "col_offset") else ""


class _Checker:
    """Walks one formula's tree: refuses what the grammar does not have, types every node."""

    def __init__(self, formula: str, values: set[str], grids: set[str]):
        self.formula, self.values, self.grids = formula, values, grids
        self.names: set[str] = set()

    def fail(self, node: ast.AST, message: str) -> FormulaError:
        return FormulaError(self.formula, f"{message}{_where(node)}; allowed: {ALLOWED}")

    def check(self, node: ast.AST) -> str:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            what = _CONSTRUCTS.get(type(node), f"'{type(node).__name__}'")
            raise self.fail(node, f"{what} is not allowed")
        return method(node)

    def want(self, node: ast.AST, kind: str, role: str) -> None:
        got = self.check(node)
        if got != kind:
            raise self.fail(node, f"{role} must be a {kind}, got a {got}")

    def _Constant(self, node: ast.Constant) -> str:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise self.fail(node, f"the constant {v!r} is not allowed (only finite numbers)")
        return NUM

    def _Name(self, node: ast.Name) -> str:
        if node.id in self.grids:
            raise self.fail(node, f"the grid '{node.id}' can only be the first argument of interp_loglog()")
        if node.id not in self.values:
            raise self.fail(node, f"unknown name '{node.id}' (not an input, constant or formula)")
        self.names.add(node.id)
        return NUM

    def _BinOp(self, node: ast.BinOp) -> str:
        if type(node.op) not in _BINARY:
            raise self.fail(
                node, f"the operator '{_OPERATORS.get(type(node.op), type(node.op).__name__)}' is not allowed"
            )
        self.want(node.left, NUM, "an operand")
        self.want(node.right, NUM, "an operand")
        return NUM

    def _UnaryOp(self, node: ast.UnaryOp) -> str:
        if isinstance(node.op, ast.Not):
            self.want(node.operand, BOOL, "the operand of 'not'")
            return BOOL
        if isinstance(node.op, ast.USub | ast.UAdd):
            self.want(node.operand, NUM, "the operand of a sign")
            return NUM
        raise self.fail(node, f"the operator '{_OPERATORS.get(type(node.op), type(node.op).__name__)}' is not allowed")

    def _Compare(self, node: ast.Compare) -> str:
        for op in node.ops:
            if type(op) not in _COMPARE:
                raise self.fail(node, f"the comparison '{_OPERATORS.get(type(op), type(op).__name__)}' is not allowed")
        for operand in (node.left, *node.comparators):
            self.want(operand, NUM, "a compared value")
        return BOOL

    def _BoolOp(self, node: ast.BoolOp) -> str:
        for v in node.values:
            self.want(v, BOOL, "an operand of 'and'/'or'")
        return BOOL

    def _IfExp(self, node: ast.IfExp) -> str:
        self.want(node.test, BOOL, "the condition of 'a if cond else b'")
        self.want(node.body, NUM, "a branch of 'a if cond else b'")
        self.want(node.orelse, NUM, "a branch of 'a if cond else b'")
        return NUM

    def _Call(self, node: ast.Call) -> str:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise self.fail(node, f"the function '{name}' is not allowed")
        name = node.func.id
        if node.keywords:
            raise self.fail(node, f"keyword arguments to {name}() are not allowed")
        least, most = FUNCTIONS[name]
        n = len(node.args)
        if n < least or (most is not None and n > most):
            wanted = f"{least}" if least == most else f"at least {least}"
            raise self.fail(node, f"{name}() takes {wanted} arguments, got {n}")
        args = node.args
        if name == "where":
            self.want(args[0], BOOL, "the first argument of where()")
            args = args[1:]
        if name == "interp_loglog":
            grid = args[0]
            if not isinstance(grid, ast.Name) or grid.id not in self.grids:
                raise self.fail(node, f"the first argument of interp_loglog() must be a grid ({sorted(self.grids)})")
            self.names.add(grid.id)
            args = args[1:]
        for a in args:
            self.want(a, NUM, f"an argument of {name}()")
        return NUM


def parse(formula: str, expr: str, values: Iterable[str], grids: Iterable[str] = ()) -> _Parsed:
    """Parse and type-check ``expr`` (the formula named ``formula``) against the known names."""
    text = " ".join(expr.split())
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(formula, f"not a Python expression ({exc.msg}): {text!r}") from None
    checker = _Checker(formula, set(values), set(grids))
    kind = checker.check(tree)
    return _Parsed(tree, kind, frozenset(checker.names))


# --------------------------------------------------------------------------------------------
# The two runtimes
# --------------------------------------------------------------------------------------------


def _settle(x: np.ndarray) -> np.ndarray:
    """Round to :data:`SETTLE_DIGITS` significant digits (the JavaScript's ``toPrecision``)."""
    fn = np.frompyfunc(lambda v: float(f"{v:.{SETTLE_DIGITS}g}") if math.isfinite(v) else v, 1, 1)
    return np.asarray(fn(np.asarray(x, dtype=float)), dtype=float)


class _Numpy:
    """Evaluates a checked tree with numpy on an environment of arrays."""

    def __init__(self, env: Mapping[str, Any], grids: Mapping[str, LogGrid]):
        self.env, self.grids = env, grids

    def __call__(self, node: ast.AST) -> Any:
        match node:
            case ast.Constant(value=v):
                return float(v)
            case ast.Name(id=name):
                return self.env[name]
            case ast.BinOp(left=a, op=op, right=b):
                x, y = self(a), self(b)
                match op:
                    case ast.Add():
                        return np.add(x, y)
                    case ast.Sub():
                        return np.subtract(x, y)
                    case ast.Mult():
                        return np.multiply(x, y)
                    case ast.Div():
                        return np.divide(x, y)
                    case _:
                        return np.power(x, y)
            case ast.UnaryOp(op=ast.USub(), operand=a):
                return np.negative(self(a))
            case ast.UnaryOp(op=ast.UAdd(), operand=a):
                return np.positive(self(a))
            case ast.UnaryOp(op=ast.Not(), operand=a):
                return np.logical_not(self(a))
            case ast.Compare(left=left, ops=ops, comparators=rest):
                out, prev = None, self(left)
                for op, node_b in zip(ops, rest, strict=True):
                    b = self(node_b)
                    c = _NP_COMPARE[type(op)](prev, b)
                    out = c if out is None else np.logical_and(out, c)
                    prev = b
                return out
            case ast.BoolOp(op=op, values=vs):
                fn = np.logical_and if isinstance(op, ast.And) else np.logical_or
                return functools.reduce(fn, (self(v) for v in vs))
            case ast.IfExp(test=c, body=a, orelse=b):
                return np.where(self(c), self(a), self(b))
            case ast.Call(func=ast.Name(id=name), args=args):
                return self.call(name, args)
        raise AssertionError(f"unchecked node {ast.dump(node)}")  # the checker refuses everything else

    def call(self, name: str, args: list[ast.expr]) -> Any:
        if name == "interp_loglog":
            return self.grids[args[0].id](self(args[1]), self(args[2]))  # type: ignore[attr-defined]
        vs = [self(a) for a in args]
        if name == "min":
            return functools.reduce(np.minimum, vs)
        if name == "max":
            return functools.reduce(np.maximum, vs)
        if name == "where":
            return np.where(*vs)
        if name == "ceil":
            return np.ceil(_settle(vs[0]))
        if name == "floor":
            return np.floor(_settle(vs[0]))
        return _NP_UNARY[name](vs[0])


def _js_number(x: float) -> str:
    """A double as a JavaScript literal that parses back to the same bits."""
    x = float(x)
    if math.isnan(x):
        raise ValueError("NaN has no place in a formula")
    if math.isinf(x):
        return "Infinity" if x > 0 else "(-Infinity)"
    return repr(x)


class _JavaScript:
    """Writes a checked tree as one fully parenthesised JavaScript expression."""

    def __init__(self, ident: Mapping[str, str]):
        self.ident = ident
        self.helpers: set[str] = set()

    def __call__(self, node: ast.AST) -> str:
        match node:
            case ast.Constant(value=v):
                return _js_number(v)
            case ast.Name(id=name):
                return self.ident[name]
            case ast.BinOp(left=a, op=ast.Pow(), right=b):
                return f"Math.pow({self(a)}, {self(b)})"
            case ast.BinOp(left=a, op=op, right=b):
                return f"({self(a)} {_BINARY[type(op)]} {self(b)})"
            case ast.UnaryOp(op=ast.USub(), operand=a):
                return f"(-{self(a)})"
            case ast.UnaryOp(op=ast.UAdd(), operand=a):
                return f"(+{self(a)})"
            case ast.UnaryOp(op=ast.Not(), operand=a):
                return f"(!{self(a)})"
            case ast.Compare(left=left, ops=ops, comparators=rest):
                parts, prev = [], self(left)
                for op, node_b in zip(ops, rest, strict=True):
                    b = self(node_b)
                    parts.append(f"({prev} {_JS_COMPARE[type(op)]} {b})")
                    prev = b
                return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
            case ast.BoolOp(op=op, values=vs):
                joiner = " && " if isinstance(op, ast.And) else " || "
                return "(" + joiner.join(self(v) for v in vs) + ")"
            case ast.IfExp(test=c, body=a, orelse=b):
                return f"({self(c)} ? {self(a)} : {self(b)})"
            case ast.Call(func=ast.Name(id=name), args=args):
                return self.call(name, args)
        raise AssertionError(f"unchecked node {ast.dump(node)}")

    def call(self, name: str, args: list[ast.expr]) -> str:
        if name == "interp_loglog":
            self.helpers.add("interp")
            return f"interpLogLog({self.ident[args[0].id]}, {self(args[1])}, {self(args[2])})"  # type: ignore[attr-defined]
        vs = [self(a) for a in args]
        if name in ("min", "max"):
            return f"Math.{name}({', '.join(vs)})"
        if name == "where":
            return f"({vs[0]} ? {vs[1]} : {vs[2]})"
        if name in ("ceil", "floor"):
            self.helpers.add("settle")
            return f"Math.{name}(settle({vs[0]}))"
        return f"{_JS_UNARY[name]}({vs[0]})"


_JS_HELPERS = {
    "settle": f"""
  function settle(x) {{ return Number.isFinite(x) ? Number(x.toPrecision({SETTLE_DIGITS})) : x; }}""",
    "interp": """
  function cell(grid, v) {
    v = Math.min(Math.max(v, grid[0]), grid[grid.length - 1]);
    let i = 0;
    while (i < grid.length - 2 && grid[i + 1] <= v) i++;
    return [i, (v - grid[i]) / (grid[i + 1] - grid[i])];
  }
  function interpLogLog(g, x, y) {
    const [i, t] = cell(g.lx, Math.log(x));
    const [j, u] = cell(g.ly, Math.log(y));
    const a = g.lz[i][j] * (1 - t) + g.lz[i + 1][j] * t;
    const b = g.lz[i][j + 1] * (1 - t) + g.lz[i + 1][j + 1] * t;
    return Math.exp(a * (1 - u) + b * u);
  }""",
}


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
        run = _Numpy(env, self.grids)
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
        expression above its line (a page short of bytes leaves them out; :meth:`describe` lists them)."""
        ident = {i.name: f"i_{i.name}" for i in self.inputs}
        ident |= {n: f"k_{n}" for n in self.constants}
        ident |= {n: f"g_{n}" for n in self.grids}
        ident |= {f.name: f"f_{f.name}" for f in self.formulas}
        js = _JavaScript(ident)
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
                f"  const {ident[n]} = {{lx: [{', '.join(map(_js_number, lx))}], "
                f"ly: [{', '.join(map(_js_number, ly))}], "
                f"lz: [{', '.join('[' + ', '.join(map(_js_number, row)) + ']' for row in lz)}]}};"
            )
        constants = [f"  const {ident[n]} = {_js_number(v)};" for n, v in self.constants.items()]
        reads = [f"    const {ident[i.name]} = v[{_json(i.name)}];" for i in self.inputs]
        results = [f.name for f in self.formulas if f.result]
        out = ", ".join(f"{_json(n)}: {ident[n]}" for n in results)
        meta = {
            "name": self.name,
            "inputs": [i.spec() for i in self.inputs],
            "results": results,
            "formulas": [
                {"name": f.name, "label": f.label, "unit": f.shown_unit, "scale": f.scale, "infinite": f.infinite}
                for f in self.formulas
                if f.result
            ],
        }
        helpers = "".join(_JS_HELPERS[h] for h in sorted(js.helpers))
        source = f"""(function () {{
  "use strict";
  // Generated from the formula system '{self.name}' (analyses.models.formula): do not edit.
  const META = {_json(meta)};
{chr(10).join(constants)}
{chr(10).join(grids)}{helpers}
  function check(v) {{
    const errors = [];
    const shown = (x, s) => (typeof x === "number" && Number.isFinite(x)) ? String(Number((x / s).toPrecision(6))) : (typeof x === "number" || x === undefined || x === null || x === "" ? "not a number" : String(x).slice(0, 40));
    for (const k of Object.keys(v)) {{
      if (!META.inputs.some(s => s.name === k)) errors.push({{input: k, value: shown(v[k], 1), allowed: "no such input", message: "unknown input '" + k + "'"}});
    }}
    for (const s of META.inputs) {{
      const x = v[s.name];
      let bad = false;
      if (typeof x !== "number" || !Number.isFinite(x)) bad = true;
      else if (s.choices.length) bad = !s.choices.some(c => c[1] === x);
      else bad = x < s.min || x > s.max || (s.integer && !Number.isInteger(x));
      if (bad) {{
        const value = shown(x, s.scale);
        errors.push({{input: s.name, value: value, allowed: s.allowed, message: s.label + " (" + s.name + ") must be " + s.allowed + "; got " + value}});
      }}
    }}
    return errors;
  }}
  function compute(v) {{
    v = v || {{}};
    const errors = check(v);
    if (errors.length) return {{ok: false, errors: errors}};
{chr(10).join(reads)}
{chr(10).join(body)}
    const values = {{{out}}};
    for (const k of META.results) {{
      if (Number.isNaN(values[k])) errors.push({{input: "", value: "", allowed: "", message: "result '" + k + "' is not a number"}});
    }}
    return errors.length ? {{ok: false, errors: errors}} : {{ok: true, values: values}};
  }}
  function defaults() {{
    const v = {{}};
    for (const s of META.inputs) v[s.name] = s.default;
    return v;
  }}
  return {{compute: compute, defaults: defaults, inputs: META.inputs, results: META.results, formulas: META.formulas, name: META.name}};
}})()"""
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


def names_read(formula: str, expr: str) -> set[str]:
    """The names ``expr`` reads (inputs, constants, grids, formulas), without checking them."""
    try:
        tree = ast.parse(" ".join(expr.split()), mode="eval")
    except SyntaxError as exc:
        raise FormulaError(formula, f"not a Python expression ({exc.msg}): {expr!r}") from None
    callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in callees}
