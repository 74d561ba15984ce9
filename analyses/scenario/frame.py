"""The buyer's frame: one answer, for every cost row of the ledger, to the questions a comparison of
money has to settle before it can be judged.

- **How an existing fleet is valued** (:data:`FLEET_VALUES`): at its *book value* (the book's rule:
  the price paid new, written off straight-line over the scenario's depreciation life from the
  fleet's purchase date; once written off its hours cost only their running cost), or, as the
  reader's alternative, at today's second-hand *market* price. A fleet on the books keeps its
  remaining depreciation whether or not it is replaced, so a replacement saves only the old
  fleet's running cost under the book rule; under the market rule it also frees the fleet's
  resale value.
- **The status quo of each document's case** (:func:`status_quo`), as the document states it: 000
  keeps its own A100 cluster (000 §4, 原方案 A100集群 128卡; §6 speaks of upgrading hardware, 硬件升级),
  001 rents A100 cloud instances billed by the hour (001 §4, 租赁云上A100实例，按小时计费).
- **Each side's precision** (:data:`PRECISION`): the new generation in FP8 on every workload, as both
  documents credit its speed-up to FP8 (000 §2.1 and §3; 001 §2.1), the old one in BF16 (A100 has no
  FP8); so one workload has one speed-up in every row.
- **The utilisation words** (:data:`UTILISATION`), kept apart and defined once: a job's *busy share*
  of the GPU-hours it holds (利用率), *model FLOPs utilisation* (MFU), and *useful compute*, their
  product with goodput (有效计算), where a claim speaks of compute that yields model work.
- **The documents' hardware** (:data:`HARDWARE`): 001's case as its 8 B300 GPUs in one 8-GPU server
  (no 4-GPU B300 server exists).

A check asks for the choice it uses (:func:`use`): the choice is noted with the named quantities the
row used (:mod:`analyses.scenario.quantities`), the ledger names it in the row's reason and its
``frame`` column, and ``tests/core/test_quantities.py`` fails when two rows judge one quantity
under different choices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analyses.scenario import quantities

FLEET_VALUES = ("book", "market")
FLEET_VALUE = "book"  # the book's rule; "market" is the reader's alternative (the cost chapter's parameter)
PARAM = "fleet_value"  # the parameter of a chapter that lets a reader pick the alternative


@dataclass(frozen=True)
class Choice:
    """One answer of the frame: its dimension, what it is about (``key``), the choice and its words."""

    dimension: str
    key: str
    value: str
    words: str  # the choice in a few words, as a row's reason names it
    detail: str = ""  # the choice in full, with its grounds, as the ledger page states it


def fleet_value(cfg: Mapping[str, Any] | None = None) -> str:
    """How an existing fleet is valued at ``cfg`` (its ``fleet_value`` parameter, else the book's rule)."""
    value = (cfg or {}).get(PARAM, FLEET_VALUE)
    if value not in FLEET_VALUES:
        raise ValueError(f"{PARAM} must be one of {FLEET_VALUES}, got {value!r}")
    return str(value)


FLEET_WORDS = {
    "book": (
        "existing fleets at book value",
        "an existing fleet is valued at its book value: the price paid new, written off straight-line over the "
        "depreciation life from its purchase date (a100_fleet_age_years); its remaining depreciation is carried "
        "whether it is replaced or not, so a replacement saves only its running cost",
    ),
    "market": (
        "existing fleets at market value",
        "an existing fleet is valued at today's second-hand market price: selling it frees that value, so a "
        "replacement saves its capital charge at that price and its running cost",
    ),
}

STATUS_QUO = {
    "000": Choice(
        "status quo",
        "000",
        "owned",
        "000: its own A100s",
        "document 000's firm keeps its own A100 cluster (000 §4: 原方案 A100集群, its monthly compute bill; §6 speaks "
        "of upgrading hardware, 硬件升级)",
    ),
    "001": Choice(
        "status quo",
        "001",
        "rent in China",
        "001: A100s rented in China",
        "document 001's firm rents A100 cloud instances billed by the hour in China (001 §4: 租赁云上A100实例, "
        "按小时计费), and part 6's payback is its extra hardware investment against that",
    ),
}

PRECISION = Choice(
    "precision",
    "B300/A100",
    "fp8/bf16",
    "B300 in FP8, A100 in BF16",
    "B300 trains in FP8 and A100 in BF16 (A100 has no FP8) on every workload, the precision both documents credit "
    "B300's speed-up to (000 §2.1 and §3; 001 §2.1), so one workload has one speed-up in every row",
)

UTILISATION = {
    "busy share": Choice(
        "utilisation",
        "利用率",
        "busy share",
        "利用率 as a job's busy share",
        "利用率 (GPU utilisation) is a job's busy share of the GPU-hours it holds (nvidia-smi utilisation), not MFU",
    ),
    "useful compute": Choice(
        "utilisation",
        "有效计算",
        "useful compute",
        "有效计算 as the model FLOPs a paid GPU-hour yields",
        "有效计算 (useful compute) is the model FLOPs a paid GPU-hour yields: a job's busy share × goodput × MFU; "
        "its shortfall is what a claim about waste (效率低下) counts",
    ),
}

BOUGHT = Choice(
    "purchase",
    "GPUs bought now",
    "market",
    "GPUs bought at market price",
    "a GPU bought now is priced at today's market price: an A100 second-hand, a B300 new",
)

PRICES = Choice(
    "prices",
    "B300 in China",
    "public market",
    "B300 priced outside China",
    "B300 is priced at its public market price outside China: US export rules keep it from China "
    "(data/export_controls.csv), where Blackwell systems have sold at about a 50% premium "
    "(data/prices.csv, b200-server-china-2025); rented A100-hours at Chinese cloud rents",
)

HARDWARE = Choice(
    "hardware",
    "001 §4",
    "8 GPUs",
    "001's 8 B300s in one server",
    "document 001's case is its 8 B300 GPUs (2台4卡), bought as one 8-GPU server: B300 ships in 8-GPU servers and no "
    "4-GPU one exists, so the case's cost rows price 8 GPUs, not two 8-GPU servers",
)


def fleet(cfg: Mapping[str, Any] | None = None) -> Choice:
    """The valuation of an existing fleet at ``cfg`` (:func:`fleet_value`) as a choice."""
    value = fleet_value(cfg)
    return Choice("fleet value", "existing fleet", value, *FLEET_WORDS[value])


def status_quo(document: str) -> Choice:
    """The status quo of a document's case (``document``: its file name or its code, "000" or "001")."""
    code = str(document)[:3]
    if code not in STATUS_QUO:
        raise KeyError(f"no status quo for document {document!r}; the frame has: {', '.join(STATUS_QUO)}")
    return STATUS_QUO[code]


def use(*choices: Choice) -> tuple[Choice, ...]:
    """Note ``choices`` as the frame of the row being assessed (while a recording is active) and return them."""
    for c in choices:
        quantities.note("frame", (c.dimension, c.key, c.value))
    return choices


def words(choices: tuple[Choice, ...] | list[Choice]) -> str:
    """The frame of a row in words, for its reason: "frame: ...; ..." ("" for none)."""
    seen = list(dict.fromkeys(c.words for c in choices))
    return "frame: " + ", ".join(seen) if seen else ""


def all_choices(cfg: Mapping[str, Any] | None = None) -> tuple[Choice, ...]:
    """Every choice of the frame at ``cfg``, for the ledger page."""
    return (fleet(cfg), *STATUS_QUO.values(), BOUGHT, PRICES, PRECISION, *UTILISATION.values(), HARDWARE)


def lookup(dimension: str, key: str, value: str, cfg: Mapping[str, Any] | None = None) -> Choice:
    """The choice of the frame noted as (``dimension``, ``key``, ``value``)."""
    for c in (*all_choices(cfg), fleet({PARAM: "market"}), fleet({PARAM: "book"})):
        if (c.dimension, c.key, c.value) == (dimension, key, value):
            return c
    raise KeyError(f"no frame choice {(dimension, key, value)}")
