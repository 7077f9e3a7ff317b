"""Packages that are also their main function: ``sp.search(task)``, ``sp.report(task)``.

``import sinkproof.report`` stores the package at ``sinkproof.report``, whatever the
package's lobby (``sinkproof/__init__``) had put there; a top-level *function* of that name
would be replaced by the module as soon as anything imported the package.  So a package
whose name is a verb is made callable instead: calling it calls its main function.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


def make_callable(module_name: str, function: str) -> None:
    """Make the (already imported) module ``module_name`` callable: ``module(*a, **k)`` is
    ``module.<function>(*a, **k)``; its ``__call__`` carries that function's name."""
    module = sys.modules[module_name]

    class CallableModule(ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return getattr(self, function)(*args, **kwargs)

    CallableModule.__name__ = CallableModule.__qualname__ = f"CallableModule[{function}]"
    CallableModule.main_function = function  # type: ignore[attr-defined]
    module.__class__ = CallableModule
