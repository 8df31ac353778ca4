"""The authoring form of a corpus task and how it becomes a :class:`~terminal_agent.tasks.model.Task`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from terminal_agent.tasks.families.base import dockerfile_for
from terminal_agent.tasks.model import Task, TaskLimits

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
    files: dict[str, str] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    """Dockerfile lines after the copies (modes, mtimes, files whose names cannot travel in the CSV)."""
    tags: list[str] = field(default_factory=list)
    one_command: bool = False
    """A single correct shell command solves it (the corpus keeps at least 20% of these)."""
    limits: dict[str, float] = field(default_factory=dict)

    def to_task(self) -> Task:
        original = {f"/app/{path}": hashlib.sha256(text.encode()).hexdigest() for path, text in sorted(self.files.items())}
        tags = list(self.tags) + (["one-command"] if self.one_command else [])
        return Task(
            task_id=self.task_id,
            title=self.title,
            difficulty=self.difficulty,
            category=self.category,
            use_case_category="corpus",
            tags=tags,
            instruction=self.instruction.strip() + "\n",
            dockerfile=dockerfile_for(self.files, self.steps),
            files=self.files,
            test_source=PRELUDE.format(original=original) + "\n\n" + self.tests.strip("\n") + "\n",
            test_weights=self.weights,
            solution="#!/bin/bash\n" + self.solution.strip("\n") + "\n",
            limits=TaskLimits(**self.limits),
        )
