"""Fuzz figures: every fuzzed input is classified, and the counts are printed at the end of the run
(for the closing note: inputs tried, clean one-line errors, accepted, tracebacks, hangs, files
written on failure). ``FUZZ_EXAMPLES=500 pytest tests/site/test_fuzz.py`` runs a larger, random
campaign; ``make test`` runs a small, derandomised one."""

from __future__ import annotations

import collections

import pytest

FUZZ: collections.Counter = collections.Counter()
KINDS = ("inputs", "clean one-line errors", "accepted", "tracebacks", "hangs", "files written on failure")
# tests/site/test_data_faults.py: mutations of a copy of data/ and what became of them
FAULTS: collections.Counter = collections.Counter()
FAULT_KINDS = ("mutations", "one-line errors", "tracebacks", "silent acceptances", "out-of-range values accepted")


def pytest_terminal_summary(terminalreporter):
    if FUZZ["inputs"]:
        figures = ", ".join(f"{k}: {FUZZ[k]}" for k in KINDS)
        terminalreporter.write_sep("-", "fuzz figures")
        terminalreporter.write_line(figures)
        for key in sorted(k for k in FUZZ if k.startswith("inputs ")):
            terminalreporter.write_line(f"  {key}: {FUZZ[key]}")
    if FAULTS["mutations"]:
        terminalreporter.write_sep("-", "data fault injection")
        terminalreporter.write_line(", ".join(f"{k}: {FAULTS[k]}" for k in FAULT_KINDS))
        for key in sorted(k for k in FAULTS if k.startswith("kind: ")):
            terminalreporter.write_line(f"  {key[6:]}: {FAULTS[key]}")


@pytest.fixture(scope="session")
def fault_figures() -> collections.Counter:
    """The fault-injection counters (see :data:`FAULT_KINDS`)."""
    return FAULTS


@pytest.fixture(scope="session")
def fuzz_figures() -> collections.Counter:
    """The run's fuzz counters (see :data:`KINDS`)."""
    return FUZZ
