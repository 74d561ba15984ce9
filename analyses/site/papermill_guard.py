"""papermill's parameters injected as assignments only: a name that is not a Python identifier is refused.

papermill writes each ``-p NAME VALUE`` into the notebook as the code ``NAME = VALUE`` and runs it,
so a name such as ``x=open('PWN','w');y`` would run before the chapter's ``config(...)`` cell could
reject it. papermill 2.7 takes translators from no entry point, but it loads the engines of the
``papermill.engine`` entry-point group when it is imported; this module is named there
(``pyproject.toml``), so importing papermill in this environment registers :class:`PythonTranslator`,
which refuses such a name before the notebook is written or run. (:mod:`analyses.site.cli` checks
every name against the chapter's parameters first; this guards plain papermill.)
"""

from __future__ import annotations

import keyword
from typing import Any

from papermill.engines import NBClientEngine
from papermill.exceptions import PapermillException
from papermill.translators import PythonTranslator as _Python
from papermill.translators import papermill_translators


class PythonTranslator(_Python):
    """papermill's Python translator, refusing a parameter name that is not an identifier."""

    @classmethod
    def codify(cls, parameters: dict[str, Any], comment: str = "Parameters") -> str:
        for name in parameters:
            if not str(name).isidentifier() or keyword.iskeyword(name):
                raise PapermillException(
                    f"parameter name {str(name)[:60]!r} is not a Python identifier; papermill would run it as code"
                )
        return super().codify(parameters, comment)


papermill_translators.register("python", PythonTranslator)


class Engine(NBClientEngine):
    """papermill's own engine under the name ``audit`` (the entry point that loads this module)."""
