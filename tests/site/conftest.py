"""Fuzz figures: every fuzzed input is classified, and the counts are printed at the end of the run
(for the closing note: inputs tried, clean one-line errors, accepted, tracebacks, hangs, files
written on failure). ``FUZZ_EXAMPLES=500 pytest tests/site/test_fuzz.py`` runs a larger, random
campaign; ``make test`` runs a small, derandomised one."""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analyses.data import REPO_ROOT
from analyses.site import build

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


# --------------------------------------------------------------------------------------------
# The built site and a headless browser, shared by the tests of the book as a reader meets it
# (test_reader.py, test_screens.py)
# --------------------------------------------------------------------------------------------

HTML = REPO_ROOT / "_build" / "html"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def site() -> Path:
    # the test command never rewrites committed notebooks: with a stale one, fail before building
    stale = [p.name for p in build.stale()]
    assert stale == [], f"stale notebooks (re-run `python -m analyses build` and commit): {stale}"
    proc = subprocess.run([sys.executable, "-m", "analyses", "build"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout  # nothing re-executed: the committed notebooks are current
    return HTML


@pytest.fixture(scope="module")
def browser(site):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is required: `make chromium` installs Debian's package"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()
