"""The book's chapters, in one explicit list, and access to their specs.

Each chapter is a package ``analyses/chapters/<name>/`` (``scaling_gap`` for
``book/scaling-gap.ipynb``) that defines ``SPEC`` (its parameters, see :mod:`analyses.chapters.params`)
and, where it checks claims, its checks. Nothing is registered as a side effect of an import:
:data:`CHAPTERS` names every chapter, and :func:`module` imports one on demand, so a chapter's
kernel imports its own code and no other chapter's (the build records what each chapter read).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from analyses.chapters.params import ChapterSpec, Config, Param, ParamError

__all__ = ["CHAPTERS", "ChapterSpec", "Config", "Param", "ParamError", "chapter_slugs", "config", "module", "spec"]

# Every chapter of the book by slug (= notebook name in book/); the reading order lives in _toc.yml.
CHAPTERS: tuple[str, ...] = (
    "scaling-gap",
    "memory",
    "throughput",
    "scaling-efficiency",
    "utilisation",
    "reliability",
    "experiments",
    "tco",
    "plan",
    "claims",
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


def config(chapter: str, namespace: Mapping[str, Any] | None = None, **values: Any) -> Config:
    """Validate a chapter's parameters, taken from ``namespace`` (a notebook's globals) or kwargs.

    In a notebook: ``cfg = config("scaling-gap", globals())`` right after the parameters cell.
    """
    s = spec(chapter)
    if namespace is not None:
        values = {p.name: namespace[p.name] for p in s.params if p.name in namespace} | values
    return s.validate(values)
