"""Every claim has exactly one check (or is pending because its chapter is not written)."""

from __future__ import annotations

from analyses import chapters, data, verdicts


def test_every_check_has_a_claim():
    ids = {c.id for c in data.claims()}
    assert set(verdicts.registered_checks()) <= ids


def test_every_claim_of_a_written_chapter_has_a_check():
    written = set(chapters.chapter_slugs())
    checks = verdicts.registered_checks()
    missing = [c.id for c in data.claims() if c.chapter in written and c.id not in checks]
    assert missing == []


def test_ledger_columns_and_verdicts():
    frame = verdicts.ledger()
    assert list(frame.columns) == verdicts.LEDGER_COLUMNS
    assert len(frame) == len(data.claims())
    assert set(frame["verdict"]) <= {*verdicts.VERDICTS, verdicts.PENDING}
    written = set(chapters.chapter_slugs())
    pending = frame[frame["verdict"] == verdicts.PENDING]
    assert not pending["chapter"].isin(written).any()
    real = frame[frame["verdict"] != verdicts.PENDING]
    assert (real["reason"].str.len() > 10).all() and (real["recomputed"].str.len() > 0).all()


def test_scaling_gap_verdicts_with_defaults():
    frame = verdicts.ledger("scaling-gap").set_index("id")
    # Document 000 states the same gap per year (part 0) and per 18 months (part 1): both cannot hold.
    assert frame.loc["000-0-growth-10x-per-year", "verdict"] == "inconsistent"
    assert frame.loc["000-1-param-growth-18mo", "verdict"] == "inconsistent"
    # GPT-3 was trained on V100s (Brown et al. 2020, Sec 2.3), not the A100 the table names.
    assert "V100" in frame.loc["000-1-gen-2020-gpt3", "reason"]
    assert frame.loc["000-1-gen-2018-bert-base", "verdict"] == "inconsistent"


def test_centuries_check_follows_its_parameters():
    spec = chapters.spec("scaling-gap")
    gpt3_budget = spec.validate({"tokens_per_param": 1.7})  # GPT-3's 300B tokens / 175B params
    result = verdicts.evaluate("000-0-centuries", gpt3_budget)
    years = float(result.recomputed.split(" years")[0].replace(",", ""))
    # 6 * 1e11 * 1.7e11 FLOP / (2 x 64 x 2.45e9 x 32 FLOP/s x 0.5) / 3.156e7 s = 644 years
    assert years == 644 and result.verdict == "consistent"
