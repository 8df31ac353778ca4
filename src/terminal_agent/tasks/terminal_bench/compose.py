"""The ``docker-compose.yaml`` of a terminal-bench v1 task, read as one container.

terminal-bench builds and starts every task through its compose file. Most name one service (``client``) built
from the task folder's ``Dockerfile``, with terminal-bench's own settings: the image and container names it
fills in, ``sleep infinity`` as the command, ``TEST_DIR=${T_BENCH_TEST_DIR}`` and its two log volumes. Some build
from another folder (``build: {context: ./env}``), or set environment variables or a working directory.

:func:`read_compose` maps a single-service file onto what a Task has: the main service's ``build.context`` folder
is the build context and its ``dockerfile`` the Dockerfile, ``environment`` becomes ``Task.env`` and
``working_dir`` a ``WORKDIR`` line appended to the Dockerfile. terminal-bench's defaults are understood (the
grader sets ``TEST_DIR`` to its own tests folder; the log volumes are the grader's business here). Every other
setting is refused with a :class:`TaskFormatError` whose ``field`` names the key
(``docker-compose.yaml:services.client.ports``); a file of several services is refused naming them (a sandbox of
several containers on one network is something no backend here has). The reading, key by key, goes to
``Task.metadata["tb_compose"]`` (``tasks inspect`` shows it).
"""

from __future__ import annotations

import platform
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from terminal_agent.errors import TaskFormatError

COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml")
COMPOSE_METADATA_KEY = "tb_compose"
"""``Task.metadata`` key: how the compose file was read (file, service, build context, Dockerfile, settings)."""

TBENCH_TEST_DIR = "TEST_DIR=${T_BENCH_TEST_DIR}"
TBENCH_VOLUMES = frozenset({
    "${T_BENCH_TASK_LOGS_PATH}:${T_BENCH_CONTAINER_LOGS_PATH}",
    "${T_BENCH_TASK_AGENT_LOGS_PATH}:${T_BENCH_CONTAINER_AGENT_LOGS_PATH}",
})
_KEEP_ALIVE = re.compile(r"^(sh|bash|/bin/sh|/bin/bash) -c (sleep infinity|tail -f /dev/null)$|^sleep infinity$")
_TOP_LEVEL_KEPT = {"version", "name"}


@dataclass
class ComposeReading:
    """A single-service compose file as Task fields."""

    file: str
    """The compose file's name (``docker-compose.yaml``)."""
    service: str
    """The service's name."""
    context: str
    """The build context, relative to the task folder (``.``, ``env``)."""
    dockerfile: str
    """The Dockerfile, relative to the build context."""
    env: dict[str, str] = field(default_factory=dict)
    """``Task.env`` from the service's ``environment``."""
    dockerfile_lines: list[str] = field(default_factory=list)
    """Lines appended to the Dockerfile (``WORKDIR /srv``)."""
    settings: list[dict[str, Any]] = field(default_factory=list)
    """Every setting: key, status (``mapped``, ``default``, ``kept``), value, the Task field, note."""

    def record(self) -> dict[str, Any]:
        """The JSON-safe record kept in ``Task.metadata["tb_compose"]``."""
        return {"file": self.file, "service": self.service, "build_context": self.context,
                "dockerfile": self.dockerfile, "settings": list(self.settings)}

    def note(self, key: str, status: str, value: Any, field_name: str | None = None, note: str = "") -> None:
        self.settings.append({"key": key, "status": status, "value": _json_safe(value), "field": field_name,
                              "note": note})


def compose_file(task_dir: Path) -> Path | None:
    """The task folder's compose file, if it has one."""
    return next((task_dir / name for name in COMPOSE_FILES if (task_dir / name).is_file()), None)


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


Refuse = Callable[[str, str], TaskFormatError]
"""``refuse(key, why)``: the error that names a compose setting which cannot be mapped."""


def read_compose(path: Path, text: str, location: str) -> ComposeReading:
    """Read the compose file ``path`` (its ``text``) of the task at ``location``.

    Raises :class:`TaskFormatError` naming the key (``field``) for what cannot be mapped onto one container.
    """
    name = path.name

    def refuse(key: str, why: str) -> TaskFormatError:
        return TaskFormatError(f"{name}: {key}: {why}", location=location, field=f"{name}:{key}")

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{name} is not valid YAML: {exc}", location=location, field=name) from None
    if not isinstance(data, dict):
        raise TaskFormatError(f"{name} is not a mapping", location=location, field=name)
    for key in data:
        if key not in _TOP_LEVEL_KEPT | {"services"}:
            raise refuse(str(key), "a top-level compose setting other than services/version/name cannot be mapped "
                                   "onto one container")
    services = data.get("services")
    if not isinstance(services, dict) or not services:
        raise refuse("services", "no service is defined")
    if len(services) > 1:
        raise refuse("services", f"{len(services)} services ({', '.join(map(str, services))}): multi-container "
                                 "tasks need a sandbox of several containers on one network, which no backend has")
    service_name, service = next(iter(services.items()))
    base = f"services.{service_name}"
    if not isinstance(service, dict):
        raise refuse(base, "is not a mapping")
    context, dockerfile = _build(service.get("build"), base, refuse)
    reading = ComposeReading(name, str(service_name), context, dockerfile)
    for key in sorted(data.keys() & _TOP_LEVEL_KEPT):
        reading.note(key, "kept", data[key], note="compose file metadata")
    reading.note(f"{base}.build", "mapped", service.get("build"), "dockerfile",
                 f"build context {context!r}, Dockerfile {posixpath.join(context, dockerfile)!r}")
    for key, value in service.items():
        dotted = f"{base}.{key}"
        if key == "build":
            continue
        if key in ("image", "container_name"):
            reading.note(dotted, "kept", value, note="the name terminal-bench gives the image / container")
        elif key == "command":
            words = value if isinstance(value, list) else [value]
            if not _KEEP_ALIVE.match(" ".join(str(w) for w in words).strip()):
                raise refuse(dotted, f"{value!r}: the sandbox keeps its container alive itself; a service started "
                                     "by the compose command would not run (start it in the Dockerfile or the task)")
            reading.note(dotted, "default", value, note="keeps the container alive (the sandbox does that itself)")
        elif key == "environment":
            _environment(value, dotted, reading, refuse)
        elif key == "working_dir":
            if not isinstance(value, str) or not value.startswith("/") or "$" in value or "\n" in value:
                raise refuse(dotted, f"{value!r} is not an absolute path without variables")
            reading.dockerfile_lines.append(f"WORKDIR {value}")
            reading.note(dotted, "mapped", value, "dockerfile", f"WORKDIR {value} appended to the Dockerfile")
        elif key == "volumes":
            extra = [v for v in (value if isinstance(value, list) else [value]) if v not in TBENCH_VOLUMES]
            if extra:
                raise refuse(dotted, f"{', '.join(map(str, extra))}: only terminal-bench's log volumes are "
                                     "understood (a task's files go into its image)")
            reading.note(dotted, "default", value, note="terminal-bench's log volumes (the grader keeps its own logs)")
        elif key == "expose":
            reading.note(dotted, "kept", value, note="ports of one container need no exposing")
        elif key == "platform":
            arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
            if value not in (f"linux/{arch}", f"linux/{platform.machine()}"):
                raise refuse(dotted, f"{value!r}: this host builds linux/{arch} images")
            reading.note(dotted, "kept", value, note="the host's own platform")
        else:
            raise refuse(dotted, "cannot be mapped onto a task's single container")
    return reading


def _build(build: Any, base: str, refuse: Refuse) -> tuple[str, str]:
    """(context, dockerfile) of the service's ``build``."""
    if build is None:
        raise refuse(f"{base}.build", "missing: a service that only names an image to pull is not supported "
                                      "(no image can be pulled here; give the task a Dockerfile)")
    if isinstance(build, str):
        build = {"context": build}
    if not isinstance(build, dict):
        raise refuse(f"{base}.build", f"{build!r} is neither a folder nor a mapping")
    for key in build:
        if key not in ("context", "dockerfile"):
            raise refuse(f"{base}.build.{key}", "only build.context and build.dockerfile can be mapped")
    context = build.get("context", ".")
    dockerfile = build.get("dockerfile", "Dockerfile")
    for key, value in (("context", context), ("dockerfile", dockerfile)):
        if not isinstance(value, str) or not value or "$" in value or value.startswith("/") or "\\" in value:
            raise refuse(f"{base}.build.{key}", f"{value!r} is not a relative path without variables")
        normal = posixpath.normpath(value)
        if normal == ".." or normal.startswith("../"):
            raise refuse(f"{base}.build.{key}", f"{value!r} leaves the task folder")
    context = posixpath.normpath(context)
    dockerfile = posixpath.normpath(dockerfile)
    if posixpath.normpath(posixpath.join(context, dockerfile)).startswith(".."):
        raise refuse(f"{base}.build.dockerfile", f"{dockerfile!r} leaves the task folder")
    return context, dockerfile


def _environment(value: Any, key: str, reading: ComposeReading, refuse: Refuse) -> None:
    """``environment`` (a list of ``KEY=VALUE`` / ``KEY``, or a mapping) into ``reading.env``."""
    if isinstance(value, dict):
        pairs = [(str(k), None if v is None else str(v)) for k, v in value.items()]
    elif isinstance(value, list):
        pairs = []
        for item in value:
            if not isinstance(item, str):
                raise refuse(key, f"{item!r} is not KEY=VALUE")
            name, sep, assigned = item.partition("=")
            pairs.append((name, assigned if sep else None))
    else:
        raise refuse(key, f"{value!r} is neither a list nor a mapping")
    for name, text in pairs:
        dotted = f"{key}.{name}"
        if name == "TEST_DIR" and text == TBENCH_TEST_DIR.split("=", 1)[1]:
            reading.note(dotted, "default", text, note="terminal-bench's tests folder: the grader sets TEST_DIR to "
                                                       "its own tests folder while the tests run")
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise refuse(dotted, "is not a valid environment variable name")
        if text is None:
            text = "${" + name + "}"  # compose passes the host's value through; the sandbox resolves it the same way
        elif "${T_BENCH_" in text:
            raise refuse(dotted, f"{text!r} names a variable only terminal-bench's harness sets")
        reading.env[name] = text
        reading.note(dotted, "mapped", text, f"env.{name}")
