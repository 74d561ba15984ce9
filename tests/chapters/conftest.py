"""The one fixture for chapter results.

``chapter_results(slug, **values)`` is chapter ``slug``'s :func:`compute` at its defaults with
``values`` on top (validated, rules included), computed once per configuration for the whole run
and shared by every test file, so a chapter at its defaults (or any configuration two tests share)
is computed once. In a test module that imports its chapter as ``ch``, ``result(**values)`` is that
chapter at ``values`` and ``default`` its result at the defaults.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from analyses import chapters


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | tuple) else value


@functools.lru_cache(maxsize=48)
def _computed(slug: str, key: tuple[tuple[str, Any], ...]) -> Any:
    module = chapters.module(slug)
    return module.compute(module.SPEC.validate(dict(key)))


def chapter_result(slug: str, **values: Any) -> Any:
    """Chapter ``slug`` at its defaults with ``values`` on top, computed once per validated configuration."""
    cfg = chapters.spec(slug).validate(values)
    return _computed(slug, tuple(sorted((k, _key(v)) for k, v in cfg.items())))


@pytest.fixture(scope="session")
def chapter_results() -> Callable[..., Any]:
    """:func:`chapter_result`: ``chapter_results(slug, **values)``."""
    return chapter_result


@pytest.fixture
def result(request: pytest.FixtureRequest, chapter_results: Callable[..., Any]) -> Callable[..., Any]:
    """``result(**values)``: the test module's chapter (its ``ch``) at ``values``."""
    return functools.partial(chapter_results, request.module.ch.SPEC.slug)


@pytest.fixture
def default(result: Callable[..., Any]) -> Any:
    """The test module's chapter at its defaults."""
    return result()


def _text_labels(spec: dict) -> list[str]:
    """The words of every text mark of an altair ``spec`` (a dict: its layers and concatenations), read
    from the spec's datasets: the names a chart writes beside its lines (analyses.pages.encodings.end_labels)."""
    out, views = [], [spec]
    while views:
        v = views.pop()
        for key in ("layer", "hconcat", "vconcat", "concat"):
            views.extend(v.get(key, []))
        mark = v.get("mark", "")
        if (mark.get("type") if isinstance(mark, dict) else mark) == "text" and "data" in v:
            field = v["encoding"]["text"]["field"]
            out += [row[field] for row in spec["datasets"][v["data"]["name"]]]
    return out


@pytest.fixture(scope="session")
def text_labels() -> Callable[[dict], list[str]]:
    """:func:`_text_labels`: the words a chart's text marks write."""
    return _text_labels
