"""Fuzz figures: every fuzzed input is classified, and the counts are printed at the end of the run
(for the closing note: inputs tried, clean one-line errors, accepted, tracebacks, hangs, files
written on failure). ``FUZZ_EXAMPLES=500 pytest tests/site/test_fuzz.py`` runs a larger, random
campaign; ``make test`` runs a small, derandomised one."""

from __future__ import annotations

import collections

import pytest

FUZZ: collections.Counter = collections.Counter()
KINDS = ("inputs", "clean one-line errors", "accepted", "tracebacks", "hangs", "files written on failure")


def pytest_terminal_summary(terminalreporter):
    if FUZZ["inputs"]:
        figures = ", ".join(f"{k}: {FUZZ[k]}" for k in KINDS)
        terminalreporter.write_sep("-", "fuzz figures")
        terminalreporter.write_line(figures)
        for key in sorted(k for k in FUZZ if k.startswith("inputs ")):
            terminalreporter.write_line(f"  {key}: {FUZZ[key]}")


@pytest.fixture(scope="session")
def fuzz_figures() -> collections.Counter:
    """The run's fuzz counters (see :data:`KINDS`)."""
    return FUZZ
