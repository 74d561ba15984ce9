"""Command line: ``python -m analyses {build,run,plan,params,verdicts}``.

Every parameter is validated before anything runs; a bad value gets one line naming the
parameter and what is allowed, and exit status 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from analyses import chapters
from analyses.data import REPO_ROOT, DataError

RUNS_DIR = REPO_ROOT / "runs"


class UsageError(ValueError):
    """A command-line argument is wrong."""


_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _numbers(value: Any) -> Any:
    """Read YAML 1.1 strings such as ``3.0e10`` (a float only with a signed exponent) as numbers."""
    if isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
        return float(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def _parse_value(text: str) -> Any:
    """A -p value as YAML (so 2019 is an int, true a bool, [A100, B300] a list), else the string."""
    try:
        return _numbers(yaml.safe_load(text)) if text.strip() else text
    except yaml.YAMLError:
        return text


def _validated(chapter: str, pairs: list[list[str]] | None, base: dict[str, Any] | None = None) -> chapters.Config:
    """``base`` values (e.g. from a params file) with ``-p NAME VALUE`` pairs on top, validated."""
    try:
        spec = chapters.spec(chapter)
    except KeyError as err:
        raise UsageError(err.args[0]) from None
    values: dict[str, Any] = dict(base or {})
    for name, text in pairs or []:
        spec.param(name)
        values[name] = _parse_value(text)
    return spec.validate(values)


def cmd_build(args: argparse.Namespace) -> int:
    from analyses.site import build

    index = build.build(force=args.force, only=args.only, jobs=args.jobs, html=not args.no_html)
    if not args.no_html:
        print(f"Book built. Open {index}")
    return 0


def run_chapter(chapter: str, cfg: chapters.Config, runs_dir: Path = RUNS_DIR) -> tuple[Path, Path]:
    """Execute ``chapter`` with ``cfg`` into ``runs/`` and export it to HTML; return both paths."""
    from analyses.site import build, export

    changed = {k: v for k, v in cfg.items() if v != chapters.spec(chapter).param(k).default}
    tag = hashlib.sha256(json.dumps(changed, sort_keys=True, default=list).encode()).hexdigest()[:8]
    stem = f"{chapter}-{tag}"
    source = build.BOOK_DIR / f"{chapter}.ipynb"
    if not source.exists():
        raise UsageError(f"chapter '{chapter}' has no notebook at {source}")
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in changed.items()}
    notebook = build.execute(source, runs_dir / f"{stem}.ipynb", parameters=params)
    page = export.to_html(notebook, runs_dir / f"{stem}.html")
    return notebook, page


def cmd_run(args: argparse.Namespace) -> int:
    cfg = _validated(args.chapter, args.param)
    notebook, page = run_chapter(args.chapter, cfg)
    print(f"notebook: {notebook}")
    print(f"html:     {page}")
    return 0


def load_params_file(path: str) -> dict[str, Any]:
    """A YAML mapping of plan parameters; errors name the file and the field."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"--params-file: no such file {path}")
    try:
        values = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise UsageError(f"--params-file {path}: not valid YAML ({err})") from None
    if not isinstance(values, dict):
        raise UsageError(f"--params-file {path}: expected a mapping of parameter names to values")
    values = {k: _numbers(v) for k, v in values.items()}
    names = [p.name for p in chapters.spec("plan").params]
    for name in values:
        if name not in names:
            raise UsageError(f"--params-file {path}: unknown field {name!r}; fields: {', '.join(names)}")
    return values


def cmd_plan(args: argparse.Namespace) -> int:
    from analyses.chapters import plan as plan_chapter
    from analyses.chapters.plan import text as plan_text

    cfg = _validated("plan", args.param, load_params_file(args.params_file) if args.params_file else None)
    print(plan_text.summary(plan_chapter.run(cfg)))
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


def cmd_verdicts(args: argparse.Namespace) -> int:
    from analyses import ledger

    frame = ledger.ledger()
    if args.format in ("csv", "json"):
        from analyses.site.downloads import ledger_text  # the book's downloads hold the same bytes

        sys.stdout.write(ledger_text(frame, args.format))
    else:
        shown = frame[["id", "chapter", "verdict", "recomputed"]].copy()
        shown["recomputed"] = shown["recomputed"].str.slice(0, 70)
        print(shown.to_string(index=False))
        counts = frame["verdict"].value_counts()
        print("\n" + ", ".join(f"{k}: {v}" for k, v in counts.items()) + f" ({len(frame)} claims)")
    return 0


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m analyses", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="execute stale chapters with papermill, then build the HTML book")
    b.add_argument("--force", action="store_true", help="re-execute every chapter even if its inputs are unchanged")
    b.add_argument("--only", nargs="+", metavar="CHAPTER", help="execute only these chapters")
    b.add_argument("--jobs", type=int, default=None, help="parallel kernels (default: one per core)")
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
    pl.set_defaults(fn=cmd_plan)
    p = sub.add_parser("params", help="list a chapter's parameters with defaults, units and allowed ranges")
    p.add_argument("chapter")
    p.set_defaults(fn=cmd_params)
    v = sub.add_parser("verdicts", help="the claims ledger with verdicts, computed from the checks")
    v.add_argument("--format", choices=["table", "csv", "json"], default="table")
    v.set_defaults(fn=cmd_verdicts)
    return ap


def main(argv: list[str] | None = None) -> int:
    from analyses.site.build import BuildError

    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except (UsageError, chapters.ParamError, DataError, BuildError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:
        # a planner input error (analyses.models.plan.PlanError), imported only by the plan command
        plan = sys.modules.get("analyses.models.plan")
        if plan is None or not isinstance(err, plan.PlanError):
            raise
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
