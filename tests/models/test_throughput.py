"""Tests of analyses.models.throughput: time-to-train in months and hours, the MFU a speed-up implies,
and the best published per-GPU ratio, against closed forms and the published runs the scenario uses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses import data, units
from analyses.models import throughput


def test_pretrain_months_is_6nd_over_the_cluster_rate():
    # 100B parameters x 2T tokens x 6 = 1.2e24 FLOP; 200 A100s at 312 TFLOP/s x 0.51 = 3.18e16 FLOP/s
    flop = 6 * 100e9 * 2e12
    rate = 200 * 312e12 * 0.51
    want = flop / rate / units.SECONDS_PER_DAY / units.DAYS_PER_MONTH
    assert throughput.pretrain_months(100e9, 20, 200, 312e12, 0.51) == pytest.approx(want)
    assert want == pytest.approx(14.34, rel=1e-3)  # 3.77e7 s = 436 days = 14.3 months of 30.44 days


def test_pretrain_months_vectorises_and_scales():
    months = throughput.pretrain_months(100e9, np.array([10.0, 20.0, 40.0]), 900, 312e12, 0.51)
    np.testing.assert_allclose(months / months[1], [0.5, 1.0, 2.0])
    # 4.5 times the GPUs, 4.5 times less time
    assert throughput.pretrain_months(100e9, 20, 200, 312e12, 0.51) == pytest.approx(4.5 * months[1])


def test_finetune_hours_closed_form():
    # 13B x (9,000 entries x 2,048 tokens x 3 epochs) = 7.19e17 FLOP on 8 A100s at 51% MFU: 0.941 hours
    hours = throughput.finetune_hours(13e9, 9000, 2048, 3, 8, 312e12, 0.51)
    want = 6 * 13e9 * 9000 * 2048 * 3 / (8 * 312e12 * 0.51) / 3600
    assert hours == pytest.approx(want)
    assert hours == pytest.approx(0.941, abs=0.001)


def test_best_published_ratio():
    bench = pd.DataFrame(
        {
            "gpu": ["A100", "A100", "B200", "B200", "H100"],
            "precision": ["bf16", "bf16", "fp8", "bf16", "fp8"],
            "metric": ["model_tflops_per_gpu"] * 4 + ["scaling_efficiency"],
            "value": [150.0, 171.0, 1667.0, 1000.0, 5000.0],
        }
    )
    assert throughput.best_published_ratio(bench, ("B200", "B300"), "A100", "fp8") == pytest.approx(1667 / 171)
    with pytest.raises(ValueError, match="no published model TFLOP/s"):
        throughput.best_published_ratio(bench, ("GB300",), "A100", "fp8")


def test_best_published_ratio_on_the_book_table():
    # Megatron-Bridge 25.11 Llama 3.1 405B on 128 B200 (1,667) over Megatron-LM 530B on 560 A100 (171)
    ratio = throughput.best_published_ratio(data.table("scaling_benchmarks"), ("B200", "B300"), "A100", "fp8")
    assert ratio == pytest.approx(1667 / 171)
