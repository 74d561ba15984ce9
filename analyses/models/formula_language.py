"""The formula language: a restricted subset of Python's expression syntax, parsed with :mod:`ast`,
type-checked, evaluated with numpy and printed as JavaScript (:mod:`analyses.models.formula` builds
systems of formulas on it).

Grammar (anything else is refused with an error that names the formula and the construct)::

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
``sqrt`` may differ in the last bit between numpy's C library and the browser's. The JavaScript
helpers ``settle`` and ``interpLogLog`` live in ``formula_runtime.js`` beside this module.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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


class Numpy:
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


def js_number(x: float) -> str:
    """A double as a JavaScript literal that parses back to the same bits."""
    x = float(x)
    if math.isnan(x):
        raise ValueError("NaN has no place in a formula")
    if math.isinf(x):
        return "Infinity" if x > 0 else "(-Infinity)"
    return repr(x)


class JavaScript:
    """Writes a checked tree as one fully parenthesised JavaScript expression."""

    def __init__(self, ident: Mapping[str, str]):
        self.ident = ident

    def __call__(self, node: ast.AST) -> str:
        match node:
            case ast.Constant(value=v):
                return js_number(v)
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
            return f"interpLogLog({self.ident[args[0].id]}, {self(args[1])}, {self(args[2])})"  # type: ignore[attr-defined]
        vs = [self(a) for a in args]
        if name in ("min", "max"):
            return f"Math.{name}({', '.join(vs)})"
        if name == "where":
            return f"({vs[0]} ? {vs[1]} : {vs[2]})"
        if name in ("ceil", "floor"):
            return f"Math.{name}(settle({vs[0]}))"
        return f"{_JS_UNARY[name]}({vs[0]})"


def names_read(formula: str, expr: str) -> set[str]:
    """The names ``expr`` reads (inputs, constants, grids, formulas), without checking them."""
    try:
        tree = ast.parse(" ".join(expr.split()), mode="eval")
    except SyntaxError as exc:
        raise FormulaError(formula, f"not a Python expression ({exc.msg}): {expr!r}") from None
    callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in callees}
