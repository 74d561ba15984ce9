"""Property: whatever a chapter's parameter validator accepts, the chapter runs.

For each chapter, hypothesis draws configurations from the parameters' own declarations (each
value inside its range, at an end or at the default, every choice, any non-empty subset of a
list's choices); the spec validates them, rules included, and a configuration it accepts must go
through the chapter's ``compute`` and every figure and sentence the notebook draws from the
result (``figures.*(res)``, ``text.*(res)``) without an exception (a chapter without a ``compute``
runs its notebook). A configuration the validator
refuses is discarded (its refusal is tested in test_cli_errors.py and test_fuzz.py).

Lists are where the book used to break (throughput's ``ladder_gpus`` without H200 and B300 ended
its notebook in "KeyError: 'bf16'"), so each list parameter also runs its whole notebook with a
one-item list the default does not start with.

``make test`` runs a few derandomised examples per chapter (deadlines off);
``PROPERTY_EXAMPLES=50 pytest tests/site/test_param_properties.py`` runs a larger random campaign.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from analyses import chapters
from analyses.site import deps, execute

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "0"))  # 0: the small derandomised set of make test
WITH_PARAMS = [s for s in chapters.chapter_slugs() if chapters.spec(s).params]


def value_of(p: chapters.Param) -> st.SearchStrategy:
    """A value the parameter declares acceptable on its own: ends and default often, anything between."""
    choices = p.allowed_choices()
    if p.kind == "bool":
        return st.booleans()
    if p.kind == "str_list":
        return st.lists(st.sampled_from(choices), min_size=1, max_size=min(p.list_limit(), len(choices)), unique=True)
    if choices is not None:
        return st.sampled_from(choices)
    if p.kind == "int":
        lo, hi = int(p.min), int(p.max)
        return st.one_of(st.sampled_from([lo, hi, int(p.default)]), st.integers(lo, hi))
    return st.one_of(
        st.sampled_from([float(p.min), float(p.max), float(p.default)]),
        st.floats(float(p.min), float(p.max), allow_nan=False, allow_infinity=False),
    )


@st.composite
def accepted(draw, slug: str) -> chapters.Config:
    """A configuration of chapter ``slug`` its spec accepts: up to four parameters moved at once."""
    spec = chapters.spec(slug)
    moved = draw(st.lists(st.sampled_from(spec.params), min_size=1, max_size=4, unique_by=lambda p: p.name))
    values = {p.name: draw(value_of(p)) for p in moved}
    try:
        return spec.validate(values)
    except chapters.ParamError:
        assume(False)
        raise  # unreachable: assume(False) ends the example


def renderers(slug: str) -> list[tuple[str, Any]]:
    """Every ``figures.x(res)`` and ``text.y(res)`` (and ``(res, index)`` for slider figures) of a chapter."""
    out = []
    package = chapters.module(slug).__name__
    for part in ("figures", "text"):
        if importlib.util.find_spec(f"{package}.{part}") is None:
            continue
        module = importlib.import_module(f"{package}.{part}")
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            params = list(inspect.signature(fn).parameters)
            if params in (["res"], ["res", "index"]):
                out.append((f"{part}.{name}", fn))
    return out


def run_chapter(cfg: chapters.Config) -> None:
    """The chapter at ``cfg``: its compute and every figure and sentence; a numpy overflow or an
    invalid value (a NaN on its way into a figure) is an error too."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _run_chapter(cfg)


def _run_chapter(cfg: chapters.Config) -> None:
    slug = cfg._chapter
    module = chapters.module(slug)
    if not hasattr(module, "compute"):  # a chapter without a Result (sources): its notebook is the run
        spec = chapters.spec(slug)
        moved = {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items() if v != spec.param(k).default}
        execute.execute_path(deps.BOOK_DIR / f"{slug}.ipynb", moved)
        return
    res = module.compute(cfg)
    for name, fn in renderers(slug):
        calls = [()] if list(inspect.signature(fn).parameters) == ["res"] else [(i,) for i in range(len(res.sliders))]
        for extra in calls:
            outs = fn(res, *extra)
            for out in outs if isinstance(outs, tuple | list) else (outs,):
                if hasattr(out, "to_dict"):  # an altair chart: building its spec validates it
                    out.to_dict()
                elif hasattr(out, "_repr_html_"):  # a table as the page shows it
                    assert isinstance(out._repr_html_(), str), name
                elif isinstance(out, dict):  # text.glued: every number and phrase the page glues, as text
                    assert all(isinstance(v, str) for v in out.values()), name
                else:
                    assert isinstance(out, str), (name, type(out))


def _settings() -> settings:
    return settings(
        max_examples=EXAMPLES or 3,
        derandomize=not EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],  # no shrinking: a failing configuration is shown as drawn
    )


@pytest.mark.parametrize("slug", WITH_PARAMS)
def test_every_configuration_the_validator_accepts_runs(slug):
    @_settings()
    @given(cfg=accepted(slug))
    def check(cfg):
        run_chapter(cfg)

    check()


LISTS = [(s, p.name) for s in WITH_PARAMS for p in chapters.spec(s).params if p.kind == "str_list"]


@pytest.mark.parametrize("slug, name", LISTS)
def test_a_list_parameter_with_one_item_runs_the_whole_notebook(slug, name):
    """Every list parameter advertises any non-empty subset of its choices: one that leaves out the
    default's first item, alone, runs the notebook to the end (the cells that read the list too)."""
    spec = chapters.spec(slug)
    p = spec.param(name)
    item = next(c for c in reversed(p.allowed_choices()) if c != p.default[0])
    try:
        spec.validate({name: [item]})
    except chapters.ParamError as err:  # a rule may tie the list to another parameter: say so, then try the next
        pytest.fail(f"{slug}: {name} [{item}] is advertised but refused: {err}")
    nb = execute.execute_path(deps.BOOK_DIR / f"{slug}.ipynb", {name: [item]})
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


# Configurations the campaign found failing, kept as examples (each was a traceback or a NaN):
FOUND = [
    # 1 - (1 + r)^-n = 0 in floats: every owned cost NaN ("Encountered all NA values" in a caption)
    ("tco", {"rent_b300_usd_per_gpu_hour": 0.5, "cost_of_capital": 1.0694439266521892e-99}),
    # a logit range scaled to a central of 5e-324 rounded its ends to 0.0 (low > central: ValueError),
    # and the slider's 4-figure rounding overflowed to NaN below 1e-300
    ("utilisation", {"utilisation": 0.35836945687807964, "idle_power_fraction": 5e-324}),
    # failures so frequent that the best goodput underflowed to 0 in the Monte Carlo: policy / best
    # was 0/0 = NaN, counted by no verdict (and the truncated-exponential mean overflowed on its way)
    (
        "reliability",
        {"interruptions_per_gpu_year": 44.16449654663588, "checkpoint_write_s": 7200.0, "b300_failure_ratio": 6.25},
    ),
]


@pytest.mark.parametrize("slug, values", FOUND, ids=[f[0] for f in FOUND])
def test_what_the_campaign_found_stays_fixed(slug, values):
    run_chapter(chapters.spec(slug).validate(values))
