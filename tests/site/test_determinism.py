"""Every committed notebook is what a fresh run gives, on any machine: nbval over the whole book,
run once, on numpy's baseline code path with every float of data/ moved by one ulp.

This is ``make test``'s run of the notebooks (``book/`` is not one of pytest's test paths: the
book ran twice before, once as it was built and once perturbed). The committed outputs come from
the build, on the machine's best numpy code path (AVX-512 where the CPU has it) and the committed
data; here the kernels run with numpy's vectorised kernels off (AVX-512 and AVX2 disabled: the
baseline SSE path, where reductions sum in another order) and every float of data/ one ulp away.
A stale notebook fails here as it fails plain nbval, and so does a page that depends on the code
path or on the inputs' last bits (both would have to cancel each other exactly to pass). nbval
(with ``make test``'s settings: no sanitising) runs in subprocesses on two halves of the book at
once, with ``NPY_DISABLE_CPU_FEATURES`` and ``AUDIT_DATA_DIR`` set in the environment the kernels
inherit. ``pytest book/<chapter>.ipynb`` runs one notebook plainly.
"""

from __future__ import annotations

import concurrent.futures
import csv
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

from analyses import data
from analyses.data import REPO_ROOT
from analyses.site import build

# numpy 2.4's names for the x86 feature groups (numpy.show_runtime() lists them as "found").
AVX512 = ("X86_V4", "AVX512_ICL", "AVX512_SPR")
AVX2 = ("X86_V3",)  # AVX2, FMA3, BMI: the level below X86_V4


def _runtime(env: dict[str, str]) -> dict[str, list[str]]:
    """numpy's SIMD extensions (baseline, found, not_found) in a fresh interpreter with ``env``."""
    code = (
        "import json, numpy, numpy._core._multiarray_umath as m\n"
        "print(json.dumps({'found': [k for k, v in m.__cpu_features__.items() if v], "
        "'dispatch': list(m.__cpu_dispatch__), 'baseline': list(m.__cpu_baseline__)}))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES", "AUDIT_DATA_DIR")}
    return env | extra


def _disable(features: tuple[str, ...]) -> str:
    """The dispatched features of ``features`` this CPU has (numpy refuses to disable others)."""
    found = set(_runtime(_env())["found"])
    return " ".join(f for f in features if f in found)


def test_feature_names_disable_the_code_paths():
    """The names the variants use are the ones numpy 2.4 knows: disabling them removes them."""
    default = _runtime(_env())
    for features in (AVX512, AVX512 + AVX2):
        names = [f for f in features if f in default["found"]]
        if not names:
            continue  # a CPU without these extensions: nothing to disable
        after = _runtime(_env(NPY_DISABLE_CPU_FEATURES=" ".join(names)))
        assert not set(names) & set(after["found"]), (names, after["found"])
        assert set(names) <= set(default["dispatch"])


def _halves() -> list[list[str]]:
    """The book's notebooks in two groups of about equal run time (by committed source size)."""
    paths = sorted(build.notebooks(), key=lambda p: -p.stat().st_size)
    groups: list[list[str]] = [[], []]
    sizes = [0, 0]
    for p in paths:
        i = sizes.index(min(sizes))
        groups[i].append(str(p.relative_to(REPO_ROOT)))
        sizes[i] += p.stat().st_size
    return groups


def _nbval(env: dict[str, str]) -> None:
    """nbval over every notebook (two pytest processes at once) under ``env``; fails with the diff."""

    def one(group: list[str]) -> subprocess.CompletedProcess:
        # a kernel may take over a minute to start while the rest of the suite runs beside it on 2 cores
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--nbval-kernel-startup-timeout=300", *group]
        return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, _halves()))
    failed = [r.stdout[-3000:] for r in results if r.returncode != 0]
    assert not failed, "\n".join(failed)


def _features_off(features: tuple[str, ...]) -> dict[str, str]:
    disabled = _disable(features)
    return {"NPY_DISABLE_CPU_FEATURES": disabled} if disabled else {}


def _one_ulp(text: str, lo: float | None, hi: float | None) -> str:
    """``text`` (a float) moved by one ulp, upward unless that leaves the column's range."""
    value = float(text)
    moved = math.nextafter(value, math.inf)
    if (hi is not None and moved > hi) or value == 0.0:
        moved = math.nextafter(value, -math.inf) if value != 0.0 else value
    if lo is not None and moved < lo:
        moved = value
    return repr(moved)


def perturbed_copy(target: Path) -> int:
    """A copy of data/ at ``target`` with every float cell (and every stated figure of
    claims.csv's ``values``) moved by one ulp; returns how many numbers were moved."""
    shutil.copytree(data.DATA_DIR, target)
    moved = 0
    for name in data.table_names(target):
        schema = data.schema(name, target)
        floats = {c.name: c for c in schema.columns if c.type == "float"}
        single, folder = target / f"{name}.csv", target / name
        files = [single] if single.exists() else sorted(folder.glob("*.csv"))
        for path in files:
            with path.open(newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
            header = rows[0]
            for row in rows[1:]:
                for i, col in enumerate(header):
                    if i >= len(row) or not row[i].strip():
                        continue
                    if col in floats:
                        c = floats[col]
                        row[i] = _one_ulp(row[i], c.min, c.max)
                        moved += 1
                    elif name == "claims" and col == "values":
                        parts = []
                        for part in row[i].split(";"):
                            key, _, number = part.partition("=")
                            parts.append(f"{key.strip()}={_one_ulp(number, None, None)}" if number.strip() else part)
                            moved += bool(number.strip())
                        row[i] = "; ".join(parts)
            with path.open("w", newline="", encoding="utf-8") as f:
                csv.writer(f, lineterminator="\n").writerows(rows)
    return moved


def test_every_notebook_is_what_a_fresh_run_gives_on_another_code_path_with_moved_inputs(tmp_path):
    """nbval over the book, every float of data/ one ulp away, numpy's baseline path (AVX-512 and
    AVX2 off)."""
    target = tmp_path / "data"
    moved = perturbed_copy(target)
    data.clear_cache()
    try:
        assert moved > 500  # every float of every table, not a handful
        assert data.validate(target) == data.validate()  # still valid, same tables and rows
        gpus = data.table("gpus", target)
        assert gpus["hbm_capacity_gib"].iloc[0] != data.gpus()["hbm_capacity_gib"].iloc[0]
        stated = [data.parse_values(r["values"]) for r in csv.DictReader((data.DATA_DIR / "claims.csv").open())]
        moved_stated = [data.parse_values(r["values"]) for r in csv.DictReader((target / "claims.csv").open())]
        for before, after in zip(stated, moved_stated, strict=True):
            # every figure one ulp up, a zero kept (the new 001 §2.3 claim states a 0% loss)
            assert after == {k: float(_one_ulp(repr(v), None, None)) for k, v in before.items()}
    finally:
        data.clear_cache()
    _nbval(_env(AUDIT_DATA_DIR=str(target), **_features_off(AVX512 + AVX2)))
