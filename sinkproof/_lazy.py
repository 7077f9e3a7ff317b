"""Names of a package that load their submodule on first use (PEP 562 ``__getattr__``)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, table: dict[str, str], namespace: dict[str, Any]
                 ) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``name`` in ``table`` is imported from the
    submodule ``table[name]`` on first access and kept in ``namespace`` (the package's
    globals), so later accesses cost nothing.  An entry ``"module:attribute"`` binds
    ``name`` to that submodule's ``attribute`` (another name for it)."""

    def __getattr__(name: str) -> Any:
        if name in table:
            module, _, attribute = table[name].partition(":")
            value = getattr(import_module(f"{package}.{module}"), attribute or name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def lazy_dir(namespace: dict[str, Any]) -> Callable[[], list[str]]:
    """A module ``__dir__`` for a lazy package: its loaded names and every name of its
    ``__all__`` (loaded or not), so tab completion lists the entry points."""

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __dir__
