"""Shared fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analyses import data, scenario

REPO = data.REPO_ROOT


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    """A private copy of data/ that a test may break."""
    target = tmp_path / "data"
    shutil.copytree(REPO / "data", target)
    data.clear_cache()
    scenario.clear_cache()
    yield target
    data.clear_cache()
    scenario.clear_cache()
