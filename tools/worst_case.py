"""Run every chapter at the heaviest parameters its spec allows and print wall time and peak memory.

Each case runs ``python -m analyses run <chapter> -p ...`` (validation, kernel, export: what a
reader waits for) in a fresh process; CPU time is that of the process and its kernel (wall time
on a loaded machine is longer), peak memory is the largest resident set of that process or
its kernel. Results go to ``runs/`` (ignored by git). The targets of issue 14: under a minute and under 2 GB for the worst allowed run.

    .venv/bin/python tools/worst_case.py            # every case
    .venv/bin/python tools/worst_case.py tco plan   # some chapters
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The heaviest allowed settings, found from each chapter's sizes and its rules' caps.
CASES: list[tuple[str, dict]] = [
    ("reliability", {"checkpoint_s": 0.1}),  # most Monte Carlo segments within the cap
    ("reliability", {"gpus": 48_000}),  # most Monte Carlo failures within the cap
    ("utilisation", {"snapshots": 1000, "mean_jobs": 50}),  # most snapshots within the cap
    ("utilisation", {"snapshots": 100, "mean_jobs": 500}),  # largest snapshots within the cap
    ("tco", {"mc_samples": 200_000}),
    ("plan", {"mc_samples": 200_000, "max_gpus": 131_072}),
    (
        "memory",
        {
            "models": "[bert-base, llama2-7b, llama2-13b, korthikanti-22b, llama2-70b, llama-65b, illustrative-100b, "
            "megatron-145b, gpt3-175b, megatron-310b, llama31-405b, megatron-530b, megatron-1t, megatron-1.7b, "
            "megatron-7.5b, megatron-39.1b]",
            "gpus": "[P100, V100, A100, H100, H200, B200, B300, GB300]",
        },
    ),
    ("scaling-efficiency", {"gpus_min": 1, "gpus_max": 131_072}),
    ("experiments", {"sweep_gpus": 131_072, "sh_eta": 2, "sh_min_budget": 0.001, "efficiency_source": "model"}),
    ("scaling-gap", {"window_start": 2010, "window_end": 2026}),
    ("throughput", {"n_gpus": 100_000}),
]


# Runs the command and prints the peak resident set of it and its kernel (its waited-for children).
_MEASURE = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(rc.stderr)\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(rc.returncode, r.ru_maxrss, r.ru_utime + r.ru_stime)\n"
)


def run(chapter: str, params: dict) -> dict:
    args = [sys.executable, "-m", "analyses", "run", chapter]
    for name, value in params.items():
        args += ["-p", name, str(value)]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *args], cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    rc, peak_kib, cpu = proc.stdout.split()[-3:]
    rc, peak_kib, cpu_s = int(rc), int(peak_kib), float(cpu)
    tail = (proc.stderr.strip().splitlines() or [""])[-1]
    return {
        "chapter": chapter,
        "params": params,
        "rc": rc,
        "s": seconds,
        "cpu_s": cpu_s,
        "peak_gib": peak_kib / 2**20,
        "err": tail,
    }


def main(argv: list[str]) -> int:
    chosen = [c for c in CASES if not argv or c[0] in argv]
    worst_s = worst_cpu = worst_gib = 0.0
    for chapter, params in chosen:
        r = run(chapter, params)
        worst_s, worst_cpu, worst_gib = max(worst_s, r["s"]), max(worst_cpu, r["cpu_s"]), max(worst_gib, r["peak_gib"])
        status = "ok" if r["rc"] == 0 else f"exit {r['rc']}: {r['err']}"
        line = f"{chapter:<20} {r['s']:6.1f} s wall {r['cpu_s']:6.1f} s CPU {r['peak_gib']:5.2f} GiB  {status}"
        print(f"{line}  {json.dumps(params)[:70]}", flush=True)
    print(f"worst: {worst_s:.1f} s wall, {worst_cpu:.1f} s CPU, {worst_gib:.2f} GiB (targets: 60 s, 2 GiB)")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall time grows with it)")
    return 0 if worst_cpu < 60 and worst_gib < 2 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
