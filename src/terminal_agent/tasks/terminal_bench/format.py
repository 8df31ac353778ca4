"""terminal-bench v1 task directories.

Layout written and read::

    <task_id>/
      task.yaml            instruction, difficulty, category, tags, max_agent_timeout_sec,
                           max_test_timeout_sec, parser_name, ... and a ``terminal_agent`` mapping
      Dockerfile           the environment; build context is the task directory
      <files>              the task's extra build-context files
      run-tests.sh         runs pytest on tests/test_outputs.py (terminal-bench's ``pytest`` parser)
      tests/test_outputs.py, tests/<support files>
      solution.sh          the reference solution (when the task has one)
      solution/<files>     the files beside the solution (only when the task has some)

Everything without a native slot in task.yaml (weights, title, use-case category, the limits
other than the two timeouts, metadata, ``docker_image``, ``env``, the non-default verifier settings,
the guard tests (``guards``: tests, on_failure, cap) and the names of the solution files) lives under the ``terminal_agent`` key, which is the source
of truth when it is present. Any file (build context, tests, solution files) may hold any bytes. Directories written by terminal-bench itself (no such key)
get equal weights for every test and keep their other task.yaml keys in ``Task.metadata``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.guard_fields import task_with_guards_from_fields
from terminal_agent.tasks.model import Task, equal_test_weights, limits_dump
from terminal_agent.tasks.negative_solution_fields import negative_solutions_data, parse_negative_solutions
from terminal_agent.tasks.task_dirs import (
    as_tags,
    fresh_task_dir,
    mapping_at,
    read_text_file,
    read_tree,
    require_file,
    write_text_file,
    write_tree,
)
from terminal_agent.tasks.terminal_bench.compose import COMPOSE_METADATA_KEY, compose_file, read_compose
from terminal_agent.tasks.terminal_bench.test_requirements import TEST_REQUIREMENTS_METADATA_KEY, read_test_requirements

logger = logging.getLogger(__name__)

TASK_YAML = "task.yaml"
TEST_FILE = "test_outputs.py"
#: Key of task.yaml that holds what terminal-bench has no field for.
EXTRA_KEY = "terminal_agent"
#: task.yaml keys mapped onto Task fields.
_MAPPED_KEYS = {"instruction", "difficulty", "category", "tags", "max_agent_timeout_sec", "max_test_timeout_sec", EXTRA_KEY}
#: Metadata keys that are native task.yaml keys; written at top level too so terminal-bench sees them.
NATIVE_METADATA_KEYS = (
    "author_name",
    "author_email",
    "parser_name",
    "run_tests_in_same_shell",
    "estimated_duration_sec",
    "expert_time_estimate_min",
    "junior_time_estimate_min",
)
#: Names in the task directory that are not build-context files of the task.
RESERVED_NAMES = {TASK_YAML, "Dockerfile", "run-tests.sh", "solution.sh", "solution.yaml", "tests"}
#: Directory of the files beside the solution (reserved only in tasks that have some).
SOLUTION_FILES_DIR = "solution"
#: Metadata key holding a custom run-tests.sh of a task read from terminal-bench.
RUN_TESTS_METADATA_KEY = "tb_run_tests_sh"


def default_run_tests_script() -> str:
    """The run-tests.sh written for every task (pytest, output parsed by terminal-bench)."""
    return (
        "#!/bin/bash\n"
        "# Written by terminal-agent: runs the task's tests with pytest.\n"
        'TEST_DIR="${TEST_DIR:-/tests}"\n'
        'python3 -m pytest -p no:cacheprovider -rA "$TEST_DIR/test_outputs.py"\n'
    )


class _LiteralDumper(yaml.SafeDumper):
    """Safe YAML with multi-line strings as ``|`` blocks (readable instructions and scripts)."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_LiteralDumper.add_representer(str, _represent_str)


class _TaskYamlLoader(yaml.SafeLoader):
    """Safe YAML whose dates and times stay the strings they were written as (``created: 2024-05-01``): a Task's
    metadata must stay JSON-safe for the CSV and parquet writers, and the text is kept exactly."""


_TaskYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _check_json_like(value: Any, where: str, location: str) -> None:
    """Refuse YAML values that no JSON format can carry (``!!binary``, ``!!set``, explicit timestamps, ...)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TaskFormatError(f"{where}: key {key!r} is not a string", location=location, field=TASK_YAML)
            _check_json_like(item, f"{where}.{key}", location)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json_like(item, f"{where}[{index}]", location)
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        raise TaskFormatError(f"{where} holds a YAML {type(value).__name__}, which no other task format can carry "
                              "(use a string)", location=location, field=TASK_YAML)


def dump_yaml(data: Any) -> str:
    """YAML text of ``data`` (unicode kept, keys in insertion order)."""
    return yaml.dump(data, Dumper=_LiteralDumper, allow_unicode=True, sort_keys=False, width=10_000)


# --- writing -----------------------------------------------------------------------------------
def check_tb_layout(task: Task) -> None:
    """Raise :class:`TaskFormatError` (with a hint) when ``task`` cannot be written in this layout."""
    for path in task.files:
        first = path.replace("\\", "/").split("/")[0]
        if first in RESERVED_NAMES:
            raise TaskFormatError(
                f"extra file {path!r} clashes with the terminal-bench layout ({', '.join(sorted(RESERVED_NAMES))}); "
                "hint: the Harbor layout keeps environment files apart (environment/), so `--to harbor` writes "
                "this task, or move the file out of that name",
                location=task.task_id,
                field="files",
            )
    if TEST_FILE in task.test_support_files:
        raise TaskFormatError(f"support file {TEST_FILE!r} clashes with the test file", location=task.task_id,
                              field="test_support_files")
    if task.solution_files:
        for path in task.files:
            if path.split("/")[0] == SOLUTION_FILES_DIR:
                raise TaskFormatError(
                    f"extra file {path!r} clashes with the solution files, which this layout keeps in "
                    f"{SOLUTION_FILES_DIR}/; hint: `--to harbor` keeps the environment apart (environment/)",
                    location=task.task_id, field="files",
                )


def task_yaml_data(task: Task) -> dict[str, Any]:
    """The task.yaml mapping of ``task``."""
    data: dict[str, Any] = {"instruction": task.instruction}
    for key in ("author_name", "author_email"):
        if isinstance(task.metadata.get(key), str):
            data[key] = task.metadata[key]
    data["difficulty"] = task.difficulty
    data["category"] = task.category
    data["tags"] = list(task.tags)
    data["parser_name"] = task.metadata.get("parser_name", "pytest")
    data["max_agent_timeout_sec"] = task.limits.agent_timeout_s
    data["max_test_timeout_sec"] = task.limits.test_timeout_s
    data["run_tests_in_same_shell"] = task.metadata.get("run_tests_in_same_shell", False)
    for key in NATIVE_METADATA_KEYS[4:]:
        if key in task.metadata:
            data[key] = task.metadata[key]
    extra: dict[str, Any] = {
        "title": task.title,
        "use_case_category": task.use_case_category,
        "test_weights": dict(task.test_weights),
        "limits": limits_dump(task.limits),
        "metadata": dict(task.metadata),
    }
    if task.docker_image is not None:
        extra["docker_image"] = task.docker_image
    if task.env:
        extra["env"] = dict(task.env)
    verifier = task.verifier.model_dump(mode="json", exclude_defaults=True)
    if verifier:
        extra["verifier"] = verifier
    if task.guards is not None:
        extra["guards"] = task.guards.model_dump(mode="json")
    if task.negative_solutions:
        extra["negative_solutions"] = negative_solutions_data(task.negative_solutions)
    if task.solution_files:
        extra["solution_files"] = sorted(task.solution_files)
    data[EXTRA_KEY] = extra
    return data


def write_tb_task(task: Task, parent_dir: str | Path) -> Path:
    """Write ``task`` as ``parent_dir/<task_id>/`` in terminal-bench v1 layout; returns that path.

    An existing directory of that name is replaced. Raises :class:`TaskFormatError` when an extra
    file would overwrite a file of the layout.
    """
    check_tb_layout(task)
    task_dir = fresh_task_dir(parent_dir, task.task_id)
    write_text_file(task_dir / TASK_YAML, dump_yaml(task_yaml_data(task)))
    write_text_file(task_dir / "Dockerfile", task.dockerfile)
    write_tree(task_dir, task.files)
    run_tests = task.metadata.get(RUN_TESTS_METADATA_KEY)
    write_text_file(task_dir / "run-tests.sh", run_tests if isinstance(run_tests, str) else default_run_tests_script(), 0o755)
    write_text_file(task_dir / "tests" / TEST_FILE, task.test_source)
    write_tree(task_dir / "tests", task.test_support_files)
    if task.solution is not None:
        write_text_file(task_dir / "solution.sh", task.solution, 0o755)
    write_tree(task_dir / SOLUTION_FILES_DIR, task.solution_files)
    return task_dir


# --- reading -----------------------------------------------------------------------------------
def _solution_from_yaml(text: str, task_dir: Path) -> str:
    try:
        entries = yaml.safe_load(text) or []
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"solution.yaml is not valid YAML: {exc}", location=str(task_dir), field="solution") from None
    commands = []
    for entry in entries if isinstance(entries, list) else []:
        command = entry.get("command") if isinstance(entry, dict) else entry
        if isinstance(command, str):
            commands.append(command.rstrip("\n"))
    return "#!/bin/bash\n" + "\n".join(commands) + "\n"


def read_tb_task(task_dir: str | Path) -> Task:
    """Read a terminal-bench v1 task directory into a Task (the directory name is the id).

    Raises :class:`TaskFormatError` naming the directory and field when something is missing or wrong.
    """
    task_dir = Path(task_dir)
    location = str(task_dir)
    yaml_path = require_file(task_dir, TASK_YAML, field=TASK_YAML)
    try:
        data = yaml.load(read_text_file(yaml_path, task_dir), Loader=_TaskYamlLoader) or {}
        if not isinstance(data, dict):
            raise TaskFormatError("task.yaml is not a mapping", location=location, field=TASK_YAML)
        _check_json_like(data, "task.yaml", location)
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"task.yaml is not valid YAML: {exc}", location=location, field=TASK_YAML) from None
    except RecursionError:  # the YAML parser and the check recurse per level of nesting
        raise TaskFormatError("task.yaml is nested too deeply to read", location=location, field=TASK_YAML) from None
    instruction = data.get("instruction")
    if instruction is None and isinstance(data.get("descriptions"), list) and data["descriptions"]:
        # early terminal-bench tasks keep the instruction in a list of descriptions
        first = data["descriptions"][0]
        instruction = first.get("description") if isinstance(first, dict) else None
    test_path = require_file(task_dir, f"tests/{TEST_FILE}", field="tests")
    test_source = read_text_file(test_path, task_dir)
    support = read_tree(task_dir / "tests", task_dir)
    support.pop(TEST_FILE, None)

    extra = data.get(EXTRA_KEY)
    if extra is not None and not isinstance(extra, dict):
        raise TaskFormatError(f"'{EXTRA_KEY}' must be a mapping", location=location, field=EXTRA_KEY)
    solution_file_names: list[str] = []
    if extra is not None:
        metadata = mapping_at(extra, "metadata", location, f"{EXTRA_KEY}.metadata")
        limits = mapping_at(extra, "limits", location, f"{EXTRA_KEY}.limits")
        weights = extra.get("test_weights")
        solution_file_names = _name_list(extra.get("solution_files"), location)
    else:
        metadata = {key: value for key, value in data.items() if key not in _MAPPED_KEYS}
        limits = {}
        weights = None
    if "max_agent_timeout_sec" in data:
        limits["agent_timeout_s"] = data["max_agent_timeout_sec"]
    if "max_test_timeout_sec" in data:
        limits["test_timeout_s"] = data["max_test_timeout_sec"]
    if weights is None:
        weights = equal_test_weights(test_source, location)

    run_tests_path = task_dir / "run-tests.sh"
    if run_tests_path.is_file() and extra is None:
        run_tests = read_text_file(run_tests_path, task_dir)
        if run_tests != default_run_tests_script():
            metadata[RUN_TESTS_METADATA_KEY] = run_tests
        # what it installs for the tests, so that weighted grading provides it offline as the Harbor mode does
        requirements = read_test_requirements(run_tests, support, location)
        if requirements:
            metadata[TEST_REQUIREMENTS_METADATA_KEY] = requirements
    solution = None
    if (task_dir / "solution.sh").is_file():
        solution = read_text_file(task_dir / "solution.sh", task_dir)
    elif (task_dir / "solution.yaml").is_file():
        solution = _solution_from_yaml(read_text_file(task_dir / "solution.yaml", task_dir), task_dir)

    skip = RESERVED_NAMES | ({SOLUTION_FILES_DIR} if solution_file_names else set())
    dockerfile, files, compose_env = _environment(task_dir, skip, metadata, foreign=extra is None)
    solution_files = read_tree(task_dir / SOLUTION_FILES_DIR, task_dir) if solution_file_names else {}
    if sorted(solution_files) != solution_file_names:
        raise TaskFormatError(
            f"{SOLUTION_FILES_DIR}/ holds {', '.join(sorted(solution_files)) or 'nothing'}; task.yaml lists "
            f"{', '.join(solution_file_names)}",
            location=location, field=f"{EXTRA_KEY}.solution_files",
        )
    fields: dict[str, Any] = {
        "task_id": task_dir.name,
        "instruction": instruction if instruction is not None else "",
        "title": (extra or {}).get("title", ""),
        "difficulty": str(data.get("difficulty") or "medium"),
        "category": str(data.get("category") or ""),
        "use_case_category": (extra or {}).get("use_case_category", ""),
        "tags": as_tags(data.get("tags")),
        "dockerfile": dockerfile,
        "files": files,
        "test_source": test_source,
        "test_support_files": support,
        "test_weights": weights,
        "solution": solution,
        "solution_files": solution_files,
        "limits": limits,
        "metadata": metadata,
    }
    if compose_env:
        fields["env"] = compose_env
    for key in ("docker_image", "env", "verifier", "guards"):
        if extra is not None and key in extra:
            fields[key] = extra[key]
    negatives = parse_negative_solutions((extra or {}).get("negative_solutions"), location,
                                         f"{EXTRA_KEY}.negative_solutions")
    if negatives is not None:
        fields["negative_solutions"] = negatives
    return task_with_guards_from_fields(fields, location)


def _environment(task_dir: Path, skip: set[str], metadata: dict[str, Any],
                 foreign: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(Dockerfile, build-context files, env) of the task. A folder written by terminal-bench is built as its
    docker-compose.yaml says when it has one (``tasks/terminal_bench/compose.py``; the reading goes to
    ``metadata``); else, and in one of ours (where a compose file is a plain build-context file), from the
    ``Dockerfile`` beside task.yaml."""
    path = compose_file(task_dir) if foreign else None
    if path is None:
        dockerfile_path = require_file(task_dir, "Dockerfile", field="Dockerfile", note=" (and no docker-compose.yaml)")
        return read_text_file(dockerfile_path, task_dir), read_tree(task_dir, task_dir, skip=skip), {}
    reading = read_compose(path, read_text_file(path, task_dir), str(task_dir))
    build_key = f"{path.name}:services.{reading.service}.build"
    context = task_dir if reading.context == "." else task_dir / reading.context
    if not context.is_dir():
        raise TaskFormatError(f"{path.name}: the build context {reading.context!r} of service {reading.service!r} "
                              "is not a folder of the task", location=str(task_dir), field=f"{build_key}.context")
    relative = reading.dockerfile if reading.context == "." else f"{reading.context}/{reading.dockerfile}"
    dockerfile = read_text_file(require_file(task_dir, relative, field="Dockerfile", note=(
        f" (the Dockerfile {path.name} builds service {reading.service!r} from)")), task_dir)
    if reading.dockerfile_lines:
        dockerfile += ("" if dockerfile.endswith("\n") else "\n") + f"# mapped from {path.name}\n"
        dockerfile += "\n".join(reading.dockerfile_lines) + "\n"
    if reading.context == ".":
        files = read_tree(task_dir, task_dir, skip=skip)
    else:  # the other service folders and files beside task.yaml are not part of this build
        files = read_tree(context, task_dir, skip={"Dockerfile"} if reading.dockerfile == "Dockerfile" else None)
    metadata[COMPOSE_METADATA_KEY] = reading.record()
    return dockerfile, files, reading.env


def _name_list(value: Any, location: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise TaskFormatError("must be a list of relative paths", location=location, field=f"{EXTRA_KEY}.solution_files")
    return sorted(value)


def is_tb_task_dir(path: str | Path) -> bool:
    """Whether ``path`` looks like a terminal-bench task directory."""
    return (Path(path) / TASK_YAML).is_file()
