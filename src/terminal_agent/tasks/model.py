"""The one typed Task that every format reads into and writes from."""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import logging
import re
import sys
import base64
import threading
from enum import Enum
from typing import Any, Protocol, Union, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.grading_mode_registry import task_field_rules

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
    cpus: float | None = Field(1.0, gt=0)
    """CPU quota of the container (fractional cores). None: the task names none (a Harbor task.toml of schema 1.1
    or later without ``cpus``): no quota, as Harbor, unless the sandbox's host policy sets one
    (``sandbox.unset_cpus``)."""
    memory_mb: int | None = Field(1024, gt=0)
    """Memory limit of the container in MiB (swap is not allowed on top). None: the task names none (Harbor schema
    1.1+ without ``memory_mb``): no limit, as Harbor, unless the sandbox's host policy sets one
    (``sandbox.unset_memory_mb``)."""
    storage_mb: int | None = Field(None, gt=0)
    """Disk quota of the sandbox's writable layer in MiB (Harbor ``storage_mb``, or the deprecated ``storage =
    "10G"``). None: the task names none, so no quota (Harbor's own default). How it is enforced is the host's policy
    (``sandbox.storage``: a kernel quota where the backend has one, else measured at turn boundaries; or refused;
    or ignored)."""
    pids: int = Field(256, gt=0)
    """Maximum number of processes in the container (fork-bomb guard)."""
    network: bool = False
    """Whether the agent's container gets a network. Off unless the task needs it (Harbor tasks: on unless the
    task says otherwise, as Harbor does)."""
    build_timeout_s: float = Field(600.0, gt=0)
    """Wall clock the image build of the task environment may take."""


#: Limits whose default is None (unset) and that were added after files were written without them: left out of a
#: written task while unset, so that what every writer produced before they existed stays byte for byte the same.
LATE_UNSET_LIMITS = ("storage_mb",)


def limits_dump(limits: TaskLimits) -> dict[str, Any]:
    """``limits.model_dump()`` without the :data:`LATE_UNSET_LIMITS` that are unset (they read back as None)."""
    return {key: value for key, value in limits.model_dump().items()
            if not (key in LATE_UNSET_LIMITS and value is None)}


FileContent = Union[str, bytes]
"""A file of a task: ``str`` for UTF-8 text (line endings kept), ``bytes`` for anything else (any bytes)."""

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest single file a task may carry (64 MiB)."""
MAX_TASK_BYTES = 256 * 1024 * 1024
"""Largest total of all files of one task (256 MiB)."""
MAX_FILES_PER_TASK = 10_000
"""Most files one task may carry."""


def file_bytes(content: FileContent) -> bytes:
    """The bytes of a task file (text is UTF-8)."""
    return content if isinstance(content, bytes) else content.encode("utf-8")


def decoded_file(data: bytes) -> FileContent:
    """``data`` as text when it is valid UTF-8 without NUL bytes, else the bytes themselves."""
    if b"\0" in data:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def encode_file_map(files: dict[str, FileContent]) -> dict[str, Any]:
    """JSON-safe form of a file map (CSV cells, parquet columns, task.toml): text stays a string, bytes become
    ``{"base64": "..."}``. :func:`decode_file_map` is its inverse."""
    return {
        path: ({"base64": base64.b64encode(content).decode("ascii")} if isinstance(content, bytes) else content)
        for path, content in files.items()
    }


def decode_file_map(value: Any, field: str) -> dict[str, FileContent]:
    """The file map of :func:`encode_file_map`'s JSON form; ``ValueError`` naming ``field`` and the path otherwise."""
    if not isinstance(value, dict):
        raise ValueError(f"{field} must be an object of relative path -> content, not {type(value).__name__}")
    files: dict[str, FileContent] = {}
    for path, content in value.items():
        if isinstance(content, str):
            files[str(path)] = content
        elif isinstance(content, dict) and set(content) == {"base64"} and isinstance(content["base64"], str):
            try:
                files[str(path)] = base64.b64decode(content["base64"], validate=True)
            except ValueError:
                raise ValueError(f"{field}[{path!r}]: base64 is not valid") from None
        else:
            raise ValueError(
                f"{field}[{path!r}] must be a string (text) or {{\"base64\": \"...\"}} (binary), "
                f"not {type(content).__name__}"
            )
    return files


_SURROGATE = re.compile("[\ud800-\udfff]")


def _first_surrogate(value: Any) -> str | None:
    """The first lone surrogate in the strings of ``value`` (nested lists and mappings, keys included), or None."""
    if isinstance(value, str):
        match = _SURROGATE.search(value)
        return match.group() if match else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _first_surrogate(key) or _first_surrogate(item)
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for item in value:
            found = _first_surrogate(item)
            if found:
                return found
    return None


def check_relative_path(path: str) -> str:
    """``path`` when it is a safe relative POSIX path inside a task; ``ValueError`` saying why otherwise.

    Refused: empty names, absolute paths, backslashes, ``.``/``..`` parts, empty parts and NUL or other control
    characters - anything that could leave the task's directory or mean two things on two systems.
    """
    if not path or not path.strip():
        raise ValueError(f"file path {path!r} is empty: a path must be relative and name a file inside the task")
    if "\\" in path:
        raise ValueError(f"file path {path!r} holds a backslash (use '/' between parts)")
    if path.startswith("/"):
        raise ValueError(f"file path {path!r} must be relative and stay inside the task")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        raise ValueError(f"file path {path!r} holds a control character")
    if any(0xD800 <= ord(char) <= 0xDFFF for char in path):
        # a name on disk that is not UTF-8 (read with surrogateescape) or a lone surrogate of a JSON escape: no
        # task format (CSV, JSON, TOML, parquet) can carry it
        raise ValueError(f"file path {path!r} is not valid UTF-8 (rename the file)")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"file path {path!r} must be relative and stay inside the task (no '', '.' or '..' parts)")
    return path


def check_file_map(files: dict[str, FileContent], field: str) -> None:
    """Raise ``ValueError`` naming ``field`` when a path is unsafe or the sizes pass the bounds."""
    if len(files) > MAX_FILES_PER_TASK:
        raise ValueError(f"{field}: {len(files)} files, more than the {MAX_FILES_PER_TASK} a task may carry")
    total = 0
    for path, content in files.items():
        try:
            check_relative_path(path)
        except ValueError as exc:
            raise ValueError(f"{field}: {exc}") from None
        size = len(content) if isinstance(content, bytes) else len(content.encode("utf-8"))
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{field}[{path!r}]: {size} bytes, more than the {MAX_FILE_BYTES} a task file may hold")
        total += size
    if total > MAX_TASK_BYTES:
        raise ValueError(f"{field}: {total} bytes in all, more than the {MAX_TASK_BYTES} a task may carry")


class GradingMode:
    """The names of the built-in grading modes (``VerifierSpec.mode`` values). The set is open: a mode is any
    name in :data:`~terminal_agent.tasks.grading_mode_registry.GRADING_MODES`."""

    WEIGHTED_PYTEST = "weighted_pytest"
    """The project's hardened grader: ``test_source`` under pytest, score = sum(weight*passed) / sum(weight)."""
    HARBOR = "harbor"
    """Harbor's verifier: ``tests/test.sh`` runs and writes ``/logs/verifier/reward.txt`` (or ``reward.json``)."""


class TaskFieldRules(Protocol):
    """What a grading mode asks of a task's fields: the ``task_fields`` companion of the mode's line in
    ``tasks/grading_mode_registry.py``, called by :class:`Task` validation for the task's mode (its module is
    imported with the first task of the mode, so it imports nothing of the grader)."""

    def check(self, task: "Task") -> None:
        """Raise ``ValueError`` naming the field (``test_weights name tests that do not exist: ...``) when
        ``task`` cannot be graded in this mode; the task's validation reports it with the task."""
        ...

    def unweighted_tests(self, task: "Task") -> list[str]:
        """The tests of ``task`` that count with weight 0 although declared (worth a warning when read)."""
        ...


def _task_field_rules(mode: str) -> TaskFieldRules | None:
    """The grading mode's task-field rules (None: the mode asks nothing of a task's fields)."""
    return cast("TaskFieldRules | None", task_field_rules(mode))


class VerifierSpec(BaseModel):
    """How the verifier of a task runs (Harbor's ``[verifier]`` table, plus the grading mode)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    mode: str = GradingMode.WEIGHTED_PYTEST
    """Grading protocol, a name in ``GRADING_MODES`` (``tasks/grading_mode_registry.py``). Harbor tasks default to
    ``harbor``; the project's own tasks use ``weighted_pytest``."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables of the verifier process (Harbor ``[verifier] env``)."""
    user: str | None = None
    """User (name or uid) the verifier runs as; None: root (the image's default user in Harbor)."""
    network: bool | None = None
    """Whether the verifier phase gets a network; None: the same policy as the agent (``limits.network``)."""
    separate_environment: bool = False
    """Harbor ``environment_mode = "separate"``: the verifier runs in a fresh sandbox of its own environment."""
    environment_dockerfile: str | None = None
    """Dockerfile of the separate verifier environment (Harbor ``[verifier.environment]``); None: the task's."""
    artifacts: list[str] = Field(default_factory=list)
    """Absolute paths in the agent's sandbox handed to a separate verifier; empty: the working directory."""

    @field_validator("mode")
    @classmethod
    def _registered_mode(cls, name: str) -> str:
        from terminal_agent.tasks.grading_mode_registry import GRADING_MODES

        if name not in GRADING_MODES:
            raise ValueError(f"unknown grading mode {name!r}; valid: {', '.join(GRADING_MODES.names())}")
        return sys.intern(name)  # one object per mode name, so ``mode is GradingMode.HARBOR`` reads as it did

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_env_names(value, "verifier.env")

    @field_validator("artifacts")
    @classmethod
    def _absolute_artifacts(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith("/") or "\0" in path or ".." in path.split("/"):
                raise ValueError(f"artifact {path!r} must be an absolute path without '..' parts")
        return value

    def verifier_network(self, agent_network: bool) -> bool:
        """The network policy of the verifier phase."""
        return agent_network if self.network is None else self.network


class GuardFailure(str, Enum):
    """What a failed guard test does to the score."""

    ZERO = "zero"
    """Any failed guard makes the score 0."""
    CAP = "cap"
    """Any failed guard caps the score at ``TestGuards.cap``."""


class TestGuards(BaseModel):
    """Guard tests ("nothing else was touched", "the inputs are unchanged"): they earn nothing by themselves,
    but when one fails the episode's score is zeroed or capped. A no-op agent passes every guard and still
    earns nothing, so guards never pay for doing nothing."""

    __test__ = False  # not a pytest class

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    tests: list[str] = Field(min_length=1)
    """Names of the guard tests: test functions of ``test_source`` (weighted pytest) or CTRF test names
    (Harbor mode). A guard carries no weight: it must not appear in ``test_weights`` with a weight above 0."""
    on_failure: GuardFailure = GuardFailure.ZERO
    """``zero``: a failed guard zeroes the score; ``cap``: it caps the score at ``cap``."""
    cap: float = 0.0
    """The highest score a run with a failed guard can get: 0 with ``zero``; strictly between 0 and 1 with ``cap``."""

    @model_validator(mode="after")
    def _cap_matches_mode(self) -> "TestGuards":
        if len(set(self.tests)) != len(self.tests):
            raise ValueError("guards.tests names a test twice")
        if self.on_failure is GuardFailure.ZERO and self.cap != 0.0:
            raise ValueError(f"guards.cap is {self.cap:g} but on_failure is zero (use on_failure: cap)")
        if self.on_failure is GuardFailure.CAP and not 0.0 < self.cap < 1.0:
            raise ValueError(f"guards.cap must lie strictly between 0 and 1 with on_failure: cap, got {self.cap:g}")
        return self

    def apply(self, score: float, failed_guards: list[str]) -> float:
        """The score after the guards: unchanged when none failed, else zeroed or capped."""
        if not failed_guards:
            return score
        return 0.0 if self.on_failure is GuardFailure.ZERO else min(score, self.cap)


NEGATIVE_SOLUTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class NegativeSolution(BaseModel):
    """A known-wrong solution of a task, with the most it may earn: validation runs it as it runs the reference
    solution and refuses the task when it scores more (a Python rewrite of the C tool the task asks to fix, the
    HEAD hash written where the first bad commit is asked for, ...)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str
    """Short name, unique within the task (``[a-z0-9_-]``, at most 64 characters): the episode and report label."""
    script: str
    """The bash script, run like the reference solution (as ``/solution/solve.sh``, with its ``solution_files``)."""
    max_score: float = Field(0.0, ge=0.0, lt=1.0)
    """The most this solution may score: validation refuses the task when it earns more (0 <= max_score < 1)."""
    why: str = ""
    """What is wrong with it (shown when the task is refused)."""

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        if not NEGATIVE_SOLUTION_NAME.match(value):
            raise ValueError(f"negative solution name {value!r} must match {NEGATIVE_SOLUTION_NAME.pattern}")
        return value

    @field_validator("script")
    @classmethod
    def _non_empty_script(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a negative solution's script is empty")
        return value


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_env_names(value: dict[str, str], field: str) -> dict[str, str]:
    for name, text in value.items():
        if not _ENV_NAME.match(name):
            raise ValueError(f"{field}: {name!r} is not a valid environment variable name")
        if "\0" in text:
            raise ValueError(f"{field}[{name!r}] holds a NUL byte")
    return value


_AST_LOCK = threading.Lock()
"""Serialises ``ast.parse``: tasks are loaded in a thread pool, and on CPython 3.11 two parses at once can fail with
"AST constructor recursion depth mismatch" (seen in CI while loading the corpus)."""


def find_test_functions(test_source: str) -> list[str]:
    """Names of pytest test functions (``test_*`` at module level or in ``Test*`` classes), in order.

    Methods in classes are reported as ``Class::method`` in junit but referenced by their bare
    name in weights, which is how the CSV format has always named them.
    """
    return list(_test_function_names(test_source))


@functools.lru_cache(maxsize=256)
def _test_function_names(test_source: str) -> tuple[str, ...]:
    # remembered per source: validating one task parses its tests several times (weights, guards, properties)
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
    return tuple(names)


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
    files: dict[str, FileContent] = Field(default_factory=dict)
    """Extra build-context files, relative path -> text or bytes (the CSV's ``additional_files``)."""
    docker_image: str | None = None
    """Prebuilt image of the environment (Harbor ``docker_image``): used when it can be pulled; otherwise the
    Dockerfile is built."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables of the agent's sandbox (Harbor ``[environment.env]``)."""
    test_source: str
    """Source of ``tests/test_outputs.py``; copied in only after the episode ends. May be empty for a Harbor-mode
    task whose verifier (``tests/test.sh``) needs no Python test file."""
    test_support_files: dict[str, FileContent] = Field(default_factory=dict)
    """Other files placed beside the tests (fixtures, data, Harbor's ``test.sh``), relative path -> text or bytes."""
    test_weights: dict[str, float] = Field(default_factory=dict)
    """Test name -> non-negative finite weight. Weighted pytest: every name must be a test function of
    ``test_source`` (required). Harbor mode: optional; names are CTRF test names and give partial credit."""
    solution: str | None = None
    """Reference solution as a bash script; a validated task scores 1.0 with it."""
    solution_files: dict[str, FileContent] = Field(default_factory=dict)
    """Files beside the solution script (Harbor's ``solution/`` besides ``solve.sh``), relative path -> content."""
    limits: TaskLimits = Field(default_factory=TaskLimits)
    """Time and resource limits."""
    verifier: VerifierSpec = Field(default_factory=VerifierSpec)
    """How the verifier runs: grading mode, env, user, network, separate environment."""
    guards: TestGuards | None = None
    """Guard tests that zero or cap the score when they fail (they earn nothing themselves); None: no guards."""
    negative_solutions: list[NegativeSolution] = Field(default_factory=list)
    """Known-wrong solutions, each with the most it may earn; validation runs them and enforces the bound."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else carried along unchanged (``created_at``, ``updated_at``, source format ...)."""

    @field_validator("*")
    @classmethod
    def _valid_unicode(cls, value: Any, info: Any) -> Any:
        # a JSON escape (``"\ud800"`` in a CSV cell or parquet row) can smuggle a lone surrogate into any text; no
        # writer (UTF-8 files, parquet) could store it, so it is refused here, naming the field
        surrogate = _first_surrogate(value)
        if surrogate is not None:
            raise ValueError(f"{info.field_name} holds {surrogate!r}, a lone surrogate that is not valid Unicode text")
        return value

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

    @field_validator("files", "test_support_files", "solution_files")
    @classmethod
    def _safe_relative_paths(cls, value: dict[str, FileContent], info: Any) -> dict[str, FileContent]:
        check_file_map(value, info.field_name)
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_env_names(value, "env")

    @field_validator("negative_solutions")
    @classmethod
    def _unique_negative_names(cls, value: list[NegativeSolution]) -> list[NegativeSolution]:
        names = [negative.name for negative in value]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"negative solution names repeat: {', '.join(repeated)}")
        return value

    @model_validator(mode="after")
    def _weights_match_tests(self) -> "Task":
        bad = [name for name, weight in self.test_weights.items() if weight < 0]
        if bad:
            raise ValueError(f"test_weights are negative for: {', '.join(bad)}")
        if self.guards is not None:
            paid = [name for name in self.guards.tests if self.test_weights.get(name, 0.0) > 0]
            if paid:
                raise ValueError(f"guard tests earn nothing by themselves, but test_weights pays: {', '.join(paid)}")
        rules = _task_field_rules(self.verifier.mode)  # what the task's grading mode asks of its fields
        if rules is not None:
            rules.check(self)
        return self

    # --- derived values ---------------------------------------------------------------------
    @property
    def test_functions(self) -> list[str]:
        """Declared test functions, in source order (none for a Harbor-mode task without a Python test file)."""
        if not self.test_source.strip():
            return []
        return find_test_functions(self.test_source)

    @property
    def unweighted_tests(self) -> list[str]:
        """Declared tests that ``test_weights`` does not name: they count with weight 0 (worth a warning).
        The task's grading mode says which (none in harbor mode, where the verifier's reward file decides; none
        for a mode without task-field rules)."""
        rules = _task_field_rules(self.verifier.mode)
        return [] if rules is None else rules.unweighted_tests(self)

    def content_hashes(self) -> dict[str, str]:
        """sha256 of instruction, environment, tests and weights - recorded by validation and splits."""

        def digest(text: str) -> str:
            return hashlib.sha256(text.encode()).hexdigest()

        # A task whose new fields are at their defaults hashes exactly as before they existed (pinned manifests).
        environment = self.dockerfile + "\0" + json.dumps(encode_file_map(self.files), sort_keys=True)
        if self.docker_image is not None or self.env:
            environment += "\0" + json.dumps({"docker_image": self.docker_image, "env": self.env}, sort_keys=True)
        tests = self.test_source + "\0" + json.dumps(encode_file_map(self.test_support_files), sort_keys=True)
        if self.verifier != VerifierSpec():
            tests += "\0" + self.verifier.model_dump_json()
        hashes = {
            "instruction": digest(self.instruction),
            "environment": digest(environment),
            "tests": digest(tests),
            "weights": digest(json.dumps(self.test_weights, sort_keys=True)
                              + ("" if self.guards is None else "\0" + self.guards.model_dump_json())),
        }
        if self.negative_solutions:  # only when set: the hashes of tasks without them stay as pinned
            hashes["negative_solutions"] = digest(json.dumps(
                [negative.model_dump(mode="json") for negative in self.negative_solutions], sort_keys=True))
        return hashes


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
