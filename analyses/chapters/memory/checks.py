"""Checks of the memory chapter: the 100B model's bytes, one card against many, B300's HBM3e, the
4-8-node plan's memory.

The figures these claims make are settled by exact byte accounting and datasheets, in the recipe the
documents name (FP16 mixed precision with Adam: 2 + 2 + 12 bytes per parameter, or 18 with fp32
gradients); the only assumption is the memory a framework keeps on each GPU besides model states
(``framework_memory_gb`` of the scenario). Each check returns a
:class:`~analyses.verdicts.Finding` that the rule of the claim's kind judges, vectorised in ``s``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from analyses import data
from analyses.models import memory
from analyses.scenario.generations import NEW, OLD, documents_span, gpu
from analyses.units import GB, TB
from analyses.units.formats import fmt, stated
from analyses.verdicts import Credit, Finding, Reading, at_least, check, exactly

RECIPE = "fp16-mixed"  # the documents' recipe (000 §2.2: FP16 weights, gradients, Adam momentum and variance)
ALLOWANCE = "framework_memory_gb"


def reading(claim: data.Claim) -> str:
    """The claim's reading of its vague words (``data/claims.csv``), or "" where it has none."""
    return claim.reading if isinstance(claim.reading, str) else ""


def state_bytes_per_param() -> tuple[float, float]:
    """Bytes per parameter of the documents' recipe: ZeRO's 16 and, with fp32 gradients, 18."""
    return memory.bytes_per_param(RECIPE), memory.bytes_per_param(RECIPE, fp32_grads=True)


@functools.cache
def hbm_type(name: str) -> str:
    """A GPU's memory technology as the GPU table writes it ("HBM3e")."""
    return str(data.gpus().set_index("name").loc[name, "hbm_type"])


@functools.cache
def largest_gpu() -> str:
    """The GPU of the table with the most usable HBM."""
    return max(data.gpu_names(), key=lambda g: gpu(g).hbm_usable_bytes)


def _allowance(s: Mapping[str, Any]) -> Any:
    return s[ALLOWANCE] * GB


@check("000-2.2-weights-400gb-total-1p5tb")
def check_weights_400gb_total_1p5tb(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.2: a 100B model's FP16 weights take about 400 GB, and over 1.5 TB with gradients and Adam."""
    n = claim.value("params")
    w16, w32 = memory.RECIPES[RECIPE].weight_bytes, memory.RECIPES["fp32"].weight_bytes
    b16, b18 = state_bytes_per_param()
    total = claim.value("total_min_tb") * TB
    holds = n * b16 >= total
    return Finding(
        stated=exactly(claim.value("weights_fp16_gb")),
        value=n * w16 / GB,
        unit="GB",
        recomputed=(
            f"FP16 weights {fmt(n * w16 / GB)} GB ({stated(w16)} bytes × {fmt(n)}); FP32 weights "
            f"{fmt(n * w32 / GB)} GB; model states {fmt(n * b16 / TB)}-{fmt(n * b18 / TB)} TB "
            f"({stated(b16)}-{stated(b18)} bytes per parameter)"
        ),
        context=(
            f"{fmt(claim.value('weights_fp16_gb'))} GB is what the weights take in FP32 ({stated(w32)} bytes); "
            f"the over-{stated(claim.value('total_min_tb'))} TB total "
            + ("does hold" if holds else f"holds only from {fmt(total / n)} bytes per parameter")
        ),
        reading=reading(claim),
        taken="千亿 as 1e11 parameters, as the sentence's own 1.5 TB total implies",
        readings=(
            Reading(
                f"千亿 as a model of the hundred-billion class, {stated(2 * n / 1e9)}B parameters",
                value=2 * n * w16 / GB,
            ),
        ),
    )


@check("000-2.2-one-card-cannot-hold")
def check_one_card_cannot_hold(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.2: no single card, however large, holds the 100B model's training states."""
    states = claim.value("total_min_tb") * TB  # the stated lower bound: if it does not fit, nothing more does
    card = largest_gpu()
    usable = gpu(card).hbm_usable_bytes
    needed = memory.gpus_for_states(states, usable, _allowance(s))
    return Finding(
        stated=at_least(2),
        value=needed,
        unit="GPUs",
        recomputed=lambda: (
            f"the stated {stated(states / TB)} TB of states vs "
            f"{fmt(usable / GB)} GB usable on the largest GPU in the table ({card}) less {fmt(s[ALLOWANCE], 'GB', 2)} "
            f"for the framework: at least {stated(float(needed))} GPUs for the states alone"
        ),
        context=lambda v: (
            f"even a {card} holds only a fraction of the states, so they must be sharded over GPUs"
            if v == "consistent"
            else f"one {card} holds the states"
        ),
        reading=reading(claim),
        sig=1,  # whole GPUs
    )


@check("000-2.2-hbm3e-capacity")
def check_hbm3e_capacity(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §2.2: B300 carries HBM3e with markedly more capacity per card than the previous generation."""
    new, prev = gpu(NEW), gpu(OLD)
    memory_type = hbm_type(NEW)
    ratio = new.hbm_bytes / prev.hbm_bytes
    others = ", ".join(f"{g} {fmt(new.hbm_bytes / gpu(g).hbm_bytes, 'x')}" for g in documents_span()[1:-1])
    return Finding(
        stated=at_least(claim.value("capacity_ratio_min_x")),
        value=ratio,
        unit="x",
        recomputed=(
            f"{NEW} {memory_type} {fmt(new.hbm_bytes / GB)} GB ({fmt(new.hbm_usable_bytes / GB)} usable) vs {OLD} "
            f"{fmt(prev.hbm_bytes / GB)} GB: {fmt(ratio, 'x')}; vs {others}"
        ),
        context=f"against B200, the generation {NEW} succeeds, the gain is still {fmt(new.hbm_bytes / gpu('B200').hbm_bytes, 'x')}",
        contradiction=None if "HBM3e" in memory_type else f"{NEW} carries {memory_type}, not HBM3e",
        reading=reading(claim),
        credits=(Credit("hbm3e"),),
    )


@check("001-2.2-hbm-over-8tbs")
def check_hbm_over_8tbs(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 001 §2.2: B300's HBM3e bandwidth exceeds 8 TB/s."""
    figure = claim.value("hbm_bandwidth_min_tb_s")
    used = gpu(NEW).hbm_bytes_per_s / TB
    dis = data.gpu_spec_disagreements()
    published = dis[(dis["gpu"] == NEW) & (dis["field"] == "hbm_bandwidth_tb_per_s")]["value"].astype(float)
    low, high = min([used, *published]), max([used, *published])
    return Finding(
        stated=exactly(figure),
        value=used,
        low=low,
        high=high,
        unit="TB/s",
        recomputed=(
            f"{NEW} HBM bandwidth {fmt(used)} TB/s (HGX B300 datasheet); NVIDIA's published figures "
            f"{fmt(low)}-{fmt(high)} TB/s"
        ),
        context=(
            f"NVIDIA gives {fmt(high)} TB/s for the Blackwell Ultra chip and {fmt(used)} TB/s for the HGX {NEW}; "
            f"neither exceeds {stated(figure)} TB/s, so read strictly the claim rounds up, within the fact tolerance; "
            f"B200 already reaches {fmt(gpu('B200').hbm_bytes_per_s / TB)} TB/s"
        ),
        reading=reading(claim),
        taken=f"超{stated(figure)}TB/s as the {stated(figure)} TB/s class",
        strict=at_least(figure),
        credits=(Credit("hbm3e"),),
    )


def plan_capacity(claim: data.Claim, s: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's smallest cluster: its GPUs, the largest model whose states it holds fully sharded
    at 18 and at 16 bytes per parameter, and the GPUs the claim's model needs for its states."""
    gpus = claim.value("nodes_low") * claim.value("gpus_per_node")
    usable = gpu(NEW).hbm_usable_bytes
    b16, b18 = state_bytes_per_param()
    return {
        "gpus": gpus,
        "usable_bytes": usable,
        "least": memory.max_params_sharded(gpus, usable, b18, _allowance(s)),
        "most": memory.max_params_sharded(gpus, usable, b16, _allowance(s)),
        "need": memory.gpus_for_states(claim.value("params") * b18, usable, _allowance(s)),
    }


@check("000-5-node-plan-memory")
def check_node_plan_memory(claim: data.Claim, s: Mapping[str, Any], cfg: Mapping[str, Any]) -> Finding:
    """Document 000 §5: 4-8 nodes of 8 B300s are enough for 10B-parameter training (memory side)."""
    n = claim.value("params")
    cap = plan_capacity(claim, s)
    b16, b18 = state_bytes_per_param()
    return Finding(
        stated=exactly(n),
        value=cap["most"],
        low=cap["least"],
        unit="parameters",
        recomputed=lambda: (
            f"{stated(cap['gpus'])} {NEW}s ({stated(claim.value('nodes_low'))} nodes) of "
            f"{fmt(cap['usable_bytes'] / GB)} GB usable, less {fmt(s[ALLOWANCE], 'GB', 2)} each, hold the states of "
            f"{fmt(float(cap['least']))}-{fmt(float(cap['most']))} parameters ({stated(b18)}-{stated(b16)} bytes "
            f"each, fully sharded); a {fmt(n)}-parameter model needs {stated(float(cap['need']))} GPU(s) for its states"
        ),
        context=(
            "memory is no constraint at this size: the node count is set by training time, not memory "
            "(activations come on top, a small share of a B300 at 10B parameters)"
        ),
        reading=reading(claim),
    )
