"""Command line: ``python -m analyses {build,run,plan,params,verdicts}``.

Every parameter, and every combination of parameters a chapter's rules constrain, is validated
before any kernel starts; a bad value, a data fault or a malformed params file gets one line
naming the parameter (or file, row and column) and what is allowed, and exit status 2. Ctrl-C
(or SIGTERM) stops a command with one line and exit status 130, leaving no scratch file.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import logging
import re
import signal
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

from analyses import chapters
from analyses.data import REPO_ROOT, DataError
from analyses.site.param_text import UsageError, parse_value
from analyses.site.param_text import load_params_file as _read_params_file

RUNS_DIR = REPO_ROOT / "runs"


def _load(module: str) -> ModuleType:
    """The package's ``module`` (dotted name), imported when a subcommand first needs it: the CLI's one
    lazy import. Each command loads only what it runs, so ``verdicts`` and ``plan`` load no Sphinx,
    papermill or jupyter-book, ``params`` and ``twins`` no check, and a build with nothing to do no ledger."""
    return importlib.import_module(module)  # lazy on purpose: see the docstring


def _validated(chapter: str, pairs: list[list[str]] | None, base: dict[str, Any] | None = None) -> chapters.Config:
    """``base`` values (e.g. from a params file) with ``-p NAME VALUE`` pairs on top, validated."""
    try:
        spec = chapters.spec(chapter)
    except KeyError as err:
        raise UsageError(err.args[0]) from None
    # a data fault is one line naming file, row and column, before any parameter is read
    _load("analyses.site.preflight").validate(chapter)
    values: dict[str, Any] = dict(base or {})
    given: dict[str, str] = {}
    for name, text in pairs or []:
        spec.param(name)
        if name in given:
            raise UsageError(f"-p {name} given twice ({given[name]!r}, then {text!r}); give each parameter once")
        given[name] = text
        values[name] = parse_value(text, name)
    return spec.validate(values)


def cmd_build(args: argparse.Namespace) -> int:
    index = _load("analyses.site.build").build(force=args.force, only=args.only, jobs=args.jobs, html=not args.no_html)
    if not args.no_html:
        print(f"Book built. Open {index}")
    return 0


def run_chapter(chapter: str, cfg: chapters.Config, runs_dir: Path | None = None) -> tuple[Path, Path]:
    """Execute ``chapter`` with ``cfg`` into ``runs_dir`` (default :data:`RUNS_DIR`, read when called)
    and export it to HTML; return both paths."""
    runs_dir = RUNS_DIR if runs_dir is None else runs_dir
    deps = _load("analyses.site.deps")
    # lists arrive validated as tuples; compare them as the lists the defaults and papermill use
    values = {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()}
    params = {k: v for k, v in values.items() if v != chapters.spec(chapter).param(k).default}
    tag = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    stem = f"{chapter}-{tag}"
    source = deps.BOOK_DIR / f"{chapter}.ipynb"
    if not source.exists():
        raise UsageError(f"chapter '{chapter}' has no notebook at {source}")
    return execute_and_export(source, runs_dir / f"{stem}.ipynb", runs_dir / f"{stem}.html", params)


def execute_and_export(source: Path, notebook: Path, page: Path, params: dict[str, Any]) -> tuple[Path, Path]:
    """Execute ``source`` with ``params`` in this process (no kernel) and export it to a standalone
    offline page (see :mod:`analyses.site.execute` and :mod:`analyses.site.export`). Both are made
    before either is written, so a failure leaves an earlier run's notebook and page as they were."""
    execute, export = _load("analyses.site.execute"), _load("analyses.site.export")
    nb = execute.execute_path(source, params)
    html, _ = export.render(nb, page)
    execute.write_notebook(nb, notebook)
    execute.write_atomic(page, html)
    return notebook, page


def cmd_run(args: argparse.Namespace) -> int:
    cfg = _validated(args.chapter, args.param)
    notebook, page = run_chapter(args.chapter, cfg)
    print(f"notebook: {notebook}")
    print(f"html:     {page}")
    return 0


def load_params_file(path: str) -> dict[str, Any]:
    """A YAML mapping of plan parameters (see :mod:`analyses.site.param_text`)."""
    return _read_params_file(path, [p.name for p in chapters.spec("plan").params])


def cmd_plan(args: argparse.Namespace) -> int:
    plan_chapter, plan_text = _load("analyses.chapters.plan"), _load("analyses.chapters.plan.text")
    cfg = _validated("plan", args.param, load_params_file(args.params_file) if args.params_file is not None else None)
    run = plan_chapter.run(cfg)
    if args.format == "json":
        print(json.dumps(plan_text.records(run), indent=1))
        return 0
    if args.format == "csv":
        sys.stdout.write(pd.DataFrame(plan_text.records(run)).to_csv(index=False))
        return 0
    print(plan_text.summary(run))
    if not args.no_html:
        notebook, page = run_chapter("plan", cfg)
        print(f"notebook: {notebook}")
        print(f"html:     {page}")
    return 0


def params_table(chapter: str) -> list[dict[str, str]]:
    """The chapter's parameters: name, type, default, unit, allowed values, meaning."""
    spec = chapters.spec(chapter)
    return [
        {
            "name": p.name,
            "type": p.kind,
            "default": str(p.default),
            "unit": p.unit,
            "allowed": p.allowed(),
            "meaning": p.help,
        }
        for p in spec.params
    ]


def cmd_params(args: argparse.Namespace) -> int:
    try:
        rows = params_table(args.chapter)
    except KeyError as err:
        raise UsageError(err.args[0]) from None
    widths = {k: max(len(k), *(len(r[k]) for r in rows)) for k in rows[0]} if rows else {}
    print("  ".join(k.ljust(w) for k, w in widths.items()))
    for r in rows:
        print("  ".join(r[k].ljust(w) for k, w in widths.items()))
    return 0


def cmd_twins(args: argparse.Namespace) -> int:
    twins = _load("analyses.site.twins")
    if args.check:
        problems = twins.out_of_step()
        for line in problems:
            print(line)
        if problems:
            print(f"{len(problems)} prose twin(s) out of step; `python -m analyses twins` brings them in step")
            return 1
        print("Every notebook's prose twin is in step.")
        return 0
    try:
        lines = twins.sync(keep=args.keep, only=args.chapters or None)
    except (twins.TwinConflict, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0


def cmd_verdicts(args: argparse.Namespace) -> int:
    # a data fault is one line naming file, row and column, before any check runs
    _load("analyses.site.preflight").validate()
    frame = _load("analyses.chapters.ledger").ledger()
    if args.format in ("csv", "json"):
        # the same bytes as the book's downloads (docutils: only this command needs it)
        sys.stdout.write(_load("analyses.site.downloads").ledger_text(frame, args.format))
    else:
        symbols = _load("analyses.pages.ledger_html").DIRECTION_SYMBOLS  # altair: only the table needs it
        shown = frame[["id", "chapter", "verdict", "direction", "margin", "recomputed"]].copy()
        shown["direction"] = [f"{symbols[d]} {d}" if d else "" for d in shown["direction"]]
        shown["margin"] = ["" if m is None or m != m else f"{m:.2f}" for m in shown["margin"]]
        shown["recomputed"] = shown["recomputed"].str.slice(0, 70)
        print(shown.to_string(index=False))
        counts = frame["verdict"].value_counts()
        directions = frame["direction"][frame["direction"] != ""].value_counts()
        print("\n" + ", ".join(f"{k}: {v}" for k, v in counts.items()) + f" ({len(frame)} claims)")
        print(", ".join(f"{symbols[k]} {k}: {v}" for k, v in directions.items()))
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and values such as ``-3e10`` read as values, not options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})
        # argparse treats "-3e10" as an option (it knows only -3 and -.5 as numbers)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|nan)$", re.I)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """An option given twice is an error (argparse would keep the last), except the repeatable
        ones (``-p NAME VALUE``, whose names are checked once each)."""
        tokens = list(sys.argv[1:] if args is None else args)
        tokens = tokens[: tokens.index("--")] if "--" in tokens else tokens
        for action in self._actions:
            if not action.option_strings or isinstance(action, argparse._AppendAction):
                continue
            given = [t for t in tokens if t.split("=", 1)[0] in action.option_strings]
            if len(given) > 1:
                self.error(f"{action.option_strings[-1]} given {len(given)} times; give it once")
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> Any:
        print(f"error: {' '.join(message.split())} (see: {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def _workers(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of workers, 1 or more; got {text!r}")
    return jobs


def parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m analyses", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    b = sub.add_parser("build", help="execute stale chapters with papermill, then build the HTML book")
    b.add_argument("--force", action="store_true", help="re-execute every chapter even if its inputs are unchanged")
    b.add_argument("--only", nargs="+", metavar="CHAPTER", help="execute only these chapters")
    b.add_argument("--jobs", type=_workers, default=None, help="parallel kernels, 1 or more (default: one per core)")
    b.add_argument("--no-html", action="store_true", help="execute notebooks only; skip jupyter-book")
    b.set_defaults(fn=cmd_build)
    r = sub.add_parser("run", help="rerun one chapter with new parameters into runs/ and export HTML")
    r.add_argument("chapter", help="chapter slug, e.g. scaling-gap")
    r.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"), help="set a parameter")
    r.set_defaults(fn=cmd_run)
    pl = sub.add_parser("plan", help="plan a training run: GPUs, layout, time and cost per generation")
    pl.add_argument("--params-file", metavar="YAML", help="plan parameters as a YAML mapping (see: params plan)")
    pl.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"), help="set a parameter")
    pl.add_argument("--no-html", action="store_true", help="print the recommendation only; skip the chapter's HTML")
    pl.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="table: the recommendation and the chapter's HTML; csv or json: one record per recommended option "
        "(steady state, whole run, bands, costs), nothing else",
    )
    pl.set_defaults(fn=cmd_plan)
    p = sub.add_parser("params", help="list a chapter's parameters with defaults, units and allowed ranges")
    p.add_argument("chapter")
    p.set_defaults(fn=cmd_params)
    v = sub.add_parser("verdicts", help="the claims ledger with verdicts, computed from the checks")
    v.add_argument("--format", choices=["table", "csv", "json"], default="table")
    v.set_defaults(fn=cmd_verdicts)
    t = sub.add_parser("twins", help="keep book/<slug>.ipynb and its prose twin prose/<slug>.md in step")
    t.add_argument("--check", action="store_true", help="only list twins out of step; exit 1 if any")
    t.add_argument("--keep", choices=["notebook", "prose"], help="when both sides of a pair changed, keep this one")
    t.add_argument("chapters", nargs="*", metavar="CHAPTER", help="with --keep: only these chapters")
    t.set_defaults(fn=cmd_twins)
    return ap


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt("terminated")


def _build_errors() -> tuple[type[Exception], ...]:
    """The build's error class once a command has imported the build (the others never raise it,
    and leave nbformat and papermill unimported)."""
    build = sys.modules.get("analyses.site.build")
    return (build.BuildError,) if build is not None else ()


def main(argv: list[str] | None = None) -> int:
    # papermill and nbclient log to stderr ("Kernel died ..." when a build is interrupted);
    # our commands report failures themselves, in one line
    logging.getLogger("papermill").addHandler(logging.NullHandler())
    logging.getLogger("papermill").propagate = False
    args = parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminate) if _main_thread() else None
    try:
        return args.fn(args)
    except (UsageError, chapters.ParamError, DataError, *_build_errors()) as err:
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        message = _one_line(err) if str(err).startswith("interrupted") else "interrupted; nothing was written"
        print(message, file=sys.stderr)
        return 130
    except ValueError as err:
        # a planner input error (analyses.models.plan.PlanError), imported only by the plan command
        plan = sys.modules.get("analyses.models.plan")
        if plan is None or not isinstance(err, plan.PlanError):
            raise
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


if __name__ == "__main__":
    sys.exit(main())
