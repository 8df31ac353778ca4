"""One registry per plugin kind (tools, judge backends, sandbox backends, advantage estimators).

>>> TOOLS = Registry("tool")
>>> @TOOLS.register("bash")
... class BashTool: ...
>>> TOOLS.get("bash") is BashTool
True

An entry can also be named by where it lives (``register_path(name, "package.module:attribute")``):
its module is imported on the first ``get``, so that a registry of heavy plugins (sandbox backends)
costs nothing to import and the plugins may import the module that holds the registry.

A kind may declare **companions**: objects an entry carries beside itself that the rest of the code needs
without the entry (a backend's settings model, read with every config; a grading mode's task-field rules,
checked with every task). They come with the entry's one line and are imported on their own first use::

    SANDBOXES = Registry("sandbox backend", companions=("settings",))
    SANDBOXES.register_path("bwrap", "pkg.bwrap.backend:BACKEND", settings="pkg.bwrap.settings:BwrapConfig")
    SANDBOXES.companion("bwrap", "settings")  # imports pkg.bwrap.settings, not pkg.bwrap.backend
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from terminal_agent.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> object. Duplicate names are an error; unknown names list the valid ones."""

    def __init__(self, kind: str, *, companions: tuple[str, ...] = ()):
        self.kind = kind
        self.companion_roles = companions
        """The companions an entry of this kind may carry (``settings``, ``task_fields``); each is optional."""
        self._entries: dict[str, T] = {}
        self._paths: dict[str, str] = {}
        """Names registered by path whose module is not imported yet: name -> ``module:attribute``."""
        self._companions: dict[tuple[str, str], Any] = {}
        """(name, role) -> a companion object (given, or imported already)."""
        self._companion_paths: dict[tuple[str, str], str] = {}
        """(name, role) -> ``module:attribute`` of a companion not imported yet."""

    def register(self, name: str, **companions: Any) -> Callable[[T], T]:
        """A decorator registering its object as ``name``, with its ``companions`` (role=object)."""
        self._check_roles(name, companions)

        def decorator(obj: T) -> T:
            self._claim(name)
            self._entries[name] = obj
            for role, companion in companions.items():
                self._companions[(name, role)] = companion
            return obj

        return decorator

    def register_path(self, name: str, path: str, **companions: str) -> None:
        """Register the object at ``path`` (``package.module:attribute``) under ``name``, imported on first use,
        with its ``companions`` (role=path, each imported on its own first use)."""
        self._check_roles(name, companions)
        for where in (path, *companions.values()):
            module, _, attribute = where.partition(":")
            if not module or not attribute:
                raise ConfigError(f"{self.kind} {name!r}: {where!r} is not 'package.module:attribute'")
        self._claim(name)
        self._paths[name] = path
        for role, where in companions.items():
            self._companion_paths[(name, role)] = where

    def companion(self, name: str, role: str) -> Any:
        """The ``role`` companion of the entry ``name``, None when it carries none; importing it imports not the
        entry. Raises :class:`ConfigError` for an unknown name or a role this kind does not have."""
        if role not in self.companion_roles:
            roles = ", ".join(self.companion_roles) or "(none)"
            raise ConfigError(f"a {self.kind} has no companion {role!r}; roles: {roles}")
        if name not in self:
            raise ConfigError(f"unknown {self.kind} {name!r}; valid: {', '.join(self.names()) or '(none registered)'}")
        key = (name, role)
        if key in self._companions:
            return self._companions[key]
        path = self._companion_paths.get(key)
        if path is None:
            return None
        self._companions[key] = _import_path(path)  # a broken plugin raises here, loudly
        self._companion_paths.pop(key, None)
        return self._companions[key]

    def names_with(self, role: str) -> list[str]:
        """The names whose entry carries a ``role`` companion, sorted (nothing is imported)."""
        return sorted({name for name, held in (*self._companions, *self._companion_paths) if held == role})

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a plugin's or a test's entry going away). Raises :class:`ConfigError` when it is unknown."""
        if name not in self:
            raise ConfigError(f"unknown {self.kind} {name!r}; valid: {', '.join(self.names()) or '(none registered)'}")
        self._entries.pop(name, None)
        self._paths.pop(name, None)
        for role in self.companion_roles:
            self._companions.pop((name, role), None)
            self._companion_paths.pop((name, role), None)

    def get(self, name: str) -> T:
        if name in self._entries:
            return self._entries[name]
        path = self._paths.get(name)
        if path is None:
            valid = ", ".join(self.names()) or "(none registered)"
            raise ConfigError(f"unknown {self.kind} {name!r}; valid: {valid}") from None
        obj: T = _import_path(path)  # a broken plugin raises here, loudly
        self._entries[name] = obj
        self._paths.pop(name, None)  # another thread may have loaded it meanwhile
        return obj

    def loaded(self) -> dict[str, T]:
        """The entries whose objects exist already (nothing is imported)."""
        return dict(sorted(self._entries.items()))

    def names(self) -> list[str]:
        return sorted([*self._entries, *self._paths])

    def _check_roles(self, name: str, companions: dict[str, Any]) -> None:
        unknown = sorted(set(companions) - set(self.companion_roles))
        if unknown:
            raise ConfigError(f"{self.kind} {name!r}: no companion {', '.join(map(repr, unknown))}; "
                              f"roles: {', '.join(self.companion_roles) or '(none)'}")

    def _claim(self, name: str) -> None:
        if name in self._entries or name in self._paths:
            raise ConfigError(f"{self.kind} {name!r} is already registered")

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries) + len(self._paths)


def _import_path(path: str) -> Any:
    """The object at ``package.module:attribute``."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)
