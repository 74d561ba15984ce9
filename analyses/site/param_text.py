"""A reader's parameters as typed: ``-p NAME VALUE`` values and ``--params-file`` YAML.

Values are read as YAML (``2019`` an int, ``true`` a bool, ``[A100, B300]`` a list) with none of
YAML 1.1's surprises: a number is a number only when written as one (``20``, ``-3.5``, ``3.0e10``,
``6e11``); ``1:30`` (sexagesimal 90 in YAML 1.1), ``0x1F``, ``1_000``, ``.inf``, ``yes``/``on`` and
dates stay text, which a numeric parameter then refuses; an integer longer than
:data:`MAX_DIGITS` digits is refused before Python parses it (``int()`` refuses past 4,300). No
aliases, no nesting deeper than :data:`MAX_YAML_DEPTH`, no key given twice. Every error is one
:class:`UsageError` line naming the option (and line and column), never quoting a file's content.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

MAX_PARAMS_FILE_BYTES = 64 * 1024  # a plan's parameters fit in a few hundred bytes
MAX_YAML_DEPTH = 8  # a parameter is a scalar or a flat list: deeper nesting is a mistake
MAX_DIGITS = 30  # the largest count a chapter takes has 16 digits (tokens)

INT = re.compile(r"^[-+]?[0-9]+$")
FLOAT = re.compile(r"^[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?$")
BOOL = re.compile(r"^(true|True|TRUE|false|False|FALSE)$")


class UsageError(ValueError):
    """A command-line argument is wrong."""


class _Refused(yaml.constructor.ConstructorError):
    """A value this reader refuses (its message is ours, not a YAML syntax error)."""


class _Loader(yaml.SafeLoader):
    """YAML for parameters (see the module's docstring)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise _Refused(None, None, "aliases (*name) are not allowed in parameters", self.peek_event().start_mark)
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                message = f"nested deeper than {MAX_YAML_DEPTH} levels; parameters are values or lists"
                raise _Refused(None, None, message, self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    raise _Refused(
                        None, None, "a key given twice (YAML would silently keep the last)", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: Any) -> int:
        digits = len(node.value.lstrip("+-"))
        if digits > MAX_DIGITS:
            raise _Refused(None, None, f"an integer of {digits:,} digits; at most {MAX_DIGITS}", node.start_mark)
        return int(node.value)

    def construct_yaml_float(self, node: Any) -> float:
        return float(node.value)

    def construct_yaml_bool(self, node: Any) -> bool:
        return node.value.lower() == "true"


# only null, our bool, int and float resolve implicitly: every other plain scalar is a string
_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag == "tag:yaml.org,2002:null"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _rx, _first in (
    ("tag:yaml.org,2002:bool", BOOL, "tTfF"),
    ("tag:yaml.org,2002:int", INT, "-+0123456789"),
    ("tag:yaml.org,2002:float", FLOAT, "-+.0123456789"),
):
    _Loader.add_implicit_resolver(_tag, _rx, list(_first))
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_yaml_float)
_Loader.add_constructor("tag:yaml.org,2002:bool", _Loader.construct_yaml_bool)


def _error(where: str, err: yaml.YAMLError) -> UsageError:
    """One line: where, line and column, and what is wrong (PyYAML's message spans several)."""
    mark = getattr(err, "problem_mark", None)
    problem = " ".join(str(getattr(err, "problem", None) or "not valid YAML").split())
    at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return UsageError(f"{where}{at}: {problem}" if isinstance(err, _Refused) else f"{where}: not valid YAML{at}: {problem}")


def read_yaml(text: str, where: str) -> Any:
    """``text`` read as parameters' YAML; every error is one :class:`UsageError` line."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as err:
        raise _error(where, err) from None
    except RecursionError:  # a flow collection nested past the parser's own recursion
        raise UsageError(
            f"{where}: nested deeper than {MAX_YAML_DEPTH} levels; parameters are values or lists"
        ) from None


def parse_value(text: str, name: str = "value") -> Any:
    """A ``-p`` value: YAML as above, or the text itself where it is not YAML (``abc: [``: the
    parameter's own check then names it); refused values are errors."""
    if not text.strip():
        return text
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except _Refused as err:
        raise _error(f"-p {name}", err) from None
    except yaml.YAMLError:
        return text
    except RecursionError:
        raise UsageError(
            f"-p {name}: nested deeper than {MAX_YAML_DEPTH} levels; parameters are values or lists"
        ) from None


def load_params_file(path: str, names: Sequence[str]) -> dict[str, Any]:
    """A YAML mapping of parameters ``names``; every error is one line naming the file (and the
    line and column, or the field) that quotes nothing of the file but a close field name."""
    if not path.strip():
        raise UsageError("--params-file: expected the path of a YAML file, got an empty string")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"--params-file: no such file {path}")
    size = file.stat().st_size
    if size > MAX_PARAMS_FILE_BYTES:
        raise UsageError(f"--params-file {path}: {size:,} bytes; a params file holds at most {MAX_PARAMS_FILE_BYTES:,}")
    raw = file.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise UsageError(f"--params-file {path}: line {line}: byte 0x{raw[err.start]:02x} is not UTF-8 text") from None
    values = read_yaml(text, f"--params-file {path}")
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise UsageError(f"--params-file {path}: expected a mapping of parameter names to values")
    for k, name in enumerate(values):
        if name not in names:
            close = difflib.get_close_matches(str(name), list(names), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise UsageError(
                f"--params-file {path}: field {k + 1} is not a parameter{hint}; fields: {', '.join(names)}"
            )
    return dict(values)
