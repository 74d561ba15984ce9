"""Parameters cells papermill reads natively, and misspelt parameters that fail instead of running
the defaults: through our CLI, our papermill entry point (build.execute) and plain papermill."""

from __future__ import annotations

import ast
import logging
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from analyses import chapters
from analyses.scenario.params import literal, parameters_source
from analyses.site import build, deps, kernels


@pytest.fixture
def papermill_log(caplog):
    """papermill's warnings, even after our CLI stopped the logger propagating (cli.main)."""
    logger = logging.getLogger("papermill")
    logger.addHandler(caplog.handler)
    caplog.set_level(logging.WARNING, logger="papermill")
    yield caplog
    logger.removeHandler(caplog.handler)


TYPES = {"int": "int", "float": "float", "str": "str", "bool": "bool", "str_list": "list[str]"}


def _cell(slug: str) -> nbformat.NotebookNode:
    nb = nbformat.read(deps.BOOK_DIR / f"{slug}.ipynb", as_version=4)
    return next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))


@pytest.mark.parametrize("slug", chapters.chapter_slugs())
def test_committed_parameters_cell_is_the_rendering_of_the_spec(slug):
    """The rule can be re-applied after a merge: `python -m analyses build` renders it."""
    assert _cell(slug).source == parameters_source(chapters.spec(slug))


def test_papermill_reads_every_parameter_with_its_type(papermill_log):
    for slug in chapters.chapter_slugs():
        spec = chapters.spec(slug)
        found = papermill.inspect_notebook(str(deps.BOOK_DIR / f"{slug}.ipynb"))
        assert list(found) == [p.name for p in spec.params], slug
        for p in spec.params:
            assert found[p.name]["inferred_type_name"] == TYPES[p.kind], (slug, p.name)
            assert ast.literal_eval(found[p.name]["default"]) == ast.literal_eval(literal(p.default, p.kind))
            assert p.help in found[p.name]["help"], (slug, p.name)
    assert "Unable to parse" not in papermill_log.text


def test_papermill_help_notebook_lists_types():
    papermill_cli = Path(sys.executable).parent / "papermill"
    proc = subprocess.run(
        [str(papermill_cli), "--help-notebook", str(deps.BOOK_DIR / "memory.ipynb")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "Unable to parse" not in proc.stderr + proc.stdout
    assert "Unknown type" not in proc.stdout
    for p in chapters.spec("memory").params:
        assert f"{p.name}: {TYPES[p.kind]}" in proc.stdout, p.name


def test_rendering_refuses_what_papermill_cannot_read():
    bad = chapters.ChapterSpec("x", "X", (chapters.Param("a", "int", 1, "-", "3 = three"),))
    with pytest.raises(ValueError, match="parameter a: its comment holds '='"):
        parameters_source(bad)
    assert literal(1e11, "float") == "1e11" and literal(4194304, "float") == "4194304.0"
    assert literal(20.0, "float") == "20.0" and literal(("GPU", "Host"), "str_list") == '["GPU", "Host"]'


def test_our_entry_point_rejects_a_misspelt_parameter_before_any_kernel(tmp_path):
    with pytest.raises(chapters.ParamError, match="'thresold'.*parameters are: threshold"):
        build.execute(deps.BOOK_DIR / "peers.ipynb", tmp_path / "out.ipynb", parameters={"thresold": 0.1})
    assert list(tmp_path.iterdir()) == []


def test_plain_papermill_fails_on_a_misspelt_parameter(tmp_path, capfd, papermill_log):
    """papermill only warns about an unknown name; the chapter's config() cell rejects it."""
    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(
            str(deps.BOOK_DIR / "peers.ipynb"),
            str(tmp_path / "out.ipynb"),
            parameters={"thresold": 0.1},
            cwd=str(deps.BOOK_DIR),
            progress_bar=False,
            **kernels.kernel_options(),
        )
    assert info.value.ename == "ParamError" and "'thresold'" in info.value.evalue
    assert "Passed unknown parameter: thresold" in papermill_log.text  # papermill's own warning, then the error
    assert "without encryption" not in capfd.readouterr().err


def test_config_reads_injected_names_only_from_the_injected_cell():
    ns = {"In": ["", "from x import y", "# Parameters\nthreshold = 0.1\n", "# Parameters\nthresold = 0.1\n"]}
    assert chapters.injected_names(ns) == ["threshold", "thresold"]
    with pytest.raises(chapters.ParamError, match="'thresold'"):
        chapters.config("peers", ns | {"threshold": 0.1, "thresold": 0.1})
    assert chapters.config("peers", {"In": ["# Parameters\nthreshold = 0.1\n"], "threshold": 0.1}).threshold == 0.1
    assert chapters.config("peers", {"threshold": 0.2, "unrelated": 1}).threshold == 0.2  # outside IPython


def test_a_run_with_a_valid_parameter_gives_no_papermill_warning(tmp_path, capfd, papermill_log):
    out = build.execute(deps.BOOK_DIR / "peers.ipynb", tmp_path / "out.ipynb", parameters={"threshold": 0.05})
    assert out.exists()
    assert "Passed unknown parameter" not in papermill_log.text and "Unable to parse" not in papermill_log.text
    assert "without encryption" not in capfd.readouterr().err
