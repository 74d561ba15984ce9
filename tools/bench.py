"""Benchmarks of the book's build and models, with targets and ratios against other tools.

Usage: ``make bench`` or ``.venv/bin/python tools/bench.py [--repeat 3 | --quick] [--with-tests]
[--record notes/bench.md]``; ``--commands-only [--against ../main]`` times the ``verdicts`` and ``plan``
commands alone (against another checkout, run alternately, for a ratio); ``--tests-only`` times ``make test`` alone (wall and CPU seconds, and the
load average the machine had); ``--chapters-only`` the chapters' compute() alone. Every figure is
the median of ``--repeat`` runs.

What it measures, all on this machine in one run:

- build: a clean full build (``python -m analyses build --force``: every chapter, then Sphinx) in a
  temporary copy of the working tree (uncommitted work included; ``_build``, ``.venv``, ``runs``
  and caches left out) with this project's interpreter; a no-op rebuild; the whole ledger from the
  command line (``python -m analyses verdicts --format csv``); one chapter rerun with a new
  parameter (``python -m analyses run``); optionally the test suite (``make test``'s commands, in
  the copy: a fresh clone, so the book is built once by the tests); and the same notebooks executed
  by Jupyter Book itself (``execute_notebooks: force``) for a ratio;
- models: memory per GPU, step time and a cost Monte Carlo, each on 100,000 configurations (draws),
  in seconds and µs per configuration, and llm-analysis / MLSys·im per configuration for ratios
  (skipped with a message when they are not installed: ``pip install -e '.[bench]'``);
- chapters: each chapter's ``compute()`` at its defaults, and the whole ledger (every check with
  its holds and flips_if), each in a fresh interpreter after imports: the first call, and the median
  of five more (warm caches, what a test grid or a reader's next setting pays), wall-clock and CPU;
- pages: bytes of every built chapter page and of the shared chart script; and every page of the
  site (both editions) as a browser loads it: the HTML with every script, stylesheet, font and image
  it requests, from a visit in headless Chromium (``--weights-only`` measures the site already built
  in ``_build/html``, in seconds).

Targets (printed with pass/fail): no-op rebuild <= 1.5 s; the verdicts command <= 2 s; the plan command
(Llama 3.1 405B's preset, no HTML) <= 5 s; one chapter
rerun <= 2.5 s; ``make test`` <= 150 s (with ``--with-tests``); each model on 100,000
configurations < 0.3 s; the TCO chapter's compute < 1 s; the whole ledger < 5 s; each chapter page
< 150 KB (the shared chart script not counted). The command-line figures are wall-clock times on
this machine, at whatever load it has (the report prints the load average at the start).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from analyses.models import uncertainty

REPO = Path(__file__).resolve().parent.parent
VENV_PY = REPO / ".venv" / "bin" / "python"
PY = str(VENV_PY if VENV_PY.exists() else Path(sys.executable))
IGNORE = shutil.ignore_patterns(
    "_build", ".venv", "runs", "__pycache__", ".git", ".hypothesis", ".pytest_cache", ".ruff_cache", "*.egg-info",
    ".ipynb_checkpoints", ".gl", ".whl",
)  # fmt: skip
N_CONFIGS = 100_000
RERUN = ("memory", "zero_stage", "3")  # chapter, parameter, new value
TARGETS = {
    "noop_s": 1.5,
    "verdicts_s": 2.0,
    "rerun_s": 2.5,
    "tests_s": 150.0,
    "model_s": 0.3,
    "plan_s": 1.0,
    "plan_cli_s": 5.0,
    "page_bytes": 150_000,
    "tco_compute_s": 1.0,
    "ledger_s": 5.0,
}

sys.path.insert(0, str(REPO))


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def median_of(fn: Callable[[], float], repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


def copy_tree(dst: Path) -> Path:
    shutil.copytree(REPO, dst, ignore=IGNORE, symlinks=True)
    return dst


def env_for(root: Path) -> dict[str, str]:
    """The copy's own package first, for this process's children and their kernels."""
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("AUDIT_DATA_DIR", None)
    return env


def run(cmd: list[str], root: Path, expect: str | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env_for(root), capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
        raise RuntimeError(f"{' '.join(cmd)} failed in {root}:\n{tail}")
    if expect is not None and expect not in proc.stdout:
        raise RuntimeError(f"{' '.join(cmd)}: expected {expect!r} in its output:\n{proc.stdout[-2000:]}")
    return elapsed


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "FAIL"


# --------------------------------------------------------------------------------------------
# The command line alone
# --------------------------------------------------------------------------------------------

COMMANDS = {
    "verdicts_s": ["verdicts", "--format", "csv"],
    "plan_cli_s": ["plan", "-p", "preset", "llama3-405b", "--no-html"],
}


def bench_commands(roots: dict[str, Path], repeat: int) -> dict[str, dict[str, float]]:
    """Each of :data:`COMMANDS` in each checkout of ``roots`` (this tree, and another such as main's for a
    ratio), the checkouts alternating run by run so that both see the same load: the median of ``repeat``."""
    times: dict[str, dict[str, list[float]]] = {name: {k: [] for k in COMMANDS} for name in roots}
    for _ in range(repeat):
        for key, args in COMMANDS.items():
            for name, root in roots.items():
                times[name][key].append(run([PY, "-m", "analyses", *args], root))
    return {name: {k: statistics.median(v) for k, v in t.items()} for name, t in times.items()}


def commands_lines(figures: dict[str, dict[str, float]], repeat: int) -> list[str]:
    names = list(figures)
    lines = [f"command line, median of {repeat} (checkouts alternating): " + ", ".join(names)]
    for key, args in COMMANDS.items():
        values = "   ".join(f"{name} {figures[name][key]:6.2f} s" for name in names)
        target = TARGETS[key]
        lines.append(f"  python -m analyses {' '.join(args):45s} {values}   target <= {target:g} s: "
                     f"{verdict(figures[names[0]][key], target)}")  # fmt: skip
    return lines


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------


def bench_build(work: Path, repeat: int, with_tests: bool) -> dict[str, float]:
    root = copy_tree(work / "ours")
    out: dict[str, float] = {}

    def clean() -> float:
        shutil.rmtree(root / "_build", ignore_errors=True)
        return run([PY, "-m", "analyses", "build", "--force"], root)

    out["clean_s"] = median_of(clean, repeat)
    out["noop_s"] = median_of(lambda: run([PY, "-m", "analyses", "build"], root, expect="up to date"), repeat)
    out["verdicts_s"] = median_of(lambda: run([PY, "-m", "analyses", "verdicts", "--format", "csv"], root), repeat)
    out |= bench_rerun(root, repeat)
    if with_tests:
        out |= bench_tests(root, repeat)
    pages = sorted((root / "_build" / "html" / "book").glob("*.html"))
    out |= {f"page:{p.name}": float(p.stat().st_size) for p in pages}
    script = root / "_build" / "html" / "_static" / "vega-offline.js"
    out["chart_script_bytes"] = float(script.stat().st_size) if script.exists() else float("nan")
    out |= {f"weight:{k}": v for k, v in page_weights(root / "_build" / "html").items()}
    return out


# A page's files by kind, from the path of what it requested.
KINDS = (("chart library", ("vega-offline.js",)), ("search", ("searchindex.js", "searchtools.js", "language_data.js")),
         ("fonts", (".woff2", ".woff", ".ttf")), ("CSS", (".css",)), ("scripts", (".js",)))  # fmt: skip


def _kind(path: str) -> str:
    return next((kind for kind, ends in KINDS if path.endswith(ends)), "HTML and images")


def page_weights(site: Path) -> dict[str, float]:
    """Every page of the built ``site`` (redirects and ``_static`` aside) as a browser loads it: the
    bytes of the HTML and of every local file the page requests (scripts, stylesheets, fonts, images),
    from a visit in headless Chromium once the page has drawn its charts; ``<page>`` is the total and
    ``<page>|<kind>`` each kind's share (:data:`KINDS`). Empty, with a message, without Chromium."""
    import re
    import urllib.parse

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium or importlib.util.find_spec("playwright") is None or not site.is_dir():
        print("page weights skipped: needs the built site, Chromium and Playwright (make chromium)", flush=True)
        return {}
    from playwright.sync_api import sync_playwright

    pages = sorted(
        p
        for p in site.rglob("*.html")
        if not {"_static", "_sources", "downloads"} & set(p.relative_to(site).parts)
        and "http-equiv" not in p.read_text()
    )
    out: dict[str, float] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for path in pages:
            files: set[Path] = set()

            def handler(request: object, found: set[Path] = files) -> None:
                if request.url.startswith("file:"):
                    found.add(Path(urllib.parse.unquote(urllib.parse.urlparse(request.url).path)))

            page.on("requestfinished", handler)
            page.goto(path.as_uri())
            n = len(set(re.findall(r'id="(altair-viz-[0-9a-f]+)"', path.read_text())))
            if n:
                page.wait_for_function(f"document.querySelectorAll('.vega-embed .marks').length >= {n}", timeout=30_000)
            page.wait_for_load_state("load")
            page.evaluate("document.fonts.ready.then(() => true)")
            page.wait_for_timeout(200)  # a font or image the charts asked for last
            page.remove_listener("requestfinished", handler)
            name = str(path.relative_to(site))
            sizes = {f: float(f.stat().st_size) for f in files | {path} if f.is_file()}
            out[name] = sum(sizes.values())
            for f, size in sizes.items():
                key = f"{name}|{_kind(f.name)}"
                out[key] = out.get(key, 0.0) + size
        browser.close()
    return out


def weight_lines(weights: dict[str, float]) -> list[str]:
    """The table of page weights (see :func:`page_weights`), in KB."""
    pages = [k for k in weights if "|" not in k]
    if not pages:
        return ["Pages as a browser loads them: not measured (no built site or no Chromium)"]
    kinds = ["HTML and images", *(k for k, _ in reversed(KINDS))]
    width = max(len(n) for n in pages) + 2
    head = f"  {'page':<{width}}{'total':>8}" + "".join(f"{k:>16}" for k in kinds)
    lines = ["Pages as a browser loads them (KB: the HTML and every file it requests, once its charts are drawn)", head]
    for name in pages:
        cells = "".join(f"{weights.get(f'{name}|{k}', 0.0) / 1000:16.1f}" for k in kinds)
        lines.append(f"  {name:<{width}}{weights[name] / 1000:8.1f}{cells}")
    charted = sum(1 for n in pages if weights.get(f"{n}|chart library"))
    searching = sum(1 for n in pages if weights.get(f"{n}|search"))
    lines.append(
        f"  {charted} of {len(pages)} pages load the chart library (those with a chart); {searching} load search "
        "files (the search pages: the index; the ledger pages: the figure normaliser of their text filter)"
    )
    return lines


def bench_rerun(root: Path, repeat: int) -> dict[str, float]:
    """One chapter rerun (``python -m analyses run``) and where its time goes.

    ``rerun_s`` is the command's wall time. Its parts, timed inside one ``run`` in a fresh
    interpreter (:data:`_PHASES`): starting the interpreter and importing the CLI, validating the
    parameters (which imports the chapter: pandas, altair), executing the notebook in-process and
    exporting the page. For comparison: the CLI alone (``params``), the chapter's imports in a fresh
    interpreter, and a papermill kernel start (the build's path, no longer the rerun's).
    """
    chapter, name, value = RERUN
    cmd = [PY, "-m", "analyses", "run", chapter, "-p", name, value]
    run(cmd, root)  # warm: compiled modules and the cached vega bundle, as after any build
    out = {"rerun_s": median_of(lambda: run(cmd, root), repeat)}
    phases = [_rerun_phases(root) for _ in range(repeat)]
    out |= {f"rerun_{k}_s": statistics.median(p[k] for p in phases) for k in phases[0]}
    out["cli_start_s"] = median_of(lambda: run([PY, "-m", "analyses", "params", chapter], root), repeat)
    out["chapter_imports_s"] = median_of(
        lambda: run([PY, "-c", f"from analyses.chapters import config; config({chapter!r})"], root), repeat
    )
    out["kernel_start_s"] = median_of(lambda: _empty_notebook(root), repeat)
    return out


# The phases of `python -m analyses run` (cli.cmd_run), timed in one fresh interpreter; "start" is
# the interpreter's own start (wall time of the process before this code ran) plus the CLI import.
_PHASES = """import json, sys, time, tempfile
from pathlib import Path
t0 = time.perf_counter()
from analyses.site import cli
t1 = time.perf_counter()
cfg = cli._validated(sys.argv[1], [[sys.argv[2], sys.argv[3]]])
t2 = time.perf_counter()
from analyses.site import build, deps, execute, export
with tempfile.TemporaryDirectory() as tmp:
    nb = execute.execute_file(deps.BOOK_DIR / f"{sys.argv[1]}.ipynb", Path(tmp) / "run.ipynb", {sys.argv[2]: cfg[sys.argv[2]]})
    t3 = time.perf_counter()
    export.to_html(nb, Path(tmp) / "run.html")
    t4 = time.perf_counter()
print(json.dumps({"cli_import": t1 - t0, "validate": t2 - t1, "execute": t3 - t2, "export": t4 - t3}))
"""


def _rerun_phases(root: Path) -> dict[str, float]:
    chapter, name, value = RERUN
    start = time.perf_counter()
    proc = subprocess.run(
        [PY, "-c", _PHASES, chapter, name, value], cwd=root, env=env_for(root), capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"rerun phases failed:\n{proc.stderr[-2000:]}")
    phases = json.loads(proc.stdout.strip().splitlines()[-1])
    phases["start"] = wall - sum(phases.values())  # interpreter start and exit, outside the timed code
    return phases


def _empty_notebook(root: Path) -> float:
    """papermill on a one-cell notebook: the fixed cost of starting a kernel."""
    import nbformat

    nb_path = root / "_build" / "bench-empty.ipynb"
    nb_path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), nb_path)
    code = "import papermill, sys; papermill.execute_notebook(sys.argv[1], sys.argv[1], progress_bar=False, kernel_name='python3')"
    return run([PY, "-c", code, str(nb_path)], root)


def _tests(root: Path) -> tuple[float, float, float, float]:
    """``make test`` (chromium check, ruff, pytest) in the copy, with this project's environment:
    wall seconds, CPU seconds (user + system of every process it started: workers, kernels,
    Chromium), and the 1-minute load average before and after."""
    stamp = REPO / ".venv" / ".installed"
    cmd = ["make", "test", f"VENV={REPO / '.venv'}", "-o", str(stamp)]
    before, load0 = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg()[0]
    wall = run(cmd, root)
    after, load1 = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg()[0]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, load0, load1


def bench_tests(root: Path, repeat: int) -> dict[str, float]:
    """``make test`` in the copy ``repeat`` times: the median wall and CPU seconds, and the load."""
    runs = [_tests(root) for _ in range(repeat)]
    return {
        "tests_s": statistics.median(r[0] for r in runs),
        "tests_cpu_s": statistics.median(r[1] for r in runs),
        "tests_load_start": statistics.median(r[2] for r in runs),
        "tests_load_end": statistics.median(r[3] for r in runs),
    }


def tests_lines(build: dict) -> list[str]:
    """The test suite's line and its CPU time (the load says how much of the wall was the suite's)."""
    if "tests_s" not in build:
        return []
    return [
        f"  make test (fresh copy, every core)          {build['tests_s']:8.1f} s   target <= {TARGETS['tests_s']:g} s: {verdict(build['tests_s'], TARGETS['tests_s'])}",
        f"    CPU (user + system, every process)        {build['tests_cpu_s']:8.1f} s   load average {build['tests_load_start']:.1f} at its start, {build['tests_load_end']:.1f} at its end",
    ]


def bench_jupyter_book(work: Path, repeat: int) -> float:
    """Jupyter Book executing the same notebooks itself (execute_notebooks: force), clean each time."""
    root = copy_tree(work / "jb")
    config = root / "_config.yml"
    config.write_text(config.read_text().replace('execute_notebooks: "off"', 'execute_notebooks: "force"'))
    assert 'execute_notebooks: "force"' in config.read_text()
    jb = str(Path(PY).parent / "jupyter-book")

    def once() -> float:
        shutil.rmtree(root / "_build", ignore_errors=True)
        return run([jb, "build", str(root), "-q"], root)

    return median_of(once, repeat)


# --------------------------------------------------------------------------------------------
# Models on 100,000 configurations
# --------------------------------------------------------------------------------------------


def bench_models(repeat: int) -> dict[str, float]:
    import numpy as np

    from analyses.models import memory, performance, tco
    from analyses.scenario import calibration

    rng = np.random.default_rng(0)
    n = N_CONFIGS
    layers = rng.integers(12, 129, n)
    hidden = 128 * rng.integers(16, 200, n)
    heads = hidden // 128
    params = 12.0 * layers * hidden.astype(float) ** 2
    tp = rng.choice([1, 2, 4, 8], n)
    pp = rng.choice([1, 2, 4, 8, 16], n)
    dp = rng.choice([1, 8, 64, 512], n)
    zero = rng.integers(0, 4, n)
    seq = rng.choice([2048, 4096, 8192], n)

    def mem() -> float:
        t = time.perf_counter()
        memory.total_bytes_per_gpu(params, layers, seq, 1, hidden, heads, zero_stage=zero, dp=dp, tp=tp, pp=pp)
        return time.perf_counter() - t

    coef = calibration.coefficients()  # fitted once, before the clock starts

    def step() -> float:
        t = time.perf_counter()
        performance.step_time(
            coef,
            params_active=params,
            params_total=params,
            n_layers=layers,
            d_model=hidden,
            seq_len=seq,
            kv_ratio=1.0,
            n_experts=0,
            experts_active=0,
            n_gpus=tp * pp * dp,
            tp=tp,
            pp=pp,
            vp=1,
            cp=1,
            ep=1,
            micro_batch=1,
            global_batch=1024,
            recompute="selective",
            zero3=zero == 3,
            die="H100",
            peak_flops=989e12,
            peak_flops_bf16=989e12,
            hbm_bytes_per_s=3.35e12,
            nvlink_bytes_per_s=450e9,
            nic_bytes_per_s=50e9,
            gpus_per_node=8,
            nvlink_domain_gpus=8,
            latency_s=5e-6,
        )
        return time.perf_counter() - t

    ranges = {
        "server_price_per_gpu": uncertainty.Range(30e3, 45e3, 60e3),
        "network_storage_fraction": uncertainty.Range(0.1, 0.15, 0.25),
        "depreciation_years": uncertainty.Range(3.0, 4.0, 5.0),
        "cost_of_capital": uncertainty.Range(0.05, 0.08, 0.12),
        "tdp_w": uncertainty.Range(1000.0, 1100.0, 1400.0),
        "server_power_overhead": uncertainty.Range(1.3, 1.5, 1.7),
        "pue": uncertainty.Range(1.1, 1.3, 1.6),
        "electricity_per_kwh": uncertainty.Range(0.05, 0.1, 0.2),
        "hosting_per_kw_month": uncertainty.Range(100.0, 150.0, 250.0),
        "staff_per_gpu_year": uncertainty.Range(500.0, 1000.0, 2000.0),
    }

    def cost() -> float:
        t = time.perf_counter()
        uncertainty.monte_carlo(lambda **kw: tco.owned_cost_per_gpu_hour(**kw).total, ranges, n=n, seed=0)
        return time.perf_counter() - t

    from analyses.models import plan
    from analyses.scenario import planning

    req = planning.request(shape=planning.shape("illustrative-100b"), tokens=2e12, deadline_days=30)

    def planner() -> float:
        t = time.perf_counter()
        planning.evaluate(req, "B300")
        return time.perf_counter() - t

    for fn in (mem, step, cost, planner):  # warm up (first-call imports, allocations, calibration cache)
        fn()
    return {
        "memory_s": median_of(mem, repeat),
        "step_s": median_of(step, repeat),
        "cost_s": median_of(cost, repeat),
        "plan_s": median_of(planner, repeat),
        "plan_layouts": len(plan.candidates(req, "B300")),
    }


# In a fresh interpreter: import the chapter and validate its defaults (data loaded), then time
# only its compute(), the chapter's own work; "ledger" times every claim's check and robustness.
# Then WARM_RUNS more computes at the same defaults (caches filled, as in a test grid or a reader's
# second setting): their median, wall-clock and CPU seconds.
WARM_RUNS = 5
_CHAPTER_TIMER = """
import statistics, sys, time
from analyses import chapters
from analyses.chapters import ledger
slug, runs = sys.argv[1], int(sys.argv[2])
if slug == "ledger":
    work = ledger.ledger
else:
    module, cfg = chapters.module(slug), chapters.spec(slug).defaults()
    work = lambda: module.compute(cfg)
t = time.perf_counter(); work(); first = time.perf_counter() - t
wall, cpu = [], []
for _ in range(runs):
    t, c = time.perf_counter(), time.process_time(); work()
    wall.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
print(first, statistics.median(wall), statistics.median(cpu))
"""


def bench_chapters(repeat: int) -> dict[str, float]:
    """Seconds of each chapter's compute() at its defaults, and of the whole ledger, each in a fresh
    interpreter (no cache warm from an earlier run): ``slug`` the first call, ``warm:slug`` and
    ``warm_cpu:slug`` the median wall-clock and CPU seconds of :data:`WARM_RUNS` calls after it."""
    from analyses import chapters

    out = {}
    for slug in [*chapters.chapter_slugs(), "ledger"]:
        if slug != "ledger" and not hasattr(chapters.module(slug), "compute"):
            continue

        def once(slug: str = slug) -> tuple[float, float, float]:
            proc = subprocess.run(
                [PY, "-c", _CHAPTER_TIMER, slug, str(WARM_RUNS)], cwd=REPO, capture_output=True, text=True, check=True
            )
            first, warm, cpu = (float(v) for v in proc.stdout.strip().splitlines()[-1].split())
            return first, warm, cpu

        runs = [once() for _ in range(repeat)]
        out[slug] = statistics.median(r[0] for r in runs)
        out[f"warm:{slug}"] = statistics.median(r[1] for r in runs)
        out[f"warm_cpu:{slug}"] = statistics.median(r[2] for r in runs)
    return out


def chapter_lines(chapters_s: dict[str, float]) -> list[str]:
    """The report's lines of :func:`bench_chapters`' figures."""
    lines = [
        "Chapters: compute() at the defaults, in a fresh interpreter after imports and validation: the first",
        f"call, then the median of {WARM_RUNS} more (warm: wall-clock and CPU seconds)",
    ]
    for slug, seconds in chapters_s.items():
        if slug == "ledger" or ":" in slug:
            continue
        target = (
            f"   target < {TARGETS['tco_compute_s']} s: {verdict(seconds, TARGETS['tco_compute_s'])}"
            if slug == "tco"
            else ""
        )
        warm = f"warm {chapters_s[f'warm:{slug}']:6.3f} s  CPU {chapters_s[f'warm_cpu:{slug}']:6.3f} s"
        lines.append(f"  {slug:<28} {seconds:6.2f} s   {warm}{target}")
    lines.append(
        f"  the whole ledger (every check, holds and flips_if) {chapters_s['ledger']:.2f} s   "
        f"target < {TARGETS['ledger_s']:.0f} s: {verdict(chapters_s['ledger'], TARGETS['ledger_s'])}"
    )
    return lines


def bench_peers(repeat: int, n: int = 60) -> dict[str, float] | str:
    """Seconds per configuration of each peer, on the shared grid's kinds of configurations."""
    missing = [m for m in ("llm_analysis", "mlsysim") if importlib.util.find_spec(m) is None]
    if missing:
        return f"skipped: {', '.join(missing)} not installed (pip install -e '.[bench]')"
    import warnings

    warnings.simplefilter("ignore")
    from analyses import data
    from analyses.models import peers

    shape = data.model_shape("gpt3-175b")
    layouts = [(8, 8, 8, 1), (8, 16, 8, 3), (4, 16, 16, 1), (8, 8, 16, 1)]
    out: dict[str, float] = {}
    for name, fn in (
        ("llm_analysis_memory_s", lambda lay: peers.llm_analysis_memory(shape, *lay)),
        ("mlsysim_memory_s", lambda lay: peers.mlsysim_memory(shape, *lay)),
        ("llm_analysis_step_s", lambda lay: peers.llm_analysis_step(shape, "H100", *lay[:3])),
        ("mlsysim_step_s", lambda lay: peers.mlsysim_step(shape, "H100", lay[0], lay[1], 1024 // (lay[0] * lay[1]))),
    ):
        fn(layouts[0])  # warm up

        def once(fn=fn) -> float:
            t = time.perf_counter()
            for i in range(n):
                fn(layouts[i % len(layouts)])
            return (time.perf_counter() - t) / n

        out[name] = median_of(once, repeat)
    return out


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}; {os.cpu_count()} cores; Python {platform.python_version()}; load average {load:.1f} at start"


def rerun_lines(build: dict) -> list[str]:
    """The rerun's parts (see :func:`bench_rerun`)."""
    return [
        f"    of which (one run, in-process execution): interpreter start and exit {build['rerun_start_s']:.2f} s, "
        f"CLI import {build['rerun_cli_import_s']:.2f} s,",
        f"    validation with the chapter's imports {build['rerun_validate_s']:.2f} s, notebook execution "
        f"{build['rerun_execute_s']:.2f} s, HTML export {build['rerun_export_s']:.2f} s",
        f"    for comparison: CLI alone (params) {build['cli_start_s']:.2f} s, chapter imports in a fresh interpreter "
        f"{build['chapter_imports_s']:.2f} s, a papermill kernel start (1-cell notebook; the build's path) "
        f"{build['kernel_start_s']:.2f} s",
    ]


def report(build: dict, jb_s: float | None, models: dict, peer: dict | str, repeat: int, chapters_s: dict) -> list[str]:
    us = {k: v / N_CONFIGS * 1e6 for k, v in models.items()}
    lines = [
        f"Benchmark of {REPO.name} ({datetime.date.today().isoformat()}), median of {repeat} run(s)",
        f"Machine: {machine()}",
        "",
        "Build (temporary copy of the working tree)",
        f"  clean full build (every chapter + Sphinx)   {build['clean_s']:8.1f} s",
    ]
    if jb_s is not None:
        lines.append(
            f"  Jupyter Book executing the same notebooks   {jb_s:8.1f} s   ours / Jupyter Book = {build['clean_s'] / jb_s:.2f}"
        )
    lines += [
        f"  no-op rebuild                               {build['noop_s']:8.2f} s   target <= {TARGETS['noop_s']:g} s: {verdict(build['noop_s'], TARGETS['noop_s'])}",
        f"  verdicts (python -m analyses verdicts)      {build['verdicts_s']:8.2f} s   target <= {TARGETS['verdicts_s']:g} s: {verdict(build['verdicts_s'], TARGETS['verdicts_s'])}",
        f"  {f'one chapter rerun ({RERUN[0]}, -p {RERUN[1]} {RERUN[2]})':<44}{build['rerun_s']:8.2f} s   target <= {TARGETS['rerun_s']:g} s: {verdict(build['rerun_s'], TARGETS['rerun_s'])}",
        *rerun_lines(build),
    ]
    lines += tests_lines(build)
    lines += ["", f"Models on {N_CONFIGS:,} configurations (one vectorised call each)"]
    for key, label in (("memory_s", "memory per GPU"), ("step_s", "step time"), ("cost_s", "cost Monte Carlo (draws)")):
        v = models[key]
        lines.append(
            f"  {label:<28} {v:8.4f} s  {us[key]:7.3f} µs/config   target < {TARGETS['model_s']} s: {verdict(v, TARGETS['model_s'])}"
        )
    lines.append(
        f"  planner, every layout of one generation ({models['plan_layouts']:,} B300 layouts of a 100B model)"
        f" {models['plan_s']:.3f} s   target < {TARGETS['plan_s']} s: {verdict(models['plan_s'], TARGETS['plan_s'])}"
    )
    lines += ["", *chapter_lines(chapters_s)]
    lines += ["", "Peers, per configuration evaluated"]
    if isinstance(peer, str):
        lines.append(f"  {peer}")
    else:
        for key, ours_key, label in (
            ("llm_analysis_memory_s", "memory_s", "llm-analysis memory (training())"),
            ("mlsysim_memory_s", "memory_s", "MLSys·im memory (TrainingMemoryModel)"),
            ("llm_analysis_step_s", "step_s", "llm-analysis step (training())"),
            ("mlsysim_step_s", "step_s", "MLSys·im step (DistributedModel)"),
        ):
            ratio = peer[key] * 1e6 / us[ours_key]
            lines.append(f"  {label:<40} {peer[key] * 1e6:10.1f} µs/config   {ratio:10,.0f}× ours")
    lines += ["", "Pages (bytes; target < 150 KB each, shared chart script not counted)"]
    pages = {k.split(":", 1)[1]: v for k, v in build.items() if k.startswith("page:")}
    for name, size in pages.items():
        lines.append(f"  {name:<28} {size / 1000:8.1f} KB   {verdict(size, TARGETS['page_bytes'])}")
    lines.append(
        f"  shared chart script (vega-offline.js) {build['chart_script_bytes'] / 1000:8.1f} KB, loaded once per chart page"
    )
    lines += ["", *weight_lines({k.split(":", 1)[1]: v for k, v in build.items() if k.startswith("weight:")})]
    fails = [n for n, s in pages.items() if s >= TARGETS["page_bytes"]]
    fails += [k for k in ("noop_s", "verdicts_s", "rerun_s", "tests_s") if k in build and build[k] > TARGETS[k]]
    fails += [k for k in ("memory_s", "step_s", "cost_s") if models[k] >= TARGETS["model_s"]]
    fails += ["plan_s"] if models["plan_s"] >= TARGETS["plan_s"] else []
    fails += ["tco compute"] if chapters_s["tco"] >= TARGETS["tco_compute_s"] else []
    fails += ["ledger"] if chapters_s["ledger"] >= TARGETS["ledger_s"] else []
    lines += ["", "All targets pass." if not fails else f"Targets failed: {', '.join(fails)}"]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is reported (default 3)")
    ap.add_argument("--quick", action="store_true", help="one run per figure")
    ap.add_argument("--with-tests", action="store_true", help="also time `make test` (minutes)")
    ap.add_argument("--no-jupyter-book", action="store_true", help="skip the Jupyter Book execution comparison")
    ap.add_argument("--record", type=Path, help="also write the report to this markdown file")
    ap.add_argument("--rerun-only", action="store_true", help="time only the chapter rerun (no build; seconds)")
    ap.add_argument("--tests-only", action="store_true", help="time only `make test` in a fresh copy (minutes)")
    ap.add_argument("--chapters-only", action="store_true", help="time only each chapter's compute() (a minute)")
    ap.add_argument(
        "--weights-only", action="store_true", help="only the page weights of the site already built in _build/html"
    )
    ap.add_argument("--commands-only", action="store_true", help="time only the verdicts and plan commands (seconds)")
    ap.add_argument("--against", type=Path, help="with --commands-only: another checkout (main's) timed alternately")
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else max(args.repeat, 1)
    if args.weights_only:
        print("\n".join(weight_lines(page_weights(REPO / "_build" / "html"))))
        return 0
    if args.commands_only:
        print(f"Machine: {machine()}", flush=True)
        roots = {"this tree": REPO} | ({str(args.against): args.against.resolve()} if args.against else {})
        print("\n".join(commands_lines(bench_commands(roots, repeat), repeat)))
        return 0
    if args.chapters_only:
        print(f"Machine: {machine()}", flush=True)
        print("\n".join(chapter_lines(bench_chapters(repeat))))
        return 0
    if args.tests_only:
        print(f"Machine: {machine()}", flush=True)
        with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
            figures = bench_tests(copy_tree(Path(tmp) / "ours"), repeat)
        print(f"make test, median of {repeat}")
        print("\n".join(tests_lines(figures)))
        return 0
    if args.rerun_only:
        with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
            figures = bench_rerun(copy_tree(Path(tmp) / "ours"), repeat)
        rerun = figures["rerun_s"]
        print(f"Machine: {machine()}")
        print(
            f"one chapter rerun ({RERUN[0]}, -p {RERUN[1]} {RERUN[2]})  {rerun:.2f} s, median of {repeat}   "
            f"target <= {TARGETS['rerun_s']:g} s: {verdict(rerun, TARGETS['rerun_s'])}"
        )
        print("\n".join(rerun_lines(figures)))
        return 0
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
        work = Path(tmp)
        print("building in a temporary copy...", flush=True)
        build = bench_build(work, repeat, args.with_tests)
        jb_s = None
        if not args.no_jupyter_book:
            print("Jupyter Book executing the notebooks...", flush=True)
            jb_s = bench_jupyter_book(work, repeat)
    print("models...", flush=True)
    models = bench_models(max(repeat, 3))
    peer = bench_peers(repeat)
    print("chapters...", flush=True)
    chapters_s = bench_chapters(repeat)
    lines = report(build, jb_s, models, peer, repeat, chapters_s)
    print("\n".join(lines))
    if args.record:
        args.record.write_text(
            "# Benchmark record\n\nOutput of `tools/bench.py` (`make bench`); see the script for what each "
            "figure measures.\n\n```text\n" + "\n".join(lines) + "\n```\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
