"""The sources page: every source with the tables citing it, links, and the data files to download."""

from __future__ import annotations

from analyses import data
from analyses.chapters import sources
from analyses.chapters.sources import figures


def test_every_cited_source_is_listed_with_its_citing_tables():
    cited = sources.citations().set_index("id")["cited by (rows)"]
    frame = sources.sources_table(sources.SPEC.defaults())
    assert set(frame["id"]) == set(data.sources()["id"])
    gpus = data.table("gpus")
    ids = [data.SOURCE_SPLIT.split(v) for v in gpus["source"]]  # a row may cite several sources
    for sid in {i for row in ids for i in row}:
        rows = sum(sid in row for row in ids)
        assert f"gpus ({rows})" in cited[sid]  # the count of rows citing it, as the page shows


def test_one_table_narrows_the_list_to_its_sources():
    only = sources.sources_table(sources.SPEC.validate({"table": "gpus"}))
    assert set(only["id"]) == {sid for v in data.table("gpus")["source"] for sid in data.SOURCE_SPLIT.split(v)}


def test_data_files_link_every_table_and_its_schema():
    frame = sources.data_files()
    assert list(frame["table"]) == data.table_names()
    assert (frame["rows"] == [len(data.table(n)) for n in frame["table"]]).all()
    view = figures.data_files_view()._repr_html_()
    for name in frame["table"]:
        assert f'href="../downloads/data/{name}.schema.yaml"' in view
    assert "sources/" in " ".join(f for files in frame["files"] for f in files)  # a folder table lists its files
    html = figures.sources_view(sources.sources_table(sources.SPEC.defaults()))._repr_html_()
    assert 'id="source-' in html
    assert "ledger (CSV)" in repr(figures.download_links())


def test_a_bare_address_is_shown_short_and_linked_whole():
    long = "https://www.example.org/" + "a" * 60
    assert figures.shown_address(long, long) == "example.org/" + "a" * 35 + "…"
    assert len(figures.shown_address(long, long)) == figures.SHOWN_ADDRESS_CHARS
    assert figures.shown_address("https://arxiv.org/abs/2410.21680", "https://arxiv.org/abs/2410.21680") == (
        "arxiv.org/abs/2410.21680"
    )
    assert figures.shown_address("arXiv:2410.21680", "https://arxiv.org/abs/2410.21680") == "arXiv:2410.21680"
    html = figures.sources_view(sources.sources_table(sources.SPEC.defaults()))._repr_html_()
    for sid, reference in data.sources()[["id", "reference"]].itertuples(index=False):
        for _text, url in sources.reference_links(str(reference)):
            if url:  # every address is a link's target, whole
                assert f'href="{url.replace("&", "&amp;")}"' in html, sid


def test_a_table_is_described_by_its_first_sentence():
    assert figures.first_sentence("Per-GPU datasheet figures.") == "Per-GPU datasheet figures."
    assert figures.first_sentence("Rows of runs (e.g. 1.5 GB each). `role` says which fit. More.") == (
        "Rows of runs (e.g. 1.5 GB each)."
    )
    view = figures.data_files_view()._repr_html_()
    claims = data.schema("claims").description
    assert figures.first_sentence(claims) in view and claims not in view
