"""Kernels for executing chapters: tracked and killable, so Ctrl-C stops a build at once.

nbclient starts each kernel in its own session, out of reach of a terminal's Ctrl-C; the kernel
manager of :func:`kernel_options` registers every kernel's process group in :data:`KERNELS`, whose
:meth:`_Kernels.stop` kills them all from the main thread (see :mod:`analyses.site.build`).

This module loads papermill and the kernel's protocol (jupyter_client, zmq: about a second), so
:mod:`analyses.site.build` imports it only when a chapter executes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import papermill
import zmq
from jupyter_client.manager import AsyncKernelManager
from traitlets.config import Config


class _Kernels:
    """The kernels this process started, so that Ctrl-C can kill them from the main thread.

    Kernels run in their own session (jupyter_client starts them with ``start_new_session``), so
    a terminal's Ctrl-C never reaches them: :meth:`stop` kills each kernel's process group, and
    a kernel that starts after :meth:`stop` kills itself at once.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.groups: set[int] = set()
        self.stopping = False

    def add(self, pgid: int) -> bool:
        with self.lock:
            if not self.stopping:
                self.groups.add(pgid)
        if self.stopping:
            _kill_group(pgid)
            return False
        return True

    def discard(self, pgid: int) -> None:
        with self.lock:
            self.groups.discard(pgid)

    def stop(self) -> int:
        with self.lock:
            self.stopping = True
            groups = list(self.groups)
        for pgid in groups:
            _kill_group(pgid)
        return len(groups)

    def reset(self) -> None:
        with self.lock:
            self.stopping = False
            self.groups.clear()


KERNELS = _Kernels()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class TrackedKernelManager(AsyncKernelManager):
    """nbclient's kernel manager, registering each kernel's process group in :data:`KERNELS`."""

    async def _async_start_kernel(self, **kw: Any) -> None:
        await super()._async_start_kernel(**kw)
        pgid = getattr(self.provisioner, "pgid", None) or getattr(self.provisioner, "pid", None)
        if pgid and not KERNELS.add(pgid):
            raise KeyboardInterrupt("build interrupted")
        self._audit_pgid = pgid

    async def _async_shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        try:
            await super()._async_shutdown_kernel(now=now, restart=restart)
        finally:
            if getattr(self, "_audit_pgid", None):
                KERNELS.discard(self._audit_pgid)

    start_kernel = _async_start_kernel  # the public names nbclient awaits
    shutdown_kernel = _async_shutdown_kernel


def kernel_options() -> dict[str, Any]:
    """papermill/nbclient options for every kernel the project starts.

    The kernel manager provisions CurveZMQ keys (``KernelManager.transport_encryption = "auto"``;
    the ipykernel kernelspec declares curve support), so the kernel's messages are encrypted and
    it no longer warns "Kernel is running over TCP without encryption"; each kernel is
    registered in :data:`KERNELS` so that an interrupted build can kill it; and a kernel whose
    notebook has run is stopped at once (nbclient's ``shutdown_kernel="immediate"``): its outputs
    are in by then, and ipykernel's graceful shutdown races its own sockets now and then, printing
    a ZMQError traceback into the build's error output.
    """
    options: dict[str, Any] = {"kernel_manager_class": TrackedKernelManager, "shutdown_kernel": "immediate"}
    if zmq.has("curve"):
        options["config"] = Config({"KernelManager": {"transport_encryption": "auto"}})
    return options


def execute_notebook(path: Path, parameters: Mapping[str, Any], kernel_name: str, cwd: Path) -> None:
    """Execute the notebook at ``path`` in place with papermill (``parameters`` injected), in a kernel
    started with :func:`kernel_options`; papermill's ``PapermillExecutionError`` carries a failed cell's error."""
    papermill.execute_notebook(
        str(path),
        str(path),
        parameters=dict(parameters),
        kernel_name=kernel_name,
        cwd=str(cwd),
        progress_bar=False,
        log_output=False,
        **kernel_options(),
    )
