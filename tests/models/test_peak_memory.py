"""The measured-run mapping and the allocator-overhead fit of analyses/models/peak_memory.py."""

import numpy as np
import pytest

from analyses import data
from analyses.models import peak_memory as pm

FRAMEWORKS = data.memory_frameworks().set_index("framework")


def _row(run_id: str) -> dict:
    return data.memory_measured().set_index("id").loc[run_id].to_dict()


def test_torchtitan_pipelined_local_batch_is_split_into_micro_batches():
    # 405B on 512 GPUs: a local batch of 32 sequences in 8 micro-batches of 4; 'selective' is op-level
    k = pm.run_kwargs(_row("torchtitan-mem-405b-512-3d-1f1b"), FRAMEWORKS.loc["torchtitan-fsdp2"])
    assert (k["micro_batch"], k["microbatches"], k["pp"], k["zero_stage"]) == (4, 8, 8, 3)
    k8 = pm.run_kwargs(_row("torchtitan-mem-8b-8-fsdp"), FRAMEWORKS.loc["torchtitan-fsdp2"])
    assert (k8["micro_batch"], k8["recompute"], k8["tied_embeddings"], k8["gated_mlp"]) == (2, "op", False, True)


def test_megatron_micro_batch_is_one_micro_batch():
    k = pm.run_kwargs(_row("bloom-176b-final-tp4-pp12-mbs2"), FRAMEWORKS.loc["megatron-deepspeed-bf16"])
    assert (k["micro_batch"], k["microbatches"], k["recompute"], k["zero_stage"]) == (2, 128, "full", 1)
    assert k["fp32_grad_buffer"] and k["embedding_as_layer"] and not k["flash"]


def test_overhead_fit_closed_form():
    # two runs holding 40 and 50 GiB over a 1 GiB context measured 51 and 61 GiB: ratios 1.25 and 1.2
    gib = 2.0**30
    f = pm.fit_overhead(np.array([51, 61]) * gib, np.array([40, 50]) * gib, gib)
    assert f.fraction == pytest.approx(np.sqrt(1.25 * 1.2) - 1)
    assert f.log_sd == pytest.approx(np.std(np.log([1.25, 1.2]), ddof=1))
    assert (f.dof, f.n) == (1, 2)
    lo, hi = f.band()
    assert lo == pytest.approx(1 / hi) and hi > 1
    assert float(pm.predicted_peak(40 * gib, gib, f.fraction)) == pytest.approx(40 * gib * (1 + f.fraction) + gib)
    with pytest.raises(ValueError, match="two calibration runs"):
        pm.fit_overhead([51.0], [40.0], 1.0)
