"""The one shared data module: every fact reaches models and notebooks through here.

Each table is a CSV file ``data/<name>.csv`` (or a folder ``data/<name>/*.csv`` whose files are
concatenated) described by a sidecar schema ``data/<name>.schema.yaml``. Loading validates the
header, every cell's type, units, allowed values, ranges (``positive`` for quantities no model can
use at zero, such as a peak FLOP/s or a bandwidth), uniqueness, ordered columns (low <= central <=
high), a minimum row count, UTF-8 text and one field per header column, real calendar dates,
finite numbers inside every column's physical range, and referential integrity: every ``source``
id resolves in the sources table and every column that names a row of another table (a GPU, a
model shape, a claim, a price, a scenario entry) declares it in its schema (``references``) and
is checked (see :mod:`analyses.tables`); a fault raises :class:`DataError` naming file, row and
column in one line. A name looked up that is not there raises :class:`DataKeyError` (a DataError
and a KeyError).

Units are in column names and schemas (``peak_tflops_dense_bf16`` = 1e12 FLOP/s, dense, no 2:4
sparsity; ``hbm_capacity_gib`` = 2**30 bytes (HBM is marketed in binary units); ``nvlink_gb_per_s_per_direction`` = 1e9 bytes/s in one
direction). Typed accessors such as :func:`gpu` convert to SI (FLOP/s, bytes, bytes/s).
Nothing else in the project opens files in ``data/``.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analyses import claim_values, tables, units
from analyses.claim_values import parse_values  # noqa: F401  (re-exported)
from analyses.tables import (  # noqa: F401  (the schema machinery, re-exported as the data module's API)
    COLUMN_TYPES,
    DATE_RE,
    READS,
    SOURCE_SPLIT,
    Column,
    DataError,
    DataKeyError,
    Schema,
    allowed_text,
    load_all,
    load_schema,
    load_table,
    read_csv_rows,
    record,
)
from analyses.units import BITS_PER_BYTE, GIB, GIGA, TERA

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("AUDIT_DATA_DIR", REPO_ROOT / "data"))


def _data_dir(data_dir: str | Path | None) -> Path:
    return Path(data_dir) if data_dir is not None else DATA_DIR


def table_names(data_dir: str | Path | None = None) -> list[str]:
    """Names of every table with a schema under ``data/`` (``measurements/x`` for subfolders)."""
    return tables.table_names(_data_dir(data_dir))


def validate(data_dir: str | Path | None = None) -> dict[str, int]:
    """Load and validate every table (every claim's stated values parsed too); return the row count
    per table (raises DataError)."""
    root = _data_dir(data_dir).resolve()
    counts = {name: len(frame) for name, frame in load_all(root).items()}
    _claims(root)
    return counts


def table(name: str, data_dir: str | Path | None = None) -> pd.DataFrame:
    """A validated copy of table ``name`` (see :func:`table_names`), without bookkeeping columns."""
    root = _data_dir(data_dir).resolve()
    if name not in table_names(root):
        raise DataKeyError(
            "data/datapackage.json", f"no table '{name}' in the data package; tables: {', '.join(table_names(root))}"
        )
    return _plain(name, root).copy()


@functools.cache
def _plain(name: str, root: Path) -> pd.DataFrame:
    """Table ``name`` without bookkeeping columns or attrs, made once per data folder: pandas
    deep-copies attrs (the schema) on every operation, so copies are made from this frame."""
    frame = load_table(name, root)
    out = frame.drop(columns=["_file", "_row"])
    out.attrs = {}  # the schema is data.schema(name)
    return out


def schema(name: str, data_dir: str | Path | None = None) -> Schema:
    """The schema of table ``name``."""
    return load_schema(name, _data_dir(data_dir).resolve())


def where(name: str, column: str, value: Any, data_dir: str | Path | None = None) -> tuple[str, int | None]:
    """(file, row) of the first row of table ``name`` whose ``column`` equals ``value`` (row None when
    there is none), for an error that names the row a derived figure came from."""
    frame = load_table(name, _data_dir(data_dir).resolve())
    hit = frame[frame[column] == value]
    if hit.empty:
        return str(frame["_file"].iloc[0]) if len(frame) else f"data/{name}.csv", None
    return str(hit["_file"].iloc[0]), int(hit["_row"].iloc[0])


def clear_cache() -> None:
    """Forget loaded tables and schemas (after editing files in ``data/``)."""
    tables.clear_cache()
    _plain.cache_clear()
    _claims.cache_clear()
    _claims_by_id.cache_clear()
    _gpu.cache_clear()
    _resolved.cache_clear()


# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------


def sources(data_dir: str | Path | None = None) -> pd.DataFrame:
    """The sources table: id, title, publisher, date, reference, locator, conventions."""
    return table("sources", data_dir)


def source(source_id: str) -> dict[str, Any]:
    """One source row as a dict."""
    frame = sources()
    hit = frame[frame["id"] == source_id]
    if hit.empty:
        raise DataKeyError("data/sources/", f"unknown source '{source_id}'")
    return hit.iloc[0].to_dict()


# --------------------------------------------------------------------------------------------
# GPUs
# --------------------------------------------------------------------------------------------

PRECISIONS = units.PRECISIONS  # the tensor formats of data/gpus.csv's peak columns


@dataclass(frozen=True)
class GPU:
    """One GPU's datasheet figures in SI units (FLOP/s dense, bytes, bytes/s per direction, W)."""

    name: str
    full_name: str
    launch_year: int
    peak_flops_dense: dict[str, float]
    hbm_bytes: float
    hbm_usable_bytes: float
    hbm_bytes_per_s: float
    nvlink_generation: int | None
    nvlink_bytes_per_s_per_direction: float | None
    nvlink_domain_gpus: int
    nic_bytes_per_s_per_gpu: float | None
    tdp_w: float
    mig_max_instances: int
    source: str

    def peak_flops(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision``; raises ValueError if the GPU lacks that format."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        value = self.peak_flops_dense.get(precision)
        if value is None:
            supported = [p for p in PRECISIONS if p in self.peak_flops_dense]
            raise ValueError(f"{self.name} has no {precision} tensor throughput; supported: {supported}")
        return value


def gpus() -> pd.DataFrame:
    """The GPU table in its datasheet units (see ``data/gpus.schema.yaml``)."""
    return table("gpus")


def gpu_names() -> list[str]:
    """Names of every GPU in the table, in launch order: by launch date (``YYYY-MM-DD``, or a
    shorter ``YYYY-MM`` or ``YYYY`` that sorts first in its month or year), then name."""
    frame = gpus().sort_values(["launch_date", "name"], kind="stable")
    return list(frame["name"])


def _opt(value: Any, scale: float = 1.0) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value) * scale


def gpu(name: str) -> GPU:
    """One GPU's figures in SI units; ``KeyError`` lists the known names."""
    return _gpu(name, _resolved(DATA_DIR))


@functools.cache
def _gpu(name: str, root: Path) -> GPU:
    frame = gpus()
    hit = frame[frame["name"] == name]
    if hit.empty:
        raise DataKeyError("data/gpus.csv", f"unknown GPU '{name}'; known: {', '.join(gpu_names())}")
    r = hit.iloc[0]
    flops = {p: _opt(r[f"peak_tflops_dense_{p}"], TERA) for p in PRECISIONS}
    nic = _opt(r["nic_gbit_per_s_per_gpu"], GIGA / BITS_PER_BYTE)
    nvlink = _opt(r["nvlink_gb_per_s_per_direction"], GIGA)
    gen = _opt(r["nvlink_generation"])
    return GPU(
        name=r["name"],
        full_name=r["full_name"],
        launch_year=int(r["launch_year"]),
        peak_flops_dense={p: v for p, v in flops.items() if v is not None},
        hbm_bytes=float(r["hbm_capacity_gib"]) * GIB,
        hbm_usable_bytes=float(_opt(r["hbm_usable_gib"]) or r["hbm_capacity_gib"]) * GIB,
        hbm_bytes_per_s=float(r["hbm_bandwidth_tb_per_s"]) * TERA,
        nvlink_generation=None if gen is None else int(gen),
        nvlink_bytes_per_s_per_direction=nvlink,
        nvlink_domain_gpus=int(_opt(r["nvlink_domain_gpus"]) or 1),
        nic_bytes_per_s_per_gpu=nic,
        tdp_w=float(r["tdp_w"]),
        mig_max_instances=int(_opt(r["mig_max_instances"]) or 0),
        source=r["source"],
    )


def gpu_spec_disagreements() -> pd.DataFrame:
    """Where sources disagree on a GPU figure, each value with its source and whether the book uses it."""
    return table("gpu_spec_disagreements")


# --------------------------------------------------------------------------------------------
# Models, trends, measurements
# --------------------------------------------------------------------------------------------


def models() -> pd.DataFrame:
    """Notable models: parameters, tokens, training FLOP, hardware, GPU-hours, date, source."""
    return table("models")


def model(name: str) -> dict[str, Any]:
    """One model row as a dict; ``KeyError`` lists the known names."""
    frame = models()
    hit = frame[frame["name"] == name]
    if hit.empty:
        raise DataKeyError("data/models.csv", f"unknown model '{name}'; known: {', '.join(frame['name'])}")
    return hit.iloc[0].to_dict()


def growth_trends() -> pd.DataFrame:
    """Published growth-rate estimates (Epoch AI and others) to set beside the book's fits."""
    return table("growth_trends")


def measurements(name: str) -> pd.DataFrame:
    """A table of recorded measurements, ``data/measurements/<name>.csv``."""
    return table(f"measurements/{name}")


def published_runs() -> pd.DataFrame:
    """Published training and benchmark runs with shape, layout and measured figures (issue 21's
    calibration and validation candidates; see ``data/published_runs.schema.yaml`` for the FLOP basis)."""
    return table("published_runs")


# --------------------------------------------------------------------------------------------
# Claims
# --------------------------------------------------------------------------------------------

CLAIM_COLUMNS = ("id", "document", "section", "topic", "kind", "claim", "stated", "written", "reading", "chapter")


@dataclass(frozen=True)
class Claim:
    """One quantitative claim of an audited document, with its stated figures parsed."""

    id: str
    document: str
    section: str
    topic: str
    kind: str
    claim: str
    stated: str
    reading: str | None
    chapter: str
    values: dict[str, float]
    written: str = ""  # the figures as the document writes them (900GB/s, 6~12个月), see claims.schema.yaml
    file: str = field(default="data/claims.csv", compare=False)
    row: int | None = field(default=None, compare=False)

    def value(self, name: str) -> float:
        """A stated figure by name; a missing one is a :class:`DataKeyError` (a ``KeyError`` too)
        naming the claim's file, row and ``values`` column and the names it carries."""
        if name not in self.values:
            raise DataKeyError(
                self.file,
                f"claim {self.id} states no '{name}', which its check reads; it states: "
                f"{', '.join(self.values) or 'nothing'}",
                self.row,
                "values",
            )
        return self.values[name]


@functools.cache
def _claims(root: Path) -> tuple[Claim, ...]:
    frame = load_table("claims", root)
    out = []
    for rec in frame.to_dict("records"):
        where = f"{rec['_file']}, row {rec['_row']}, column 'values'"
        try:
            values = parse_values(rec["values"], where)
        except ValueError as err:
            raise DataError(rec["_file"], str(err).split(": ", 1)[1], rec["_row"], "values") from None
        claim_values.check(rec, values)  # low <= high, and `stated` agrees with `values`
        fields = {k: rec[k] for k in CLAIM_COLUMNS}
        reading = fields["reading"]
        fields["reading"] = reading if isinstance(reading, str) and reading.strip() else None
        out.append(Claim(**fields, values=values, file=rec["_file"], row=rec["_row"]))
    return tuple(out)


@functools.cache
def _claims_by_id(root: Path) -> dict[str, Claim]:
    return {c.id: c for c in _claims(root)}


@functools.lru_cache(maxsize=16)
def _resolved(path: Path) -> Path:
    return Path(path).resolve()


def claims() -> list[Claim]:
    """Every quantitative claim of both documents, in ledger order."""
    return list(_claims(_resolved(DATA_DIR)))


def claim(claim_id: str) -> Claim:
    """One claim by id."""
    found = _claims_by_id(_resolved(DATA_DIR)).get(claim_id)
    if found is None:
        raise DataKeyError("data/claims.csv", f"no row for claim '{claim_id}', which the book checks")
    return found


# --------------------------------------------------------------------------------------------
# The documents and the Chinese edition's words
# --------------------------------------------------------------------------------------------


def documents() -> pd.DataFrame:
    """The two audited documents: file name, short code, title (as published and in English), parts."""
    return table("documents")


def claims_zh() -> pd.DataFrame:
    """Each claim in our own Chinese (``claim_zh``) with a locator in its document (``locator_zh``),
    and the figures as the document writes them (``written``, from claims.csv; its ``stated``
    where the table has no such column), in ledger order."""
    zh = table("claims_zh")
    claims_table = table("claims")
    figures = claims_table["written"] if "written" in claims_table.columns else claims_table["stated"]
    written = dict(zip(claims_table["id"], figures, strict=True))
    return zh.assign(written=[written.get(i, "") for i in zh["id"]])


def terms_zh(group: str) -> dict[str, str]:
    """The Chinese word of each ledger value of ``group`` (verdict, direction, kind): the one place
    the Chinese edition's words are defined (``data/terms_zh.csv``)."""
    frame = table("terms_zh")
    rows = frame[frame["group"] == group]
    if rows.empty:
        raise KeyError(f"unknown group of terms '{group}'; groups: {', '.join(sorted(set(frame['group'])))}")
    return dict(zip(rows["term"], rows["zh"], strict=True))


def calculator_zh() -> dict[str, str]:
    """The Chinese words of the buy-or-rent page and its calculator, by key (``data/calculator_zh.csv``:
    the keys of the English words in :mod:`analyses.pages.calculator`, inputs' labels, choices, units
    and the documents' workloads); an empty cell is an empty word (a unit printed as nothing)."""
    frame = table("calculator_zh")
    return dict(zip(frame["key"], frame["zh"].fillna("").astype(str), strict=True))


# --------------------------------------------------------------------------------------------
# Reliability chapter (book/reliability.ipynb)
# --------------------------------------------------------------------------------------------


def failure_logs() -> pd.DataFrame:
    """Interruption logs of published training runs: gpus, days, interruptions, kind, bound, source."""
    return table("failure_logs")


def failure_rates() -> pd.DataFrame:
    """Fleet-wide failure rates (per 1000 node-days, job MTTF by job size) from cluster studies."""
    return table("failure_rates")


def goodput_published() -> pd.DataFrame:
    """Goodput (effective training time ratio) published for runs whose interruption count is not."""
    return table("goodput_published")


def failure_causes(run_id: str | None = None) -> pd.DataFrame:
    """Root causes of a logged run's interruptions (all runs when ``run_id`` is None)."""
    frame = table("failure_causes")
    return frame if run_id is None else frame[frame["run_id"] == run_id].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Utilisation chapter (book/utilisation.ipynb)
# --------------------------------------------------------------------------------------------


def mig_profiles(gpu_name: str | None = None) -> pd.DataFrame:
    """MIG profiles per GPU (NVIDIA MIG user guide): slices of compute and memory, instances."""
    frame = table("mig_profiles")
    return frame if gpu_name is None else frame[frame["gpu"] == gpu_name].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Memory chapter (book/memory.ipynb)
# --------------------------------------------------------------------------------------------


def model_shapes() -> pd.DataFrame:
    """Transformer shapes (layers, hidden, heads, ...) with published parameter counts."""
    return table("model_shapes")


def model_shape_names() -> list[str]:
    """Names of the model-shape presets, in table order."""
    return list(model_shapes()["name"])


def model_shape(name: str) -> dict[str, Any]:
    """One model shape as a dict; ``KeyError`` lists the known names."""
    frame = model_shapes()
    hit = frame[frame["name"] == name]
    if hit.empty:
        raise DataKeyError("data/model_shapes.csv", f"unknown model shape '{name}'; known: {', '.join(frame['name'])}")
    return hit.iloc[0].to_dict()


def memory_published() -> pd.DataFrame:
    """Memory figures printed in papers (ZeRO, Korthikanti et al.) with their configurations."""
    return table("memory_published")


def memory_measured() -> pd.DataFrame:
    """Peak GPU memory measured in published runs, with the configuration that produced it."""
    return table("memory_measured")


def memory_frameworks() -> pd.DataFrame:
    """What each training framework keeps on a GPU besides model states (one row per framework)."""
    return table("memory_frameworks")


# --------------------------------------------------------------------------------------------
# Prices (tco chapter)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PriceRange:
    """One dated price or cost input as a range (see ``data/prices.schema.yaml``).

    ``low`` and ``high`` are read as the 5th and 95th percentiles; money is in ``currency``.
    """

    id: str
    item: str
    gpu: str | None
    provider_class: str
    currency: str | None
    unit: str
    low: float
    central: float
    high: float
    date: str
    source: str


def prices() -> pd.DataFrame:
    """The price table: server, rental, energy, hosting, staff and exchange-rate ranges."""
    return table("prices")


def price(price_id: str) -> PriceRange:
    """One price row by id; ``KeyError`` lists the known ids."""
    frame = prices()
    hit = frame[frame["id"] == price_id]
    if hit.empty:
        raise DataKeyError("data/prices.csv", f"unknown price '{price_id}'; known: {', '.join(frame['id'])}")
    r = hit.iloc[0]
    return PriceRange(
        id=r["id"],
        item=r["item"],
        gpu=r["gpu"] or None,
        provider_class=r["provider_class"],
        currency=r["currency"] or None,
        unit=r["unit"],
        low=float(r["low"]),
        central=float(r["central"]),
        high=float(r["high"]),
        date=str(r["date"]),
        source=r["source"],
    )
