"""One registry per plugin kind (tools, judge backends, sandbox backends, advantage estimators).

>>> TOOLS = Registry("tool")
>>> @TOOLS.register("bash")
... class BashTool: ...
>>> TOOLS.get("bash") is BashTool
True

An entry can also be named by where it lives (``register_path(name, "package.module:attribute")``):
its module is imported on the first ``get``, so that a registry of heavy plugins (sandbox backends)
costs nothing to import and the plugins may import the module that holds the registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from terminal_agent.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> object. Duplicate names are an error; unknown names list the valid ones."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._paths: dict[str, str] = {}
        """Names registered by path whose module is not imported yet: name -> ``module:attribute``."""

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(obj: T) -> T:
            self._claim(name)
            self._entries[name] = obj
            return obj

        return decorator

    def register_path(self, name: str, path: str) -> None:
        """Register the object at ``path`` (``package.module:attribute``) under ``name``, imported on first use."""
        module, _, attribute = path.partition(":")
        if not module or not attribute:
            raise ConfigError(f"{self.kind} {name!r}: {path!r} is not 'package.module:attribute'")
        self._claim(name)
        self._paths[name] = path

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a plugin's or a test's entry going away). Raises :class:`ConfigError` when it is unknown."""
        if name not in self:
            raise ConfigError(f"unknown {self.kind} {name!r}; valid: {', '.join(self.names()) or '(none registered)'}")
        self._entries.pop(name, None)
        self._paths.pop(name, None)

    def get(self, name: str) -> T:
        if name in self._entries:
            return self._entries[name]
        path = self._paths.get(name)
        if path is None:
            valid = ", ".join(self.names()) or "(none registered)"
            raise ConfigError(f"unknown {self.kind} {name!r}; valid: {valid}") from None
        module, _, attribute = path.partition(":")
        obj: T = getattr(importlib.import_module(module), attribute)  # a broken plugin raises here, loudly
        self._entries[name] = obj
        self._paths.pop(name, None)  # another thread may have loaded it meanwhile
        return obj

    def loaded(self) -> dict[str, T]:
        """The entries whose objects exist already (nothing is imported)."""
        return dict(sorted(self._entries.items()))

    def names(self) -> list[str]:
        return sorted([*self._entries, *self._paths])

    def _claim(self, name: str) -> None:
        if name in self._entries or name in self._paths:
            raise ConfigError(f"{self.kind} {name!r} is already registered")

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries) + len(self._paths)
