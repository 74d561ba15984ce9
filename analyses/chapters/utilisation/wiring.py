"""How the utilisation chapter feeds data, the documents' cases and the scenario into the models.

Shared by the checks (:mod:`.checks`), the page (:func:`analyses.chapters.utilisation.compute`) and
the sentences (:mod:`.text`), so that the page shows exactly what the checks judge. Tables read
from ``data/`` are cached per data folder (their pandas copies are slow to make).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analyses import data
from analyses.models import mig, pipeline
from analyses.scenario import cases, generations
from analyses.scenario.generations import NEW, OLD

PERCENT = 100.0  # stated percentages to fractions


def profile_table(gpu: str = NEW) -> pd.DataFrame:
    """The MIG profile table of ``gpu`` (``data/mig_profiles.csv``; read once per data folder, do not modify)."""
    return _profile_table(gpu, str(data.DATA_DIR))


@functools.cache
def _profile_table(gpu: str, data_dir: str) -> pd.DataFrame:
    return data.mig_profiles(gpu)


def profiles(gpu: str = NEW) -> mig.Profiles:
    """The MIG profiles of ``gpu``, smallest first."""
    return mig.profiles_of(profile_table(gpu))


def mig_bound(utilisation_whole: Any, s: Mapping[str, Any], gpu: str = NEW) -> mig.MixExpectation:
    """The most MIG can lift a cluster at ``utilisation_whole`` on whole GPUs, with the scenario's
    partial-GPU jobs (:func:`analyses.models.mig.mig_utilisation_bound`)."""
    return mig.mig_utilisation_bound(
        utilisation_whole, s["mig_small_job_compute"], s["mig_small_job_memory"], profiles(gpu)
    )


def max_instances(gpu: str = NEW) -> int:
    """The most MIG instances one ``gpu`` splits into (its smallest profile's count)."""
    return _max_instances(gpu, str(data.DATA_DIR))


@functools.cache
def _max_instances(gpu: str, data_dir: str) -> int:
    return int(profile_table(gpu)["max_instances"].max())


def same_slicing(a: str = OLD, b: str = NEW) -> bool:
    """Whether two GPUs offer the same MIG profiles in slices and the same instance counts."""
    pa, pb = profiles(a), profiles(b)
    return (
        np.array_equal(pa.compute_slices, pb.compute_slices)
        and np.array_equal(pa.memory_eighths, pb.memory_eighths)
        and max_instances(a) == max_instances(b)
    )


def b300_model_flops(s: Mapping[str, Any]) -> Any:
    """Model FLOP/s per B300: the scenario's speed-up over an A100 at its published BF16 MFU."""
    return generations.achieved_flop_per_s(s, NEW)


def llm_input(params: float, s: Mapping[str, Any]) -> tuple[Any, Any]:
    """(tokens/s, bytes/s) one B300 consumes training a dense text model of ``params`` parameters."""
    tokens = pipeline.llm_tokens_per_s_per_gpu(params, b300_model_flops(s))
    return tokens, pipeline.required_input_bytes_per_s(tokens, s["input_bytes_per_token"])


@functools.cache
def gds_timing() -> dict[str, float]:
    """Document 001's GDS run (part 2.2) rebuilt (:func:`analyses.models.pipeline.loading_fix`)."""
    g = cases.gds_run()
    return pipeline.loading_fix(
        g.loading_share_before, g.loading_share_after, g.utilisation_before, g.utilisation_after, g.cycle_days
    )


def electricity_saving(s: Mapping[str, Any]) -> Any:
    """Electricity saved by GDS in document 001's run when waiting servers draw the scenario's
    ``idle_power_fraction`` of their training power (:func:`analyses.models.pipeline.energy_ratio`)."""
    t = gds_timing()
    return 1 - pipeline.energy_ratio(t["busy_before"], t["busy_after"], s["idle_power_fraction"])


def gds_release() -> str:
    """Month of GPUDirect Storage's first general release ("June 2021")."""
    return pd.Timestamp(data.source("gds-release-notes-2021")["date"]).strftime("%B %Y")


def gds_context() -> str:
    """Why the GDS latency figure stays unverifiable."""
    date = gds_release()
    return (
        "no public benchmark isolates this figure: a gdsio run comparing GPUDirect mode with compatibility "
        f"(CPU bounce-buffer) mode on the same drives and transfer sizes would; GDS shipped in {date}, before Blackwell"
    )
