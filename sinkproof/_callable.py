"""Packages that are also their main function: ``sp.search(task)``, ``sp.report(task)``.

``import sinkproof.report`` stores the package at ``sinkproof.report``, whatever the
package's lobby (``sinkproof/__init__``) had put there; a top-level *function* of that name
would be replaced by the module as soon as anything imported the package.  So a package
whose name is a verb is made callable instead: calling it calls its main function.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any


def make_callable(module_name: str, function: str,
                  lazy: Mapping[str, str] | None = None) -> None:
    """Make the (already imported) module ``module_name`` callable: ``module(*a, **k)`` is
    ``module.<function>(*a, **k)``; its ``__call__`` carries that function's name.

    ``lazy`` is the package's table of names loaded on first use (``sinkproof._lazy``): a
    submodule named like the function it holds (``frontier``) binds that function on the
    package when it is imported, as an eager import would have left it."""
    module = sys.modules[module_name]
    lazy = dict(lazy or {})

    class CallableModule(ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return getattr(self, function)(*args, **kwargs)

        @property
        def __signature__(self) -> inspect.Signature:
            """The main function's: ``inspect.signature(sp.report)`` and notebooks' call
            tips show its parameters, not ``(*args, **kwargs)``."""
            return inspect.signature(getattr(self, function))

        def __setattr__(self, name: str, value: Any) -> None:
            if isinstance(value, ModuleType) and lazy.get(name) == name:
                value = getattr(value, name)
            super().__setattr__(name, value)

    CallableModule.__name__ = CallableModule.__qualname__ = f"CallableModule[{function}]"
    CallableModule.main_function = function  # type: ignore[attr-defined]
    module.__class__ = CallableModule
