"""Chapter parameters: a parameter's type, unit and allowed range, a chapter's spec, a validated config.

Each chapter package (``analyses/chapters/<name>/``) defines ``SPEC``, a :class:`ChapterSpec`
listing its parameters and the :class:`Rule` s that tie several of them together (a fitting
window whose end follows its start, a precision the chosen GPU offers, a tensor-parallel degree
that fits its NVLink domain), and bounding every size so that the worst allowed run stays small.
The notebook's ``parameters`` cell is rendered from ``SPEC`` by :func:`parameters_source` (typed
lines papermill reads natively; a test keeps the committed cells equal to it) and its next cell
calls :func:`analyses.chapters.config` to validate them. The CLI validates ``-p NAME VALUE``
pairs with the same spec, rules included, before any kernel starts.
"""

from __future__ import annotations

import decimal
import json
import math
import reprlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analyses import data
from analyses.units import precision_problem

KINDS = ("int", "float", "str", "bool", "str_list")
# The most items a list parameter may hold when it has no choices (with choices: one of each).
MAX_LIST_ITEMS = 32

_short = reprlib.Repr()  # keyword arguments need Python 3.12
_short.maxlevel, _short.maxlist, _short.maxtuple, _short.maxdict = 2, 6, 6, 4
_short.maxstring = _short.maxother = 60


def short(value: Any) -> str:
    """``repr(value)`` cut to one short line (a 10,000-item list shows its first items and '...')."""
    return _short.repr(value).replace("\n", " ")


class ParamError(ValueError):
    """A chapter parameter has a wrong type or a value outside its allowed range, or several
    parameters together break one of the chapter's :class:`Rule` s (``name`` is then a comma-joined
    list of the names and ``names`` holds them)."""

    def __init__(self, chapter: str, name: str, message: str, names: Sequence[str] | None = None):
        self.chapter, self.name = chapter, name
        self.names = tuple(names) if names else (name,)
        what = f"parameter '{name}'" if len(self.names) == 1 else "parameters"
        super().__init__(f"{what} of chapter '{chapter}': {message}")


def _number(value: float, kind: str, unit: str) -> str:
    """A bound as people read it: integers in full with thousands separators (years without)."""
    if kind == "int" or float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value)}" if unit == "year" else f"{int(value):,}"
    return f"{value:g}"


@dataclass(frozen=True)
class Param:
    """One chapter parameter.

    ``choices`` may be a sequence or a zero-argument callable (for choices read from data, such
    as GPU names); for ``str_list`` every item must be one of the choices.
    """

    name: str
    kind: str
    default: Any
    unit: str
    help: str
    min: float | None = None
    max: float | None = None
    choices: Sequence[Any] | Callable[[], Sequence[Any]] | None = None
    max_items: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Param {self.name}: kind must be one of {KINDS}")

    def list_limit(self) -> int:
        """The most items a ``str_list`` may hold: ``max_items``, else one of each choice."""
        if self.max_items is not None:
            return self.max_items
        choices = self.allowed_choices()
        return len(choices) if choices is not None else MAX_LIST_ITEMS

    def allowed_choices(self) -> list[Any] | None:
        if self.choices is None:
            return None
        return list(self.choices() if callable(self.choices) else self.choices)

    def allowed(self) -> str:
        """The allowed values in words."""
        choices = self.allowed_choices()
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str_list":
            items = "items" if choices is None else "items from " + ", ".join(map(str, choices))
            return f"a list of 1 to {self.list_limit()} different {items}"
        if choices is not None:
            return "one of " + ", ".join(map(str, choices))
        kind = {"int": "an integer", "float": "a number", "str": "a string"}[self.kind]
        lo = None if self.min is None else _number(self.min, self.kind, self.unit)
        hi = None if self.max is None else _number(self.max, self.kind, self.unit)
        if lo is not None and hi is not None:
            return f"{kind} from {lo} to {hi}"
        if lo is not None:
            return f"{kind} >= {lo}"
        if hi is not None:
            return f"{kind} <= {hi}"
        return kind

    def validate(self, chapter: str, value: Any) -> Any:
        """Return ``value`` coerced to the parameter's type, or raise :class:`ParamError`."""

        def fail() -> ParamError:
            return ParamError(chapter, self.name, f"expected {self.allowed()}, got {short(value)}")

        if self.kind == "bool":
            if not isinstance(value, bool):
                raise fail()
            return value
        if self.kind in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise fail()
            if self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise fail()
                value = int(value)
            elif not math.isfinite(value):
                raise fail()
            else:
                value = float(value)
            if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
                raise fail()
            return value
        if self.kind == "str_list":
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
                raise fail()
            if len(value) > self.list_limit() or len(set(value)) < len(value):
                raise fail()
            choices = self.allowed_choices()
            if choices is not None and any(v not in choices for v in value):
                raise fail()
            return tuple(value)
        if not isinstance(value, str):
            raise fail()
        choices = self.allowed_choices()
        if choices is not None and value not in choices:
            raise fail()
        return value


class Config(Mapping[str, Any]):
    """A validated, read-only chapter configuration with attribute access (``cfg.mfu``)."""

    def __init__(self, chapter: str, values: Mapping[str, Any]):
        self._chapter, self._values = chapter, dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"chapter '{self._chapter}' has no parameter '{name}'") from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Config({self._chapter!r}, {self._values!r})"


@dataclass(frozen=True)
class Rule:
    """A constraint across parameters, declared next to a chapter's ``SPEC``.

    ``check`` takes the :class:`Config` (every parameter already valid on its own) and returns
    ``None`` when the combination is allowed, else one sentence saying what is allowed (for
    example "window_end must not be before window_start"), or a pair ``(names, sentence)`` when
    the parameters at fault depend on the values. ``names`` are the parameters involved; the
    error names them with their values.
    """

    names: tuple[str, ...]
    check: Callable[[Config], str | tuple[Sequence[str], str] | None]


def precision_rule(gpu: str, precision: str, tensor_format: Mapping[str, str] | None = None) -> Rule:
    """The GPU named by parameter ``gpu`` (or every GPU of a list parameter) offers the tensor
    precision named by ``precision``: the book's one precision rule, in every chapter that pairs a
    GPU with a precision. ``tensor_format`` maps a parameter value that is a recipe rather than a
    format (the memory chapter's ``bf16-mixed``) to the format its matrix multiplies run in."""

    def check(cfg: Config) -> str | None:
        wanted = (tensor_format or {}).get(cfg[precision])
        names = [cfg[gpu]] if isinstance(cfg[gpu], str) else list(cfg[gpu])
        for name in names:
            problem = precision_problem(name, data.gpu(name).peak_flops_dense, cfg[precision], wanted)
            if problem is not None:
                return problem
        return None

    return Rule((gpu, precision), check)


@dataclass(frozen=True)
class ChapterSpec:
    """A chapter: its slug (= notebook name), title, parameters and cross-parameter rules."""

    slug: str
    title: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    rules: tuple[Rule, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        known = {p.name for p in self.params}
        for rule in self.rules:
            unknown = set(rule.names) - known
            if unknown:
                raise ValueError(f"chapter {self.slug}: a rule names unknown parameter(s) {sorted(unknown)}")

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise ParamError(self.slug, name, f"no such parameter; this chapter's parameters are: {known}")

    def defaults(self) -> Config:
        return self.validate({})

    def param_defaults(self) -> Config:
        """Every parameter at its default, without running the rules (for use inside a rule)."""
        return Config(self.slug, {p.name: p.validate(self.slug, p.default) for p in self.params})

    def validate(self, values: Mapping[str, Any]) -> Config:
        """Validate ``values`` (unknown names rejected, missing ones take defaults), then every rule."""
        for name in values:
            self.param(name)
        out = {p.name: p.validate(self.slug, values.get(p.name, p.default)) for p in self.params}
        cfg = Config(self.slug, out)
        for rule in self.rules:
            found = rule.check(cfg)
            if not found:
                continue
            names, message = (rule.names, found) if isinstance(found, str) else (tuple(found[0]), found[1])
            shown = ", ".join(
                f"{n} {short(_plain(cfg[n]))}" if len(names) > 1 else short(_plain(cfg[n])) for n in names
            )
            raise ParamError(self.slug, ", ".join(names), f"{shown}: {message}", names=names)
        return cfg


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# --------------------------------------------------------------------------------------------
# The notebook's parameters cell, rendered from the spec
# --------------------------------------------------------------------------------------------

ANNOTATIONS = {"int": "int", "float": "float", "str": "str", "bool": "bool", "str_list": "list[str]"}


def literal(value: Any, kind: str) -> str:
    """A parameter value as a Python literal papermill reads back: strings in double quotes,
    floats in their shortest round-trip form (``1e11`` rather than ``100000000000.0``)."""
    if kind == "bool":
        return repr(bool(value))
    if kind == "int":
        return str(int(value))
    if kind == "float":
        plain = repr(float(value))
        sign, digits, exponent = decimal.Decimal(plain).normalize().as_tuple()
        mantissa = "".join(map(str, digits))
        mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
        scientific = f"{'-' if sign else ''}{mantissa}e{int(exponent) + len(digits) - 1}"
        shorter = len(scientific) < len(plain) and float(scientific) == float(value)
        return scientific if shorter and abs(float(value)) >= 1e5 else plain
    if kind == "str_list":
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def parameters_source(spec: ChapterSpec) -> str:
    """The notebook's ``parameters`` cell for ``spec``: one typed line per parameter,
    ``name: type = default  # unit: meaning``.

    papermill reads such lines natively (``papermill --help-notebook`` lists each with its type
    and meaning); it skips a line holding two ``=`` and cuts a value at ``#``, so neither may
    appear in a help text, a unit or a string default (ValueError names the parameter).
    """
    lines = []
    for p in spec.params:
        value = literal(p.default, p.kind)
        comment = p.help if p.unit in ("", "-") else f"{p.unit}: {p.help}"
        for what, text in (("value", value), ("comment", comment)):
            bad = [c for c in ("=", "#", "\n") if c in text]
            if bad:
                raise ValueError(f"chapter {spec.slug}, parameter {p.name}: its {what} holds {bad[0]!r}: {text!r}")
        lines.append(f"{p.name}: {ANNOTATIONS[p.kind]} = {value}  # {comment}")
    return "\n".join(lines)
