"""The authoring form of a corpus task and how it becomes a :class:`~terminal_agent.tasks.model.Task`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from terminal_agent.tasks.families.base import dockerfile_for
from terminal_agent.tasks.model import GradingMode, NegativeSolution, Task, TaskLimits, TestGuards, VerifierSpec

FileContent = str | bytes

DEV_TOOLS = (
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
    "bc curl ca-certificates file gcc git libc6-dev make procps sqlite3 xxd && rm -rf /var/lib/apt/lists/*"
)
"""The one package layer a task may ask for (``Spec(dev_tools=True)``): identical in every task, so Docker builds
it once and every task image shares it. Debian's packages install in ``docker build`` offline too."""
GIT_IDENTITY = 'RUN git config --global user.name "Corpus Author" && git config --global user.email author@example.com && git config --global init.defaultBranch main'
"""A Dockerfile step for tasks with git history (put it in ``steps``)."""

PRELUDE = '''import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {original!r}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]
'''
"""Put before every test source: helpers, and the sha256 of every file the task ships (``/app/...``)."""

BASH_GUARD_NAME = "test_guard_still_a_bash_script"


def bash_script_guard(path: str) -> str:
    """Test source of the guard :data:`BASH_GUARD_NAME` for a task that asks to fix the bash script at ``path``:
    it stays one (a bash ``#!`` line, ``bash -n`` parses it) and hands no work to another interpreter. A stand-in
    in another language (the audit's standin-rewrite) or a printing ``#!/bin/sh`` program fails it."""
    return f'''
def {BASH_GUARD_NAME}():
    """The prompt asks for the bash script fixed: a stand-in in another language earns nothing."""
    import re

    text = Path({path!r}).read_bytes().decode(errors="replace")  # no newline translation: a CR line fails
    assert text.split("\\n", 1)[0] in ("#!/bin/bash", "#!/usr/bin/env bash"), text[:80]
    assert run("bash", "-n", {path!r}).returncode == 0
    assert not re.search(r"\\b(python[0-9.]*|perl|ruby|node|php)\\b", text), "another interpreter does the work"
'''


HARD_MIN_CODE_LINES = 1000
"""The label ``hard`` means Terminal-Bench-2 hard (issue 36): a codebase of at least this many lines shipped with
the task, several files to change, an expert hour or more. :meth:`Spec.to_task` refuses a ``hard`` label on a task
that ships less code; docs/tasks.md gives the rule and the tasks relabelled by it."""
CODE_SUFFIXES = (".py", ".c", ".h", ".sh", ".bash", ".js", ".go", ".rs", ".rb", ".pl", ".java", ".mk", "Makefile")


def shipped_code_lines(files: dict[str, FileContent]) -> int:
    """Lines of the program text a task ships (by suffix): the size of the codebase its agent works in."""
    return sum(len(content.splitlines()) for path, content in files.items()
               if isinstance(content, str) and path.endswith(CODE_SUFFIXES))


@dataclass
class Spec:
    """One task as written: the files it ships, its tests (without the prelude) and weights, its solution."""

    task_id: str
    title: str
    difficulty: str
    category: str
    instruction: str
    tests: str
    weights: dict[str, float]
    solution: str
    files: dict[str, FileContent] = field(default_factory=dict)
    """Build-context files (text or bytes), copied to ``/app/<path>``."""
    steps: list[str] = field(default_factory=list)
    """Dockerfile lines after the copies (modes, mtimes, git history, files whose names cannot travel in the CSV)."""
    tags: list[str] = field(default_factory=list)
    one_command: bool = False
    """A single correct shell command solves it (the corpus keeps at least 20% of these)."""
    limits: dict[str, float] = field(default_factory=dict)
    dev_tools: bool = False
    """Install :data:`DEV_TOOLS` (gcc, make, git, sqlite3, curl, ...) in a layer shared by every task that asks."""
    solution_files: dict[str, FileContent] = field(default_factory=dict)
    """Files beside the solution (the oracle puts them under ``/solution``)."""
    test_files: dict[str, FileContent] = field(default_factory=dict)
    """Fixtures beside the tests, never seen by the agent: a test finds them at ``Path(__file__).parent / path``
    (the verifier folder in weighted pytest, ``/tests`` in Harbor mode)."""
    guards: list[str] = field(default_factory=list)
    """Guard tests (no weight): "inputs unchanged", "nothing else touched". A failed guard zeroes the score,
    or caps it at ``guard_cap`` when that is above 0."""
    guard_cap: float = 0.0
    harbor: bool = False
    """Ship as a Harbor task graded in Harbor's verifier mode (tests/test.sh writes the reward from a CTRF
    report, weights and guards applied), besides its CSV row."""
    held_out: bool = False
    """A hand-written held-out task (never trained on); the splits file records it."""
    outputs: list[str] = field(default_factory=list)
    """What the task writes (relative to /app, or absolute), for validation's empty-output probe; empty: the
    probe derives the outputs from the tests."""
    negative_solutions: list[NegativeSolution] = field(default_factory=list)
    """Known-wrong solutions with the most each may earn (validation and the audit run them)."""

    def to_task(self) -> Task:
        original = {f"/app/{path}": hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()
                    for path, text in sorted(self.files.items())}
        tags = list(self.tags) + (["one-command"] if self.one_command else [])
        guards = None
        if self.guards:
            guards = TestGuards(tests=list(self.guards), on_failure="cap" if self.guard_cap > 0 else "zero",
                                cap=self.guard_cap)
        test_source = PRELUDE.format(original=original) + "\n\n" + self.tests.strip("\n") + "\n"
        support = dict(self.test_files)
        verifier = VerifierSpec()
        if self.harbor:
            verifier = VerifierSpec(mode=GradingMode.HARBOR)
            support["test.sh"] = harbor_test_script(self.weights, guards)
        if self.difficulty == "hard" and shipped_code_lines(self.files) < HARD_MIN_CODE_LINES:
            raise ValueError(f"{self.task_id}: 'hard' needs a codebase of {HARD_MIN_CODE_LINES}+ lines, this task ships "
                             f"{shipped_code_lines(self.files)} (label it medium)")
        metadata: dict[str, object] = {"corpus_split": "held_out"} if self.held_out else {}
        if self.outputs:
            metadata["outputs"] = list(self.outputs)
        return Task(
            task_id=self.task_id,
            title=self.title,
            difficulty=self.difficulty,
            category=self.category,
            use_case_category="corpus",
            tags=tags,
            instruction=self.instruction.strip() + "\n",
            dockerfile=dockerfile_for(self.files, self.steps, setup=[DEV_TOOLS] if self.dev_tools else []),
            files=self.files,
            test_source=test_source,
            test_support_files=support,
            test_weights=self.weights,
            guards=guards,
            solution="#!/bin/bash\n" + self.solution.strip("\n") + "\n",
            solution_files=self.solution_files,
            limits=TaskLimits(**self.limits),
            verifier=verifier,
            metadata=metadata,
            negative_solutions=list(self.negative_solutions),
        )


HARBOR_TEST_SH = """#!/bin/bash
# Verifier of a terminal-agent corpus task, in the Terminal-Bench 2 shape: pytest with a CTRF report, then the
# reward is the weighted share of passed tests, zeroed or capped when a guard test failed.
mkdir -p /logs/verifier
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.11 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
python3 - <<'SCORE' > /logs/verifier/reward.txt
import json
WEIGHTS = {weights}
GUARDS = {guards}
tests = json.load(open("/logs/verifier/ctrf.json"))["results"]["tests"]
status = {{}}
for test in tests:
    name = test["name"].split("[", 1)[0].split("::")[-1]
    status[name] = status.get(name, True) and test["status"] == "passed"
score = sum(w for name, w in WEIGHTS.items() if status.get(name)) / sum(WEIGHTS.values())
if any(not status.get(name, False) for name in GUARDS["tests"]):
    score = 0.0 if GUARDS["on_failure"] == "zero" else min(score, GUARDS["cap"])
print(f"{{score:.6f}}")
SCORE
"""
"""Template of the Harbor-mode ``tests/test.sh``: real Harbor reads its reward.txt; this project grades the same
CTRF report with the task's weights and guards, so both give the same score."""


def harbor_test_script(weights: dict[str, float], guards: TestGuards | None) -> str:
    """The ``tests/test.sh`` of a Harbor-mode corpus task with ``weights`` and ``guards`` written in."""
    guard_data = {"tests": [], "on_failure": "zero", "cap": 0.0} if guards is None else guards.model_dump(mode="json")
    return HARBOR_TEST_SH.format(weights=json.dumps(weights, sort_keys=True), guards=json.dumps(guard_data, sort_keys=True))
