"""Published and measured memory figures mapped to the memory model.

A printed figure (a row of ``data/memory_published.csv``: model-state GB per GPU, bytes per
parameter, an activation saving) and a recorded measurement (``data/measurements/memory_cpu_torch.csv``)
each become what :mod:`analyses.models.memory` and :mod:`analyses.models.activations` predict for
them, so the memory chapter and its tests compare like with like. Bytes; GB = 1e9 bytes.
"""

from __future__ import annotations

import pandas as pd

from analyses.models.activations import activation_bytes_per_layer, torch_eager_activation_bytes_per_layer
from analyses.models.memory import bytes_per_param, model_state_bytes
from analyses.units import GB


def activation_kwargs(text: str) -> dict:
    """Parse a configuration such as ``"sequence_parallel=True recompute=selective"`` into keyword arguments."""
    out: dict = {}
    for item in text.split():
        k, v = item.split("=")
        out[k] = v == "True" if v in ("True", "False") else v
    return out


def published_figure(row) -> float:
    """The model's value for one printed figure (a row of ``data/memory_published.csv``).

    ``model_state_gb_per_gpu``: :func:`model_state_bytes` in GB; ``bytes_per_param``:
    :func:`bytes_per_param`; ``activation_saving_fraction`` and ``activation_reduction_factor``:
    :func:`activation_bytes_per_layer` of the row's two configurations (``"optimised vs baseline"``),
    as ``1 − optimised/baseline`` or ``baseline/optimised``.
    """
    q = row["quantity"]
    if q == "model_state_gb_per_gpu":
        return float(
            model_state_bytes(
                row["n_params"],
                precision=row["precision"],
                optimizer=row["optimizer"],
                zero_stage=row["zero_stage"],
                dp=row["dp"],
                tp=row["tp"],
                fp32_grads=row["fp32_grads"],
            )
            / GB
        )
    if q == "bytes_per_param":
        return bytes_per_param(row["precision"], row["optimizer"], row["fp32_grads"])
    if q not in ("activation_saving_fraction", "activation_reduction_factor"):
        raise ValueError(f"no model for the published quantity {q!r}")
    optimised, baseline = (activation_kwargs(p) for p in row["config"].split(" vs "))
    args = (row["seq_len"], row["micro_batch"], row["hidden"], row["heads"])
    opt = float(activation_bytes_per_layer(*args, tp=row["tp"], **optimised))
    base = float(activation_bytes_per_layer(*args, tp=row["tp"], **baseline))
    return 1 - opt / base if q == "activation_saving_fraction" else base / opt


def measured_predictions(measured: pd.DataFrame) -> pd.DataFrame:
    """The model's predictions for recorded measurements (``data/measurements/memory_cpu_torch.csv``), bytes.

    Columns ``states`` (:func:`model_state_bytes`, fp32 recipe: autocast keeps fp32 parameters,
    gradients and moments), ``activations_torch`` (:func:`torch_eager_activation_bytes_per_layer`
    × layers) and ``activations_megatron`` (Korthikanti et al.'s 16-bit accounting, doubled for fp32
    rows, ``flash`` for the SDPA kernel, × layers), one row per measurement.
    """
    rows = []
    for r in measured.to_dict("records"):
        args = (r["seq_len"], r["micro_batch"], r["hidden"], r["heads"])
        torch = float(torch_eager_activation_bytes_per_layer(*args, attention=r["attention"], dtype=r["dtype"]))
        scale = 2.0 if r["dtype"] == "fp32" else 1.0  # the paper's bytes assume 16-bit activations
        korth = scale * float(activation_bytes_per_layer(*args, flash=r["attention"] == "sdpa"))
        rows.append(
            {
                "states": float(model_state_bytes(r["n_params"], precision="fp32")),
                "activations_torch": torch * r["layers"],
                "activations_megatron": korth * r["layers"],
            }
        )
    return pd.DataFrame(rows, columns=["states", "activations_torch", "activations_megatron"], index=measured.index)
