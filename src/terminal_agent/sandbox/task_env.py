"""The environment variables a task gives its agent's sandbox (Harbor ``[environment.env]``), resolved on the host.

A value may hold ``${NAME}`` (the host's ``NAME``; an error when the host has none) and
``${NAME:-default}`` (``default`` when the host's ``NAME`` is unset or empty, as in the shell) templates,
resolved once, when the sandbox starts, from the environment of the process that starts it (on Ray: the
driver's). Everything else is literal; a resolved value is never resolved again.

>>> resolve_sandbox_env({"MODE": "${TA_DOCTEST_UNSET:-fast}", "RAW": "a$b"}, host_env={})
{'MODE': 'fast', 'RAW': 'a$b'}
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from terminal_agent.errors import ConfigError

_TEMPLATE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def resolve_sandbox_env(
    env: Mapping[str, str] | None, *, task_id: str | None = None, host_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``env`` with every ``${NAME}`` / ``${NAME:-default}`` replaced from ``host_env`` (default: ``os.environ``).

    Raises :class:`ConfigError` naming the variable (and ``task_id`` when given) when a ``${NAME}`` without
    a default is not set on the host, or when a name or value cannot be a sandbox's environment variable.
    """
    if not env:
        return {}
    source = os.environ if host_env is None else host_env
    where = f"task {task_id!r}: " if task_id else ""
    resolved: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not _NAME.match(key):
            raise ConfigError(f"{where}env: {key!r} is not a valid environment variable name")
        if not isinstance(value, str):
            raise ConfigError(f"{where}env[{key!r}] must be a string, not {type(value).__name__}")

        def substitute(match: re.Match[str], key: str = key) -> str:
            name, default = match.group("name"), match.group("default")
            found = source.get(name)
            if default is not None:
                return found if found else default
            if found is None:
                raise ConfigError(
                    f"{where}env[{key!r}] needs the host's ${{{name}}}, which is not set here "
                    f"(export {name}=... before starting, or write ${{{name}:-default}} in the task)"
                )
            return found

        text = _TEMPLATE.sub(substitute, value)
        if "\0" in text:
            raise ConfigError(f"{where}env[{key!r}] holds a NUL byte once resolved")
        resolved[key] = text
    return resolved


def env_key(env: Mapping[str, str] | None) -> str:
    """A stable text form of a resolved env, for keys (the pool keeps sandboxes of different env apart)."""
    return "\0".join(f"{key}={value}" for key, value in sorted((env or {}).items()))


__all__ = ["env_key", "resolve_sandbox_env"]
