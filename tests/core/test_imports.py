"""The package's import graph: floors that only import downwards, and no loops, at module level or
inside a function.

The floors and the rules between them are import-linter contracts in ``pyproject.toml``
(``[tool.importlinter]``): units and number formatting, data, models, the scenario, verdict rules,
the chapters' computations, the page helpers, the chapters' pages (each chapter's ``figures.py``
and ``text.py``) and the site on top; models read no data; a page helper imports no chapter; a
chapter imports no other. This file runs ``lint-imports`` (and shows that each contract catches an
import planted against it), and keeps what a contract cannot say: no loop of imports anywhere, even
between a package and its own modules, and a README that draws the floors the contracts enforce.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

from analyses.data import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def contracts(root: Path = REPO_ROOT) -> list[dict]:
    """The import-linter contracts of ``pyproject.toml``."""
    return tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package under ``root`` with its own ``pyproject.toml``."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": str(LINT_IMPORTS.parent)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_import_contracts_hold():
    proc = lint_imports(REPO_ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert f"Contracts: {len(contracts())} kept, 0 broken." in proc.stdout


# An import planted against each contract, in a copy of the package: (file, import, contract id).
PLANTED = (
    ("analyses/models/tco.py", "from analyses import scenario", "floors"),
    ("analyses/models/flops.py", "from analyses import data", "pure-models"),
    ("analyses/chapters/tco/checks.py", "from analyses.pages import links", "chapters-below-pages"),
    ("analyses/pages/links.py", "from analyses.chapters.tco import text", "chapter-pages"),
    ("analyses/pages/encodings.py", "from analyses.chapters import memory", "pages-know-no-chapter"),
    ("analyses/chapters/memory/wiring.py", "from analyses.chapters.tco import wiring", "chapters-apart"),
)


def test_each_contract_catches_an_import_planted_against_it(tmp_path):
    shutil.copytree(REPO_ROOT / "analyses", tmp_path / "analyses", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for file, line, _ in PLANTED:
        path = tmp_path / file
        text = path.read_text()
        path.write_text(text + f"\n\ndef _planted():\n    {line}  # noqa\n")  # inside a function: still seen
    proc = lint_imports(tmp_path)
    assert proc.returncode == 1
    names = {c["id"]: c["name"] for c in contracts()}
    out = re.sub(r"\s+", " ", proc.stdout)
    for _, _, contract in PLANTED:
        assert f"{names[contract]} BROKEN" in out, contract
    assert f"Contracts: {len(contracts()) - len({c for *_, c in PLANTED})} kept" in out


# --------------------------------------------------------------------------------------------
# What a contract cannot say
# --------------------------------------------------------------------------------------------


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Every ``analyses`` module's imports of other ``analyses`` modules, wherever they occur
    (grimp's graph, the one import-linter checks)."""
    graph = grimp.build_graph("analyses", cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_detector_finds_a_loop():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_loops_lazy_or_not():
    """No loop of imports, also between a package's ``__init__`` and its own modules (which
    import-linter's sibling contracts do not see)."""
    graph = import_graph()
    assert "analyses.models.memory" in graph["analyses.chapters.memory"]  # the graph sees real imports
    assert "analyses.scenario.derivations" in graph["analyses.scenario"]
    assert cycles(graph) == []


def test_the_readme_draws_the_layers_the_contracts_enforce():
    """README.md's picture lists the floors top to bottom (the chapters' pages between the site and the
    page helpers, where the chapter-pages contract puts them), and every path its "Where do I change X"
    table names exists."""
    floors = next(c for c in contracts() if c["id"] == "floors")
    expected = [layer.split(":")[0].strip() for layer in floors["layers"]]
    expected.insert(1, "chapter pages")
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## The house in layers", 1)[1].split("\n## ", 1)[0]
    picture = section.split("```text", 1)[1].split("```", 1)[0]
    drawn = [line[:15].strip() for line in picture.splitlines() if line[:15].strip()]
    assert drawn == expected
    table = section.split("### Where do I change X", 1)[1]
    paths = {p for p in re.findall(r"`((?:analyses|data|tests|book)/[^`<]*?)`", table) if "*" not in p}
    assert paths and [p for p in sorted(paths) if not (REPO_ROOT / p).exists()] == []
