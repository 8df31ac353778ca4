"""Harbor task directories (Terminal-Bench 2 and the task sets built like it), read and written faithfully.

Layout::

    <task_id>/
      task.toml              Harbor's settings (schema 1.0 to 1.4; tasks/harbor/task_toml.py says what each key becomes)
      instruction.md         the instruction, byte for byte
      environment/Dockerfile, environment/<files>   the build context (any bytes); the Dockerfile may be absent
                             when task.toml names a prebuilt ``docker_image``
      tests/test.sh          Harbor's verifier: writes /logs/verifier/reward.txt (or reward.json)
      tests/test_outputs.py, tests/<support files>  (any bytes; tests/Dockerfile: a separate verifier's image)
      solution/solve.sh, solution/<files>           the reference solution

A task written elsewhere is graded in Harbor's way (:attr:`GradingMode.HARBOR`): ``tests/test.sh`` is
``test_support_files["test.sh"]``, and ``tests/test_outputs.py`` (or the one ``tests/test*.py``) is the
``test_source`` when present. Its original task.toml is kept in ``metadata["harbor_task_toml"]`` and written back
with only the changed values updated (tasks/harbor/task_toml_writer.py). A setting that cannot be honoured here is
refused with a :class:`TaskFormatError` naming the key; nothing is silently dropped.

A task this project wrote carries ``[metadata.terminal_agent]`` (limits, weights, verifier settings, metadata as
JSON) and reads back exactly as written; graded by weighted pytest, its generated ``tests/test.sh`` (which Harbor
itself can run: it writes the weighted score to /logs/verifier/reward.txt) is not a support file.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.guard_fields import parse_guards_json, task_with_guards_from_fields
from terminal_agent.tasks.harbor.task_toml import (
    EXTRA_TABLE,
    HarborConfigReading,
    interpret_task_toml,
)
from terminal_agent.tasks.harbor.task_toml_writer import (
    NO_DOCKERFILE_METADATA_KEY,
    TASK_TOML_METADATA_KEY,
    TEST_FILE_METADATA_KEY,
    synthesized_dockerfile,
    task_toml_text,
)
from terminal_agent.tasks.model import GradingMode, Task, TaskLimits, VerifierSpec, equal_test_weights
from terminal_agent.tasks.negative_solution_fields import parse_negative_solutions
from terminal_agent.tasks.task_dirs import (
    fresh_task_dir,
    mapping_at,
    read_text_file,
    read_tree,
    require_file,
    write_text_file,
    write_tree,
)
from terminal_agent.tasks.terminal_bench.test_requirements import TEST_REQUIREMENTS_METADATA_KEY

logger = logging.getLogger(__name__)

__all__ = [
    "HarborDirReading",
    "check_harbor_layout",
    "default_test_script",
    "is_harbor_task_dir",
    "read_harbor_dir",
    "read_harbor_task",
    "write_harbor_task",
]

TASK_TOML = "task.toml"
TEST_FILE = "test_outputs.py"
#: Compose files Harbor would run instead of one container: refused.
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml")
_TEST_FILE_NAME = re.compile(r"^test[A-Za-z0-9_.-]*\.py$")


# --- test.sh of a task graded by weighted pytest -------------------------------------------------
PYTEST_REQUIREMENT = "pytest==8.4.1"
"""The pytest the written test.sh installs where the image has none (TB2's pin)."""


def default_test_script(task: Task, test_file: str = TEST_FILE) -> str:
    """tests/test.sh: run pytest, then write the weighted score (0..1) to /logs/verifier/reward.txt (zeroed or capped
    when a guard test of the task failed)."""
    weights = json.dumps(task.test_weights, sort_keys=True)
    wanted = _test_requirements(task)
    # the tests' own requirements (a terminal-bench v1 run-tests.sh's installs) go into the venv beside pytest
    needs = "! python3 -c 'import pytest' >/dev/null 2>&1" if not wanted else "true"
    installs = " ".join(shlex.quote(spec) for spec in [PYTEST_REQUIREMENT, *wanted])
    return f"""#!/bin/bash
# Written by terminal-agent: runs the task's pytest tests and writes the weighted score
# (sum of the weights of the passed tests / sum of all weights) to /logs/verifier/reward.txt.
# pytest is the image's when it has one; else it is installed here, pinned, into a venv that also sees the image's
# packages (task.toml gives the verifier phase the network for it; the agent's phase keeps the task's setting).
mkdir -p /logs/verifier
PYTHON=python3
if {needs}; then
    VENV="$(mktemp -d)/venv"
    python3 -m venv --system-site-packages "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check {installs}
    PYTHON="$VENV/bin/python"
fi
"$PYTHON" -m pytest -p no:cacheprovider -rA --junitxml=/logs/verifier/junit.xml /tests/{test_file}
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
{_guard_lines(task)}with open("/logs/verifier/reward.txt", "w") as handle:
    handle.write(f"{{score:.6f}}\\n")
SCORE
"""


def _test_requirements(task: Task) -> list[str]:
    """What the tests need beyond pytest (``metadata["tb_test_requirements"]``, the installers themselves left out)."""
    specs = task.metadata.get(TEST_REQUIREMENTS_METADATA_KEY) or []
    if not isinstance(specs, list):
        return []
    return [spec for spec in specs if isinstance(spec, str)
            and re.split(r"[\s\[<>=!~;@]", spec, maxsplit=1)[0].lower() not in ("pip", "uv", "pytest")]


def _guard_lines(task: Task) -> str:
    """The lines of test.sh's scorer that zero or cap the score when a guard test failed (none without guards)."""
    if task.guards is None:
        return ""
    guards = json.dumps(task.guards.model_dump(mode="json"), sort_keys=True)
    return f"""guards = json.loads('{guards}')
ok = {{}}
try:
    for case in ET.parse("/logs/verifier/junit.xml").getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        ok[name] = ok.get(name, True) and not any(child.tag in ("failure", "error", "skipped") for child in case)
except (OSError, ET.ParseError):
    pass
if any(not ok.get(name, False) for name in guards["tests"]):
    score = 0.0 if guards["on_failure"] == "zero" else min(score, guards["cap"])
"""


# --- writing -----------------------------------------------------------------------------------
def _test_file_name(task: Task) -> str:
    name = task.metadata.get(TEST_FILE_METADATA_KEY)
    return name if isinstance(name, str) and _TEST_FILE_NAME.match(name) else TEST_FILE


def check_harbor_layout(task: Task) -> None:
    """Raise :class:`TaskFormatError` when ``task`` cannot be written in the Harbor layout (a file of the task
    would take the place of a file of the layout, or one would be refused when read back)."""
    def clash(message: str, field: str) -> TaskFormatError:
        return TaskFormatError(message, location=task.task_id, field=field)

    if "Dockerfile" in task.files:
        raise clash("extra file 'Dockerfile' clashes with environment/Dockerfile", "files")
    weighted = task.verifier.mode == GradingMode.WEIGHTED_PYTEST
    reserved = [_test_file_name(task)] if weighted or task.test_source.strip() else []
    if weighted:
        reserved.append("test.sh")
    if task.verifier.environment_dockerfile is not None:
        reserved.append("Dockerfile")
    for name in reserved:
        if name in task.test_support_files:
            raise clash(f"support file {name!r} clashes with the Harbor layout", "test_support_files")
    if task.solution is not None and "solve.sh" in task.solution_files:
        raise clash("solution file 'solve.sh' clashes with solution/solve.sh", "solution_files")


def write_harbor_task(task: Task, parent_dir: str | Path) -> Path:
    """Write ``task`` as ``parent_dir/<task_id>/`` in Harbor layout; returns that path.

    An existing directory of that name is replaced. Raises :class:`TaskFormatError` when a file would take the
    place of a file of the layout, or a value cannot be written so that it reads back the same.
    """
    check_harbor_layout(task)
    rendered = task_toml_text(task, task.task_id)
    task_dir = fresh_task_dir(parent_dir, task.task_id)
    write_text_file(task_dir / TASK_TOML, rendered.text)
    write_text_file(task_dir / "instruction.md", task.instruction)
    image_only = (
        task.metadata.get(NO_DOCKERFILE_METADATA_KEY) is True
        and task.docker_image is not None
        and task.dockerfile == synthesized_dockerfile(task.docker_image)
    )
    if not image_only:
        write_text_file(task_dir / "environment" / "Dockerfile", task.dockerfile)
    (task_dir / "environment").mkdir(exist_ok=True)
    write_tree(task_dir / "environment", task.files)
    tests = task_dir / "tests"
    test_name = _test_file_name(task)
    if task.verifier.mode == GradingMode.WEIGHTED_PYTEST:
        write_text_file(tests / "test.sh", default_test_script(task, test_name), 0o755)
        write_text_file(tests / test_name, task.test_source)
    elif task.test_source.strip():
        write_text_file(tests / test_name, task.test_source)
    dockerfile = task.verifier.environment_dockerfile
    if dockerfile is not None and not (
        rendered.verifier_image is not None and dockerfile == synthesized_dockerfile(rendered.verifier_image)
    ):
        write_text_file(tests / "Dockerfile", dockerfile)
    support = dict(task.test_support_files)
    test_sh = support.pop("test.sh", None)
    if test_sh is not None:
        write_text_file(tests / "test.sh", test_sh, 0o755)
    write_tree(tests, support)
    if task.solution is not None:
        write_text_file(task_dir / "solution" / "solve.sh", task.solution, 0o755)
    write_tree(task_dir / "solution", task.solution_files)
    return task_dir


# --- reading -----------------------------------------------------------------------------------
@dataclass
class HarborDirReading:
    """What reading one Harbor folder gave: the settings of its task.toml, and the Task or the error."""

    task_dir: Path
    """The folder read."""
    config: HarborConfigReading | None
    """Every task.toml setting and what it became (None when task.toml could not be parsed)."""
    task: Task | None
    """The task, when it could be read."""
    error: TaskFormatError | None
    """Why not (the first refusal, a missing file, a bad value)."""
    ours: bool = False
    """Whether the folder was written by terminal-agent (``[metadata.terminal_agent]`` is the source of truth)."""


def _pick_test_file(tests: dict[str, Any]) -> str | None:
    if TEST_FILE in tests:
        return TEST_FILE
    candidates = [name for name in tests if "/" not in name and _TEST_FILE_NAME.match(name)]
    return candidates[0] if len(candidates) == 1 else None


def _text(content: str | bytes, name: str, location: str) -> str:
    if isinstance(content, bytes):
        raise TaskFormatError(f"{name} is not UTF-8 text", location=location, field=name)
    return content


def _refuse_files(config: HarborConfigReading, task_dir: Path) -> None:
    """Refuse the compose files Harbor would run (in a folder written elsewhere: one of ours carries a
    terminal-bench v1 docker-compose.yaml as a plain build-context file, as its Task says)."""
    for name in COMPOSE_FILES:
        if (task_dir / "environment" / name).exists():
            config.refuse(f"environment/{name}", None, f"environment/{name}: multi-container (compose) tasks are "
                                                       "not supported here")
        if config.fields["verifier"].get("separate_environment") and (task_dir / "tests" / name).exists():
            config.refuse(f"tests/{name}", None, f"tests/{name}: a compose verifier environment is not supported "
                                                 "here")


def _overlay(extra: dict[str, Any] | None) -> dict[str, Any] | None:
    return extra if isinstance(extra, dict) and extra.get("harbor_native") is True else None


def _read_files(task_dir: Path, config: HarborConfigReading, location: str) -> dict[str, Any]:
    """The file parts of the Task: instruction, dockerfile, files, tests, solution."""
    parts: dict[str, Any] = {"instruction": read_text_file(require_file(task_dir, "instruction.md",
                                                                        field="instruction.md"), task_dir)}
    dockerfile_path = task_dir / "environment" / "Dockerfile"
    image = config.fields.get("docker_image")
    if dockerfile_path.is_symlink() or dockerfile_path.exists() or image is None:
        path = require_file(task_dir, "environment/Dockerfile", field="environment",
                            note=" (and task.toml names no docker_image)")
        parts["dockerfile"] = read_text_file(path, task_dir)
        parts["dockerfile_absent"] = False
    else:
        parts["dockerfile"] = synthesized_dockerfile(image)
        parts["dockerfile_absent"] = True
    parts["files"] = read_tree(task_dir / "environment", task_dir, skip={"Dockerfile"})
    parts["tests"] = read_tree(task_dir / "tests", task_dir)
    solution = read_tree(task_dir / "solution", task_dir)
    script = solution.pop("solve.sh", None)
    parts["solution"] = None if script is None else _text(script, "solution/solve.sh", location)
    parts["solution_files"] = solution
    return parts


def _harbor_native_fields(config: HarborConfigReading, parts: dict[str, Any], text: str,
                          location: str) -> dict[str, Any]:
    tests = dict(parts["tests"])
    if "test.sh" not in tests:
        raise TaskFormatError("no tests/test.sh (Harbor's verifier: it writes /logs/verifier/reward.txt)",
                              location=location, field="tests/test.sh")
    if config.uses_tests_dockerfile:
        tests.pop("Dockerfile", None)
    test_name = _pick_test_file(tests)
    test_source = _text(tests.pop(test_name), f"tests/{test_name}", location) if test_name else ""
    fields = config.fields
    metadata = dict(fields.get("metadata", {}))
    metadata[TASK_TOML_METADATA_KEY] = text
    if test_name not in (None, TEST_FILE):
        metadata[TEST_FILE_METADATA_KEY] = test_name
    if parts["dockerfile_absent"]:
        metadata[NO_DOCKERFILE_METADATA_KEY] = True
    verifier = dict(fields["verifier"])
    limits = dict(fields["limits"])
    result: dict[str, Any] = {
        "title": "", "use_case_category": "", "test_weights": {},
        "test_source": test_source, "test_support_files": tests, "metadata": metadata,
        "limits": limits, "verifier": verifier,
    }
    overlay = _overlay(config.extra)
    if overlay is not None:
        result["title"] = overlay.get("title", "")
        result["use_case_category"] = overlay.get("use_case_category", "")
        result["test_weights"] = mapping_at(overlay, "test_weights", location, f"{EXTRA_TABLE}.test_weights")
        guards = parse_guards_json(overlay.get("guards_json"), location, f"{EXTRA_TABLE}.guards_json")
        if guards is not None:
            result["guards"] = guards
        negatives = parse_negative_solutions(overlay.get("negative_solutions_json"), location,
                                             f"{EXTRA_TABLE}.negative_solutions_json")
        if negatives is not None:
            result["negative_solutions"] = negatives
        limits.update(mapping_at(overlay, "limits", location, f"{EXTRA_TABLE}.limits"))
    return result


def _our_fields(config: HarborConfigReading, parts: dict[str, Any], location: str) -> dict[str, Any]:
    extra = config.extra or {}
    metadata_json = extra.get("metadata_json") or "{}"
    try:
        if not isinstance(metadata_json, str):
            raise ValueError(f"a string is expected, not {type(metadata_json).__name__}")
        metadata = json.loads(metadata_json)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise TaskFormatError(f"metadata_json is not valid JSON: {exc}", location=location,
                              field=f"{EXTRA_TABLE}.metadata_json") from None
    limits = dict(mapping_at(extra, "limits", location, f"{EXTRA_TABLE}.limits"))
    unset = extra.get("unset_limits", [])
    if not isinstance(unset, list) or not all(isinstance(name, str) and name in TaskLimits.model_fields for name in unset):
        raise TaskFormatError(f"must be a list of limit names ({', '.join(TaskLimits.model_fields)})",
                              location=location, field=f"{EXTRA_TABLE}.unset_limits")
    limits.update({name: None for name in unset})
    verifier_json = extra.get("verifier_json")
    try:
        verifier = VerifierSpec() if verifier_json is None else VerifierSpec.model_validate_json(verifier_json)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise TaskFormatError(f"verifier_json is not a valid verifier: {exc}", location=location,
                              field=f"{EXTRA_TABLE}.verifier_json") from None
    tests = dict(parts["tests"])
    weighted = verifier.mode == GradingMode.WEIGHTED_PYTEST
    if weighted:
        tests.pop("test.sh", None)  # ours, generated from the weights
    if verifier.environment_dockerfile is not None:
        tests.pop("Dockerfile", None)
    test_name = metadata.get(TEST_FILE_METADATA_KEY) if isinstance(metadata, dict) else None
    if not (isinstance(test_name, str) and _TEST_FILE_NAME.match(test_name)):
        test_name = TEST_FILE
    if test_name in tests:
        test_source = _text(tests.pop(test_name), f"tests/{test_name}", location)
    elif weighted:
        raise TaskFormatError(f"no tests/{test_name}", location=location, field="tests")
    else:
        test_source = ""
    weights = extra.get("test_weights")
    if weights is None:
        weights = equal_test_weights(test_source, location) if weighted else {}
    fields = {
        "title": extra.get("title", ""), "use_case_category": extra.get("use_case_category", ""),
        "test_weights": weights, "test_source": test_source, "test_support_files": tests, "metadata": metadata,
        "limits": limits, "verifier": verifier.model_dump(),
    }
    guards = parse_guards_json(extra.get("guards_json"), location, f"{EXTRA_TABLE}.guards_json")
    if guards is not None:
        fields["guards"] = guards
    negatives = parse_negative_solutions(extra.get("negative_solutions_json"), location,
                                         f"{EXTRA_TABLE}.negative_solutions_json")
    if negatives is not None:
        fields["negative_solutions"] = negatives
    return fields


def read_harbor_dir(task_dir: str | Path) -> HarborDirReading:
    """Read a Harbor folder without raising for the task's own faults: settings, Task or error.

    Every refused setting is in ``config.refused`` (the error names the first); what was mapped, defaulted and
    kept is in ``config.settings``.
    """
    task_dir = Path(task_dir)
    location = str(task_dir)
    try:
        text = read_text_file(require_file(task_dir, TASK_TOML, field=TASK_TOML), task_dir)
        data = tomllib.loads(text)
    except TaskFormatError as exc:
        return HarborDirReading(task_dir, None, None, exc)
    except tomllib.TOMLDecodeError as exc:
        error = TaskFormatError(f"task.toml is not valid TOML: {exc}", location=location, field=TASK_TOML)
        return HarborDirReading(task_dir, None, None, error)
    except RecursionError:  # tomllib recurses per nested array or inline table
        error = TaskFormatError("task.toml is not valid TOML: arrays or tables nested too deeply", location=location,
                                field=TASK_TOML)
        return HarborDirReading(task_dir, None, None, error)
    try:
        tests_dockerfile_path = task_dir / "tests" / "Dockerfile"
        tests_dockerfile = (read_text_file(tests_dockerfile_path, task_dir)
                            if tests_dockerfile_path.is_symlink() or tests_dockerfile_path.exists() else None)
        config = interpret_task_toml(data, tests_dockerfile=tests_dockerfile)
    except TaskFormatError as exc:
        return HarborDirReading(task_dir, None, None, exc)
    ours = config.extra is not None and _overlay(config.extra) is None
    if not ours:
        _refuse_files(config, task_dir)
    if config.refused:
        first = config.refused[0]
        return HarborDirReading(task_dir, config, None, TaskFormatError(first.note, location=location,
                                                                        field=first.key), ours)
    try:
        parts = _read_files(task_dir, config, location)
        specific = _our_fields(config, parts, location) if ours else _harbor_native_fields(config, parts, text,
                                                                                          location)
        if ours and parts["dockerfile_absent"]:
            specific["metadata"][NO_DOCKERFILE_METADATA_KEY] = True
        fields = config.fields
        task = task_with_guards_from_fields({
            "task_id": task_dir.name,
            "instruction": parts["instruction"],
            "difficulty": fields.get("difficulty", "medium"),
            "category": fields.get("category", ""),
            "tags": fields.get("tags", []),
            "dockerfile": parts["dockerfile"],
            "files": parts["files"],
            "docker_image": fields.get("docker_image"),
            "env": fields.get("env", {}),
            "solution": parts["solution"],
            "solution_files": parts["solution_files"],
            **specific,
        }, location)
    except TaskFormatError as exc:
        return HarborDirReading(task_dir, config, None, exc, ours)
    return HarborDirReading(task_dir, config, task, None, ours)


def read_harbor_task(task_dir: str | Path) -> Task:
    """Read a Harbor task directory into a Task (the directory name is the id).

    Raises :class:`TaskFormatError` naming the directory and the field (for a refused setting: its task.toml key,
    e.g. ``environment.gpus``) when something is missing, wrong or cannot be honoured.
    """
    result = read_harbor_dir(task_dir)
    if result.error is not None:
        raise result.error
    assert result.task is not None
    return result.task


def is_harbor_task_dir(path: str | Path) -> bool:
    """Whether ``path`` looks like a Harbor task directory."""
    return (Path(path) / TASK_TOML).is_file()

