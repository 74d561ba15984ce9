"""Models: each module models one thing (memory, step time, scaling, failures, cost, ...) from plain
numbers or DataFrames, vectorised with numpy, with units in names and sources in docstrings."""
