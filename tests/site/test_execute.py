"""The in-process executor gives the outputs papermill's kernel gives, for chapters and for edge cases.

The CLI's reruns execute notebooks in-process (:mod:`analyses.site.execute`); the build and nbval
execute them with papermill and a real kernel. Both must write the same outputs for the same
notebook and parameters. Each in-process run happens in a fresh interpreter, as the CLI runs it
(and so that no IPython shell is left behind in the test process).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from analyses import data
from analyses.data import REPO_ROOT
from analyses.site import build, deps, execute

_IN_PROCESS = (
    "import json, sys; from pathlib import Path; from analyses.site import execute; "
    "execute.execute_file(Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]))"
)


def in_process(source: Path, target: Path, parameters: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _IN_PROCESS, str(source), str(target), json.dumps(parameters or {})],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )


def outputs(nb: nbformat.NotebookNode) -> list[tuple[str, str, list]]:
    """What nbval compares, per cell: type, source and outputs (normalised as the build writes them)."""
    nb = build.normalise(nb)
    return [(c.cell_type, c.source, c.get("outputs", [])) for c in nb.cells]


@pytest.mark.parametrize(
    "chapter, parameters",
    [
        ("memory", {}),
        ("scaling-gap", {}),
        ("memory", {"zero_stage": 3, "gpus": ["H100", "B300"], "framework_memory_gb": 7.5}),
    ],
)
def test_same_outputs_as_papermill(chapter, parameters, tmp_path):
    """At the defaults the in-process run equals the committed notebook, which nbval checks against
    papermill's kernel in the same test run; with parameters both executors run here."""
    source = deps.BOOK_DIR / f"{chapter}.ipynb"
    ours, theirs = tmp_path / "ours.ipynb", tmp_path / "papermill.ipynb"
    proc = in_process(source, ours, parameters)
    assert proc.returncode == 0, proc.stderr[-2000:]
    a = outputs(nbformat.read(ours, as_version=4))
    if not parameters:
        b = outputs(nbformat.read(source, as_version=4))
    else:
        build.execute(source, theirs, parameters=parameters, record=False)
        b = outputs(nbformat.read(theirs, as_version=4))
        tags = [c.metadata.get("tags", []) for c in nbformat.read(ours, as_version=4).cells]
        assert tags.count([execute.RUN_PARAMETERS_TAG]) == 1
    assert len(a) == len(b)
    assert [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y] == []


EDGE_CELLS = [
    "import sys, warnings\nfrom IPython.display import display, HTML, Markdown",
    "print('one')\nprint('two', file=sys.stderr)\nprint('three')",
    "x = 40\nx + 2",
    "x;",
    "",
    "display(HTML('<b>bold</b>'), Markdown('*md*'))\nprint('after')\n{'a': [1, 2.5, None]}",
    "from myst_nb import glue\nglue('answer', 42, display=False)\nglue('shown', 'text')",
    "import pandas as pd\npd.DataFrame({'a': [1.5, 2.25], 'b': ['x', 'y']})",
    "warnings.warn('careful')",
    "h = display(HTML('first'), display_id='d')\nh.update(HTML('second'))",
]


def test_edge_cases_match_a_kernel(tmp_path):
    """Streams, results, suppressed results, empty cells, displays, glue, warnings and display
    updates are recorded exactly as papermill records them."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in EDGE_CELLS])
    source = tmp_path / "edge.ipynb"
    nbformat.write(nb, source)
    ours, theirs = tmp_path / "ours.ipynb", tmp_path / "papermill.ipynb"
    proc = in_process(source, ours)
    assert proc.returncode == 0, proc.stderr[-2000:]
    build.execute(source, theirs, record=False)
    a, b = outputs(nbformat.read(ours, as_version=4)), outputs(nbformat.read(theirs, as_version=4))

    # a warning names the cell's code object: ipykernel's /tmp/ipykernel_<pid>/<hash>.py differs
    # between any two kernel runs, so it is compared as a placeholder
    assert _cell_names(a) == _cell_names(b)
    assert [(o["name"], o["text"]) for o in a[1][2]] == [("stdout", "one\nthree\n"), ("stderr", "two\n")]
    assert a[3][2] == [] and a[4][2] == [] and a[6][2][0]["metadata"]["scrapbook"]["name"] == "answer"


def _cell_names(cells: list) -> str:
    return re.sub(r'<ipython-input-\d+-[0-9a-f]+>|[^\s"]*/ipykernel_\d+/\d+\.py', "<cell>", json.dumps(cells))


def test_a_failing_cell_names_itself_and_writes_nothing(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_code_cell("1 / 0")])
    source, target = tmp_path / "bad.ipynb", tmp_path / "out" / "bad.ipynb"
    nbformat.write(nb, source)
    proc = in_process(source, target)
    assert proc.returncode != 0
    assert "bad.ipynb: cell 2 failed: ZeroDivisionError: division by zero" in proc.stderr
    assert not target.exists() and not list(tmp_path.rglob("*.tmp"))


PARAMETER_VALUES = [
    {"n": 3, "x": 0.1, "big": 3e10, "flag": True, "off": False, "none": None},
    {"s": 'say "hi"\n\tnow', "u": "μ-café", "back": "a\\b"},
    {"xs": ["A100", "B300"], "mixed": [1, 2.5, "x", [True, None]], "d": {"k": [1, 2], "q": "v"}},
    {"nan": math.nan, "inf": math.inf, "ninf": -math.inf, "neg": -7, "tiny": 1e-300},
]


@pytest.mark.parametrize("parameters", PARAMETER_VALUES)
def test_parameters_are_injected_as_papermill_injects_them(parameters):
    from papermill.parameterize import parameterize_notebook
    from papermill.translators import translate_parameters

    assert execute.parameters_source(parameters) == translate_parameters("python3", "python", parameters, "Parameters")
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# t"),
            nbformat.v4.new_code_cell("n = 1"),
            nbformat.v4.new_code_cell("n"),
        ],
        metadata={"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
    )
    for cell in nb.cells:  # what papermill's loader adds to every notebook
        cell.metadata["tags"] = []
    nb.metadata["papermill"] = {}
    nb.cells[1].metadata["tags"] = ["parameters"]
    for before in (nb, parameterize_notebook(nb, {"old": 1}, kernel_name="python3", language="python")):
        ours = execute.inject_parameters(before, parameters)
        theirs = parameterize_notebook(before, parameters, kernel_name="python3", language="python")
        assert [(c.source, c.metadata.get("tags")) for c in ours.cells] == [
            (c.source, c.metadata.get("tags")) for c in theirs.cells
        ]


def test_in_process_runs_leave_the_caller_as_it_was():
    """The shell exists only while a notebook runs: no IPython singleton, __main__, builtins or
    prompts left behind, and a second notebook starts from an empty namespace."""
    import builtins

    from IPython import get_ipython

    main, names = sys.modules["__main__"], set(vars(builtins))
    first = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("secret = 41\nprint(get_ipython() is not None)")])
    second = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("'secret' in dir()")])
    ran = execute.execute(first)
    assert ran.cells[0].outputs[0]["text"] == "True\n"
    assert get_ipython() is None and sys.modules["__main__"] is main and set(vars(builtins)) == names
    assert execute.available()
    again = execute.execute(second)
    assert again.cells[0].outputs[0]["data"]["text/plain"] == "False"
    assert get_ipython() is None and sys.modules["__main__"] is main


def test_a_second_notebook_never_sees_the_first_ones_parameters():
    """The injected cell of a first run stayed in IPython's input history (``In``), where a chapter's
    config() looks for injected names: the second notebook saw the first one's parameters."""
    from analyses.chapters import injected_names

    first = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("n = 1")])
    first.cells[0].metadata["tags"] = ["parameters"]
    probe = "from analyses.chapters import injected_names\ninjected_names(globals())"
    second = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(probe)])
    execute.execute(first, {"window_start": 2019})
    ran = execute.execute(second)
    assert ran.cells[0].outputs[0]["data"]["text/plain"] == "[]"
    third = execute.execute(first, {"n": 5})
    assert injected_names({"In": ["", third.cells[1].source]}) == ["n"]


def test_a_data_fault_in_a_cell_is_its_own_line(tmp_path):
    """A DataError raised by a cell (a claim value a check reads, removed) reaches the reader as its
    own message, not 'cell N failed: ...'."""
    code = "from analyses.data import DataError\nraise DataError('data/claims.csv', 'states no x', 5, 'values')"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    with pytest.raises(data.DataError) as err:
        execute.execute(nb)
    assert str(err.value) == "data/claims.csv, row 5, column 'values': states no x"


def test_execution_counts_are_a_kernels(tmp_path):
    """Cells and their results carry the counts a kernel gives them (the build renumbers, so compare raw)."""
    import papermill

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in ["x = 1\nx", "", "x;", "x + 1"]])
    source, theirs = tmp_path / "counts.ipynb", tmp_path / "papermill.ipynb"
    nbformat.write(nb, source)
    papermill.execute_notebook(str(source), str(theirs), kernel_name=build.KERNEL, progress_bar=False)

    def counts(nb):
        return [(c.execution_count, [o.get("execution_count") for o in c.outputs]) for c in nb.cells]

    assert (
        counts(execute.execute(nb))
        == counts(nbformat.read(theirs, as_version=4))
        == [
            (1, [1]),
            (None, []),
            (2, []),
            (3, [3]),
        ]
    )
