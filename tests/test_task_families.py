"""Procedural task families: explicit train/held-out parameter split, determinism, generated tests
and solutions that pass (real containers), and `tasks generate` in every format."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.task_quality.validation import validate_tasks
from terminal_agent.tasks.families import FAMILIES, family_parameter_space, generate_instances, get_family, split_of_key
from terminal_agent.tasks.loading import load_tasks

ROOT = Path(__file__).resolve().parents[1]


def test_at_least_ten_families_each_with_both_splits():
    assert len(FAMILIES) >= 10
    for name in FAMILIES:
        family = get_family(name)
        train, held_out = family.split_keys("train"), family.split_keys("held_out")
        assert train and held_out, name
        assert not set(train) & set(held_out), name
        assert sorted(train + held_out) == sorted(family.keys), name
        assert all(split_of_key(name, key) == "held_out" for key in held_out)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_held_out_instances_never_share_a_key_with_training_instances(name):
    train = generate_instances(name, 12, seed=3)
    held_out = generate_instances(name, 6, seed=3, split="held_out")
    train_keys = {task.metadata["family_key"] for task in train}
    held_keys = {task.metadata["family_key"] for task in held_out}
    space = family_parameter_space(name)
    assert train_keys <= set(space["train_keys"]) and held_keys <= set(space["held_out_keys"])
    assert not train_keys & held_keys
    assert {t.metadata["family_split"] for t in train} == {"train"}
    assert {t.metadata["family_split"] for t in held_out} == {"held_out"}
    assert not {t.task_id for t in train} & {t.task_id for t in held_out}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_instances_are_deterministic_distinct_and_complete(name):
    first = generate_instances(name, 6, seed=11)
    assert first == generate_instances(name, 6, seed=11)
    assert len({task.task_id for task in first}) == 6
    assert {task.difficulty for task in first} == {"easy", "medium"}
    assert [t.task_id for t in first] != [t.task_id for t in generate_instances(name, 6, seed=12)]
    for task in first:
        assert len(task.test_weights) >= 3 and task.unweighted_tests == [], task.task_id
        assert task.solution and task.solution.startswith("#!/bin/bash"), task.task_id
        assert task.dockerfile.startswith("FROM ubuntu:24.04\nWORKDIR /app\n")
        assert "apt-get" not in task.dockerfile and "pip" not in task.dockerfile
        assert task.metadata["family"] == name and task.task_id.startswith(f"gen-{name}-")


def test_unknown_family_key_split_and_difficulty_are_named_errors():
    with pytest.raises(ConfigError, match="unknown task family 'nope'; valid: archive-without"):
        generate_instances("nope", 1, 0)
    with pytest.raises(ConfigError, match="unknown split"):
        generate_instances("count-matches", 1, 0, split="test")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="difficulties"):
        generate_instances("count-matches", 1, 0, difficulties=["hard"])
    with pytest.raises(ConfigError, match="unknown key 'x'"):
        get_family("count-matches").instance("x", "easy", 0)


@pytest.mark.parametrize("to", ["csv", "parquet", "tb", "harbor"])
def test_generate_command_writes_every_format(tmp_path, to):
    output = tmp_path / ("out." + to if to in ("csv", "parquet") else "out")
    proc = subprocess.run(
        [sys.executable, "-m", "terminal_agent", "tasks", "generate", "sort-records", "--count", "3", "--seed", "5",
         "--split", "held_out", "--to", to, "-o", str(output)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    loaded = sorted(load_tasks(output), key=lambda t: t.task_id)
    expected = sorted(generate_instances("sort-records", 3, 5, split="held_out"), key=lambda t: t.task_id)
    assert [t.task_id for t in loaded] == [t.task_id for t in expected]
    for got, want in zip(loaded, expected):
        assert got.test_source == want.test_source and got.files == want.files and got.solution.strip() == want.solution.strip()


def _rotating_seed() -> int:
    """The sample changes every day, so over time CI covers many instances (the full run: docs/tasks.md)."""
    return dt.date.today().toordinal()


@pytest.mark.docker
def test_a_rotating_half_of_the_families_validates_in_containers():
    """Five families a day (the other five the next day), one instance each; all: dataset/validate_corpus.py."""
    seed = _rotating_seed()
    tasks = []
    for index, name in enumerate(sorted(FAMILIES)):
        if (index + seed) % 2:
            continue
        difficulty = ["easy", "medium"][(index // 2 + seed) % 2]
        split = "held_out" if (index + seed) % 3 == 0 else "train"
        tasks += generate_instances(name, 1, seed, split=split, difficulties=[difficulty])
    validations = validate_tasks(tasks, concurrency=3)
    bad = [(v.task_id, v.noop_score, v.oracle_score, v.problems, v.infrastructure_errors) for v in validations if not v.ok]
    assert not bad, f"seed {seed}: {bad}"
    assert all(v.noop_score < 1.0 and v.oracle_score == 1.0 for v in validations)


def test_generate_command_lists_the_families_and_requires_one():
    listed = subprocess.run([sys.executable, "-m", "terminal_agent", "tasks", "generate", "--list"],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0
    import json

    spaces = json.loads(listed.stdout)
    assert sorted(spaces) == sorted(FAMILIES) and all(s["held_out_keys"] for s in spaces.values())
    missing = subprocess.run([sys.executable, "-m", "terminal_agent", "tasks", "generate", "-o", "x.csv"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "name a family" in missing.stderr
