"""One registry per plugin kind (tools, judge backends, sandbox backends, advantage estimators).

>>> TOOLS = Registry("tool")
>>> @TOOLS.register("bash")
... class BashTool: ...
>>> TOOLS.get("bash") is BashTool
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from terminal_agent.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> object. Duplicate names are an error; unknown names list the valid ones."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(obj: T) -> T:
            if name in self._entries:
                raise ConfigError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = obj
            return obj

        return decorator

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            valid = ", ".join(sorted(self._entries)) or "(none registered)"
            raise ConfigError(f"unknown {self.kind} {name!r}; valid: {valid}") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)
