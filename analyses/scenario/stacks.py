"""The training stacks of ``data/training_stacks.csv`` (Megatron, DeepSpeed, FSDP, ...): their ids and
aliases, the reference stack the step-time model's core is the model of, and what each runs (ZeRO
stages, micro-batches, model parallelism) as plan request fields. Their efficiencies are fitted in
:mod:`analyses.scenario.calibration`."""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from analyses import data

POOLED_STACK = "unspecified"  # the stack of a plan that names none: every published run pooled


@functools.cache
def _stacks(data_dir: str) -> pd.DataFrame:
    return data.table("training_stacks")


def stack_table() -> pd.DataFrame:
    """``data/training_stacks.csv``."""
    return _stacks(str(data.DATA_DIR)).copy()


def stack_names() -> list[str]:
    """The id of every training stack."""
    return list(_stacks(str(data.DATA_DIR))["id"])


def reference_stack() -> str:
    """The stack the step-time model's core is the model of (efficiency 1)."""
    frame = _stacks(str(data.DATA_DIR))
    return str(frame.loc[frame["reference"].astype(bool), "id"].iloc[0])


def stack_id(name: str) -> str:
    """The id of a stack given by its id or one of its aliases (case-insensitive); KeyError names them."""
    wanted = str(name).strip().lower()
    for r in _stacks(str(data.DATA_DIR)).to_dict("records"):
        aliases = (
            [a.strip().lower() for a in str(r["aliases"] or "").split(";") if a.strip()]
            if r["aliases"] == r["aliases"]
            else []
        )
        if wanted == r["id"] or wanted in aliases:
            return str(r["id"])
    raise KeyError(f"unknown training stack {name!r}; known: {', '.join(stack_names())}")


def stack_rules(stack: str) -> dict[str, Any]:
    """What a stack runs, as plan request fields: ``zero_stages`` and ``micro_batches`` (tuples) and ``model_parallel``."""
    row = _stacks(str(data.DATA_DIR)).set_index("id").loc[stack_id(stack)]
    return {
        "zero_stages": tuple(int(z) for z in str(row["zero_stages"]).split(";")),
        "micro_batches": tuple(int(m) for m in str(row["micro_batches"]).split(";")),
        "model_parallel": bool(row["model_parallel"]),
    }


def clear_cache() -> None:
    """Forget what was read (after editing ``data/``)."""
    _stacks.cache_clear()
