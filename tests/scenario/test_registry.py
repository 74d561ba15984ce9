"""The registry of derived assumptions: each derivation declares what it reads, rows derive in
dependency order, and a cycle or an unknown input is an error that names the rows."""

from __future__ import annotations

import pytest

from analyses import data, scenario
from analyses.scenario import derivations, failures, registry, speedups


def _rows(**reads: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Rows named as the keys, each derived by a test derivation reading the names given."""
    return {name: {"name": name, "derivation": f"test-reads-{name}"} for name in reads}


@pytest.fixture
def reading(monkeypatch):
    """Register, for this test only, one derivation per row that reads the given rows."""

    def register(**reads: tuple[str, ...]) -> dict[str, dict[str, str]]:
        for name, names in reads.items():
            monkeypatch.setitem(
                registry.REGISTRY,
                f"test-reads-{name}",
                registry.Derivation(f"test-reads-{name}", lambda row, inputs: None, lambda row, n=names: n),
            )
        return _rows(**reads)

    return register


def test_rows_derive_after_what_they_read_in_table_order_where_free(reading):
    rows = reading(a=("c",), b=(), c=("b",), d=())
    assert registry.order(rows) == ["b", "d", "c", "a"]


def test_a_cycle_between_rows_is_an_error_that_names_it(reading):
    rows = reading(a=("b",), b=("c",), c=("a",))
    with pytest.raises(data.DataError, match=r"derivations read each other in a cycle: (\w) -> \w -> \w -> \1"):
        registry.order(rows)


def test_a_derivation_reading_no_assumption_is_named(reading):
    rows = reading(a=("nowhere",))
    with pytest.raises(data.DataError, match="reads 'nowhere', which is no assumption"):
        registry.order(rows)


def test_an_unknown_derivation_is_named():
    with pytest.raises(data.DataError, match="unknown derivation 'guess'"):
        registry.of({"name": "x", "derivation": "guess"})


def test_every_derivation_of_the_table_is_registered_with_what_it_reads():
    kinds = {a.derivation for a in scenario.assumptions().values()}
    assert kinds <= set(registry.REGISTRY)
    assert registry.REGISTRY["goodput"].reads({}) == failures.GOODPUT_INPUTS
    assert registry.REGISTRY["model_speedup"].reads({}) == speedups.READS
    assert registry.REGISTRY["goodput"].follows and not registry.REGISTRY["model_speedup"].follows


def test_the_speed_up_derives_after_the_assumptions_its_model_reads():
    rows = {row["name"]: row for row in data.table("scenario").to_dict("records")}
    names = registry.order(rows)
    speedup = names.index("speedup_b300_a100")
    assert all(names.index(r) < speedup for r in speedups.READS)
    assert names.index("goodput") > max(names.index(r) for r in failures.GOODPUT_INPUTS)


def test_a_derived_goodput_follows_a_moved_input_and_inherits_its_inputs_sources():
    base = scenario.ranges()
    moved = scenario.ranges({"restart_s": 4 * base["restart_s"].central})
    assert moved["goodput"].central < base["goodput"].central
    assert scenario.ranges({"restart_s": 4 * base["restart_s"].central, "goodput": 0.9})["goodput"].central == 0.9
    assert scenario.ranges({"speedup_b300_a100": 5.0})["goodput"] == base["goodput"]
    sources = set(scenario.assumption("goodput").source.split(";"))
    assert sources == {s for n in failures.GOODPUT_INPUTS for s in scenario.assumption(n).source.split(";") if s}


def test_the_mfu_derivation_reads_the_published_runs():
    a100 = derivations.published_mfu().query("gpu == 'A100' and precision == 'bf16'")
    assert len(a100) >= 3
    assert a100["mfu"].min() <= scenario.assumption("mfu_a100_bf16").central <= a100["mfu"].max()
