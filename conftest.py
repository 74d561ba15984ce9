"""Test-session hooks for the whole repository (the tests in tests/ and the notebooks in book/).

``make test`` runs pytest on every core (pytest-xdist, ``-n auto``). Most tests are independent and
go to whichever worker is free, but two kinds must stay together in one worker: the cells of one
notebook (nbval runs them in order in one kernel) and the tests of the built site (they share one
book build and one browser, :mod:`tests.site.conftest`). The scheduler below groups them by their
node ids. (pytest-xdist's own ``--dist loadgroup`` reads ``xdist_group`` marks through a node-id
attribute that pytest 9.2 no longer has.)
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

# Test modules that read the built book or drive the browser: one worker builds and browses.
SITE_MODULES = (
    "tests/site/test_build.py",
    "tests/site/test_reader.py",
    "tests/site/test_export.py",
    "tests/site/test_front.py",
    "tests/site/test_screens.py",
    "tests/site/test_zh.py",
)


# Test modules whose module-scoped fixtures are worth computing once: each runs whole in one worker
# (spread test by test over two workers, each worker builds them). The whole ledger the core and
# verdict tests share is one per worker anyway (tests/conftest.py: whole_assessments).
MODULE_UNITS = (
    "tests/chapters/test_chapter_verdicts.py",  # the whole ledger as a frame
    "tests/core/test_directions_and_readings.py",  # every assessment by id
    "tests/core/test_quantities.py",  # the quantity registry and every assessment
    "tests/models/test_calculator.py",  # two calculator systems
    "tests/scenario/test_planning.py",  # a B300 evaluation and an H100 plan
    "tests/site/test_data_faults.py",  # a link farm of data/
    "tests/test_snapshots.py",  # one snapshot file, read and written by one worker
)
# Pages of the in-page calculators, each in a headless Chromium: one browser for the three.
CALCULATOR_PAGES = (
    "tests/site/test_buy_or_rent_calculator.py",
    "tests/site/test_calculator_page.py",
    "tests/site/test_zh_calculator.py",
)


# Units that take longest (a minute of CPU or more between them, or one long test), handed out first:
# pytest-xdist's own order (most tests first) left one-test units of up to a minute for the end of
# the run, with one worker busy and the other idle. Module paths stand for each of their tests.
FIRST = (
    "site",
    "tests/site/test_determinism.py",  # the whole book under nbval (two kernels at once)
    "calculator pages",
    "tests/site/test_fuzz.py",
    "tests/site/test_param_properties.py",
    "tests/site/test_execute.py",
    "tests/site/test_build_faults.py",
    "tests/site/test_data_faults.py",
    "tests/chapters/test_plan.py",
)


def work_unit(nodeid: str) -> str:
    """The group a test is scheduled with: its notebook, the site, the calculator pages, its module
    (:data:`MODULE_UNITS`), or the test alone."""
    path = nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        return path
    if path in SITE_MODULES:
        return "site"
    if path in CALCULATOR_PAGES:
        return "calculator pages"
    if path in MODULE_UNITS:
        return path
    return nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Load scheduling over :func:`work_unit` groups (a pytest-xdist hook)."""
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False  # the queue follows the collection: in_run_order
    return Scheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every process collects the tests in :func:`in_run_order` (the workers' collections must agree)."""
    order = {nodeid: i for i, nodeid in enumerate(in_run_order([item.nodeid for item in items]))}
    items.sort(key=lambda item: order[item.nodeid])


def in_run_order(nodeids: list[str]) -> list[str]:
    """``nodeids`` in the order their units are handed out: the units of :data:`FIRST` in its order,
    then the rest, units of more tests first; tests keep their order within a unit (a notebook's cells)."""
    units = [work_unit(n) for n in nodeids]
    sizes = collections.Counter(units)

    def rank(i: int) -> tuple[int, int]:
        unit = units[i]
        path = unit.split("::")[0]
        first = FIRST.index(unit) if unit in FIRST else FIRST.index(path) if path in FIRST else len(FIRST)
        return first, -sizes[unit]

    return [nodeids[i] for i in sorted(range(len(nodeids)), key=rank)]
