"""The book's chapters, in one explicit list, and access to their specs.

Each chapter is a package ``analyses/chapters/<name>/`` (``scaling_gap`` for
``book/scaling-gap.ipynb``) that defines ``SPEC`` (its parameters, see :mod:`analyses.scenario.params`)
and, where it checks claims, its checks. Nothing is registered as a side effect of an import:
:data:`CHAPTERS` names every chapter, and :func:`module` imports one on demand, so a chapter's
kernel imports its own code and no other chapter's (the build records what each chapter read).
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from analyses import data
from analyses.scenario.params import (
    ChapterSpec,
    Config,
    Param,
    ParamError,
    Rule,
    parameters_source,
    precision_rule,
    short,
)

__all__ = [
    "CHAPTERS",
    "ChapterSpec",
    "Config",
    "Param",
    "ParamError",
    "Rule",
    "chapter_slugs",
    "config",
    "defaults",
    "module",
    "parameters_source",
    "precision_rule",
    "short",
    "spec",
]

# Every chapter of the book by slug (= notebook name in book/); the reading order lives in _toc.yml.
CHAPTERS: tuple[str, ...] = (
    "intro",
    "buy-or-rent",
    "scaling-gap",
    "memory",
    "throughput",
    "scaling-efficiency",
    "utilisation",
    "reliability",
    "experiments",
    "tco",
    "plan",
    "validation",
    "claims",
    "claims-000",
    "claims-001",
    "sources",
    "peers",
)


def module(chapter: str) -> ModuleType:
    """The package of ``chapter`` (``scaling-gap`` -> :mod:`analyses.chapters.scaling_gap`)."""
    if chapter not in CHAPTERS:
        raise KeyError(f"unknown chapter '{chapter}'; chapters: {', '.join(sorted(CHAPTERS))}")
    return importlib.import_module(f"{__name__}.{chapter.replace('-', '_')}")


def chapter_slugs() -> list[str]:
    """Slugs of every chapter (each is ``book/<slug>.ipynb``), sorted."""
    return sorted(CHAPTERS)


def spec(chapter: str) -> ChapterSpec:
    """A chapter's spec; ``KeyError`` lists the chapters."""
    return module(chapter).SPEC


def defaults(chapter: str) -> Config:
    """A chapter's configuration at its defaults (validated once per data folder; a Config is read-only)."""
    return _defaults(chapter, str(data.DATA_DIR))


@functools.cache
def _defaults(chapter: str, data_dir: str) -> Config:
    return spec(chapter).defaults()


# papermill's injected cell starts with this comment (papermill.translators.Translator.codify).
INJECTED_MARK = "# Parameters\n"


def injected_names(namespace: Mapping[str, Any]) -> list[str]:
    """Names assigned by papermill's ``injected-parameters`` cell(s) in this kernel.

    IPython keeps every executed cell's source in the ``In`` list of the notebook's globals;
    papermill's injected cell is the one starting with ``# Parameters``. Outside IPython: none.
    """
    history = namespace.get("In")
    names: list[str] = []
    for source in history if isinstance(history, list) else ():
        if not (isinstance(source, str) and source.startswith(INJECTED_MARK)):
            continue
        try:
            body = ast.parse(source).body
        except SyntaxError:
            continue
        for node in body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def config(chapter: str, namespace: Mapping[str, Any] | None = None, **values: Any) -> Config:
    """Validate a chapter's parameters, taken from ``namespace`` (a notebook's globals) or kwargs.

    In a notebook: ``cfg = config("scaling-gap", globals())`` right after the parameters cell.
    A name papermill injected that is not a parameter of the chapter (``papermill -p wnidow_start
    2019``) is an error rather than a silently unused variable.
    """
    s = spec(chapter)
    if namespace is not None:
        for name in injected_names(namespace):
            s.param(name)  # ParamError naming the chapter's parameters
        values = {p.name: namespace[p.name] for p in s.params if p.name in namespace} | values
    return s.validate(values)
