"""One step-time model (issue 33, item 1): every chapter, check and model that needs a step time or a
scaling efficiency reads :func:`analyses.models.performance.step_time` at its one calibration; the
model that came before it (``analyses/models/scaling.py``, calibrated through
``kernel_efficiency.py``) is gone, and nothing defines a step time of its own."""

from __future__ import annotations

import ast
import functools
import importlib.util

import pytest

from analyses.data import REPO_ROOT

PACKAGE = REPO_ROOT / "analyses"

STEP_TIME = "analyses.models.performance"
READERS = (
    "analyses.models.scaling_efficiency",
    "analyses.models.experiments",
    "analyses.models.peers",
    "analyses.models.plan",
    "analyses.scenario.calibration",
    "analyses.scenario.speedups",
    "analyses.scenario.validation",
    "analyses.chapters.scaling_efficiency",
    "analyses.chapters.scaling_efficiency.checks",
    "analyses.chapters.experiments",
    "analyses.chapters.experiments.checks",
    "analyses.chapters.peers",
    "analyses.chapters.plan",
    "analyses.chapters.validation",
)
"""The modules that compute a step time, a throughput or a scaling efficiency."""


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports (anywhere in its body)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analyses"):
                targets += [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets += [a.name for a in node.names if a.name.startswith("analyses")]
        graph[name] = {t for t in map(resolve, targets) if t and t != name}
    return graph


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def test_the_model_before_issue_21_is_gone():
    for name in ("analyses.models.scaling", "analyses.models.kernel_efficiency"):
        assert importlib.util.find_spec(name) is None, name
    graph = import_graph()
    assert not any(m.startswith(("analyses.models.scaling.", "analyses.models.kernel_efficiency")) for m in graph)
    assert not [m for m, deps in graph.items() if "analyses.models.scaling" in deps]


@pytest.mark.parametrize("module", READERS)
def test_every_step_time_comes_from_performance(module):
    graph = import_graph()
    assert module in graph, f"{module} is not a module of the package"
    assert STEP_TIME in _reaches(graph, module), f"{module} computes step times without {STEP_TIME}"


def test_no_module_defines_a_step_time_of_its_own():
    """A function named like the step-time model's parts is defined once among the models and chapters,
    in performance.py (``analyses.scenario.validation.step_time`` is the table of its validation rows)."""
    parts = {"step_time", "allreduce_time_s", "hierarchical_allreduce_time_s", "solve_compute_efficiency"}
    found = {}
    for path in [*(PACKAGE / "models").rglob("*.py"), *(PACKAGE / "chapters").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name in parts:
                found.setdefault(node.name, []).append(path.relative_to(REPO_ROOT).as_posix())
    assert found.pop("solve_compute_efficiency", []) == []
    assert found == {name: ["analyses/models/performance.py"] for name in found}
    assert set(found) == parts - {"solve_compute_efficiency"}
