"""The data module: every table validates, every row is sourced, and faults name file, row, column."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from analyses import data, scenario
from analyses.data import DataError


def test_every_table_validates_and_is_sourced():
    counts = data.validate()
    assert counts["gpus"] >= 7 and counts["models"] >= 20 and counts["claims"] >= 60
    for name in data.table_names():
        schema = data.schema(name)
        if not schema.sourced:
            continue
        frame = data.table(name)
        src_cols = [c.name for c in schema.columns if c.type in ("source", "sources")]
        if name == "scenario":  # derived assumptions carry the sources of the rows they are derived from
            assert all(a.source for a in scenario.assumptions().values())
            continue
        assert frame[src_cols].notna().all(axis=None), name


def test_sources_state_date_and_conventions():
    frame = data.sources()
    assert frame["date"].str.match(r"^\d{4}").all()
    assert (frame["conventions"].str.len() > 0).all()


def test_gpu_accessor_converts_to_si_units():
    a100 = data.gpu("A100")
    assert a100.peak_flops("bf16") == pytest.approx(312e12)  # A100 datasheet, dense BF16
    assert a100.nvlink_bytes_per_s_per_direction == pytest.approx(300e9)  # 600 GB/s bidirectional
    assert a100.hbm_bytes == pytest.approx(80 * 2**30)
    with pytest.raises(ValueError, match="no fp8"):
        a100.peak_flops("fp8")
    with pytest.raises(KeyError, match="known: "):
        data.gpu("Z999")


def test_b300_dense_bf16_and_fp8_equal_b200():
    # Blackwell Ultra gains dense FP4 only; BF16/FP8 tensor rates match B200 (Blackwell Ultra datasheet).
    assert data.gpu("B300").peak_flops("bf16") == data.gpu("B200").peak_flops("bf16")
    assert data.gpu("B300").peak_flops("fp8") == data.gpu("B200").peak_flops("fp8")
    assert data.gpu("B300").peak_flops("fp4") > data.gpu("B200").peak_flops("fp4")


def test_variants_name_a_listed_gpu_and_share_its_die_rates():
    frame = data.gpus().set_index("name")
    variants = frame["variant_of"].dropna()
    variants = variants[variants != ""]
    assert {"H200", "GB200", "GB300"} <= set(variants.index)
    for name, base in variants.items():
        assert base in frame.index and base != name, name
        # an export, memory or packaging variant has the same precisions as the die it shares
        assert data.gpu(name).peak_flops_dense.keys() == data.gpu(base).peak_flops_dense.keys(), name


def test_gb200_rates_are_the_nvl72_rack_totals_over_72_gpus():
    # GB200 NVL72 page: FP16/BF16 360 PF, FP8 720 PF, FP4 1,440 PF printed with 2:4 sparsity for 72 GPUs
    gb200 = data.gpu("GB200")
    for precision, rack_sparse_pflops in (("bf16", 360), ("fp8", 720), ("fp4", 1440)):
        assert gb200.peak_flops(precision) == pytest.approx(rack_sparse_pflops * 1e15 / 2 / 72)
    assert gb200.nvlink_domain_gpus == 72
    assert gb200.hbm_bytes_per_s == pytest.approx(576e12 / 72)  # 576 TB/s per rack
    # clocked above HGX B200 (1.2 kW vs 1 kW): same die, higher dense BF16 rate
    assert gb200.peak_flops("bf16") > data.gpu("B200").peak_flops("bf16")


def test_h800_is_an_h100_with_nvlink_cut_to_400_gb_per_s_bidirectional():
    h800, h100 = data.gpu("H800"), data.gpu("H100")
    assert h800.peak_flops_dense == h100.peak_flops_dense and h800.hbm_bytes == h100.hbm_bytes
    assert h800.nvlink_bytes_per_s_per_direction == pytest.approx(400e9 / 2)  # 400 GB/s bidirectional
    assert h800.nic_bytes_per_s_per_gpu == pytest.approx(50e9)  # DeepSeek-V3: InfiniBand 50 GB/s per GPU


def test_disagreements_mark_exactly_the_used_value():
    frame = data.gpu_spec_disagreements()
    gpus = data.gpus().set_index("name")
    for (gpu, field), group in frame.groupby(["gpu", "field"]):
        used = group[group["used"]]
        assert len(used) == 1, (gpu, field)
        if field in gpus.columns:
            assert gpus.loc[gpu, field] == pytest.approx(used["value"].iloc[0]), (gpu, field)


def test_claim_values_parse():
    c = data.claim("000-1-param-growth-18mo")
    assert c.value("period_months") == 18
    with pytest.raises(KeyError, match="states no"):
        c.value("nope")


def _rewrite(path: Path, edit) -> None:
    rows = list(csv.reader(path.open()))
    edit(rows)
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)


def _fault(data_dir: Path) -> DataError:
    with pytest.raises(DataError) as info:
        data.validate(data_dir)
    return info.value


def test_missing_column(data_copy):
    _rewrite(data_copy / "gpus.csv", lambda rows: [r.pop(3) for r in rows])
    err = _fault(data_copy)
    assert (err.file, err.row, err.column) == ("data/gpus.csv", 1, "launch_year")


def test_unit_typo_in_allowed_values(data_copy):
    path = data_copy / "measurements" / "gpu_microbench_h200.csv"
    _rewrite(path, lambda rows: rows[2].__setitem__(rows[0].index("unit"), "TFLOPs/s"))
    err = _fault(data_copy)
    assert err.row == 3 and err.column == "unit" and "allowed" in str(err)


def test_row_without_source(data_copy):
    _rewrite(data_copy / "models.csv", lambda rows: rows[4].__setitem__(rows[0].index("source"), ""))
    err = _fault(data_copy)
    assert (err.file, err.row, err.column) == ("data/models.csv", 5, "source")


def test_unknown_source_id(data_copy):
    _rewrite(data_copy / "gpus.csv", lambda rows: rows[2].__setitem__(rows[0].index("source"), "no-such-source"))
    err = _fault(data_copy)
    assert err.row == 3 and err.column == "source" and "no-such-source" in str(err)


def test_duplicate_id(data_copy):
    _rewrite(data_copy / "gpus.csv", lambda rows: rows.append(list(rows[1])))
    err = _fault(data_copy)
    assert err.column == "name" and "duplicate" in str(err)


def test_non_numeric_value(data_copy):
    _rewrite(data_copy / "gpus.csv", lambda rows: rows[3].__setitem__(rows[0].index("tdp_w"), "700W"))
    err = _fault(data_copy)
    assert (err.row, err.column) == (4, "tdp_w") and "not a valid float" in str(err)


def test_value_out_of_range(data_copy):
    _rewrite(data_copy / "gpus.csv", lambda rows: rows[3].__setitem__(rows[0].index("mig_max_instances"), "9"))
    err = _fault(data_copy)
    assert err.column == "mig_max_instances" and "maximum" in str(err)


# Faults that used to escape as pandas errors or parameter errors, each now one line naming file,
# row and column.


def _one_line(err: DataError) -> str:
    message = str(err)
    assert "\n" not in message and message.startswith(err.file)
    return message


def test_empty_file(data_copy):
    (data_copy / "prices.csv").write_text("")
    err = _fault(data_copy)
    assert (err.file, err.row) == ("data/prices.csv", 1) and "empty" in _one_line(err)


def test_header_only_table(data_copy):
    path = data_copy / "failure_logs.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    err = _fault(data_copy)
    assert (err.file, err.row) == ("data/failure_logs.csv", 2) and "needs at least 1" in _one_line(err)


def test_extra_field(data_copy):
    path = data_copy / "prices.csv"
    lines = path.read_text().splitlines()
    lines[3] += ",surplus"
    path.write_text("\n".join(lines) + "\n")
    err = _fault(data_copy)
    assert (err.file, err.row, err.column) == ("data/prices.csv", 4, "notes")
    assert "fields but the header names" in _one_line(err)


def test_missing_field(data_copy):
    _rewrite(data_copy / "reference_servers.csv", lambda rows: rows[1].pop())
    err = _fault(data_copy)
    assert (err.row, err.column) == (2, "notes") and "is missing" in _one_line(err)


def test_zero_peak_is_rejected(data_copy):
    _rewrite(data_copy / "gpus.csv", lambda rows: rows[3].__setitem__(rows[0].index("peak_tflops_dense_bf16"), "0"))
    err = _fault(data_copy)
    assert (err.file, err.row, err.column) == ("data/gpus.csv", 4, "peak_tflops_dense_bf16")
    assert "must be above 0" in _one_line(err)


def test_non_utf8_bytes(data_copy):
    path = data_copy / "gpus.csv"
    lines = path.read_bytes().split(b"\n")
    cells = lines[2].split(b",")
    cells[1] = b"NVIDIA \xe9dition"  # latin-1, not UTF-8
    lines[2] = b",".join(cells)
    path.write_bytes(b"\n".join(lines))
    err = _fault(data_copy)
    assert (err.file, err.row, err.column) == ("data/gpus.csv", 3, "full_name") and "0xe9" in _one_line(err)


def test_broken_quoting(data_copy):
    path = data_copy / "prices.csv"
    path.write_text(path.read_text() + 'x,"unterminated\n')
    err = _fault(data_copy)
    assert err.file == "data/prices.csv" and "not valid CSV" in _one_line(err)


def test_ordered_columns(data_copy):
    def swap(rows):
        low, high = rows[0].index("low"), rows[0].index("high")
        rows[2][low], rows[2][high] = rows[2][high], rows[2][low]

    _rewrite(data_copy / "prices.csv", swap)
    err = _fault(data_copy)
    assert (err.row, err.column) == (3, "central") and "low <= central <= high" in _one_line(err)


def test_repeated_header_column(data_copy):
    path = data_copy / "reference_servers.csv"
    lines = path.read_text().splitlines()
    first = lines[0].split(",")[0]
    lines[0] = lines[0] + "," + first
    path.write_text("\n".join(line + ("," if i else "") for i, line in enumerate(lines)) + "\n")
    err = _fault(data_copy)
    assert (err.row, err.column) == (1, first) and "more than once" in _one_line(err)


def test_malformed_schema(data_copy):
    (data_copy / "gpus.schema.yaml").write_text("columns: [\n")
    err = _fault(data_copy)
    assert err.file == "data/gpus.schema.yaml" and "not valid YAML" in _one_line(err)


def test_byte_order_mark_is_accepted(data_copy):
    path = data_copy / "reference_servers.csv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert data.validate(data_copy)["reference_servers"] == len(data.table("reference_servers"))


# --------------------------------------------------------------------------------------------
# Published runs (issue 21): what a model needs to predict each run, and conversions to one basis
# --------------------------------------------------------------------------------------------


def _given(value) -> bool:
    return value == value and value is not None and value != ""


def test_published_runs_cover_the_sizes_gpus_and_scales_issue_21_asks_for():
    runs = data.published_runs()
    assert len(runs) >= 15 and set(runs["arch"]) == {"dense", "moe"}
    gpus = set(runs["gpu"])
    assert {"A100"} <= gpus and gpus & {"H100", "H800"} and gpus & {"B200", "GB200", "GB300"}
    assert runs["n_gpus"].min() <= 8 and runs["n_gpus"].max() >= 16384
    assert set(runs["gpu"]) <= set(data.gpu_names())


def test_published_runs_6n_columns_follow_from_tokens_and_the_datasheet_peak():
    for r in data.published_runs().to_dict("records"):
        if not _given(r["tokens_per_s_per_gpu"]):
            assert not _given(r["tflops_per_gpu_6n"]) and not _given(r["mfu_6n"]), r["id"]
            continue
        tflops = 6 * r["params_active"] * r["tokens_per_s_per_gpu"] / 1e12
        assert r["tflops_per_gpu_6n"] == pytest.approx(tflops, abs=0.051), r["id"]
        peak = data.gpu(r["gpu"]).peak_flops(r["precision"]) / 1e12
        assert r["mfu_6n"] == pytest.approx(tflops / peak, abs=0.00051), r["id"]


def test_megatron_eq3_rows_convert_through_the_papers_own_formula():
    # Narayanan et al. 2021 Eq. 3: F = 96 B s l h^2 (1 + s/6h + V/16lh) per iteration, recomputation included
    rows = [r for r in data.published_runs().to_dict("records") if r["flop_basis"] == "megatron-eq3"]
    assert len(rows) >= 20
    for r in rows:
        n, h, s, v = r["n_layers"], r["d_model"], r["seq_len"], r["vocab"]
        per_token = 96 * n * h**2 * (1 + s / (6 * h) + v / (16 * n * h))
        assert r["tokens_per_s_per_gpu"] == pytest.approx(r["reported_tflops_per_gpu"] * 1e12 / per_token, abs=0.006), (
            r["id"]
        )
    # on the 6N basis the 1T row is about 1/1.35 of its printed Eq. 3 figure (issue 21: Eq. 3 is ~1.33-1.35 x 6N)
    one_t = next(r for r in rows if r["id"] == "meg21-t1-1008b-3072")
    assert 0.72 < one_t["tflops_per_gpu_6n"] / one_t["reported_tflops_per_gpu"] < 0.76


def test_published_run_layouts_multiply_to_the_gpu_count_and_divide_the_batch():
    checked = 0
    for r in data.published_runs().to_dict("records"):
        dims = [r[k] for k in ("tp", "pp", "cp", "dp")]
        if all(_given(d) for d in dims) and _given(r["n_gpus"]):
            assert int(dims[0] * dims[1] * dims[2] * dims[3]) == r["n_gpus"], r["id"]
            checked += 1
        if all(_given(r[k]) for k in ("micro_batch_seqs", "dp", "global_batch_seqs")):
            assert r["global_batch_seqs"] % (r["micro_batch_seqs"] * r["dp"]) == 0, r["id"]
    assert checked >= 50


def test_published_run_parameters_and_experts_are_consistent():
    for r in data.published_runs().to_dict("records"):
        if r["arch"] == "dense":
            assert r["params_active"] == r["params_total"], r["id"]
        else:
            assert r["params_active"] < r["params_total"] and r["experts_active"] < r["n_experts"], r["id"]


def test_published_runs_agree_with_the_scaling_benchmark_rows_they_name():
    bench = data.table("scaling_benchmarks").set_index("id")
    linked = data.published_runs()
    linked = linked[linked["scaling_benchmarks_id"].fillna("") != ""]
    assert len(linked) >= 8
    for r in linked.to_dict("records"):
        b = bench.loc[r["scaling_benchmarks_id"]]
        assert (b["gpu"], b["n_gpus"], b["precision"] if b["precision"] != "bf16" else "16") == (
            r["gpu"],
            r["n_gpus"],
            r["precision"] if r["precision"] not in ("bf16", "fp16") else "16",
        ), r["id"]
        assert (b["tp"], b["pp"], b["global_batch_seqs"]) == (r["tp"], r["pp"], r["global_batch_seqs"]), r["id"]
        assert b["metric"] == "model_tflops_per_gpu" and b["value"] == pytest.approx(r["reported_tflops_per_gpu"]), r[
            "id"
        ]


def test_llama3_table4_rows_as_printed():
    runs = data.published_runs().set_index("id")
    row = runs.loc["llama3-405b-8192-cp1"]
    assert (row["n_gpus"], row["tp"], row["cp"], row["pp"], row["dp"]) == (8192, 8, 1, 16, 64)
    assert (row["reported_tflops_per_gpu"], row["reported_mfu"]) == (430, 0.43)
    assert row["global_batch_seqs"] * row["seq_len"] == 32 * 64 * 8192  # 'Batch size/DP' 32 x DP 64 sequences of 8,192


def test_measured_memory_rows_fit_their_gpu_and_match_the_run_they_name():
    frame = data.memory_measured()
    assert len(frame) >= 4 and frame["params_total"].nunique() >= 3
    runs = data.published_runs().set_index("id")
    for r in frame.to_dict("records"):
        assert r["gpu"] in data.gpu_names(), r["id"]
        assert r["dp"] * r["tp"] * r["pp"] * r["cp"] == r["n_gpus"], r["id"]
        assert r["measured_gib"] <= r["gpu_memory_gib"], r["id"]  # a peak that fits the device it ran on
        if isinstance(r["run_id"], str) and r["run_id"]:
            run = runs.loc[r["run_id"]]
            assert (run["gpu"], run["n_gpus"], run["seq_len"], run["tp"], run["pp"], run["cp"], run["dp"]) == (
                r["gpu"],
                r["n_gpus"],
                r["seq_len"],
                r["tp"],
                r["pp"],
                r["cp"],
                r["dp"],
            ), r["id"]
    # torchtitan Table 1 and 3: the same 8B FSDP recipe takes 82.4 GiB on 8 GPUs and 67.0 GiB sharded over 128
    by_id = frame.set_index("id")["measured_gib"]
    assert (by_id["torchtitan-mem-8b-8-fsdp"], by_id["torchtitan-mem-8b-128-fsdp"]) == (82.4, 67.0)


def test_failure_logs_cover_both_operations_modes_and_four_runs():
    logs = data.failure_logs()
    assert {"automated", "manual"} <= set(logs["operations"])
    runs = {row.split(" (")[0].split(" pre-training")[0].split(",")[0] for row in logs["run"]}
    assert len(runs) >= 4, runs
    # a recovery time is only read together with how it bounds the source
    assert (logs["recovery_minutes"].notna() == logs["recovery_bound"].fillna("").ne("")).all()
    # OPT-175B chronicles: '40+ restarts' between the 17 Nov and 3 Dec 2021 updates on 992 GPUs
    opt = logs.set_index("id").loc["opt-175b-chronicle-27pct"]
    assert (opt["gpus"], opt["days"], opt["interruptions"], opt["bound"]) == (992, 16, 40, "lower")


def test_fleet_failure_rates_as_transcribed_and_shorter_for_larger_jobs():
    rates = data.failure_rates().set_index("id")
    # Kokolis et al. (Meta RSC): 6.50 and 2.34 failures per 1000 node-days; 1024-GPU jobs MTTF 7.9 h, 16k projected 1.8 h
    assert list(
        rates.loc[["rsc1-node-failures", "rsc2-node-failures", "rsc-mttf-1024", "rsc-mttf-16384-projected"], "value"]
    ) == [6.50, 2.34, 7.9, 1.8]
    mttf = rates[rates["metric"] == "job_mttf_hours"].sort_values("job_gpus")
    assert mttf["value"].is_monotonic_decreasing  # a larger synchronous job fails more often
    assert (rates.loc[rates["metric"] == "job_mttf_hours", "job_gpus"].notna()).all()
    assert set(rates["gpu"]) <= set(data.gpu_names())


def test_rack_scale_system_prices_are_the_rack_over_72_gpus():
    # Ornn (2026): GB200 NVL72 about 3.0-3.9 million USD, GB300 NVL72 about 3.7-5.0+ million USD, 72 GPUs each
    for gpu, low_musd, high_musd in (("GB200", 3.0, 3.9), ("GB300", 3.7, 5.0)):
        p = data.price(f"{gpu.lower()}-server")
        assert (p.gpu, p.currency) == (gpu, "USD")
        assert p.low == pytest.approx(low_musd * 1e6 / 72, rel=0.002) and p.high == pytest.approx(
            high_musd * 1e6 / 72, rel=0.002
        )
    h200 = data.price("h200-rent-neocloud")
    assert h200.low < data.price("h200-rent-hyperscaler").central and h200.date == "2026-05"
