"""The shipped tasks the whole-corpus audit beat (docs/corpus_audit.md, "The whole corpus"), fixed.

Five shell tasks paid a Python stand-in for the bash script they ask to fix (standin-rewrite 1.0), and two of them
paid for printed constants (a test that any CR-free file or any do-nothing script passed). Each now guards that its
script stays a bash script, and every weighted test needs computed values. Fast checks read the shipped tasks and
run the guard on local files; in containers, the tricks that beat each task replay and earn nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from terminal_agent.task_quality.audit import TrickOutcome, audit_tasks
from terminal_agent.tasks.csv.format import read_tasks_csv
from terminal_agent.tasks.model import Task

ROOT = Path(__file__).resolve().parents[1]
SHELL_FIXES = {  # task -> the bash script it asks to fix
    "fix-crlf-script": "/app/run.sh",
    "fix-exit-status": "/app/check.sh",
    "fix-bash-arithmetic": "/app/sum.sh",
    "fix-log-rotation": "/app/rotate.sh",
    "speed-up-shell-sum": "/app/sum_column.sh",
}
BEATEN_BY = {  # what beat each task before the fix (score)
    "fix-crlf-script": ["standin-rewrite", "instruction-constants"],  # 1.0, 0.25
    "fix-exit-status": ["standin-rewrite"],  # 1.0
    "fix-bash-arithmetic": ["standin-rewrite"],  # 1.0
    "fix-log-rotation": ["standin-rewrite", "echo-expected", "instruction-constants"],  # 1.0, 0.25, 0.25
    "speed-up-shell-sum": ["standin-rewrite"],  # 1.0: a rewrite in another language is not the speed-up asked for
}


def _spec_module():
    sys.path.insert(0, str(ROOT / "dataset" / "corpus"))
    import _spec

    return _spec


def _tasks(ids) -> list[Task]:
    by_id = {task.task_id: task for task in read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks}
    return [by_id[task_id] for task_id in ids]


# --- fast ---------------------------------------------------------------------------------------------------------
def test_each_shell_fix_guards_that_its_script_stays_bash():
    guard = _spec_module().BASH_GUARD_NAME
    for task in _tasks(SHELL_FIXES):
        assert task.guards is not None and guard in task.guards.tests, task.task_id
        assert f"def {guard}():" in task.test_source and SHELL_FIXES[task.task_id] in task.test_source
        assert "bash script" in " ".join(task.instruction.split()), task.task_id  # the prompt says so: the guard is fair
        assert guard not in task.test_weights


def test_no_weighted_test_pays_for_a_file_without_carriage_returns():
    (task,) = _tasks(["fix-crlf-script"])
    assert not any("carriage" in name for name in task.test_weights)
    assert "test_guard_no_carriage_returns_left" in task.guards.tests


@pytest.mark.parametrize("script, passes", [
    ("#!/bin/bash\nawk '{t += $2} END {print t + 0}' \"$1\"\n", True),
    ("#!/usr/bin/env bash\necho start\nwc -l < /app/input.txt\n", True),
    ("#!/usr/bin/env python3\nimport os, sys\nos.execv('/opt/x', [sys.argv[0]] + sys.argv[1:])\n", False),
    ("#!/bin/sh\ncat <<'TRICK_EOF'\nsum: 6\nTRICK_EOF\n", False),
    ("#!/bin/bash\nexec python3 - \"$@\" <<'EOF'\nprint(1)\nEOF\n", False),
    ("#!/bin/bash\r\necho start\r\n", False),
    ("#!/bin/bash\nif then fi (\n", False),
])
def test_the_bash_guard(tmp_path, script, passes):
    """The guard run on a local file: a fixed bash script passes; the audit's Python launcher, a printing sh
    program, a bash wrapper around python and a script bash cannot parse fail."""
    path = tmp_path / "script.sh"
    path.write_text(script)
    spec = _spec_module()
    namespace = {"Path": Path, "run": lambda *cmd: subprocess.run(list(cmd), capture_output=True, text=True)}
    exec(spec.bash_script_guard(str(path)), namespace)  # noqa: S102 - the guard's own source, as the task ships it
    guard = namespace[spec.BASH_GUARD_NAME]
    if passes:
        guard()
    else:
        with pytest.raises(AssertionError):
            guard()


# --- in containers ------------------------------------------------------------------------------------------------
@pytest.mark.docker
def test_the_tricks_that_beat_the_shell_fixes_earn_nothing(tmp_path):
    """Each (task, trick) pair here scored above its bound before the fix; now each earns 0 (about 20 s)."""
    tricks = sorted({name for names in BEATEN_BY.values() for name in names})
    audits = audit_tasks(_tasks(BEATEN_BY), tricks=tricks, concurrency=2, output_dir=tmp_path)
    for audit in audits:
        results = {r.trick: r for r in audit.results}
        for name in BEATEN_BY[audit.task_id]:
            result = results[name]
            assert result.outcome is TrickOutcome.HELD, (audit.task_id, name, result.outcome, result.error)
            assert result.score == 0.0, (audit.task_id, name, result.score, result.passed_tests)
