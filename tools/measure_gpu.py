"""Measure achieved dense matmul FLOP/s per precision and HBM bandwidth on one GPU.

Optional calibration tool: needs PyTorch with CUDA (not a dependency of the book).
Writes one CSV row per measurement, in the schema of ``data/measurements/gpu_microbench.csv``.

Method
------
* Matmul: C = A @ B with square M = N = K, random normal inputs, 5 warm-ups, then the median of
  ``--repeats`` timed products (CUDA events). FLOP = 2*M*N*K (dense). FP32 runs with TF32 off;
  TF32 with ``torch.backends.cuda.matmul.allow_tf32 = True``; FP8 (e4m3 x e4m3 -> bf16) through
  ``torch._scaled_mm`` with unit scales.
* HBM: device-to-device copy of a 4 GiB buffer (bytes moved = read + write = 2 x size), and a
  read-only reduction (``torch.sum``) of the same buffer (bytes = size). Median of repeats.

Usage: ``python tools/measure_gpu.py --out measurements.csv``
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import statistics
import subprocess

import torch


def _time_ms(fn, repeats: int, warmup: int = 5) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def matmul_tflops(precision: str, size: int, repeats: int) -> float:
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    if precision == "fp8":
        a = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn).t()  # column-major
        one = torch.tensor(1.0, device="cuda")
        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
    else:
        a = torch.randn(size, size, device="cuda", dtype=dtype)
        b = torch.randn(size, size, device="cuda", dtype=dtype)
        fn = lambda: a @ b  # noqa: E731
    ms = _time_ms(fn, repeats)
    return 2.0 * size**3 / (ms / 1e3) / 1e12


def hbm_tb_per_s(kind: str, n_bytes: int, repeats: int) -> float:
    x = torch.empty(n_bytes // 4, device="cuda", dtype=torch.float32).normal_()
    if kind == "copy":
        y = torch.empty_like(x)
        ms = _time_ms(lambda: y.copy_(x), repeats)
        moved = 2 * n_bytes
    else:
        ms = _time_ms(lambda: torch.sum(x), repeats)
        moved = n_bytes
    return moved / (ms / 1e3) / 1e12


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    name = torch.cuda.get_device_name(0)
    driver = subprocess.run(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True
    ).stdout.strip()
    env = f"torch {torch.__version__}; cuda {torch.version.cuda}; driver {driver}; device {name}"
    today = dt.date.today().isoformat()
    rows = []
    for precision in ["fp32", "tf32", "bf16", "fp16", "fp8"]:
        for size in [4096, 8192, 16384]:
            value = matmul_tflops(precision, size, args.repeats)
            rows.append(dict(quantity="matmul", precision=precision, size=size, value=round(value, 1), unit="TFLOP/s"))
            print(rows[-1], flush=True)
    for kind in ["copy", "read"]:
        value = hbm_tb_per_s(kind, 4 * 2**30, args.repeats)
        rows.append(dict(quantity=f"hbm_{kind}", precision="", size=4 * 2**30, value=round(value, 3), unit="TB/s"))
        print(rows[-1], flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(
            f, fieldnames=["gpu", "quantity", "precision", "size", "value", "unit", "repeats", "date", "environment"]
        )
        w.writeheader()
        for r in rows:
            w.writerow(dict(gpu=name, repeats=args.repeats, date=today, environment=env, **r))


if __name__ == "__main__":
    main()
