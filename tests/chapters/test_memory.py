"""The memory chapter: compute, figures and sentences over its parameters; its verdicts and what
decides them; the one assumption read through the scenario."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from analyses import chapters, data, scenario
from analyses.chapters import ledger
from analyses.chapters import memory as ch
from analyses.chapters.memory import checks, figures, text
from analyses.models import memory_figures

FIGURES = (
    figures.accounting_chart,
    figures.zero_chart,
    figures.measured_chart,
    figures.allowance_slider,
    figures.runs_chart,
)


@pytest.fixture
def result(chapter_results):
    """The shared chapter results (tests/chapters/conftest.py) with a layout the chapter's rules allow."""
    return lambda **over: chapter_results(ch.SPEC.slug, **_layout_for(over))


def _layout_for(over: dict) -> dict:
    """``over`` with a tensor-parallel degree the preset's heads and the GPU's NVLink domain allow,
    where ``over`` does not choose one, and a recipe the GPU can run where ``over`` names a GPU
    without the default's bf16 (the spec's rules refuse the others: tested below)."""
    gpu = data.gpu(over.get("gpu", ch.SPEC.param("gpu").default))
    if "precision" not in over and "bf16" not in gpu.peak_flops_dense:
        over = over | {"precision": "fp16-mixed"}
    if "tp" in over or not ({"preset", "gpu"} & set(over)):
        return over
    s = data.model_shape(over.get("preset", ch.SPEC.param("preset").default))
    domain = data.gpu(over.get("gpu", ch.SPEC.param("gpu").default)).nvlink_domain_gpus
    tp = max(t for t in (1, 2, 4, 8) if t <= domain and s["heads"] % t == 0 and s["kv_heads"] % t == 0)
    return over | {"tp": tp}


def render(res: ch.Result) -> list[str]:
    assert all(f(res).to_dict() for f in FIGURES)
    assert list(ch.layout_table(res)["part"])[-1].startswith("usable HBM")
    glued = text.glued(res)
    assert all(isinstance(v, str) and v for v in glued.values()), "every glued value is formatted, non-empty text"
    out = [glued[k] for k in ("take_weights", "hb_takeaway", "layout_basis", "misfit", "cap_allowance_slider")]
    assert all(len(t) > 20 for t in out)
    return out


MANY = ("preset", "plan_preset", "gpu", "previous_gpu")  # choices run through the code they change, below
SOME = {"preset": ("bert-base", "llama31-405b", "megatron-1t"), "gpu": ("P100", "GB300"), "previous_gpu": ("P100",)}


def _grid() -> list[dict]:
    """Each parameter at its minimum, its maximum and every choice, the rest at defaults; layout
    parameters that must divide n_gpus are set together; of the many shapes and GPUs, a few."""
    out: list[dict] = [{}]
    for p in ch.SPEC.params:
        if p.name in ("n_gpus", "tp", "pp"):
            continue
        if p.kind == "bool":
            out.append({p.name: not p.default})
        elif p.name in MANY:
            out += [{p.name: c} for c in SOME.get(p.name, ())]
        elif p.kind == "str":
            out += [{p.name: c} for c in p.allowed_choices() if c != p.default]
        elif p.kind == "str_list":
            out += [{p.name: (c,)} for c in p.allowed_choices()[:: max(1, len(p.allowed_choices()) // 3)]]
        else:
            out += [{p.name: p.min}, {p.name: p.max}]
    out += [
        {"n_gpus": 1, "tp": 1, "pp": 1},
        {"n_gpus": 64000, "tp": 8, "pp": 80},  # the most stages the default preset's 80 layers allow
        {"n_gpus": 72, "tp": 8, "pp": 1, "gpu": "GB300"},  # NVL72: one NVLink domain of 72 GPUs
        {"n_gpus": 80, "tp": 1, "pp": 80},
    ]
    return out


@pytest.mark.parametrize("over", _grid(), ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_compute_figures_and_sentences_over_the_grid(over, result):
    res = result(**over)
    render(res)
    assert list(res.ledger["id"]) == [c.id for c in data.claims() if c.chapter == ch.SPEC.slug]
    assert set(res.gpus_needed.columns) >= set(res.cfg["gpus"])


@pytest.mark.parametrize("name", data.model_shape_names())
def test_every_shape_through_the_layout_the_fits_and_the_plan(name):
    cfg = ch.SPEC.validate(_layout_for({"preset": name, "plan_preset": name, "models": [name]}))
    lay = ch.layout_check(cfg, 5e9)
    assert lay["total"] > 0 and lay["model"] == data.model_shape(name)["label"]
    assert not ch.zero_curves(cfg, 5e9).empty and not ch.accounting_table(cfg).empty
    best = ch.fit_search(name, "B300", cfg, 5e9, n_params=1e10)
    assert best is None or best["fits"]


@pytest.mark.parametrize("gpu", data.gpu_names())
def test_every_gpu_through_the_layout_and_the_fits(gpu):
    cfg = ch.SPEC.validate(_layout_for({"gpu": gpu, "previous_gpu": gpu}))
    assert ch.layout_check(cfg, 5e9)["usable_gb"] == pytest.approx(data.gpu(gpu).hbm_usable_bytes / 1e9)
    best = ch.fit_search("llama2-7b", gpu, cfg, 5e9)
    assert best is None or best["total"] <= data.gpu(gpu).hbm_usable_bytes - 5e9


def test_a_layout_that_does_not_divide_names_the_parameters(result):
    with pytest.raises(ValueError, match="n_gpus 48, tp 8, pp 4: n_gpus must be a multiple of tp x pp = 32"):
        result(n_gpus=48)
    with pytest.raises(ValueError, match="tp must divide bert-base's 12 heads: tp one of 1, 2, 3, 4, 6, 12"):
        ch.SPEC.validate({"preset": "bert-base", "tp": 8})
    with pytest.raises(ValueError, match="pp at most 12 for bert-base"):
        ch.SPEC.validate({"preset": "bert-base", "tp": 4, "pp": 16, "n_gpus": 64})


def test_the_recipe_needs_its_format_on_the_gpu_as_in_every_chapter():
    """One precision rule: memory refuses fp8 on a P100 with the words scaling-efficiency uses."""
    with pytest.raises(ValueError, match="gpu 'P100', precision 'fp8': P100 has no dense fp8 tensor throughput") as err:
        ch.SPEC.validate({"gpu": "P100", "precision": "fp8", "tp": 1})
    assert "it offers fp32, fp16" in str(err.value)
    with pytest.raises(ValueError, match=r"V100 has no dense bf16 .*\(the bf16-mixed recipe multiplies in bf16\)"):
        ch.SPEC.validate({"gpu": "V100"})
    # scaling-efficiency offers only the GPUs the planner places (an InfiniBand cluster in
    # data/cluster_configs.csv: no P100), so the same sentence is compared on an A100
    words = "A100 has no dense fp8 tensor throughput in data/gpus.csv; it offers fp32, tf32, bf16, fp16"
    with pytest.raises(ValueError, match=words):
        ch.SPEC.validate({"gpu": "A100", "precision": "fp8", "tp": 1})
    with pytest.raises(ValueError, match=words):
        chapters.spec("scaling-efficiency").validate({"gpu": "A100", "precision": "fp8"})
    assert ch.SPEC.validate({"gpu": "V100", "precision": "fp16-mixed"})["precision"] == "fp16-mixed"


def test_phrase_branches(result):
    assert "no single GPU holds" in text.hundred_b_takeaway(result())
    assert "a B300 node does" in text.hundred_b_takeaway(result())
    # in fp32 with fp32 gradients a B300 node no longer holds 100B parameters' states (16 bytes x 1e11 = 1.6 TB)
    assert "not even a B300 node" in text.hundred_b_takeaway(result(framework_memory_gb=100.0, fp32_grads=True))
    # a model that fits no searched layout on a small GPU
    assert "fits no searched layout on the P100" in text.hundred_b_takeaway(
        result(preset="megatron-1t", previous_gpu="P100")
    )
    both = text.hundred_b_takeaway(result(preset="megatron-1t", seq_len=1048576))
    assert "fits no searched layout on the A100 or the B300" in both
    assert text.layout_fit(result(gpu="V100")) == ": it does not fit"
    assert text.layout_fit(result()) == ": it fits"
    assert text.layout_fit(result(framework="torchtitan-fsdp2")).startswith(" (counting what torchtitan-fsdp2 keeps")
    assert text.layout_basis(result()).startswith("with the scenario's 5.0 GB of framework memory")
    assert text.layout_basis(result(framework="torchtitan-fsdp2")).startswith("counting what torchtitan-fsdp2 keeps")
    assert "not FP16" in text.weights_takeaway(result())
    # were the weights figure judged consistent (say, with another reading), the takeaway says both hold
    led = result().ledger.copy()
    led.loc[led["id"] == ch.HUNDRED_B, "verdict"] = "consistent"
    assert text.weights_takeaway(dataclasses.replace(result(), ledger=led)).startswith("both the 400 GB")


# -------------------------------------------------------------------------- verdicts


def test_verdicts_at_the_defaults_and_what_decides_them(result):
    led = result().ledger.set_index("id")  # the verdicts at the defaults: tests/test_snapshots.py
    # 100B x 2 bytes = 200 GB of FP16 weights, not 400 (FP32); 16-18 bytes per parameter give 1.6-1.8 TB
    h = result().hundred_b
    assert (h.weights_fp16_gb, h.weights_fp32_gb, h.states_tb, h.states_fp32_grads_tb) == (200, 400, 1.6, 1.8)
    assert "above the recomputed 200 GB" in led.loc["000-2.2-weights-400gb-total-1p5tb", "reason"]
    assert "total does hold" in led.loc["000-2.2-weights-400gb-total-1p5tb", "reason"]
    # 1.5 TB over the largest card's usable HBM (GB300, 279 GiB) less 5 GB: 6 GPUs
    assert checks.largest_gpu() == "GB300"
    assert "at least 6 GPUs" in led.loc["000-2.2-one-card-cannot-hold", "recomputed"]
    # 288 GiB of HBM3e over the A100's 80 GiB: 3.6x, at least the 1.2x read for "markedly"
    assert "3.60×" in led.loc["000-2.2-hbm3e-capacity", "reason"]
    # 7.7 TB/s (HGX datasheet) to 8.0 (chip): "over 8" rounds up, within the fact tolerance
    assert "7.70–8.00 TB/s" in led.loc["001-2.2-hbm-over-8tbs", "reason"]
    # the plan's 32 B300s hold the states of 507-570B parameters, fifty times the 10B model
    cap = result().plan_capacity
    assert cap["gpus"] == 32 and 5.0e11 < cap["least"] < cap["most"] < 5.8e11 and cap["need"] == 1


def test_the_strict_bandwidth_reading_keeps_the_verdict(result):
    """Read strictly ("more than 8 TB/s"), the claim still lies within the fact tolerance of 7.7-8.0 TB/s."""
    claim = data.claim("001-2.2-hbm-over-8tbs")
    f = checks.check_hbm_over_8tbs(claim, scenario.values(), ch.SPEC.defaults())
    assert f.strict[:2] == (8.0, np.inf) and f.stated[:2] == (8.0, 8.0)
    assert "strict reading" not in result().ledger.set_index("id").loc[claim.id, "reason"]


def test_a_parameter_moves_a_verdict_and_a_fact_contradicts_another(monkeypatch, result):
    """No framework allowance a reader may set flips the memory verdicts (they rest on byte counts);
    a different memory type or a smaller card would."""
    led = result(framework_memory_gb=100.0).ledger.set_index("id")["verdict"]
    assert (led == result().ledger.set_index("id")["verdict"]).all()
    assert result(framework_memory_gb=100.0).plan_capacity["most"] < result().plan_capacity["most"]
    claim = data.claim("000-2.2-hbm3e-capacity")
    real = data.gpus

    def hbm3(*args, **kwargs):
        frame = real(*args, **kwargs)
        frame.loc[frame["name"] == "B300", "hbm_type"] = "HBM3"
        return frame

    monkeypatch.setattr(data, "gpus", hbm3)
    checks.hbm_type.cache_clear()
    try:
        f = checks.check_hbm3e_capacity(claim, scenario.values(), ch.SPEC.defaults())
    finally:
        checks.hbm_type.cache_clear()
    assert f.contradiction == "B300 carries HBM3, not HBM3e"


def test_the_chapter_ledger_at_defaults_is_the_book_ledger(result):
    own = result().ledger.set_index("id")
    book = ledger.ledger(ids=list(own.index)).set_index("id")
    assert own.equals(book.loc[own.index])


# -------------------------------------------------------------------------- one scenario


def test_the_allowance_is_the_scenarios(result):
    p, a = ch.SPEC.param("framework_memory_gb"), scenario.assumption("framework_memory_gb")
    assert (p.default, p.min, p.max, p.unit) == (a.central, a.min, a.max, a.unit)
    res = result(framework_memory_gb=20.0)
    assert res.s["framework_memory_gb"] == 20.0
    assert res.layout["overhead"] == pytest.approx(20.0)
    usable = res.hundred_b_gpus.set_index("GPU")["usable GB (less allowance)"]
    assert usable["B300"] == pytest.approx(data.gpu("B300").hbm_usable_bytes / 1e9 - 20.0)


def test_checks_read_only_the_scenario():
    """A check's finding depends on the scenario only: the chapter's view parameters change nothing."""
    s = scenario.values()
    base = ch.SPEC.defaults()
    other = ch.SPEC.validate({"precision": "fp8", "preset": "llama2-7b", "previous_gpu": "H100", "seq_len": 128})
    for claim_id, fn in ledger.checks("memory").items():
        claim = data.claim(claim_id)
        a, b = fn(claim, s, base), fn(claim, s, other)
        assert (a.stated, a.value, a.low, a.high, a.contradiction) == (
            b.stated,
            b.value,
            b.low,
            b.high,
            b.contradiction,
        )
        assert a.reading == checks.reading(claim) and a.reading, claim_id


def test_the_page_and_the_checks_share_their_figures(result):
    res = result()
    cap = checks.plan_capacity(data.claim(ch.PLAN), res.s)
    assert res.plan_capacity == {k: float(v) for k, v in cap.items()}
    # the published table and the model tests read one mapping
    for r in data.memory_published().to_dict("records"):
        assert res.published.set_index("figure").loc[r["description"], "model"] == memory_figures.published_figure(r)
    assert res.published["within print"].all()
    # every fit the tables show is computed once and reused
    assert res.min_gpus(res.cfg["preset"], "B300") == int(res.fits[(res.cfg["preset"], "B300")]["n_gpus"])


def test_the_runs_table_is_the_validation_and_the_sentences_say_so(result):
    res = result()
    frame = figures.runs_table(res)
    assert len(frame) == len(res.runs) and frame["source"].notna().all()
    val = res.runs[res.runs["role"] == "validate"]
    glued = text.glued(res)
    assert glued["runs_val"] == f"{len(val)}" and glued["bloom_measured"] == "59 GiB"
    assert glued["pc_worst_printed"] == "1.7B"  # the fit's error on BLOOM and each misfit: the snapshot's
    assert "outside the band: Llama 3.1 8B (TP1 PP1 DP128, +" in text.misfit_sentence(res)
    # the validation does not depend on the chapter's layout parameters
    assert result(tp=4, pp=2).runs.equals(res.runs)


@pytest.mark.parametrize("framework", ["torchtitan-fsdp2", "megatron-deepspeed-bf16"])
def test_a_framework_replaces_the_flat_allowance_by_what_it_keeps_and_the_fitted_reserve(framework):
    """peak = held x reserve + CUDA context, held with the framework's buffers and the shape's vocabulary."""
    from analyses.models import peak_memory as pm

    cfg = ch.SPEC.validate({"framework": framework, "preset": "llama2-70b", "tp": 8, "pp": 4, "n_gpus": 64})
    reserve = 1.3
    lay = ch.layout_check(cfg, 5e9, reserve)
    fw = data.memory_frameworks().set_index("framework").loc[framework]
    held = sum(lay[k] for k in ("weights", "gradients", "optimizer", "activations", "logits", "workspace"))
    assert lay["total"] == pytest.approx(held * reserve + pm.context_bytes(fw) / 1e9)
    flat = ch.layout_check(ch.SPEC.validate({"preset": "llama2-70b", "tp": 8, "pp": 4, "n_gpus": 64}), 5e9)
    assert flat["overhead"] == pytest.approx(5.0) and lay["total"] > flat["total"]
    # Megatron-DeepSpeed's BF16 optimizer keeps an unsharded fp32 gradient buffer: 2 + 4 bytes a parameter
    ratio = lay["gradients"] / lay["weights"]
    assert ratio == pytest.approx(3.0 if framework.startswith("megatron") else 1.0)
