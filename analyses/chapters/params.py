"""Chapter parameters: a parameter's type, unit and allowed range, a chapter's spec, a validated config.

Each chapter package (``analyses/chapters/<name>/``) defines ``SPEC``, a :class:`ChapterSpec`
listing its parameters. The notebook's ``parameters`` cell holds the defaults as literals (a test
keeps them in step with ``SPEC``) and its next cell calls :func:`analyses.chapters.config` to
validate them. The CLI validates ``-p NAME VALUE`` pairs with the same spec before anything runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

KINDS = ("int", "float", "str", "bool", "str_list")


class ParamError(ValueError):
    """A chapter parameter has a wrong type or a value outside its allowed range."""

    def __init__(self, chapter: str, name: str, message: str):
        self.chapter, self.name = chapter, name
        super().__init__(f"parameter '{name}' of chapter '{chapter}': {message}")


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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Param {self.name}: kind must be one of {KINDS}")

    def allowed_choices(self) -> list[Any] | None:
        if self.choices is None:
            return None
        return list(self.choices() if callable(self.choices) else self.choices)

    def allowed(self) -> str:
        """The allowed values in words."""
        choices = self.allowed_choices()
        if self.kind == "bool":
            return "true or false"
        if choices is not None:
            prefix = "a list of items from " if self.kind == "str_list" else "one of "
            return prefix + ", ".join(map(str, choices))
        kind = {"int": "an integer", "float": "a number", "str": "a string"}[self.kind]
        if self.min is not None and self.max is not None:
            return f"{kind} from {self.min:g} to {self.max:g}"
        if self.min is not None:
            return f"{kind} >= {self.min:g}"
        if self.max is not None:
            return f"{kind} <= {self.max:g}"
        return kind

    def validate(self, chapter: str, value: Any) -> Any:
        """Return ``value`` coerced to the parameter's type, or raise :class:`ParamError`."""

        def fail() -> ParamError:
            return ParamError(chapter, self.name, f"expected {self.allowed()}, got {value!r}")

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
class ChapterSpec:
    """A chapter: its slug (= notebook name), title and parameters."""

    slug: str
    title: str
    params: tuple[Param, ...] = field(default_factory=tuple)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise ParamError(self.slug, name, f"no such parameter; this chapter's parameters are: {known}")

    def defaults(self) -> Config:
        return self.validate({})

    def validate(self, values: Mapping[str, Any]) -> Config:
        """Validate ``values`` (unknown names rejected, missing ones take defaults)."""
        for name in values:
            self.param(name)
        out = {p.name: p.validate(self.slug, values.get(p.name, p.default)) for p in self.params}
        return Config(self.slug, out)
