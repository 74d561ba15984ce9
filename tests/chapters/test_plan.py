"""The plan chapter: compute, figures and sentences over its parameters, the published-run check, the
presets, the scenario it reads, and the command line that shares its code."""

from __future__ import annotations

import dataclasses
import functools
import math
import re

import altair as alt
import numpy as np
import pandas as pd
import pytest

from analyses import data, scenario
from analyses.chapters import ParamError
from analyses.chapters import plan as ch
from analyses.chapters.plan import figures, text, wiring
from analyses.models import plan as pl
from analyses.models.uncertainty import error_band
from analyses.pages import links
from analyses.scenario import planning
from analyses.site.cli import main

CHEAP = {"gpus": ["B300"]}  # one generation keeps each grid case near a tenth of a second


# A GPU's server price or rent (one parameter per generation and rent class) enters only the cost of
# that generation's layouts, so the prices of one family move together: every price still reaches
# its minimum and its maximum (the ends where a generation's cost, and so a recommendation, moves
# most), in one case per family and end instead of one per GPU (30 planner runs -> 6).
PRICE_FAMILY = re.compile(r"^(server|rent)_[a-z0-9]+(_hyperscaler)?_usd_per_gpu(_hour)?$")


def _grid() -> list[dict]:
    """Every parameter at its minimum and maximum and every choice, the rest at the defaults (one
    generation, except where the generations are the parameter); the GPU prices of one family
    (:data:`PRICE_FAMILY`) at each end together."""
    cases = [{}]
    families: dict[tuple, dict[str, dict]] = {}
    for p in ch.SPEC.params:
        choices = p.allowed_choices()
        family = PRICE_FAMILY.match(p.name)
        if p.kind == "str_list":
            # gpus=[B300] is CHEAP's own generation: that case is the defaults case, run once
            cases += [{p.name: [c]} for c in choices if [c] != CHEAP.get(p.name)]
        elif choices is not None:
            cases += [{p.name: c} for c in choices if c != p.default]
        elif family is not None:
            ends = families.setdefault(family.groups()[:2], {"min": {}, "max": {}})
            ends["min"][p.name], ends["max"][p.name] = p.min, p.max
        elif p.kind in ("int", "float"):
            cases += [{p.name: p.min}, {p.name: p.max}]
    assert len(families) == 3 and all(len(f["min"]) >= 4 for f in families.values())  # server, rent, hyperscaler
    cases += [ends[end] for ends in families.values() for end in ("min", "max")]
    cases.append({"compute_efficiency": 0.5})  # a GEMM efficiency ceiling the reader sets
    # a mixture of experts: a generic shape with fewer active parameters (expert parallelism searched)
    cases.append(
        {"model_shape": "generic", "n_params": 2e11, "active_params": 2e10, "n_experts": 64, "experts_active": 4}
    )
    return [CHEAP | c for c in cases]


def _id(values: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in values.items() if k != "gpus" or v != CHEAP["gpus"]) or "defaults"


@pytest.fixture(autouse=True, scope="module")
def _sources_read_once():
    """The site's source linker reads the sources table for every text cell; read it once here so the
    grid renders every table in reasonable time (the lead caches it in the site layer)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(links, "_source_ids", functools.cache(links._source_ids))
        yield


def _render(res: ch.Result) -> None:
    for chart in (figures.pareto_chart(res), figures.breakdown_chart(res), figures.sensitivity_chart(res)):
        assert isinstance(chart, alt.TopLevelMixin)
        chart.to_dict()
    views = (
        figures.recommended_view(res),
        figures.efficiency_view(res),
        figures.assumptions_view(res),
        figures.comparison_view(res),
        figures.scenarios_view(res),
    )
    for view in views:
        assert "<table" in view._repr_html_()
    sentences = [
        text.recommendation(res),
        text.breakdown_caption(res),
        text.sensitivity_caption(res),
        text.validation_takeaway(res),
        text.scenarios_takeaway(res),
        text.summary(res.run),
    ]
    for sentence in sentences:
        assert len(sentence) > 20 and "nan" not in sentence and "{" not in sentence
    glued = text.glued(res)
    assert all(isinstance(v, str) for v in glued.values()), "every glued value is formatted text"
    phrases = ("plan-recommendation", "plan-basis", "plan-validation", "plan-scenarios", "cap-plan-breakdown")
    assert all(glued[k] for k in phrases + ("plan-model", "plan-params", "plan-flop", "plan-tolerance"))
    assert glued["plan-recommendation"] == sentences[0] and "nan" not in " ".join(glued.values())


def test_the_pareto_chart_names_each_generations_front_on_the_chart(default, text_labels):
    """Issue 35: each generation's front is named at its end, not by the colour legend alone."""
    spec = figures.pareto_chart(default).to_dict()
    fronts = set(default.front["gpu"])
    assert len(fronts) >= 2 and sorted(text_labels(spec)) == sorted(fronts)


@pytest.mark.parametrize("values", _grid(), ids=_id)
def test_compute_figures_and_sentences_over_the_parameters(values, result):
    try:
        cfg = ch.SPEC.validate(values)
    except ParamError as err:  # the chapter's rule (ch.planner_problem) refuses the combination
        assert set(values) - {"gpus"} <= set(getattr(err, "names", (err.name,)))
        return
    problem = ch.planner_problem(cfg)
    if problem is not None:  # refused before a kernel starts, naming the parameter moved
        assert set(values) - {"gpus"} <= set(problem[0])
        return
    try:
        res = result(**cfg)
    except ParamError as err:  # a pinned size no GPU count of the test's smaller cluster allows
        assert set(values) - {"gpus"} <= set(err.names) <= set(wiring.PIN_PARAMS)
        return
    assert res.plan.n_candidates > 0 and set(res.request.gpus) == set(cfg["gpus"])
    if res.best is not None:
        assert res.best["fits"] and res.best["mem_bytes"] > 0 and 0 < res.best["goodput"] <= 1
        assert res.run.recommended["days_lo"].le(res.run.recommended["days_hi"]).all()
    _render(res)


REFUSED = [
    ({"min_gpus": 64, "max_gpus": 8}, ("min_gpus", "max_gpus"), "min_gpus <= max_gpus"),
    ({"seq_len": 1_048_576, "batch_million_tokens": 1.0}, ("seq_len", "batch_million_tokens"), "one sequence"),
    ({"precision": "fp8"}, ("gpus", "precision"), "A100 has no dense fp8"),
    ({"model_shape": "generic", "active_params": 2e11}, ("model_shape", "n_params", "active_params"), "up to n_params"),
    ({"active_params": 1e10}, ("model_shape", "n_params", "active_params"), "set model_shape generic"),
    (
        {"model_shape": "generic", "active_params": 1e10, "experts_active": 256, "n_experts": 64},
        ("n_experts", "experts_active"),
        "experts_active < n_experts",
    ),
]


@pytest.mark.parametrize(("values", "names", "needle"), REFUSED)
def test_refused_combinations_name_the_parameters(values, names, needle):
    """What the chapter's rule refuses before any kernel starts (wired as a Rule of SPEC on main)."""
    try:
        cfg = ch.SPEC.validate(values)
    except ParamError as err:
        assert set(getattr(err, "names", (err.name,))) == set(names) and needle in str(err)
        return
    found, message = ch.planner_problem(cfg)
    assert found == names and needle in message
    assert ch.planner_problem(ch.SPEC.validate({"compute_efficiency": 1.0})) is None
    assert ch.planner_problem(ch.SPEC.defaults()) is None


def test_the_planner_names_the_chapter_parameter():
    """The spec's rule runs the planner's own check before anything executes, naming the chapter's
    parameters at fault."""
    with pytest.raises(ParamError, match="min_gpus 131072, max_gpus 4096: expected integers 1 <= min_gpus <= max_gpus"):
        ch.SPEC.validate({"min_gpus": 131_072})
    with pytest.raises(ParamError, match="seq_len 1048576, batch_million_tokens 1.0: expected at least one sequence"):
        ch.SPEC.validate({"seq_len": 1_048_576, "batch_million_tokens": 1.0})
    with pytest.raises(ParamError, match="precision 'fp8'.*A100"):
        ch.SPEC.validate({"precision": "fp8"})


# --------------------------------------------------------------------------------------------
# The page at the defaults
# --------------------------------------------------------------------------------------------


def test_default_plan_and_its_recommendation(default):
    best = default.best
    assert list(default.run.recommended["gpu"]) == ["A100", "H100", "B200", "B300"]
    assert best["gpu"] == "B200" and best["meets_deadline"]
    assert best["cost"] == default.run.recommended["cost"][default.run.recommended["meets_deadline"]].min()
    # the default tokens are the scenario's tokens per parameter x the shape's parameters
    assert default.request.tokens == pytest.approx(default.s["tokens_per_param"] * default.request.shape.n_params)
    assert "cheapest layout that meets the deadline" in text.recommendation(default)
    table = wiring.recommended_table(default.run.recommended, default.plan.efficiency_basis)
    assert set(table["eff. from"]) == {"calibrated"}
    assert (default.front.groupby("gpu")["days"].is_monotonic_increasing).all()


def test_published_runs_land_within_the_stated_tolerance(default):
    """Llama 3.1 405B on 16,384 H100 (model card: 30.84M GPU-hours) and LLaMA-65B on 2,048 A100
    (carbon table: 1,022,362 GPU-hours), planned without their own throughput in the calibration.

    Each published figure must lie inside the plan's own 90% interval (the whole-run band of grouped
    cross-validation: the steady state at the planner's pick and the campaign's spread together) and within
    issue 33's worst-error target (40%); planned at the planner's pick, on Meta's in-house stack, with the
    campaign overhead.
    """
    outside = wiring.out_of_sample(default.comparison).set_index("preset")
    assert set(outside.index) == {"llama3-405b", "llama1-65b"}
    assert outside.loc["llama3-405b", "published GPU-hours"] == data.model("Llama 3.1 405B")["gpu_hours"]
    assert outside.loc["llama1-65b", "published GPU-hours"] == data.model("LLaMA-65B")["gpu_hours"]
    assert (outside["error"].abs() <= 0.40).all()
    for preset, r in outside.iterrows():  # each at its class's whole-run band (its rows' own bands)
        req = ch.request(ch.SPEC.validate({"preset": preset}))
        lo, hi = np.exp(error_band(planning.validation_errors(req, req.gpus[0])))
        assert lo < 1 < hi and (1 + r["error"]) * lo <= 1 <= (1 + r["error"]) * hi
    # the planner finds the Llama 3 paper's tensor parallelism by itself (TP8; Table 4: TP8 PP16)
    assert default.published_layout == "TP8 PP16"
    assert outside.loc["llama3-405b", "layout"].startswith("TP8 ")
    # LLaMA-65B: the paper reports about 21 days on 2,048 A100s (Sec 2.4); we plan within 15%
    assert outside.loc["llama1-65b", "days"] == pytest.approx(21, rel=0.25)
    # the run's own throughput in the calibration flatters the planner
    inside = default.comparison[default.comparison["run's own throughput"] == "in the calibration"].iloc[0]
    # its own throughput rows move the in-house stack's efficiency, so the plan moves (either way)
    assert inside["error"] != pytest.approx(outside.loc["llama3-405b", "error"], abs=1e-3)
    # the takeaway says which: LLaMA-65B lands at +15.x%, just past the chapter's ±15% (the planner's pick
    # now follows its stack's recipes instead of a fitted 0.82 layout factor)
    within = bool((outside["error"].abs() <= ch.PUBLISHED_TOLERANCE).all())
    assert ("every published run lands within" in text.validation_takeaway(default)) == within


def test_document_scenarios(default):
    rows = default.scenarios.set_index("preset")
    assert set(rows.index) == set(wiring.of_kind(wiring.DOCUMENT_SCENARIO, default.s))
    # tokens are the scenario's tokens per parameter times the document's 13B
    c = data.claim("000-2.1-13b-anecdote-days")
    assert rows.loc["doc000-13b-a100", "tokens"] == c.value("params") * default.s["tokens_per_param"]
    assert rows.loc["doc000-13b-a100", "stated days"] == c.value("days_a100")
    assert rows.loc["doc000-13b-a100", "meets"] and rows.loc["doc000-13b-b300", "meets"]
    assert rows.loc["doc000-13b-b300", "GPUs"] < rows.loc["doc000-13b-a100", "GPUs"]
    assert not rows.loc["doc000-100b-4-8-nodes", "meets"]  # 100B on 64 B300s misses its 90 days
    sentence = text.scenarios_takeaway(default)
    # the fine-tune corpus is the whole accumulated one (全量微调), as the ledger reads it: one month's entries
    # take far less than the stated days, which fit a corpus hundreds of times larger
    assert "fits a corpus about" in sentence and "whose size the case does not give" in sentence
    assert "even on 64 B300s" in sentence


def test_the_scenarios_follow_the_readers_tokens_per_parameter(default):
    more = ch.scenarios_table(ch.SPEC.validate({"tokens_per_param": 40.0})).set_index("preset")
    base = default.scenarios.set_index("preset")
    assert more.loc["doc000-13b-a100", "tokens"] == pytest.approx(2 * base.loc["doc000-13b-a100", "tokens"])


def test_related_claims_keep_their_own_chapters_verdicts(default):
    related = default.related.set_index("id")
    assert set(related.index) == set(wiring.related_claims(default.s))
    assert (related["chapter"] != "plan").all()
    assert related.loc["000-5-node-plan-time", "verdict"] in {"consistent", "inconsistent", "implausible"}


# --------------------------------------------------------------------------------------------
# The scenario is the only source of the assumptions the plan shares with the book
# --------------------------------------------------------------------------------------------

SHARED = (
    "batch_million_tokens",
    "tokens_per_param",
    "interruptions_per_gpu_year",
    "restart_s",
    "framework_memory_gb",
    "input_bytes_per_token",
    "dp_overlap",
    "rdma_nic_share",
    "rdma_latency_us",
    "depreciation_years",
    "cost_of_capital",
    "electricity_usd_per_kwh",
    "electricity_us_usd_per_kwh",
)


def test_shared_assumptions_are_scenario_parameters():
    names = {p.name for p in ch.SPEC.params}
    assert not names & {
        "restart_min",
        "overhead_gib",
        "overlap",
        "mtbf_source",
        "global_batch_tokens",
        "bytes_per_token",
    }
    for name in [*SHARED, *(n for n in names if n.endswith(("_usd_per_gpu", "_usd_per_gpu_hour")))]:
        p, a = ch.SPEC.param(name), scenario.assumption(name)
        assert (p.default, p.unit, p.min, p.max) == (a.central, a.unit, a.min, a.max), name
    assert {f"rent_{g}_usd_per_gpu_hour" for g in ("a100", "h100", "b200", "b300")} <= names


def test_a_readers_price_moves_only_that_generation(default):
    cfg = ch.SPEC.validate({"rent_b200_usd_per_gpu_hour": 2 * default.s["rent_b200_usd_per_gpu_hour"]})
    moved = ch.run(cfg).plan.layouts.groupby("gpu")["cost_rented"].min()
    base = default.plan.layouts.groupby("gpu")["cost_rented"].min()
    assert moved["B200"] == pytest.approx(2 * base["B200"])
    assert moved["H100"] == pytest.approx(base["H100"])
    assert ch.run(cfg).plan.best["gpu"] != "B200"  # twice the rent loses it the recommendation


def test_the_assumptions_table_is_the_scenarios(default):
    shown = default.assumptions.set_index("name")
    assert {"restart_s", "rdma_nic_share", "server_b300_usd_per_gpu", "electricity_usd_per_kwh"} <= set(shown.index)
    assert "electricity_us_usd_per_kwh" not in shown.index  # the book's one convention: the Chinese tariff
    assert shown.loc["restart_s", "central"] == scenario.assumption("restart_s").central


def test_sensitivity_reads_the_scenarios_ranges(default):
    frame = default.sensitivity.set_index("input")
    label = f"{scenario.assumption('dp_overlap').label} (90% range)"
    assert label in frame.index
    assert frame.iloc[0]["cost_swing"] == frame["cost_swing"].max()
    assert default.sensitivity.iloc[0]["input"] in text.sensitivity_caption(default)


# --------------------------------------------------------------------------------------------
# Sentence branches
# --------------------------------------------------------------------------------------------


def test_sentences_when_nothing_meets_or_fits(default, result):
    late = result(**(CHEAP | {"deadline_days": 0.01}))
    assert "though no layout meets" in text.recommendation(late)
    assert "it is the fastest" in text.summary(late.run)
    none = result(**{"gpus": ["A100"], "model_shape": "megatron-1t", "max_gpus": 8})
    assert none.best is None and "No layout of this model fits" in text.recommendation(none)
    assert "no cost to move" in text.sensitivity_caption(none)
    assert "no layout fits" in text.breakdown_caption(none)
    assert "No layout fits in memory on: A100" in text.summary(none.run)
    figures.pareto_chart(none).to_dict()
    figures.breakdown_chart(none).to_dict()
    figures.sensitivity_chart(none).to_dict()
    some = result(**{"gpus": ["A100", "B300"], "model_shape": "llama31-405b", "max_gpus": 64})
    assert "No layout fits in memory on A100" in text.recommendation(some)


def test_validation_and_scenario_branches(default):
    bad = dataclasses.replace(
        default,
        comparison=default.comparison.assign(error=lambda f: f["error"].where(f["preset"] != "llama1-65b", 0.6)),
    )
    assert "misses the ±15% tolerance" in text.validation_takeaway(bad)
    rows = default.scenarios.copy()
    i = rows.index[rows["preset"] == text.NODES_100B][0]
    rows.loc[i, "meets"] = True
    j = rows.index[rows["preset"] == text.FINETUNE][0]
    rows.loc[j, "planned days"] = 10.0
    k = rows.index[rows["preset"] == text.ANECDOTE_A100][0]
    rows.loc[k, ["meets", "planned days"]] = [False, 40.0]
    sentence = text.scenarios_takeaway(dataclasses.replace(default, scenarios=rows))
    assert "trains in" in sentence and "computing that month's entries alone fills" in sentence
    assert "beyond the stated" in sentence
    unfit = rows.assign(GPUs=np.nan)
    assert "no A100 layout fits" in text.scenarios_takeaway(dataclasses.replace(default, scenarios=unfit))


def test_a_published_run_that_no_longer_fits_is_shown_as_such(result):
    res = result(**(CHEAP | {"framework_memory_gb": 100.0}))
    frame = res.comparison
    assert (frame["layout"] == "does not fit in memory").any()
    assert frame.loc[frame["layout"] == "does not fit in memory", "error"].isna().all()
    assert "cannot be checked" in text.validation_takeaway(res)


# --------------------------------------------------------------------------------------------
# Presets
# --------------------------------------------------------------------------------------------


def test_presets_read_their_figures_from_the_claims_data_and_scenario():
    s = scenario.values()
    p = wiring.preset("doc000-10b-4-8-nodes", s)
    c = data.claim("000-5-node-plan-time")
    assert p["min_gpus"] == c.value("nodes_low") * c.value("gpus_per_node")
    assert p["max_gpus"] == c.value("nodes_high") * c.value("gpus_per_node")
    assert p["n_params"] == c.value("params")
    assert "batch_million_tokens" not in p  # the scenario's batch
    llama = wiring.preset("llama3-405b", s)
    assert llama["tokens"] == data.model("Llama 3.1 405B")["training_tokens"]
    bench = data.table("scaling_benchmarks").set_index("id").loc["llama3-405b-16384"]
    assert llama["batch_million_tokens"] * 1e6 == pytest.approx(bench["global_batch_seqs"] * bench["seq_len"])
    tune = wiring.preset("doc001-case-finetune", s)
    samples = data.claim("001-4-case-workload-7b-13b").value("new_samples_per_month_high")
    assert tune["tokens"] == samples * s["finetune_tokens_per_sample"] * s["finetune_epochs"]
    assert math.isnan(tune["compare_gpu_hours"])


def test_preset_fills_only_fields_left_at_their_defaults():
    req = ch.request(ch.SPEC.validate({"preset": "doc000-13b-b300", "max_gpus": 64}))
    assert req.gpus == ("B300",) and req.max_gpus == 64 and req.shape.name == "Llama 2 13B"
    assert req.global_batch_tokens == scenario.values()["batch_million_tokens"] * 1e6


def test_bad_preset_expressions_and_ids_name_the_field():
    s = scenario.values()
    assert wiring.resolve("2 * 3", s) == 6.0 and wiring.resolve(5, s) == 5.0
    with pytest.raises(pl.PlanError, match="'tokens'.*cannot resolve"):
        wiring.resolve("claim:no-such-claim:x", s, "tokens")
    with pytest.raises(pl.PlanError, match="'tokens'"):
        wiring.resolve("scenario:no_such_assumption", s, "tokens")
    with pytest.raises(pl.PlanError, match="'preset'"):
        wiring.preset("nope", s)


# --------------------------------------------------------------------------------------------
# The command line shares the chapter's code
# --------------------------------------------------------------------------------------------


def test_cli_plan_prints_the_recommendation(tmp_path, capsys):
    f = tmp_path / "my.yaml"
    f.write_text("preset: doc000-13b-b300\nmax_gpus: 64\n")
    assert main(["plan", "--params-file", str(f), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "Recommended:" in out and "B300" in out and "A100" not in out


def test_cli_plan_preset_prints_what_the_chapter_computes(capsys):
    assert main(["plan", "-p", "preset", "llama3-405b", "--no-html"]) == 0
    out = capsys.readouterr().out
    cfg = ch.SPEC.validate({"preset": "llama3-405b"})
    assert out.strip() == text.summary(ch.run(cfg)).strip()
    assert "16384 x H100 (TP8 " in out


@pytest.mark.parametrize(
    ("text_", "needle"),
    [
        ("gpuz: [A100]\n", "field 1 is not a parameter (did you mean gpus?)"),  # names no text of the file
        ("max_gpus: lots\n", "parameter 'max_gpus'"),
        ("- a\n- b\n", "expected a mapping"),
        ("min_gpus: 100\nmax_gpus: 10\n", "min_gpus 100, max_gpus 10: expected integers 1 <= min_gpus <= max_gpus"),
        ("seq_len: 1048576\nbatch_million_tokens: 1\n", "batch_million_tokens 1.0: expected at least one sequence"),
    ],
)
def test_cli_plan_bad_files_get_one_line_naming_the_field(tmp_path, capsys, text_, needle):
    f = tmp_path / "bad.yaml"
    f.write_text(text_)
    assert main(["plan", "--params-file", str(f)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_cli_plan_reads_yaml_numbers_without_a_signed_exponent(tmp_path, capsys):
    # PyYAML (YAML 1.1) reads 3.0e10 as a string; the CLI takes it as the number a reader meant
    f = tmp_path / "my.yaml"
    f.write_text("model_shape: generic\nn_params: 3.0e10\ntokens: 6.0e11\ngpus: [B300]\nmax_gpus: 64\n")
    assert main(["plan", "--params-file", str(f), "--no-html"]) == 0
    assert "30.0B parameters" in capsys.readouterr().out


def test_summary_columns(default):
    out = text.summary(default.run)
    assert "days 5-95%" in out and "owned 90%" in out and "rented (RMB)" in out
    assert pd.notna(default.run.recommended["cost_owned_hi"]).all()


# --------------------------------------------------------------------------------------------
# Coverage: any cluster size, mixtures of experts, H800, NVL72 and FP4 (issue 21's "Done when")
# --------------------------------------------------------------------------------------------

COVERAGE = [
    (["-p", "model_shape", "llama2-70b", "-p", "gpus", "A100", "-p", "min_gpus", "440", "-p", "max_gpus", "440"],
     "440 x A100 ("),
    (["-p", "model_shape", "gpt3-175b", "-p", "gpus", "A100", "-p", "min_gpus", "992", "-p", "max_gpus", "992"],
     "992 x A100 ("),
    (["-p", "model_shape", "generic", "-p", "n_params", "671e9", "-p", "active_params", "37e9", "-p", "gpus", "H800",
      "-p", "precision", "fp8", "-p", "min_gpus", "2048", "-p", "max_gpus", "2048", "-p", "tokens", "14.8e12"],
     "2048 x H800 ("),
    (["-p", "model_shape", "llama31-405b", "-p", "gpus", "GB300", "-p", "precision", "fp4", "-p", "max_gpus", "8192"],
     " x GB300 ("),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "needle"), COVERAGE, ids=["440-A100", "992-A100", "671B-MoE-H800-fp8", "405B-GB300-fp4"]
)
def test_cli_plans_any_cluster_size_moe_h800_and_nvl72_fp4(args, needle, capsys):
    assert main(["plan", *args, "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "Recommended: " + needle.strip() in out or needle in out
    assert "No layout fits" not in out


def test_the_moe_plan_finds_deepseeks_own_layout():
    """DeepSeek-V3 (671B, 37B active, 8 of 256 experts) on 2,048 H800 in FP8 at its 15,360-sequence batch:
    the planner finds the paper's layout by itself (no tensor parallelism, 8 or 16 pipeline stages
    (the paper's 16), 64-way expert parallelism; DeepSeek-V3 report Sec. 3.2) on DeepSeek's in-house
    stack, and a step time within 15% of its published
    tokens per second per GPU, while the H800 has no price in the scenario (costs n/a, never invented)."""
    run = data.published_runs().set_index("id").loc["dsv3-h800-2048"]
    cfg = ch.SPEC.validate(
        {
            "model_shape": "generic",
            "n_params": float(run["params_total"]),
            "active_params": float(run["params_active"]),
            "gpus": ["H800"],
            "precision": "fp8",
            "min_gpus": 2048,
            "max_gpus": 2048,
            "tokens": float(run["training_tokens"]),
            "batch_million_tokens": float(run["global_batch_seqs"] * run["seq_len"]) / 1e6,
            "stack": "in-house",
        }
    )
    planned = ch.run(cfg)
    best, rec = planned.plan.best, planned.recommended.iloc[0]
    assert (best["tp"], best["ep"]) == (1, 64) and best["pp"] in (8, 16)
    assert best["tokens_per_s_per_gpu"] == pytest.approx(run["tokens_per_s_per_gpu"], rel=0.15)
    # the whole run: the report's 2.664M H800 GPU-hours of pre-training inside the plan's 90% band
    assert rec["gpu_hours_lo"] <= run["gpu_hours"] <= rec["gpu_hours_hi"]
    assert np.isnan(best["cost_rented"]) and np.isnan(best["cost_owned"])


def test_nvl72_tensor_parallelism_reaches_beyond_a_server():
    """On a 72-GPU NVLink domain the search offers tensor parallelism beyond 8 (16, 32, 64 dividing
    the heads); on an 8-GPU server it stops at 8."""
    cfg = ch.SPEC.validate({"model_shape": "llama31-405b", "gpus": ["GB300", "B300"], "max_gpus": 512})
    req = ch.request(cfg)
    assert pl.candidates(req, "GB300")["tp"].max() == 64 and pl.candidates(req, "B300")["tp"].max() == 8


def test_the_assumptions_table_shows_money_in_the_pages_currency(default, result):
    rmb = default.assumptions.set_index("name")
    usd = result(currency="USD").assumptions.set_index("name")
    rate = default.s["usd_cny"]
    assert rmb.loc["server_b300_usd_per_gpu", "unit"] == "RMB per GPU"
    assert rmb.loc["server_b300_usd_per_gpu", "central"] == pytest.approx(
        usd.loc["server_b300_usd_per_gpu", "central"] * rate
    )
    assert not rmb["unit"].str.startswith("USD").any() and not usd["unit"].str.startswith(("RMB", "CNY")).any()
    assert rmb.loc["restart_s", "central"] == usd.loc["restart_s", "central"]  # not money: unchanged


def test_a_plan_names_its_band_class_and_says_when_the_band_is_wider_than_the_rule():
    """Each recommended option names the class of published runs its bands come from and whether every
    band lies within issue 33's x1.6: a 7B on A100 with FSDP does (dense, under 100B); Llama 3.1 405B at
    the planner's pick does not (dense, 100B and over: pin the layout for a narrower band)."""
    small = ch.SPEC.validate({"model_shape": "llama2-7b", "gpus": ["A100"], "stack": "fsdp", "min_gpus": 64,
                              "max_gpus": 64, "tokens": 1e11})  # fmt: skip
    (a,) = text.records(ch.run(small))
    assert a["band_class"] == "dense, under 100B" and a["band_within_rule"]
    large = ch.run(ch.SPEC.validate({"preset": "llama3-405b"}))
    assert all(r["band_class"] == "dense, 100B and over" and not r["band_within_rule"] for r in text.records(large))
    assert text.figures_table(large)["band from"].iloc[0] == "dense, 100B and over (wider than x1.6)"
