"""Harbor task directories.

Layout written and read::

    <task_id>/
      task.toml              version, [metadata] (difficulty, category, tags, author_*),
                             [verifier] timeout_sec, [agent] timeout_sec,
                             [environment] cpus / memory_mb / allow_internet,
                             [metadata.terminal_agent] (what Harbor has no slot for)
      instruction.md         the instruction, byte for byte
      environment/Dockerfile, environment/<files>   the build context
      tests/test.sh          runs pytest and writes the weighted score to /logs/verifier/reward.txt
      tests/test_outputs.py, tests/<support files>
      solution/solve.sh      the reference solution (when the task has one)

``[metadata.terminal_agent]`` holds the title, use-case category, test weights, every limit and
the task metadata (as a JSON string: TOML has no null). It is the source of truth when present;
Harbor tasks written elsewhere get equal weights and keep their other settings in
``Task.metadata["harbor"]``.
"""

from __future__ import annotations

import json
import logging
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.model import Task, equal_test_weights
from terminal_agent.tasks.task_dirs import (
    fresh_task_dir,
    mapping_at,
    read_text_file,
    read_tree,
    require_file,
    task_from_dir_parts,
    write_text_file,
    write_tree,
)

logger = logging.getLogger(__name__)

TASK_TOML = "task.toml"
TEST_FILE = "test_outputs.py"
EXTRA_TABLE = "terminal_agent"
#: Metadata key holding a custom tests/test.sh of a task read from Harbor.
TEST_SH_METADATA_KEY = "harbor_test_sh"
#: Metadata key naming the test file of a Harbor task whose tests are not in tests/test_outputs.py.
TEST_FILE_METADATA_KEY = "harbor_test_file"
#: Metadata key holding the parts of a foreign task.toml that map to no Task field.
HARBOR_METADATA_KEY = "harbor"


# --- a small TOML writer (the stdlib only reads TOML) -------------------------------------------
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_string(key)


def _toml_string(value: str) -> str:
    out = ['"']
    for char in value:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def dump_toml(data: dict[str, Any]) -> str:
    """TOML text of ``data``: scalars first, then nested tables as ``[a.b]`` sections."""
    lines: list[str] = []

    def emit(table: dict[str, Any], prefix: list[str]) -> None:
        scalars = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in table.items() if isinstance(v, dict)]
        if prefix:
            if lines:
                lines.append("")
            lines.append("[" + ".".join(_toml_key(part) for part in prefix) + "]")
        for key, value in scalars:
            if value is None:
                continue
            lines.append(f"{_toml_key(str(key))} = {_toml_value(value)}")
        for key, value in tables:
            emit(value, prefix + [str(key)])

    emit(data, [])
    return "\n".join(lines) + "\n"


# --- test.sh ------------------------------------------------------------------------------------
def default_test_script(task: Task, test_file: str = TEST_FILE) -> str:
    """tests/test.sh: run pytest, then write the weighted score (0..1) to /logs/verifier/reward.txt."""
    weights = json.dumps(task.test_weights, sort_keys=True)
    return f"""#!/bin/bash
# Written by terminal-agent: runs the task's pytest tests and writes the weighted score
# (sum of the weights of the passed tests / sum of all weights) to /logs/verifier/reward.txt.
mkdir -p /logs/verifier
python3 -m pytest -p no:cacheprovider -rA --junitxml=/logs/verifier/junit.xml /tests/{test_file}
python3 - <<'SCORE'
import json
import xml.etree.ElementTree as ET

weights = json.loads('{weights}')
passed = set()
try:
    for case in ET.parse("/logs/verifier/junit.xml").getroot().iter("testcase"):
        if not any(child.tag in ("failure", "error", "skipped") for child in case):
            passed.add(case.get("name", "").split("[")[0])
except (OSError, ET.ParseError):
    pass
score = sum(w for name, w in weights.items() if name in passed) / sum(weights.values())
with open("/logs/verifier/reward.txt", "w") as handle:
    handle.write(f"{{score:.6f}}\\n")
SCORE
"""


# --- writing -----------------------------------------------------------------------------------
def task_toml_data(task: Task) -> dict[str, Any]:
    """The task.toml mapping of ``task``."""
    metadata: dict[str, Any] = {}
    for key in ("author_name", "author_email"):
        if isinstance(task.metadata.get(key), str):
            metadata[key] = task.metadata[key]
    metadata["difficulty"] = task.difficulty
    metadata["category"] = task.category
    metadata["tags"] = list(task.tags)
    metadata[EXTRA_TABLE] = {
        "title": task.title,
        "use_case_category": task.use_case_category,
        "test_weights": dict(task.test_weights),
        "limits": task.limits.model_dump(),
        "metadata_json": json.dumps(task.metadata, ensure_ascii=False, sort_keys=True),
    }
    environment: dict[str, Any] = {}
    if float(task.limits.cpus).is_integer():
        environment["cpus"] = int(task.limits.cpus)
    environment["memory_mb"] = task.limits.memory_mb
    environment["allow_internet"] = task.limits.network
    return {
        "version": "1.0",
        "metadata": metadata,
        "verifier": {"timeout_sec": float(task.limits.test_timeout_s)},
        "agent": {"timeout_sec": float(task.limits.agent_timeout_s)},
        "environment": environment,
    }


def check_harbor_layout(task: Task) -> None:
    """Raise :class:`TaskFormatError` when ``task`` cannot be written in the Harbor layout."""
    if "Dockerfile" in task.files:
        raise TaskFormatError("extra file 'Dockerfile' clashes with environment/Dockerfile", location=task.task_id,
                              field="files")
    for reserved in (TEST_FILE, "test.sh"):
        if reserved in task.test_support_files:
            raise TaskFormatError(f"support file {reserved!r} clashes with the Harbor layout", location=task.task_id,
                                  field="test_support_files")


def write_harbor_task(task: Task, parent_dir: str | Path) -> Path:
    """Write ``task`` as ``parent_dir/<task_id>/`` in Harbor layout; returns that path.

    An existing directory of that name is replaced. Raises :class:`TaskFormatError` when a file
    would overwrite a file of the layout.
    """
    check_harbor_layout(task)
    task_dir = fresh_task_dir(parent_dir, task.task_id)
    write_text_file(task_dir / TASK_TOML, dump_toml(task_toml_data(task)))
    write_text_file(task_dir / "instruction.md", task.instruction)
    write_text_file(task_dir / "environment" / "Dockerfile", task.dockerfile)
    write_tree(task_dir / "environment", task.files)
    test_name = task.metadata.get(TEST_FILE_METADATA_KEY)
    if not (isinstance(test_name, str) and re.match(r"^test[A-Za-z0-9_.-]*\.py$", test_name)):
        test_name = TEST_FILE
    if test_name in task.test_support_files:
        raise TaskFormatError(f"support file {test_name!r} clashes with the test file", location=task.task_id,
                              field="test_support_files")
    test_sh = task.metadata.get(TEST_SH_METADATA_KEY)
    if not isinstance(test_sh, str):
        test_sh = default_test_script(task, test_name)
    write_text_file(task_dir / "tests" / "test.sh", test_sh, 0o755)
    write_text_file(task_dir / "tests" / test_name, task.test_source)
    write_tree(task_dir / "tests", task.test_support_files)
    if task.solution is not None:
        write_text_file(task_dir / "solution" / "solve.sh", task.solution, 0o755)
    return task_dir


# --- reading -----------------------------------------------------------------------------------
def _pick_test_file(tests: dict[str, str], location: str) -> str:
    if TEST_FILE in tests:
        return TEST_FILE
    candidates = [name for name in tests if "/" not in name and re.match(r"^test.*\.py$", name)]
    if len(candidates) == 1:
        return candidates[0]
    raise TaskFormatError(
        f"cannot tell the test file: expected tests/{TEST_FILE} or exactly one tests/test*.py, found "
        f"{', '.join(candidates) or 'none'}",
        location=location,
        field="tests",
    )


def read_harbor_task(task_dir: str | Path) -> Task:
    """Read a Harbor task directory into a Task (the directory name is the id).

    Raises :class:`TaskFormatError` naming the directory and field when something is missing or wrong.
    """
    task_dir = Path(task_dir)
    location = str(task_dir)
    toml_path = require_file(task_dir, TASK_TOML, field=TASK_TOML)
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"task.toml is not valid TOML: {exc}", location=location, field=TASK_TOML) from None
    instruction_path = require_file(task_dir, "instruction.md", field="instruction.md")
    dockerfile_path = require_file(task_dir, "environment/Dockerfile", field="environment")
    tests = read_tree(task_dir / "tests", task_dir)
    test_sh = tests.pop("test.sh", None)
    test_name = _pick_test_file(tests, location)
    test_source = tests.pop(test_name)

    metadata_table = mapping_at(data, "metadata", location)
    extra = metadata_table.pop(EXTRA_TABLE, None)
    sections = {section: mapping_at(data, section, location) for section in ("verifier", "agent", "environment")}
    environment = sections["environment"]
    limits: dict[str, Any] = {}
    if extra is not None:
        if not isinstance(extra, dict):
            raise TaskFormatError(f"[metadata.{EXTRA_TABLE}] must be a table", location=location, field=EXTRA_TABLE)
        metadata_json = extra.get("metadata_json") or "{}"
        try:
            if not isinstance(metadata_json, str):
                raise ValueError(f"a string is expected, not {type(metadata_json).__name__}")
            metadata = json.loads(metadata_json)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise TaskFormatError(f"metadata_json is not valid JSON: {exc}", location=location,
                                  field=f"{EXTRA_TABLE}.metadata_json") from None
        limits.update(mapping_at(extra, "limits", location, f"{EXTRA_TABLE}.limits"))
        weights = extra.get("test_weights")
    else:
        metadata = {key: value for key, value in metadata_table.items() if key not in ("difficulty", "category", "tags")}
        leftovers = {
            key: value for key, value in data.items() if key not in ("metadata", "verifier", "agent", "environment")
        }
        for section in ("verifier", "agent", "environment"):
            rest = {k: v for k, v in sections[section].items() if k not in _MAPPED[section]}
            if rest:
                leftovers[section] = rest
        if leftovers:
            metadata[HARBOR_METADATA_KEY] = leftovers
        if isinstance(environment.get("cpus"), (int, float)):
            limits["cpus"] = environment["cpus"]
        if isinstance(environment.get("memory_mb"), int):
            limits["memory_mb"] = environment["memory_mb"]
        if isinstance(environment.get("allow_internet"), bool):
            limits["network"] = environment["allow_internet"]
        weights = None
        if test_sh is not None and test_sh != "":
            metadata[TEST_SH_METADATA_KEY] = test_sh
        if test_name != TEST_FILE:
            metadata[TEST_FILE_METADATA_KEY] = test_name
    verifier_timeout = sections["verifier"].get("timeout_sec")
    agent_timeout = sections["agent"].get("timeout_sec")
    if verifier_timeout is not None:
        limits["test_timeout_s"] = verifier_timeout
    if agent_timeout is not None:
        limits["agent_timeout_s"] = agent_timeout
    if weights is None:
        weights = equal_test_weights(test_source, location)

    solution_path = task_dir / "solution" / "solve.sh"
    return task_from_dir_parts(
        task_dir,
        instruction=read_text_file(instruction_path, task_dir),
        native=metadata_table,
        extra=extra,
        dockerfile=read_text_file(dockerfile_path, task_dir),
        files=read_tree(task_dir / "environment", task_dir, skip={"Dockerfile"}),
        test_source=test_source,
        test_support_files=tests,
        test_weights=weights,
        solution=read_text_file(solution_path, task_dir) if solution_path.is_file() else None,
        limits=limits,
        metadata=metadata,
    )


_MAPPED = {
    "verifier": {"timeout_sec"},
    "agent": {"timeout_sec"},
    "environment": {"cpus", "memory_mb", "allow_internet"},
}


def is_harbor_task_dir(path: str | Path) -> bool:
    """Whether ``path`` looks like a Harbor task directory."""
    return (Path(path) / TASK_TOML).is_file()
