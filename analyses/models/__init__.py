"""Models: each module models one thing (memory, step time, scaling, failures, cost, ...) from plain
numbers or DataFrames, vectorised with numpy, with units in names and sources in docstrings."""

from __future__ import annotations

from types import ModuleType


def scipy_special() -> ModuleType:
    """:mod:`scipy.special` (Student's t quantile, the normal CDF, Lambert's W), imported on first use."""
    import scipy.special  # heavy (about half a second): a command that draws no band and plans nothing skips it

    return scipy.special
