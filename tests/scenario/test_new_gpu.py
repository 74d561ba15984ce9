"""Adding a GPU is data only: a row in data/gpus.csv, its InfiniBand cluster, its prices and sources.

The test copies data/ to a temporary folder, adds NVIDIA's H800 there (never to the real data) and
runs the book on the copy in a fresh interpreter (chapters read their parameter lists when they are
imported): the ladder, the planner and the cost chapter find the new generation without a line of
code changing. Rows the real data already has (data/gpus.csv and the InfiniBand cluster list carry
an H800 since issue 21; it has no prices) are kept, and only what is missing is added.

H800 SXM (NVIDIA, "NVIDIA H800 Tensor Core GPU" datasheet, nvidia.cn, 2023; the same Hopper die as
the H100 with NVLink cut to 400 GB/s): tensor figures printed with 2:4 sparsity, BF16 1,979 and FP8
3,958 TFLOPS, so dense 989.5 and 1,979; 80 GB HBM3 at 3.35 TB/s; NVLink 400 GB/s bidirectional,
200 GB/s per direction; up to 700 W. The figures agree with the secondary sources in the project's
search corpus (aiwiki.ai/wiki/nvidia_h800; philisun.com, "NVIDIA H800 vs H100"). The prices are an
illustration for the test (an H100 quote, less the 15-20% those sources report), not a fact the book
uses.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from analyses import data

SOURCE = "nvidia-h800-datasheet"
PRICES = "h800-test-prices"


def _append(path: Path, row: dict[str, str]) -> None:
    """Append ``row`` to the CSV at ``path``, in its header's order (missing columns left empty)."""
    with path.open(encoding="utf-8", newline="") as f:
        header = next(csv.reader(f))
    assert set(row) <= set(header), set(row) - set(header)
    text = path.read_text(encoding="utf-8")
    with path.open("a", encoding="utf-8", newline="") as f:
        if not text.endswith("\n"):
            f.write("\n")
        csv.writer(f, lineterminator="\n").writerow([row.get(c, "") for c in header])


def _has(path: Path, column: str, value: str) -> bool:
    with path.open(encoding="utf-8", newline="") as f:
        return any(row[column] == value for row in csv.DictReader(f))


def add_h800(root: Path) -> None:
    """Add H800 to the data folder ``root``: the datasheet row and the cluster where missing, prices,
    scenario and sources."""
    _append(
        root / "sources" / "hardware.csv",
        {
            "id": SOURCE,
            "title": "NVIDIA H800 Tensor Core GPU datasheet",
            "publisher": "NVIDIA",
            "date": "2023",
            "reference": "https://www.nvidia.cn/data-center/h800/",
            "locator": "spec table, H800 SXM column",
            "conventions": "Tensor figures printed WITH 2:4 sparsity; dense = half (BF16 1,979* -> 989.5, FP8 3,958* -> 1,979); NVLink 400 GB/s bidirectional",
        },
    )
    _append(
        root / "sources" / "tco.csv",
        {
            "id": PRICES,
            "title": "Illustrative H800 prices for the add-a-GPU test",
            "publisher": "this repository",
            "date": "2026",
            "reference": "tests/scenario/test_new_gpu.py",
            "locator": "module docstring",
            "conventions": "USD; an H100 quote less 15-20%",
        },
    )
    if not _has(root / "gpus.csv", "name", "H800"):
        _append_gpu(root)
    if not _has(root / "cluster_configs.csv", "gpu", "H800"):
        _append_cluster(root)
    _append_prices(root)


def _append_gpu(root: Path) -> None:
    _append(
        root / "gpus.csv",
        {
            "name": "H800",
            "full_name": "NVIDIA H800 SXM5 80GB",
            "launch_date": "2023-03-21",
            "launch_year": "2023",
            "peak_tflops_dense_fp32": "67",
            "peak_tflops_dense_tf32": "494.5",
            "peak_tflops_dense_bf16": "989.5",
            "peak_tflops_dense_fp16": "989.5",
            "peak_tflops_dense_fp8": "1979",
            "hbm_type": "HBM3",
            "hbm_capacity_gib": "80",
            "hbm_usable_gib": "80",
            "hbm_bandwidth_tb_per_s": "3.35",
            "nvlink_generation": "4",
            "nvlink_gb_per_s_per_direction": "200",
            "nvlink_domain_gpus": "8",
            "nic_gbit_per_s_per_gpu": "400",
            "tdp_w": "700",
            "mig_max_instances": "7",
            "source": SOURCE,
            "notes": "H100 die with NVLink 400 GB/s bidirectional (200 per direction).",
        },
    )


def _append_cluster(root: Path) -> None:
    _append(
        root / "cluster_configs.csv",
        {
            "name": "H800 + 400G IB",
            "gpu": "H800",
            "nvlink_generation": "4",
            "nvlink_gb_per_s_per_direction": "200",
            "nvlink_achievable_share": "0.88",
            "nic_gbit_per_s_per_gpu": "400",
            "nic_achievable_share": "0.95",
            "network": "infiniband",
            "latency_us": "2",
            "gpus_per_node": "8",
            "source": SOURCE,
            "notes": "As H100 + 400G IB with the H800's NVLink.",
        },
    )


def _append_prices(root: Path) -> None:
    for pid, item, cls, unit, (lo, mid, hi) in (
        ("h800-server", "server_price_per_gpu", "owned", "USD per GPU", ("30000", "33000", "36000")),
        ("h800-rent-neocloud", "rent_per_gpu_hour", "neocloud", "USD per GPU-hour", ("1.6", "2.0", "2.8")),
    ):
        _append(
            root / "prices.csv",
            {
                "id": pid,
                "item": item,
                "gpu": "H800",
                "provider_class": cls,
                "currency": "USD",
                "unit": unit,
                "low": lo,
                "central": mid,
                "high": hi,
                "date": "2026-01",
                "source": PRICES,
                "notes": "illustration for the add-a-GPU test",
            },
        )
    for name, label, unit, lo, hi, pid in (
        ("server_h800_usd_per_gpu", "H800 system price per GPU", "USD per GPU", "5000", "200000", "h800-server"),
        ("rent_h800_usd_per_gpu_hour", "H800 rent (neocloud)", "USD per GPU-hour", "0.2", "40", "h800-rent-neocloud"),
    ):
        _append(
            root / "scenario.csv",
            {
                "name": name,
                "label": label,
                "unit": unit,
                "distribution": "lognormal",
                "min": lo,
                "max": hi,
                "derivation": "price",
                "argument": pid,
                "description": f"{label} (test).",
            },
        )


PROBE = """
import json
from analyses.chapters import plan, tco
from analyses.scenario import costs, generations, planning

res = tco.compute(tco.SPEC.defaults())
run = plan.run(plan.SPEC.validate({"gpus": ["H800"], "model_shape": "llama2-70b", "max_gpus": 1024}))
print(json.dumps({
    "ladder": generations.names(),
    "priced": costs.priced(),
    "planner": planning.supported_gpus(),
    "plan_default": list(plan.SPEC.param("gpus").default),
    "stack": list(res.stack["gpu"]),
    "pflop_day_h800": float(res.stack.set_index("gpu").loc["H800", "owned total"]),
    "recommended": list(run.recommended["gpu"]),
    "nvlink": planning.cluster_config("H800")["nvlink_gb_per_s_per_direction"],
}))
"""


def test_a_gpu_added_to_the_data_reaches_the_planner_and_the_cost_chapter(tmp_path):
    root = tmp_path / "data"
    shutil.copytree(data.DATA_DIR, root)
    added = "H800" not in data.gpu_names()
    add_h800(root)
    assert data.validate(root)["gpus"] == len(data.gpus()) + added  # the copy is valid data

    env = os.environ | {"AUDIT_DATA_DIR": str(root)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=data.REPO_ROOT, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    ladder = found["ladder"]
    assert ladder.index("H100") < ladder.index("H800") < ladder.index("B200")  # launch order (2023)
    assert "H800" in found["priced"] and "H800" in found["planner"] and "H800" in found["plan_default"]
    assert "H800" in found["stack"] and found["pflop_day_h800"] > 0
    assert found["recommended"] == ["H800"] and found["nvlink"] == 200
