"""A task that names no CPU quota or memory limit (a Harbor task.toml of schema 1.1+ without ``cpus`` /
``memory_mb``): unset through every format, no limit in the sandbox as Harbor gives none, unless the host
policy (``sandbox.unset_cpus`` / ``sandbox.unset_memory_mb``) sets one. Schema 1.0 keeps its defaults."""

from __future__ import annotations

import tomllib

import pytest
from task_builders import rich_task

from terminal_agent.sandbox.config import SandboxConfig, effective_limits
from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.harbor.format import read_harbor_task, write_harbor_task
from terminal_agent.tasks.model import TaskLimits
from terminal_agent.tasks.parquet.rows import task_from_flat_dict, task_to_flat_dict
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task

UNSET = TaskLimits(cpus=None, memory_mb=None, pids=64)


def _unset_task():
    return rich_task(limits=UNSET)


def test_an_unset_limit_round_trips_through_every_format(tmp_path):
    task = _unset_task()
    assert read_tasks_csv(write_tasks_csv([task], tmp_path / "t.csv")).tasks == [task]
    flat = task_to_flat_dict(task)
    assert task_from_flat_dict(flat) == task
    assert read_tb_task(write_tb_task(task, tmp_path / "tb")) == task
    task_dir = write_harbor_task(task, tmp_path / "harbor")
    environment = tomllib.loads((task_dir / "task.toml").read_text())["environment"]
    assert "cpus" not in environment and "memory_mb" not in environment and "memory" not in environment
    assert read_harbor_task(task_dir) == task


def _harbor_dir(tmp_path, schema: str):
    """A Harbor task of ``schema`` that names no cpus or memory (no table of ours)."""
    task_dir = tmp_path / f"plain-{schema.replace('.', '-')}"
    (task_dir / "environment").mkdir(parents=True)
    (task_dir / "tests").mkdir()
    (task_dir / "task.toml").write_text(f'schema_version = "{schema}"\n\n[verifier]\ntimeout_sec = 60.0\n\n'
                                        '[environment]\nbuild_timeout_sec = 300.0\n')
    (task_dir / "instruction.md").write_text("Write hello to /app/out.txt.\n")
    (task_dir / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    (task_dir / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    return task_dir


@pytest.mark.parametrize(("schema", "cpus", "memory_mb"), [("1.0", 1.0, 2048), ("1.1", None, None), ("1.4", None, None)])
def test_each_schema_versions_default_applies_to_an_unnamed_limit(tmp_path, schema, cpus, memory_mb):
    task = read_harbor_task(_harbor_dir(tmp_path, schema))
    assert (task.limits.cpus, task.limits.memory_mb) == (cpus, memory_mb)


def test_the_host_policy_fills_only_what_the_task_leaves_unset():
    assert effective_limits(UNSET, SandboxConfig()) == UNSET  # no policy: no limit, as Harbor
    filled = effective_limits(UNSET, SandboxConfig(unset_cpus=0.5, unset_memory_mb=300))
    assert (filled.cpus, filled.memory_mb, filled.pids) == (0.5, 300, 64)
    named = TaskLimits(cpus=2.0, memory_mb=640)
    assert effective_limits(named, SandboxConfig(unset_cpus=0.5, unset_memory_mb=300)) == named
