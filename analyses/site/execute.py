"""Execute a chapter notebook in this process, recording its outputs as a Jupyter kernel would.

``python -m analyses run`` and ``plan`` rerun one chapter with a reader's parameters. Through
papermill that costs a kernel start (a second interpreter, ZeroMQ) and imports everything twice:
once in the CLI to validate the parameters, once in the kernel. Here the notebook runs in the CLI's
own interpreter on an IPython :class:`~IPython.core.interactiveshell.InteractiveShell` whose
display publisher, display hook, traceback display and standard streams record nbformat outputs
with the same content a kernel sends through nbclient:

- ``display(...)`` (and myst-nb's ``glue``, which is a raw ``display`` with ``scrapbook`` metadata)
  gives a ``display_data`` output with the formatter's mime bundle and metadata;
- a cell's last expression gives an ``execute_result`` with its execution count;
- ``print`` and warnings give ``stream`` outputs: each stream is buffered and flushed, stdout
  first, before a display, a result, a traceback and at the end of the cell, as ipykernel flushes
  its streams (ipykernel also flushes every 0.2 s, which makes a kernel's split of a slow cell's
  text timing-dependent; here it never depends on timing);
- an exception gives an ``error`` output (``ename``, ``evalue``, the traceback) and fails the run,
  whatever the cell's tags (papermill fails a run on any error output, ``raises-exception`` too).

Parameters are injected as papermill does: a cell tagged ``injected-parameters`` (``# Parameters``
then one ``name = value`` line each, papermill's Python translation) right after the cell tagged
``parameters`` (replacing an earlier injected cell). The committed notebooks are still executed by
papermill with a real kernel (``analyses.site.build``); ``tests/site/test_execute.py`` checks that
both ways give the same outputs.

Run inside an IPython session that already has a shell (a notebook calling the CLI's functions),
there is no second shell to make: :func:`execute_file` then falls back to papermill.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import datetime
import io
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import nbformat
from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from IPython.display import display
from traitlets.config import Config

from analyses.scenario.params import ParamError
from analyses.site import build
from analyses.tables import DataError

INJECTED_TAG = "injected-parameters"
PARAMETERS_TAG = "parameters"
RUN_PARAMETERS_TAG = "run-parameters"  # the injected cell as a reader's run shows it


class CellError(RuntimeError):
    """A cell raised: ``index`` is the 0-based cell index, ``count`` the execution count."""

    def __init__(self, index: int, count: int, ename: str, evalue: str):
        super().__init__(f"cell {count} failed: {ename}: {evalue}")
        self.index, self.count, self.ename, self.evalue = index, count, ename, evalue


# --------------------------------------------------------------------------------------------
# Parameters, as papermill injects them
# --------------------------------------------------------------------------------------------


def _escaped_str(value: Any) -> str:
    text = value.encode("unicode_escape").decode("utf-8").replace('"', r"\"") if isinstance(value, str) else value
    return f'"{text}"'


def translate(value: Any) -> str:
    """A Python literal for ``value``, exactly as papermill's ``PythonTranslator.translate`` writes it."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return _escaped_str(value)
    if isinstance(value, bool | int):
        return f"{value}"
    if isinstance(value, float):
        if math.isfinite(value):
            return f"{value}"
        return "float('nan')" if math.isnan(value) else ("float('-inf')" if value < 0 else "float('inf')")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_escaped_str(k)}: {translate(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(translate(v) for v in value) + "]"
    return _escaped_str(value)


def parameters_source(parameters: Mapping[str, Any], comment: str = "Parameters") -> str:
    """The source of papermill's injected cell (``translate_parameters`` for Python, no black)."""
    return f"# {comment}".strip() + "\n" + "".join(f"{name} = {translate(v)}\n" for name, v in parameters.items())


def _tagged(nb: nbformat.NotebookNode, tag: str) -> int:
    return next((i for i, c in enumerate(nb.cells) if tag in c.metadata.get("tags", [])), -1)


def inject_parameters(nb: nbformat.NotebookNode, parameters: Mapping[str, Any]) -> nbformat.NotebookNode:
    """``nb`` with papermill's ``injected-parameters`` cell (after ``parameters``; replacing an old one)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # a deep copy that stays a NotebookNode
    cell = nbformat.v4.new_code_cell(source=parameters_source(parameters))
    cell.metadata["tags"] = [INJECTED_TAG]
    injected, params = _tagged(nb, INJECTED_TAG), _tagged(nb, PARAMETERS_TAG)
    if injected >= 0:
        nb.cells[injected] = cell
    else:
        nb.cells.insert(params + 1, cell)  # at the top when there is no parameters cell, as papermill
    return nb


# --------------------------------------------------------------------------------------------
# The recording shell
# --------------------------------------------------------------------------------------------


def _json_default(obj: Any) -> Any:
    """What jupyter_client's message packer does with values JSON cannot hold."""
    if isinstance(obj, bytes):
        return base64.b64encode(obj).decode("ascii")
    if isinstance(obj, datetime.datetime | datetime.date):
        return obj.isoformat()
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, set | frozenset):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _wire(obj: Any) -> Any:
    """``obj`` as it arrives after a trip through a kernel message (JSON)."""
    return json.loads(json.dumps(obj, default=_json_default, ensure_ascii=False))


class _Recorder:
    """The outputs of the cell being executed, appended as a kernel's client appends them."""

    STREAMS = ("stdout", "stderr")  # the order ipykernel flushes them in

    def __init__(self) -> None:
        self.start()

    def start(self) -> list[nbformat.NotebookNode]:
        self.outputs: list[nbformat.NotebookNode] = []
        self.clear_before_next = False
        self.by_display_id: dict[str, list[nbformat.NotebookNode]] = {}
        self.pending = dict.fromkeys(self.STREAMS, "")
        return self.outputs

    def append(self, out: nbformat.NotebookNode) -> None:
        if self.clear_before_next:
            self.outputs.clear()
            self.clear_before_next = False
        self.outputs.append(out)

    def write(self, name: str, text: str) -> None:
        self.pending[name] += text

    def flush(self) -> None:
        """Send what the streams hold, stdout first (one ``stream`` output each)."""
        for name in self.STREAMS:
            text, self.pending[name] = self.pending[name], ""
            if text:
                self.append(nbformat.v4.new_output("stream", name=name, text=text))

    def clear(self, wait: bool) -> None:
        self.flush()
        if wait:
            self.clear_before_next = True
        else:
            self.outputs.clear()


class _Stream(io.TextIOBase):
    """``sys.stdout`` / ``sys.stderr`` during a cell: text becomes ``stream`` outputs."""

    def __init__(self, recorder: _Recorder, name: str):
        super().__init__()
        self._recorder, self.name = recorder, name

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._recorder.write(self.name, text)
        return len(text)


def _shell_classes() -> tuple[type, type, type]:
    """The recording shell, display publisher and display hook (built on first use)."""
    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
            recorder: _Recorder = self.shell.recorder
            recorder.flush()
            display_id = (transient or {}).get("display_id")
            data, metadata = _wire(data), _wire(metadata or {})
            if update:  # update_display_data: rewrite every output shown under this id
                for out in recorder.by_display_id.get(display_id, []):
                    out.data, out.metadata = data, metadata
                return
            out = nbformat.v4.new_output("display_data", data=data, metadata=metadata)
            recorder.append(out)
            if display_id:
                recorder.by_display_id.setdefault(display_id, []).append(out)

        def clear_output(self, wait: bool = False) -> None:
            self.shell.recorder.clear(wait)

    class Hook(DisplayHook):
        def start_displayhook(self) -> None:
            pass

        def write_output_prompt(self) -> None:
            pass

        def write_format_data(self, format_dict, md_dict=None) -> None:
            self.shell.recorder.flush()
            self.shell.recorder.append(
                nbformat.v4.new_output(
                    "execute_result",
                    data=_wire(format_dict),
                    metadata=_wire(md_dict or {}),
                    execution_count=self.prompt_count,  # the running cell's count, as ipykernel sends it
                )
            )

        def finish_displayhook(self) -> None:
            pass

    class Shell(InteractiveShell):
        display_pub_class = Publisher
        displayhook_class = Hook

        def __init__(self, **kwargs: Any):
            self.recorder = _Recorder()
            super().__init__(**kwargs)

        def _showtraceback(self, etype, evalue, stb) -> None:
            self.recorder.flush()
            self.recorder.append(
                nbformat.v4.new_output("error", ename=str(etype.__name__), evalue=str(evalue), traceback=list(stb))
            )

    return Shell, Publisher, Hook


_SHELL: Any = None
_MISSING = object()


def _shell() -> Any:
    """The one recording shell of this process, active and with a fresh namespace for a new notebook."""
    global _SHELL
    if _SHELL is None:
        config = Config()
        config.HistoryManager.enabled = False  # no history database (a fresh namespace per notebook)
        _SHELL = _shell_classes()[0].instance(config=config)  # registers it as IPython's shell
    else:
        for cls in type(_SHELL)._walk_mro():  # IPython's shell again (get_ipython(), display())
            cls._instance = _SHELL
        builtins.__IPYTHON__, builtins.display = True, display  # as InteractiveShell.init_builtins
        _SHELL.init_sys_modules()  # __main__ is the notebook's namespace, as in a kernel
        _SHELL.init_prompts()
        # a new session clears the input history too: ``In`` is how a chapter's config() finds the
        # injected parameters, so an old session's ``In`` made one notebook see another's parameters
        _SHELL.reset(new_session=True)
    _SHELL.execution_count = 1
    return _SHELL


@contextlib.contextmanager
def _session() -> Iterator[Any]:
    """The recording shell, active only inside the block.

    Making an IPython shell changes its process: it becomes IPython's singleton (``get_ipython()``),
    ``sys.modules["__main__"]`` becomes the notebook's namespace, builtins gain ``display`` and
    ``__IPYTHON__``, ``sys.ps1`` is set. A kernel's process is the notebook's own; this one is the
    caller's (the CLI, a test), so all of that is undone when the notebook has run.
    """
    saved_main = sys.modules.get("__main__", _MISSING)
    saved_builtins = {k: vars(builtins).get(k, _MISSING) for k in ("__IPYTHON__", "display")}
    saved_prompts = {k: getattr(sys, k, _MISSING) for k in ("ps1", "ps2", "ps3")}
    shell = _shell()
    try:
        yield shell
    finally:
        type(shell).clear_instance()
        if saved_main is _MISSING:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = saved_main
        for key, value in saved_builtins.items():
            if value is _MISSING:
                vars(builtins).pop(key, None)
            else:
                setattr(builtins, key, value)
        for key, value in saved_prompts.items():
            if value is _MISSING:
                if hasattr(sys, key):
                    delattr(sys, key)
            else:
                setattr(sys, key, value)


def available() -> bool:
    """True when this process can make its own shell (no other IPython shell is running here)."""
    return not InteractiveShell.initialized()


@contextlib.contextmanager
def _redirected(shell: Any, cwd: Path | None) -> Iterator[None]:
    saved = sys.stdout, sys.stderr, os.getcwd()
    sys.stdout, sys.stderr = _Stream(shell.recorder, "stdout"), _Stream(shell.recorder, "stderr")
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
        os.chdir(saved[2])


def execute(
    nb: nbformat.NotebookNode, parameters: Mapping[str, Any] | None = None, cwd: Path | None = None
) -> nbformat.NotebookNode:
    """Execute ``nb`` (with ``parameters`` injected) in this process; return the executed copy.

    ``cwd`` is the working folder of the run (papermill's ``cwd``; a kernel's folder). Raises
    :class:`CellError` at the first cell that raises (the copy is not returned), or
    ``KeyboardInterrupt`` when the run was interrupted.
    """
    nb = inject_parameters(nb, parameters) if parameters else nbformat.from_dict(json.loads(json.dumps(nb)))
    with _session() as shell, _redirected(shell, cwd):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            cell.outputs = []
            if not cell.source.strip():  # nbclient leaves empty cells alone
                cell.execution_count = None
                continue
            outputs = shell.recorder.start()
            count = shell.execution_count
            result = shell.run_cell(cell.source, store_history=True)
            shell.recorder.flush()
            cell.outputs, cell.execution_count = outputs, count
            if result.success:
                continue
            error = next((o for o in outputs if o.output_type == "error"), None)
            ename = error.ename if error is not None else type(result.error_in_exec).__name__
            evalue = error.evalue if error is not None else str(result.error_in_exec or result.error_before_exec)
            if ename == "KeyboardInterrupt":
                raise KeyboardInterrupt
            if _one_line_fault(result.error_in_exec):
                raise result.error_in_exec  # a data fault or a parameter error says itself what is wrong
            raise CellError(index, count, ename, evalue)
    return nb


def _one_line_fault(err: BaseException | None) -> bool:
    """A data fault (file, row, column) or a parameter error (its name and what is allowed)."""
    return isinstance(err, DataError | ParamError)


def as_run(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A reader's run keeps its injected values visible: ``injected-parameters`` becomes ``run-parameters``."""
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if INJECTED_TAG in tags:
            cell.metadata["tags"] = [t for t in tags if t != INJECTED_TAG] + [RUN_PARAMETERS_TAG]
    return nb


def execute_path(path: Path, parameters: Mapping[str, Any] | None = None) -> nbformat.NotebookNode:
    """The notebook at ``path`` executed with ``parameters``, normalised as a reader's run is written.

    The run's folder is the notebook's own (as the build's papermill runs). The result is
    normalised as the build normalises chapters (no timestamps or machine details) and keeps the
    injected parameters visible. A failing cell raises :class:`analyses.site.build.BuildError`
    naming the cell and its error. Nothing is written.
    """
    if not available():  # inside someone else's IPython: run a kernel as the build does
        with tempfile.TemporaryDirectory(prefix="audit-run-") as tmp:
            out = Path(tmp) / path.name
            build.execute(path, out, parameters=parameters, record=False)
            return nbformat.read(out, as_version=4)
    source = nbformat.read(path, as_version=4)
    try:
        nb = execute(source, parameters, cwd=path.parent)
    except CellError as err:
        raise build.BuildError(f"{path.name}: {err}") from None
    return build.normalise(as_run(nb))


def write_atomic(target: Path, text: str) -> Path:
    """Write ``text`` to ``target`` whole or not at all (a temporary file beside it, then a rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def write_notebook(nb: nbformat.NotebookNode, target: Path) -> Path:
    """Write ``nb`` as ``nbformat.write`` does (it validates), atomically."""
    return write_atomic(target, nbformat.writes(nb) + "\n")


def execute_file(path: Path, out_path: Path, parameters: Mapping[str, Any] | None = None) -> nbformat.NotebookNode:
    """:func:`execute_path`, written to ``out_path`` atomically (left as it was on failure)."""
    nb = execute_path(path, parameters)
    write_notebook(nb, out_path)
    return nb
