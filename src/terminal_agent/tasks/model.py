"""The one typed Task that every format reads into and writes from."""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import re
import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from terminal_agent.errors import TaskFormatError

logger = logging.getLogger(__name__)

TASK_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class TaskLimits(BaseModel):
    """Time and resource limits of one task's sandbox (all positive and finite)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    agent_timeout_s: float = Field(600.0, gt=0)
    """Wall clock the agent may spend on the whole episode."""
    test_timeout_s: float = Field(120.0, gt=0)
    """Wall clock the grader may spend running the tests."""
    command_timeout_s: float = Field(60.0, gt=0)
    """Default deadline of one shell command (the model may ask for less, or more up to the configured maximum)."""
    cpus: float = Field(1.0, gt=0)
    """CPU quota of the container (fractional cores)."""
    memory_mb: int = Field(1024, gt=0)
    """Memory limit of the container in MiB (swap is not allowed on top)."""
    pids: int = Field(256, gt=0)
    """Maximum number of processes in the container (fork-bomb guard)."""
    network: bool = False
    """Whether the agent's container gets a network. Off unless the task needs it."""


_AST_LOCK = threading.Lock()
"""Serialises ``ast.parse``: tasks are loaded in a thread pool, and on CPython 3.11 two parses at once can fail with
"AST constructor recursion depth mismatch" (seen in CI while loading the corpus)."""


def find_test_functions(test_source: str) -> list[str]:
    """Names of pytest test functions (``test_*`` at module level or in ``Test*`` classes), in order.

    Methods in classes are reported as ``Class::method`` in junit but referenced by their bare
    name in weights, which is how the CSV format has always named them.
    """
    try:
        with _AST_LOCK:  # CPython 3.11's parser is not thread-safe: concurrent parses can raise SystemError
            tree = ast.parse(test_source)
    except SyntaxError as exc:
        raise ValueError(f"test source does not parse: line {exc.lineno}: {exc.msg}") from None
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    names.append(item.name)
    return names


class Task(BaseModel):
    """A terminal task: an instruction, an environment, weighted tests and a reference solution."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    task_id: str
    """Unique id; also the task's directory name, so only ``[A-Za-z0-9._-]`` (starting alphanumeric)."""
    instruction: str
    """What the agent is asked to do (the CSV's ``prompt``)."""
    title: str = ""
    """Short human title."""
    difficulty: str = "medium"
    """``easy`` / ``medium`` / ``hard`` (free text is kept as is)."""
    category: str = ""
    """Technical category (e.g. ``file-operations``)."""
    use_case_category: str = ""
    """Use-case grouping of the CSV format."""
    tags: list[str] = Field(default_factory=list)
    """Free tags (``|``-separated in CSV)."""
    dockerfile: str
    """Dockerfile of the task environment. Public base images are aliased to local ones."""
    files: dict[str, str] = Field(default_factory=dict)
    """Extra build-context files, relative path -> text (the CSV's ``additional_files``)."""
    test_source: str
    """Source of ``tests/test_outputs.py``; copied in only after the episode ends."""
    test_support_files: dict[str, str] = Field(default_factory=dict)
    """Other files placed beside the tests (fixtures, data), relative path -> text."""
    test_weights: dict[str, float]
    """Test function name -> non-negative finite weight. Every name must exist in ``test_source``."""
    solution: str | None = None
    """Reference solution as a bash script; a validated task scores 1.0 with it."""
    limits: TaskLimits = Field(default_factory=TaskLimits)
    """Time and resource limits."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else carried along unchanged (``created_at``, ``updated_at``, source format ...)."""

    @field_validator("task_id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not TASK_ID_PATTERN.match(value) or value in {".", ".."}:
            raise ValueError(
                f"task_id {value!r} is not a safe directory name (use letters, digits, '.', '_', '-'; "
                "start with a letter or digit; at most 128 characters)"
            )
        return value

    @field_validator("instruction")
    @classmethod
    def _non_empty_instruction(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("instruction (prompt) is empty")
        return value

    @field_validator("dockerfile")
    @classmethod
    def _has_from(cls, value: str) -> str:
        if not re.search(r"^\s*FROM\s+\S+", value, flags=re.MULTILINE | re.IGNORECASE):
            raise ValueError("dockerfile has no FROM line")
        return value

    @field_validator("files", "test_support_files")
    @classmethod
    def _safe_relative_paths(cls, value: dict[str, str]) -> dict[str, str]:
        for path in value:
            parts = path.replace("\\", "/").split("/")
            if path.startswith("/") or ".." in parts or not path.strip():
                raise ValueError(f"file path {path!r} must be relative and stay inside the task")
        return value

    @model_validator(mode="after")
    def _weights_match_tests(self) -> "Task":
        try:
            declared = find_test_functions(self.test_source)
        except ValueError as exc:
            raise ValueError(f"test_source: {exc}") from None
        if not declared:
            raise ValueError("test_source defines no test functions")
        if not self.test_weights:
            raise ValueError("test_weights is empty")
        missing = [name for name in self.test_weights if name not in declared]
        if missing:
            raise ValueError(
                f"test_weights name tests that do not exist: {', '.join(missing)} "
                f"(tests found: {', '.join(declared)})"
            )
        negative = [name for name, weight in self.test_weights.items() if weight < 0]
        if negative:
            raise ValueError(f"test_weights are negative for: {', '.join(negative)}")
        if sum(self.test_weights.values()) <= 0:
            raise ValueError("test_weights are all zero")
        return self

    # --- derived values ---------------------------------------------------------------------
    @property
    def test_functions(self) -> list[str]:
        """Declared test functions, in source order."""
        return find_test_functions(self.test_source)

    @property
    def unweighted_tests(self) -> list[str]:
        """Declared tests that ``test_weights`` does not name: they count with weight 0 (worth a warning)."""
        return [name for name in self.test_functions if name not in self.test_weights]

    def content_hashes(self) -> dict[str, str]:
        """sha256 of instruction, environment, tests and weights - recorded by validation and splits."""

        def digest(text: str) -> str:
            return hashlib.sha256(text.encode()).hexdigest()

        environment = self.dockerfile + "\0" + json.dumps(self.files, sort_keys=True)
        tests = self.test_source + "\0" + json.dumps(self.test_support_files, sort_keys=True)
        return {
            "instruction": digest(self.instruction),
            "environment": digest(environment),
            "tests": digest(tests),
            "weights": digest(json.dumps(self.test_weights, sort_keys=True)),
        }


def warn_unweighted_tests(task: Task, source: str) -> None:
    """Log a warning when ``test_weights`` names only some of the tests (the rest would silently weigh 0)."""
    unweighted = task.unweighted_tests
    if unweighted:
        logger.warning(
            "%s: task %s: test_weights name %d of %d tests; %s get weight 0 (give every test a weight, "
            "0 if that is meant)",
            source, task.task_id, len(task.test_weights), len(task.test_weights) + len(unweighted), ", ".join(unweighted),
        )



def equal_test_weights(test_source: str, location: str | None = None) -> dict[str, float]:
    """Weight 1.0 for every test function of ``test_source`` (tasks whose format has no weights).

    Raises :class:`TaskFormatError` (field ``tests``) when the source does not parse.
    """
    try:
        return {name: 1.0 for name in find_test_functions(test_source)}
    except ValueError as exc:
        raise TaskFormatError(str(exc), location=location, field="tests") from None


def task_from_fields(fields: dict[str, Any], location: str | None = None) -> Task:
    """``Task.model_validate(fields)``, with the first validation error as a :class:`TaskFormatError`.

    The error's field is the dotted location of the offending value (``limits.cpus``).
    """
    try:
        return Task.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "task"
        message = str(first.get("msg", exc)).removeprefix("Value error, ")
        raise TaskFormatError(message, location=location, field=where) from None
