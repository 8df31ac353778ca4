"""Harbor's ``task.toml``, key by key: what each setting becomes on a :class:`~terminal_agent.tasks.model.Task`.

Every key of a task.toml ends in exactly one of four states (:class:`SettingStatus`):

* **mapped** - read into a Task field that every sandbox backend honours (``environment.memory = "2G"`` ->
  ``limits.memory_mb = 2048``);
* **default** - absent, so Harbor's own default applies (internet allowed, 2048 MiB, verifier timeout 600 s ...);
* **kept** - carried unchanged and written back byte for byte, but not used when running the task
  (``[task]``, ``[solution] env``, keys this reader does not know);
* **refused** - cannot be honoured here (GPUs, MCP servers, multi-step tasks, host allowlists, ...): the task is
  refused with a :class:`~terminal_agent.errors.TaskFormatError` whose ``field`` is the key.

The semantics follow Harbor's ``TaskConfig`` (schema 1.0 to 1.4): ``version`` is the old name of
``schema_version``; ``memory`` / ``storage`` are the deprecated size strings (``"2G"`` = 2048 MiB, ``M``, ``K``);
``network_mode`` wins over the deprecated ``allow_internet``; ``[agent]`` / ``[verifier]`` ``network_mode`` override
the environment's baseline for their phase; a separate verifier runs in ``[verifier.environment]`` when declared
(its own baseline: public unless it says otherwise; its image is ``docker_image`` or ``tests/Dockerfile``), else in
a copy of ``[environment]``. docs/tasks.md lists the table.
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

#: Harbor's defaults for what a task.toml leaves out (``EnvironmentConfig`` / ``VerifierConfig``).
HARBOR_DEFAULT_CPUS = 1
HARBOR_DEFAULT_MEMORY_MB = 2048
HARBOR_DEFAULT_NETWORK = True
HARBOR_DEFAULT_VERIFIER_TIMEOUT_S = 600.0
HARBOR_DEFAULT_BUILD_TIMEOUT_S = 600.0
#: Harbor leaves the agent's timeout to the agent; ours is 600 s, as Harbor's schema 1.0 default was.
HARBOR_DEFAULT_AGENT_TIMEOUT_S = 600.0

#: Our own table inside ``[metadata]``.
EXTRA_TABLE = "terminal_agent"

_NETWORK_MODES = {"public": True, "no-network": False}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([GMK])\s*$", re.IGNORECASE)


class SettingStatus(str, Enum):
    """What became of one task.toml setting."""

    MAPPED = "mapped"
    """Read into a Task field that the sandboxes honour."""
    DEFAULT = "default"
    """Absent from the task.toml: Harbor's default applies."""
    KEPT = "kept"
    """Carried unchanged and written back, but not used when the task runs."""
    REFUSED = "refused"
    """Cannot be honoured: the task is refused with an error naming the key."""


@dataclass(frozen=True)
class HarborSetting:
    """One setting of a task.toml and what it became."""

    key: str
    """Dotted task.toml key (``environment.memory``, ``artifacts[1].service``)."""
    status: SettingStatus
    """Mapped, default, kept or refused."""
    value: Any = None
    """The value as written in the task.toml (None for a default)."""
    field: str | None = None
    """The Task field it maps onto (``limits.memory_mb``), if any."""
    task_value: Any = None
    """The value on the Task."""
    note: str = ""
    """Why: the reason of a refusal, what a kept key is for, which spelling was read."""


@dataclass
class HarborConfigReading:
    """What a task.toml says, as Task fields, and the fate of every setting."""

    fields: dict[str, Any] = field(default_factory=dict)
    """Task fields read from Harbor's own keys: difficulty, category, tags, metadata, docker_image, env, limits,
    verifier."""
    settings: list[HarborSetting] = field(default_factory=list)
    """Every setting, in the order read."""
    uses_tests_dockerfile: bool = False
    """Whether ``tests/Dockerfile`` is the separate verifier's environment (so it is not a test support file)."""
    verifier_image: str | None = None
    """``[verifier.environment] docker_image`` of a separate verifier, when declared."""
    extra: dict[str, Any] | None = None
    """Our ``[metadata.terminal_agent]`` table, when present."""

    @property
    def refused(self) -> list[HarborSetting]:
        """The refused settings (empty for a task that can run here)."""
        return [setting for setting in self.settings if setting.status is SettingStatus.REFUSED]

    def add(self, key: str, status: SettingStatus, value: Any = None, field_name: str | None = None,
            task_value: Any = None, note: str = "") -> None:
        self.settings.append(HarborSetting(key, status, value, field_name, task_value, note))

    def refuse(self, key: str, value: Any, note: str) -> None:
        self.add(key, SettingStatus.REFUSED, value, note=note)

    def keep(self, key: str, value: Any, note: str) -> None:
        self.add(key, SettingStatus.KEPT, value, note=note)


# --- value checks -------------------------------------------------------------------------------
def parse_size_mb(text: str) -> int:
    """MiB of a Harbor size string (``"2G"`` -> 2048, ``"512M"`` -> 512, ``"4096K"`` -> 4), as Harbor parses
    the deprecated ``memory`` / ``storage``; ``ValueError`` otherwise."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a size like '2G', '512M' or '4096K'")
    number, unit = float(match.group(1)), match.group(2).upper()
    return int(number * 1024) if unit == "G" else int(number) if unit == "M" else int(number / 1024)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _table(reading: HarborConfigReading, data: dict[str, Any], key: str, prefix: str = "") -> dict[str, Any] | None:
    """``data[key]`` when a table (``{}`` when absent); a refusal and None when it is something else."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        reading.refuse(prefix + key, value, f"{prefix + key!r} must be a table, not {type(value).__name__}")
        return None
    return value


def _positive(reading: HarborConfigReading, key: str, value: Any, *, integer: bool = False) -> bool:
    if not _is_number(value) or value <= 0 or (integer and not float(value).is_integer()):
        kind = "a positive whole number" if integer else "a positive number"
        reading.refuse(key, value, f"{key} must be {kind}, not {value!r}")
        return False
    return True


def _string_map(reading: HarborConfigReading, key: str, value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        reading.refuse(key, value, f"{key} must be a table of names to strings")
        return None
    bad = [name for name in value if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name)]
    if bad:
        reading.refuse(key, value, f"{key}: {bad[0]!r} is not a valid environment variable name")
        return None
    return dict(value)


def _network_mode(reading: HarborConfigReading, key: str, value: Any) -> bool | None:
    """True / False for ``public`` / ``no-network``; a refusal (and None) for ``allowlist`` or anything else."""
    if value in _NETWORK_MODES:
        return _NETWORK_MODES[value]
    if value == "allowlist":
        reading.refuse(key, value, f"{key} = 'allowlist' (only named hosts reachable) cannot be enforced by the "
                                   "sandboxes here (they give a network or none)")
    else:
        reading.refuse(key, value, f"{key} must be 'public' or 'no-network', not {value!r}")
    return None


def _allowed_hosts(reading: HarborConfigReading, key: str, value: Any) -> None:
    if value is None or value == []:
        reading.keep(key, value, "empty: no host allowlist")
        return
    reading.refuse(key, value, f"{key}: a host allowlist cannot be enforced by the sandboxes here")


# --- the tables ---------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """``value`` with TOML dates and times as their ISO text, so the metadata stays JSON-safe (CSV, parquet)."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _read_metadata(reading: HarborConfigReading, data: dict[str, Any]) -> None:
    table = _table(reading, data, "metadata")
    if table is None:
        return
    fields = reading.fields
    for key, target, default in (("difficulty", "difficulty", "medium"), ("category", "category", "")):
        if key in table:
            value = table[key]
            fields[target] = str(value) if value not in (None, "") else default
            reading.add(f"metadata.{key}", SettingStatus.MAPPED, value, target, fields[target])
        else:
            fields[target] = default
    if "tags" in table:
        value = table["tags"]
        fields["tags"] = [str(tag) for tag in value] if isinstance(value, list) else [str(value)]
        reading.add("metadata.tags", SettingStatus.MAPPED, value, "tags", fields["tags"])
    else:
        fields["tags"] = []
    extras: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("difficulty", "category", "tags"):
            continue
        if key == EXTRA_TABLE:
            if not isinstance(value, dict):
                reading.refuse(EXTRA_TABLE, value, f"[metadata.{EXTRA_TABLE}] must be a table")
            else:
                reading.extra = value
            continue
        extras[key] = _plain(value)
        reading.add(f"metadata.{key}", SettingStatus.KEPT, value, f"metadata.{key}", extras[key],
                    "carried in the task's metadata" + (" (as ISO text)" if extras[key] != value else ""))
    fields["metadata"] = extras


def _read_timeout(reading: HarborConfigReading, table: dict[str, Any], key: str, limit: str, default: float,
                  note: str = "") -> None:
    limits = reading.fields["limits"]
    if key.rsplit(".", 1)[-1] in table:
        value = table[key.rsplit(".", 1)[-1]]
        if _positive(reading, key, value):
            limits[limit] = float(value)
            reading.add(key, SettingStatus.MAPPED, value, f"limits.{limit}", float(value))
    else:
        limits[limit] = default
        reading.add(key, SettingStatus.DEFAULT, None, f"limits.{limit}", default, note or "Harbor's default")


_ENVIRONMENT_KEPT = {
    "skills_dir": "agent skills are not installed by the agent here",
    "os": "linux",
}



_SIZE_KEYS = {"memory_mb": "memory", "storage_mb": "storage"}
"""An ``[environment]`` size in MiB -> its deprecated size-string spelling (both may be given if they agree)."""
_SIZE_STRING_KEYS = {"memory": ("memory_mb", "2G"), "storage": ("storage_mb", "10G")}
"""A deprecated size string -> the MiB key it sets, and an example for the refusal."""


def _size_string(reading: Any, name: str, value: Any, example: str) -> int | None:
    """MiB of a deprecated size string (``memory = "2G"``); None, with the refusal recorded, when it is not one."""
    try:
        size = parse_size_mb(value) if isinstance(value, str) else None
    except ValueError as exc:
        reading.refuse(name, value, f"{name}: {exc}")
        return None
    if size is None:
        reading.refuse(name, value, f"{name} must be a size string like {example!r}")
    return size

def _read_environment_table(reading: HarborConfigReading, table: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The settings of an ``[environment]``-shaped table (the task's, or ``[verifier.environment]``): returns what
    it says of cpus, memory_mb, storage_mb, network, build_timeout_s, docker_image and env (absent keys left out).
    Refusals and kept keys are recorded; unknown keys are kept."""
    said: dict[str, Any] = {}
    for key, value in table.items():
        name = prefix + key
        if key == "cpus":
            if _positive(reading, name, value):
                said["cpus"] = float(value)
        elif key in _SIZE_KEYS:  # memory_mb, storage_mb: whole MiB
            if _positive(reading, name, value, integer=True):
                said.setdefault(key, int(value))
                if said[key] != int(value):
                    reading.refuse(name, value, f"{prefix}{_SIZE_KEYS[key]} and {name} disagree ({said[key]} MiB "
                                                f"!= {int(value)} MiB)")
        elif key in _SIZE_STRING_KEYS:  # memory = "2G", storage = "10G": the deprecated spellings
            field, example = _SIZE_STRING_KEYS[key]
            size = _size_string(reading, name, value, example)
            if size is None:
                continue
            if size <= 0:
                reading.refuse(name, value, f"{name} must be more than 0 MiB")
            elif field in said and said[field] != size:
                reading.refuse(name, value, f"{name} and {prefix}{field} disagree ({size} MiB != {said[field]} MiB)")
            else:
                said[field] = size
        elif key == "build_timeout_sec":
            if _positive(reading, name, value):
                said["build_timeout_s"] = float(value)
        elif key == "docker_image":
            if isinstance(value, str) and value.strip() and not any(ch.isspace() for ch in value):
                said["docker_image"] = value
            else:
                reading.refuse(name, value, f"{name} must name an image (a string without spaces)")
        elif key == "allow_internet":
            if isinstance(value, bool):
                said.setdefault("allow_internet", value)
            else:
                reading.refuse(name, value, f"{name} must be true or false")
        elif key == "network_mode":
            mode = _network_mode(reading, name, value)
            if mode is not None:
                said["network_mode"] = mode
        elif key == "allowed_hosts":
            _allowed_hosts(reading, name, value)
        elif key == "env":
            env = _string_map(reading, name, value)
            if env is not None:
                said["env"] = env
        elif key == "gpus":
            if value == 0:
                reading.keep(name, value, "no GPU asked for")
            else:
                reading.refuse(name, value, f"{name} = {value!r}: GPUs cannot be given to task sandboxes here")
        elif key == "gpu_types":
            if value in (None, []):
                reading.keep(name, value, "no GPU type asked for")
            else:
                reading.refuse(name, value, f"{name}: GPUs cannot be given to task sandboxes here")
        elif key == "tpu":
            reading.refuse(name, value, f"{name}: TPUs cannot be given to task sandboxes here")
        elif key == "mcp_servers":
            if value == []:
                reading.keep(name, value, "no MCP server")
            else:
                reading.refuse(name, value, f"{name}: the agent here has no MCP client, so the task's MCP servers "
                                            "cannot be offered")
        elif key == "healthcheck":
            reading.refuse(name, value, f"{name}: a readiness healthcheck before the agent starts is not run by "
                                        "the sandboxes here")
        elif key == "workdir":
            reading.refuse(name, value, f"{name}: a working directory other than the image's WORKDIR is not "
                                        "supported (set WORKDIR in the Dockerfile)")
        elif key == "os":
            if isinstance(value, str) and value.lower() == "linux":
                reading.keep(name, value, "Linux containers")
            else:
                reading.refuse(name, value, f"{name} = {value!r}: only Linux containers run here")
        elif key == "skills_dir":
            reading.keep(name, value, _ENVIRONMENT_KEPT[key])
        else:
            reading.keep(name, value, "not known to this reader; written back unchanged")
    if "network_mode" in said:
        said["network"] = said.pop("network_mode")
        said.pop("allow_internet", None)
    elif "allow_internet" in said:
        said["network"] = said.pop("allow_internet")
    return said


#: Task schema versions whose ``cpus`` / ``memory_mb`` defaults were 1 CPU and 2048 MiB; from 1.1 on Harbor leaves them
#: unset (Harbor 0.25, schema 1.4: no limit).
SCHEMA_WITH_RESOURCE_DEFAULTS = ("1.0",)
#: What a task's disk quota becomes here (docs/sandbox.md "Disk quota").
STORAGE_NOTE = ("a disk quota on the sandbox's writable layer, as the host's sandbox.storage policy says: a kernel "
                "quota or a measured one (enforce, the default), refused (refuse) or none (ignore)")
UNSET_STORAGE_NOTE = "not set: no disk quota (Harbor's default, every schema version)"
UNSET_RESOURCE_NOTE = ("not set: Harbor {version} leaves it unset (no limit), and so do the sandboxes here unless "
                       "their host policy sets one (sandbox.unset_cpus / sandbox.unset_memory_mb)")


def _record_environment(reading: HarborConfigReading, table: dict[str, Any], said: dict[str, Any],
                        schema: str | None = None) -> None:
    """Mapped and default settings of the task's ``[environment]`` onto limits, docker_image and env. ``schema`` (the
    task's schema_version) decides what an unset cpus / memory_mb means."""
    fields, limits = reading.fields, reading.fields["limits"]
    for spelling, limit, default in (
        (("cpus",), "cpus", float(HARBOR_DEFAULT_CPUS)),
        (("memory_mb", "memory"), "memory_mb", HARBOR_DEFAULT_MEMORY_MB),
        (("storage_mb", "storage"), "storage_mb", None),
        (("network_mode", "allow_internet"), "network", HARBOR_DEFAULT_NETWORK),
        (("build_timeout_sec",), "build_timeout_s", HARBOR_DEFAULT_BUILD_TIMEOUT_S),
    ):
        present = [key for key in spelling if key in table]
        if limit in said:
            limits[limit] = said[limit]
            for key in present:
                note = "deprecated spelling" if key in ("memory", "storage", "allow_internet") else ""
                if limit == "storage_mb":
                    note = (note + "; " if note else "") + STORAGE_NOTE
                if limit == "network" and key == "allow_internet" and "network_mode" in table:
                    note = "deprecated; network_mode wins"
                reading.add(f"environment.{key}", SettingStatus.MAPPED, table[key], f"limits.{limit}", said[limit],
                            note)
        elif not present:
            shown = {"network": "internet allowed"}.get(limit, "")
            note = f"Harbor's default{': ' + shown if shown else ''}"
            if limit == "storage_mb":
                note = UNSET_STORAGE_NOTE
            elif limit in ("cpus", "memory_mb") and schema not in SCHEMA_WITH_RESOURCE_DEFAULTS:
                note = UNSET_RESOURCE_NOTE.format(version=f"schema {schema}" if schema else "0.25 (schema 1.4)")
                default = None  # each schema version's default: from 1.1 on, none
            limits[limit] = default
            reading.add(f"environment.{spelling[0]}", SettingStatus.DEFAULT, None, f"limits.{limit}", default, note)
    fields["docker_image"] = said.get("docker_image")
    if "docker_image" in said:
        reading.add("environment.docker_image", SettingStatus.MAPPED, said["docker_image"], "docker_image",
                    said["docker_image"], "used when it can be pulled; the Dockerfile is built otherwise")
    fields["env"] = said.get("env", {})
    if "env" in said:
        reading.add("environment.env", SettingStatus.MAPPED, said["env"], "env", said["env"],
                    "${VAR} templates are resolved from the host when the sandbox starts")


def _read_agent(reading: HarborConfigReading, data: dict[str, Any]) -> bool | None:
    """``[agent]``: timeout and user; returns its network override (None: the environment's)."""
    table = _table(reading, data, "agent")
    if table is None:
        return None
    _read_timeout(reading, table, "agent.timeout_sec", "agent_timeout_s", HARBOR_DEFAULT_AGENT_TIMEOUT_S,
                  "Harbor leaves it to the agent; 600 s here")
    override = None
    for key, value in table.items():
        name = f"agent.{key}"
        if key == "timeout_sec":
            continue
        if key == "user":
            if value in ("root", 0):
                reading.add(name, SettingStatus.MAPPED, value, None, "root", "the agent runs as root here")
            else:
                reading.refuse(name, value, f"{name} = {value!r}: the agent runs as root in the sandboxes here")
        elif key == "network_mode":
            override = _network_mode(reading, name, value)
            if override is not None:
                reading.add(name, SettingStatus.MAPPED, value, "limits.network", override, "the agent phase's policy")
        elif key == "allowed_hosts":
            _allowed_hosts(reading, name, value)
        else:
            reading.keep(name, value, "not known to this reader; written back unchanged")
    return override


def _read_verifier(reading: HarborConfigReading, data: dict[str, Any], environment_network: bool | None,
                   tests_dockerfile: str | None) -> None:
    table = _table(reading, data, "verifier")
    if table is None:
        return
    verifier = reading.fields["verifier"]
    _read_timeout(reading, table, "verifier.timeout_sec", "test_timeout_s", HARBOR_DEFAULT_VERIFIER_TIMEOUT_S)
    override: bool | None = None
    mode = table.get("environment_mode")
    declared = table.get("environment")
    for key, value in table.items():
        name = f"verifier.{key}"
        if key in ("timeout_sec", "environment"):
            continue
        if key == "env":
            env = _string_map(reading, name, value)
            if env is not None:
                verifier["env"] = env
                reading.add(name, SettingStatus.MAPPED, value, "verifier.env", env)
        elif key == "user":
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                verifier["user"] = str(value)
                reading.add(name, SettingStatus.MAPPED, value, "verifier.user", str(value))
            else:
                reading.refuse(name, value, f"{name} must be a user name or uid")
        elif key == "network_mode":
            override = _network_mode(reading, name, value)
            if override is not None:
                reading.add(name, SettingStatus.MAPPED, value, "verifier.network", override,
                            "the verifier phase's policy")
        elif key == "allowed_hosts":
            _allowed_hosts(reading, name, value)
        elif key == "environment_mode":
            if value not in ("separate", "shared"):
                reading.refuse(name, value, f"{name} must be 'shared' or 'separate', not {value!r}")
            elif value == "shared" and declared is not None:
                reading.refuse(name, value, "environment_mode = 'shared' conflicts with [verifier.environment]")
            else:
                reading.add(name, SettingStatus.MAPPED, value, "verifier.separate_environment", value == "separate")
        elif key == "collect":
            if value == []:
                reading.keep(name, value, "no collect hook")
            else:
                reading.refuse(name, value, f"{name}: collect hooks run in compose services, which are not "
                                            "supported here")
        elif key == "continuous":
            if isinstance(value, dict) and not value.get("enabled", False):
                reading.keep(name, value, "continuous verification is off")
            else:
                reading.refuse(name, value, f"{name}: verifying submissions during the agent phase is not "
                                            "supported here")
        else:
            reading.keep(name, value, "not known to this reader; written back unchanged")
    separate = mode == "separate" or (mode is None and declared is not None)
    verifier["separate_environment"] = separate
    baseline = environment_network
    if declared is not None and mode != "shared":
        if not isinstance(declared, dict):
            reading.refuse("verifier.environment", declared, "[verifier.environment] must be a table")
            return
        if mode is None:
            reading.add("verifier.environment", SettingStatus.MAPPED, None, "verifier.separate_environment", True,
                        "declared, so the verifier runs in its own environment")
        said = _read_environment_table(reading, declared, "verifier.environment.")
        baseline = said.get("network", HARBOR_DEFAULT_NETWORK)
        for key in ("network_mode", "allow_internet"):
            if key in declared and "network" in said:
                reading.add(f"verifier.environment.{key}", SettingStatus.MAPPED, declared[key], "verifier.network",
                            said["network"], "the separate verifier's baseline")
        for key in ("cpus", "memory_mb", "memory", "storage_mb", "storage", "build_timeout_sec"):
            if key in declared and not any(s.key == f"verifier.environment.{key}" and s.status is SettingStatus.REFUSED
                                           for s in reading.settings):
                reading.keep(f"verifier.environment.{key}", declared[key],
                             "the separate verifier runs with the task's limits here")
        if "env" in said and said["env"]:
            reading.refuse("verifier.environment.env", declared["env"],
                           "verifier.environment.env: environment variables of a separate verifier's container are "
                           "not supported here (use [verifier] env)")
        if "docker_image" in said:
            reading.verifier_image = said["docker_image"]
            verifier["environment_dockerfile"] = f"FROM {said['docker_image']}\n"
            reading.add("verifier.environment.docker_image", SettingStatus.MAPPED, said["docker_image"],
                        "verifier.environment_dockerfile", verifier["environment_dockerfile"])
        elif tests_dockerfile is not None:
            reading.uses_tests_dockerfile = True
            verifier["environment_dockerfile"] = tests_dockerfile
            reading.add("verifier.environment", SettingStatus.MAPPED, None, "verifier.environment_dockerfile",
                        "tests/Dockerfile", "no docker_image: the verifier image is built from tests/Dockerfile")
        else:
            reading.refuse("verifier.environment", declared, "[verifier.environment] names no docker_image and "
                                                             "there is no tests/Dockerfile to build it from")
    verifier_network = override if override is not None else baseline
    verifier["_phase_network"] = verifier_network


def _read_artifacts(reading: HarborConfigReading, data: dict[str, Any]) -> None:
    if "artifacts" not in data:
        return
    value = data["artifacts"]
    if not isinstance(value, list):
        reading.refuse("artifacts", value, "artifacts must be a list of paths or tables")
        return
    paths: list[str] = []
    for index, entry in enumerate(value):
        name = f"artifacts[{index}]"
        if isinstance(entry, dict):
            source = entry.get("source")
            for key, item in entry.items():
                if key == "source":
                    continue
                if key == "service" and item in (None, "main"):
                    continue
                if key == "exclude" and item == []:
                    continue
                if key == "destination":
                    reading.keep(f"{name}.destination", item, "where Harbor files the artifact on the host")
                elif key == "service":
                    reading.refuse(f"{name}.service", item, f"{name}.service: artifacts of compose services are "
                                                           "not supported here")
                elif key == "exclude":
                    reading.refuse(f"{name}.exclude", item, f"{name}.exclude: excluding parts of an artifact is not "
                                                           "supported here")
                else:
                    reading.keep(f"{name}.{key}", item, "not known to this reader; written back unchanged")
        else:
            source = entry
        if not isinstance(source, str) or not source.startswith("/") or ".." in source.split("/") or "\0" in source:
            reading.refuse(name, entry, f"{name}: an artifact must be an absolute path without '..' parts")
            continue
        paths.append(source)
    reading.fields["verifier"]["artifacts"] = paths
    reading.add("artifacts", SettingStatus.MAPPED, value, "verifier.artifacts", paths,
                "handed from the agent's sandbox to a separate verifier")


def interpret_task_toml(data: dict[str, Any], *, tests_dockerfile: str | None = None) -> HarborConfigReading:
    """Read a parsed task.toml the way Harbor does: Task fields, defaults, kept keys and refusals.

    ``tests_dockerfile`` is the text of ``tests/Dockerfile`` when the task folder has one (a separate verifier
    without ``docker_image`` is built from it). Nothing is raised: refusals are in ``reading.refused``.
    """
    reading = HarborConfigReading()
    reading.fields["limits"] = {}
    reading.fields["verifier"] = {"mode": "harbor", "env": {}, "user": None, "network": None,
                                  "separate_environment": False, "environment_dockerfile": None, "artifacts": []}
    for key in ("version", "schema_version"):
        if key in data:
            reading.keep(key, data[key], "schema version" + (" (old name of schema_version)" if key == "version" else ""))
    _read_metadata(reading, data)
    if "task" in data:
        task_table = data["task"]
        if isinstance(task_table, dict):
            reading.keep("task", task_table, "package name, description, authors and keywords of Harbor's registry")
        else:
            reading.refuse("task", task_table, "[task] must be a table")
    environment = _table(reading, data, "environment")
    said: dict[str, Any] = {}
    if environment is not None:
        said = _read_environment_table(reading, environment, "environment.")
        schema = data.get("schema_version", data.get("version"))
        _record_environment(reading, environment, said, str(schema) if schema is not None else None)
    else:
        reading.fields.setdefault("docker_image", None)
        reading.fields.setdefault("env", {})
    baseline = reading.fields["limits"].get("network", HARBOR_DEFAULT_NETWORK)
    agent_override = _read_agent(reading, data)
    if agent_override is not None:
        reading.fields["limits"]["network"] = agent_override
    _read_verifier(reading, data, baseline, tests_dockerfile)
    verifier = reading.fields["verifier"]
    phase_network = verifier.pop("_phase_network", baseline)
    agent_network = reading.fields["limits"].get("network", HARBOR_DEFAULT_NETWORK)
    verifier["network"] = None if phase_network == agent_network else phase_network
    solution = _table(reading, data, "solution")
    if solution:
        for key, value in solution.items():
            reading.keep(f"solution.{key}", value, "used by Harbor's oracle run only; the reference solution runs "
                                                   "without it here" if key == "env" else "not known to this reader")
    _read_artifacts(reading, data)
    if "steps" in data:
        if data["steps"] in ([], None):
            reading.keep("steps", data["steps"], "no step")
        else:
            reading.refuse("steps", data["steps"], "[[steps]]: multi-step tasks are not supported here")
    for key, value in data.items():
        if key in ("version", "schema_version", "metadata", "task", "environment", "agent", "verifier", "solution",
                   "artifacts", "steps"):
            continue
        note = "used with [[steps]] only" if key == "multi_step_reward_strategy" else (
            "where the task came from" if key == "source" else "not known to this reader; written back unchanged")
        reading.keep(key, value, note)
    return reading
