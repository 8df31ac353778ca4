"""A Task as Harbor's ``task.toml`` (with tomlkit, which keeps comments and key order).

Two cases:

* A task read from a Harbor folder carries its original task.toml (``metadata["harbor_task_toml"]``). It is written
  back as it was: only the values that map onto Task fields and changed are updated, in the spelling the document
  already uses (``memory = "4G"`` stays a size string); comments, key order and every kept-but-unused key stay byte
  for byte. What Harbor has no key for (a title, test weights, guard tests, a fractional CPU quota,
  ``command_timeout_s``, ``pids``) goes into a small ``[metadata.terminal_agent]`` table marked ``harbor_native = true``, written only when
  needed. An unchanged task gets its document back byte for byte.
* Any other task gets a fresh document: Harbor's keys, so Harbor itself runs it, plus ``[metadata.terminal_agent]``
  holding everything (limits, test weights, the verifier settings, the guard tests as ``guards_json``, metadata as
  JSON): the source of truth when the
  folder is read back here.

After patching, the document is read again and compared with the task: a value that would not read back the same
raises :class:`~terminal_agent.errors.TaskFormatError` naming the field, rather than being written wrong.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.guard_fields import guards_json
from terminal_agent.tasks.harbor.task_toml import EXTRA_TABLE, HarborConfigReading, interpret_task_toml
from terminal_agent.tasks.model import GradingMode, Task, TaskLimits, VerifierSpec
from terminal_agent.tasks.negative_solution_fields import negative_solutions_json

#: Metadata key holding the original task.toml text of a task read from a Harbor folder.
TASK_TOML_METADATA_KEY = "harbor_task_toml"
#: Metadata key naming the test file of a Harbor task whose tests are not in tests/test_outputs.py.
TEST_FILE_METADATA_KEY = "harbor_test_file"
#: Metadata key set when the Harbor folder had no environment/Dockerfile (only ``docker_image``).
NO_DOCKERFILE_METADATA_KEY = "harbor_dockerfile_absent"
#: Metadata keys of this module: never written into ``[metadata]``.
RESERVED_METADATA_KEYS = (TASK_TOML_METADATA_KEY, TEST_FILE_METADATA_KEY, NO_DOCKERFILE_METADATA_KEY)

_MISSING = object()
_LIMIT_KEYS = ("cpus", "memory_mb", "storage_mb", "network", "test_timeout_s", "agent_timeout_s", "build_timeout_s")
_OVERLAY_LIMITS = ("command_timeout_s", "pids")


@dataclass(frozen=True)
class RenderedTaskToml:
    """The task.toml text of a task, and the facts the folder writer needs from it."""

    text: str
    """The task.toml document."""
    verifier_image: str | None
    """``[verifier.environment] docker_image``: when the verifier Dockerfile is just ``FROM`` it, no
    tests/Dockerfile is written."""


_INSTALL_OR_DOWNLOAD = re.compile(
    r"(^|[\s;|&(])(apt-get\s+install|apt\s+install|pip3?\s+install|-m\s+pip\s+install|uv\s+pip\s+install|uv\s+add|"
    r"uvx|uv\s+tool|curl|wget)\s", re.MULTILINE)


def verifier_installs(task: Task) -> bool:
    """Whether stock Harbor's verifier needs the network for this task's test.sh: ours (weighted pytest) installs
    pytest where the image has none; a Harbor-mode test script that installs or downloads anything."""
    if task.verifier.mode == GradingMode.WEIGHTED_PYTEST:
        return True
    return any(name.endswith(".sh") and isinstance(text, str) and _INSTALL_OR_DOWNLOAD.search(text)
               for name, text in task.test_support_files.items())


def synthesized_dockerfile(image: str) -> str:
    """The Dockerfile that stands for a prebuilt image (``FROM <image>``)."""
    return f"FROM {image}\n"


def harbor_view(reading: HarborConfigReading) -> dict[str, Any]:
    """The values of a task.toml reading that map onto Task fields, flat (``limits.cpus`` ...)."""
    fields = reading.fields
    view: dict[str, Any] = {
        "difficulty": fields.get("difficulty", "medium"),
        "category": fields.get("category", ""),
        "tags": fields.get("tags", []),
        "metadata": fields.get("metadata", {}),
        "docker_image": fields.get("docker_image"),
        "env": fields.get("env", {}),
    }
    for key in _LIMIT_KEYS:
        view[f"limits.{key}"] = fields["limits"].get(key)
    verifier = fields["verifier"]
    for key in ("env", "user", "separate_environment", "environment_dockerfile", "artifacts"):
        view[f"verifier.{key}"] = verifier.get(key)
    agent_network = view["limits.network"]
    view["verifier.network"] = agent_network if verifier.get("network") is None else verifier["network"]
    return view


def task_view(task: Task) -> dict[str, Any]:
    """The same flat values of ``task`` (what :func:`harbor_view` must give back for it)."""
    view: dict[str, Any] = {
        "difficulty": task.difficulty,
        "category": task.category,
        "tags": list(task.tags),
        "metadata": {k: v for k, v in task.metadata.items() if k not in RESERVED_METADATA_KEYS},
        "docker_image": task.docker_image,
        "env": dict(task.env),
    }
    for key in _LIMIT_KEYS:
        view[f"limits.{key}"] = getattr(task.limits, key)
    for key in ("env", "user", "separate_environment", "environment_dockerfile", "artifacts"):
        view[f"verifier.{key}"] = getattr(task.verifier, key)
    view["verifier.network"] = task.verifier.verifier_network(task.limits.network)
    return view


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return float(a) == float(b)
    return bool(a == b)


def overlay_table(task: Task) -> dict[str, Any]:
    """What a Harbor-native task needs beyond Harbor's keys (empty when nothing)."""
    overlay: dict[str, Any] = {}
    if task.title:
        overlay["title"] = task.title
    if task.use_case_category:
        overlay["use_case_category"] = task.use_case_category
    if task.test_weights:
        overlay["test_weights"] = dict(task.test_weights)
    if task.guards is not None:
        overlay["guards_json"] = guards_json(task.guards)
    if task.negative_solutions:
        overlay["negative_solutions_json"] = negative_solutions_json(task.negative_solutions)
    defaults = TaskLimits()
    limits = {key: getattr(task.limits, key) for key in _OVERLAY_LIMITS if getattr(task.limits, key) != getattr(defaults, key)}
    if task.limits.cpus is not None and not float(task.limits.cpus).is_integer():
        limits["cpus"] = task.limits.cpus
    if limits:
        overlay["limits"] = limits
    if overlay:
        overlay = {"harbor_native": True, **overlay}
    return overlay


def _toml_value(value: Any, where: str, location: str) -> Any:
    """``value`` when TOML can hold it (no None anywhere), else a TaskFormatError naming ``where``."""
    if value is None:
        raise TaskFormatError("is null, which TOML cannot hold (remove it or give it a value)", location=location,
                              field=where)
    if isinstance(value, dict):
        return {str(k): _toml_value(v, f"{where}.{k}", location) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_toml_value(v, f"{where}[]", location) for v in value]
    return value


# --- a fresh document ----------------------------------------------------------------------------
def fresh_task_toml(task: Task) -> RenderedTaskToml:
    """A new task.toml for ``task``: Harbor's keys plus the full ``[metadata.terminal_agent]`` table."""
    doc = tomlkit.document()
    doc.add(tomlkit.comment("Written by terminal-agent. [metadata.terminal_agent] holds what Harbor has no key for "
                            "and is what terminal-agent reads back."))
    doc["schema_version"] = "1.1"
    if task.verifier.artifacts:
        doc["artifacts"] = list(task.verifier.artifacts)
    metadata = tomlkit.table()
    for key in ("author_name", "author_email"):
        if isinstance(task.metadata.get(key), str):
            metadata[key] = task.metadata[key]
    metadata["difficulty"] = task.difficulty
    metadata["category"] = task.category
    metadata["tags"] = list(task.tags)
    extra = tomlkit.table()
    extra["title"] = task.title
    extra["use_case_category"] = task.use_case_category
    extra["test_weights"] = dict(task.test_weights)
    extra["limits"] = {key: value for key, value in task.limits.model_dump().items() if value is not None}
    # an unset storage_mb is the default (None) and needs no name: tasks without one are written as before it existed
    unset = [key for key, value in task.limits.model_dump().items()
             if value is None and TaskLimits.model_fields[key].default is not None]
    if unset:  # TOML has no null: the limits the task leaves unset (no limit), by name
        extra["unset_limits"] = unset
    extra["metadata_json"] = json.dumps(task.metadata, ensure_ascii=False, sort_keys=True, default=str)
    if task.verifier != VerifierSpec():
        extra["verifier_json"] = task.verifier.model_dump_json()
    if task.guards is not None:
        extra["guards_json"] = guards_json(task.guards)
    if task.negative_solutions:
        extra["negative_solutions_json"] = negative_solutions_json(task.negative_solutions)
    metadata[EXTRA_TABLE] = extra
    doc["metadata"] = metadata

    verifier = tomlkit.table()
    verifier["timeout_sec"] = float(task.limits.test_timeout_s)
    if task.verifier.env:
        verifier["env"] = dict(task.verifier.env)
    if task.verifier.user is not None:
        verifier["user"] = task.verifier.user
    verifier_network = task.verifier.verifier_network(task.limits.network)
    if task.verifier.network is not None:
        verifier["network_mode"] = "public" if task.verifier.network else "no-network"
    elif not verifier_network and verifier_installs(task):
        # stock Harbor runs test.sh as written: its installs need the network in the verifier phase (here the
        # offline verifier runtime stands in for them, so our own VerifierSpec keeps the agent's policy)
        verifier["network_mode"] = "public"
    if task.verifier.separate_environment:
        verifier["environment_mode"] = "separate"
        if task.verifier.environment_dockerfile is not None:
            # a declared verifier environment does not inherit [environment]: say its limits and network
            declared = tomlkit.table()
            if task.limits.cpus is not None and float(task.limits.cpus).is_integer():
                declared["cpus"] = int(task.limits.cpus)
            if task.limits.memory_mb is not None:
                declared["memory_mb"] = task.limits.memory_mb
            declared["network_mode"] = "public" if verifier_network else "no-network"
            verifier["environment"] = declared
    doc["verifier"] = verifier
    doc["agent"] = {"timeout_sec": float(task.limits.agent_timeout_s)}
    environment = tomlkit.table()
    environment["build_timeout_sec"] = float(task.limits.build_timeout_s)
    if task.docker_image is not None:
        environment["docker_image"] = task.docker_image
    # an unset limit (None) is left out: schema 1.1+ reads it back as unset (no limit), as Harbor does
    if task.limits.cpus is not None and float(task.limits.cpus).is_integer():
        environment["cpus"] = int(task.limits.cpus)
    if task.limits.memory_mb is not None:
        environment["memory_mb"] = task.limits.memory_mb
    if task.limits.storage_mb is not None:
        environment["storage_mb"] = task.limits.storage_mb
    environment["allow_internet"] = task.limits.network
    if task.env:
        environment["env"] = dict(task.env)
    doc["environment"] = environment
    return RenderedTaskToml(tomlkit.dumps(doc), None)


# --- patching a task's own document -------------------------------------------------------------
def _section(doc: Any, *path: str) -> Any:
    """The table at ``path`` in ``doc``, created (empty) when absent."""
    table = doc
    for part in path:
        if part not in table:
            table[part] = tomlkit.table()
        table = table[part]
    return table


def _memory_spelling(memory_mb: int) -> str:
    return f"{memory_mb // 1024}G" if memory_mb % 1024 == 0 else f"{memory_mb}M"


def _patch(doc: Any, key: str, task: Task, location: str) -> None:
    """Update ``doc`` so that its ``key`` (a :func:`harbor_view` key) reads as ``task``'s value."""
    data = doc.unwrap()
    environment = data.get("environment") or {}
    if key in ("difficulty", "category", "tags"):
        _section(doc, "metadata")[key] = getattr(task, key) if key != "tags" else list(task.tags)
    elif key == "metadata":
        table = _section(doc, "metadata")
        wanted = {k: v for k, v in task.metadata.items() if k not in RESERVED_METADATA_KEYS}
        if EXTRA_TABLE in wanted:
            raise TaskFormatError(f"metadata key {EXTRA_TABLE!r} is reserved for terminal-agent's table",
                                  location=location, field=f"metadata.{EXTRA_TABLE}")
        for name in [k for k in table if k not in ("difficulty", "category", "tags", EXTRA_TABLE)]:
            if name not in wanted:
                del table[name]
        for name, value in wanted.items():
            if (data.get("metadata") or {}).get(name, _MISSING) != value:
                table[name] = _toml_value(value, f"metadata.{name}", location)
    elif key == "docker_image":
        table = _section(doc, "environment")
        if task.docker_image is None:
            table.pop("docker_image", None)
        else:
            table["docker_image"] = task.docker_image
    elif key == "env":
        table = _section(doc, "environment")
        table.pop("env", None)
        if task.env:
            table["env"] = dict(task.env)
    elif key == "limits.cpus":
        if task.limits.cpus is None:
            _section(doc, "environment").pop("cpus", None)
        elif float(task.limits.cpus).is_integer():
            _section(doc, "environment")["cpus"] = int(task.limits.cpus)
        # a fractional quota has no Harbor key (Harbor wants an integer): the overlay table carries it
    elif key == "limits.memory_mb":
        table = _section(doc, "environment")
        if task.limits.memory_mb is None:
            table.pop("memory", None)
            table.pop("memory_mb", None)
        elif "memory" in environment and "memory_mb" not in environment:
            table["memory"] = _memory_spelling(task.limits.memory_mb)
        else:
            table.pop("memory", None)
            table["memory_mb"] = task.limits.memory_mb
    elif key == "limits.storage_mb":
        table = _section(doc, "environment")
        if task.limits.storage_mb is None:
            table.pop("storage", None)
            table.pop("storage_mb", None)
        elif "storage" in environment and "storage_mb" not in environment:
            table["storage"] = _memory_spelling(task.limits.storage_mb)  # the task's own (deprecated) spelling
        else:
            table.pop("storage", None)
            table["storage_mb"] = task.limits.storage_mb
    elif key == "limits.network":
        mode = "public" if task.limits.network else "no-network"
        if "network_mode" in (data.get("agent") or {}):
            _section(doc, "agent")["network_mode"] = mode
        elif "network_mode" in environment:
            _section(doc, "environment")["network_mode"] = mode
        else:
            _section(doc, "environment")["allow_internet"] = task.limits.network
    elif key == "limits.test_timeout_s":
        _section(doc, "verifier")["timeout_sec"] = float(task.limits.test_timeout_s)
    elif key == "limits.agent_timeout_s":
        _section(doc, "agent")["timeout_sec"] = float(task.limits.agent_timeout_s)
    elif key == "limits.build_timeout_s":
        _section(doc, "environment")["build_timeout_sec"] = float(task.limits.build_timeout_s)
    elif key == "verifier.env":
        table = _section(doc, "verifier")
        table.pop("env", None)
        if task.verifier.env:
            table["env"] = dict(task.verifier.env)
    elif key == "verifier.user":
        table = _section(doc, "verifier")
        if task.verifier.user is None:
            table.pop("user", None)
        else:
            table["user"] = task.verifier.user
    elif key == "verifier.separate_environment":
        table = _section(doc, "verifier")
        if task.verifier.separate_environment:
            table["environment_mode"] = "separate"
        else:
            table.pop("environment", None)
            if "environment_mode" in table:
                table["environment_mode"] = "shared"
    elif key == "verifier.environment_dockerfile":
        table = _section(doc, "verifier")
        dockerfile = task.verifier.environment_dockerfile
        if dockerfile is None:
            table.pop("environment", None)
        else:
            declared = _section(doc, "verifier", "environment")
            image = (data.get("verifier") or {}).get("environment", {}).get("docker_image")
            if not (isinstance(image, str) and dockerfile == synthesized_dockerfile(image)):
                declared.pop("docker_image", None)  # built from tests/Dockerfile, which the folder writer writes
    elif key == "verifier.network":
        network = task.verifier.verifier_network(task.limits.network)
        _section(doc, "verifier")["network_mode"] = "public" if network else "no-network"
    elif key == "verifier.artifacts":
        if task.verifier.artifacts:
            doc["artifacts"] = list(task.verifier.artifacts)
        else:
            doc.pop("artifacts", None)
    else:  # pragma: no cover - every harbor_view key is handled above
        raise AssertionError(key)


_PATCH_ORDER = (
    "difficulty", "category", "tags", "metadata", "docker_image", "env", "limits.cpus", "limits.memory_mb",
    "limits.storage_mb", "limits.network", "limits.test_timeout_s", "limits.agent_timeout_s", "limits.build_timeout_s", "verifier.env",
    "verifier.user", "verifier.separate_environment", "verifier.environment_dockerfile", "verifier.artifacts",
    "verifier.network",
)


def _differences(doc_data: dict[str, Any], task: Task, wanted: dict[str, Any]) -> tuple[list[str], HarborConfigReading]:
    reading = interpret_task_toml(doc_data, tests_dockerfile=task.verifier.environment_dockerfile)
    have = harbor_view(reading)
    if task.limits.cpus is not None and not float(task.limits.cpus).is_integer():
        have["limits.cpus"] = task.limits.cpus  # carried by the overlay table
    return [key for key in _PATCH_ORDER if not _same(have[key], wanted[key])], reading


def patched_task_toml(original: str, task: Task, location: str) -> RenderedTaskToml:
    """``original`` (the task's own task.toml) with the values of ``task`` that changed; see the module doc."""
    try:
        data = tomllib.loads(original)
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"the kept task.toml does not parse: {exc}", location=location,
                              field=f"metadata.{TASK_TOML_METADATA_KEY}") from None
    wanted = task_view(task)
    changed, reading = _differences(data, task, wanted)
    overlay = overlay_table(task)
    existing = (data.get("metadata") or {}).get(EXTRA_TABLE)
    overlay_changed = existing != (overlay or None)
    if not changed and not overlay_changed:
        return RenderedTaskToml(original, reading.verifier_image)  # unchanged: byte for byte, no tomlkit pass
    try:
        doc = tomlkit.parse(original)
    except TOMLKitError as exc:
        raise TaskFormatError(f"the kept task.toml does not parse: {exc}", location=location,
                              field=f"metadata.{TASK_TOML_METADATA_KEY}") from None
    for key in changed:
        _patch(doc, key, task, location)
    if overlay_changed:
        if overlay:
            _section(doc, "metadata")[EXTRA_TABLE] = overlay
        elif "metadata" in doc:
            doc["metadata"].pop(EXTRA_TABLE, None)
    text = tomlkit.dumps(doc)
    data = tomllib.loads(text)
    # a network patch can move which phase the verifier's policy comes from: settle it once more
    remaining, reading = _differences(data, task, wanted)
    if remaining == ["verifier.network"]:
        _patch(doc, "verifier.network", task, location)
        text = tomlkit.dumps(doc)
        remaining, reading = _differences(tomllib.loads(text), task, wanted)
    if remaining or reading.refused:
        key = remaining[0] if remaining else reading.refused[0].key
        raise TaskFormatError("cannot be written into the task's own task.toml so that it reads back the same",
                              location=location, field=key)
    return RenderedTaskToml(text, reading.verifier_image)


def task_toml_text(task: Task, location: str | None = None) -> RenderedTaskToml:
    """The task.toml of ``task``: its own document patched (a Harbor task graded in harbor mode), else a fresh one."""
    original = task.metadata.get(TASK_TOML_METADATA_KEY)
    if isinstance(original, str) and task.verifier.mode == GradingMode.HARBOR:
        return patched_task_toml(original, task, location or task.task_id)
    return fresh_task_toml(task)
