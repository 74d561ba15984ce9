"""The parallel run's groups (``conftest.py`` at the root): every module they name exists, and every
module that opens a browser page shares a browser with others (the site's or the calculators')."""

from __future__ import annotations

import importlib.util
import re

from analyses.data import REPO_ROOT


def _root_conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", REPO_ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_grouped_module_exists_and_is_in_one_group():
    c = _root_conftest()
    groups = [*c.SITE_MODULES, *c.CALCULATOR_PAGES, *c.MODULE_UNITS]
    assert len(groups) == len(set(groups))
    assert [m for m in groups if not (REPO_ROOT / m).is_file()] == []
    first = [u for u in c.FIRST if u not in ("site", "calculator pages")]
    assert len(c.FIRST) == len(set(c.FIRST)) and [m for m in first if not (REPO_ROOT / m).is_file()] == []


def test_modules_that_use_the_browser_share_one():
    c = _root_conftest()
    uses = {
        p.relative_to(REPO_ROOT).as_posix()
        for p in (REPO_ROOT / "tests").rglob("test_*.py")
        if re.search(r"def \w+\([^)]*\bbrowser\b", p.read_text(encoding="utf-8"))
    }
    assert uses and uses <= set(c.SITE_MODULES) | set(c.CALCULATOR_PAGES)


def test_work_units():
    c = _root_conftest()
    assert c.work_unit("book/memory.ipynb::Cell 3") == "book/memory.ipynb"
    assert c.work_unit("tests/site/test_build.py::test_x") == "site"
    assert c.work_unit("tests/site/test_zh_calculator.py::test_x[1]") == "calculator pages"
    assert c.work_unit("tests/core/test_quantities.py::test_x") == "tests/core/test_quantities.py"
    assert (
        c.work_unit("tests/chapters/test_plan.py::test_x[defaults]") == "tests/chapters/test_plan.py::test_x[defaults]"
    )


def test_the_longest_units_are_handed_out_first_and_cells_keep_their_order():
    c = _root_conftest()
    ids = [
        "book/memory.ipynb::Cell 0",
        "tests/core/test_formats.py::test_a",
        "tests/chapters/test_tco.py::test_x[1]",
        "tests/site/test_determinism.py::test_book",
        "book/memory.ipynb::Cell 1",
        "tests/site/test_zh.py::test_y",
        "tests/site/test_fuzz.py::test_f",
        "tests/site/test_build.py::test_z",
    ]
    assert c.in_run_order(ids) == [
        "tests/site/test_zh.py::test_y",  # the site, FIRST's first unit, its tests in their order
        "tests/site/test_build.py::test_z",
        "tests/site/test_determinism.py::test_book",
        "tests/site/test_fuzz.py::test_f",
        "book/memory.ipynb::Cell 0",  # the rest: the unit of two tests before those of one
        "book/memory.ipynb::Cell 1",
        "tests/core/test_formats.py::test_a",
        "tests/chapters/test_tco.py::test_x[1]",
    ]
