"""Procedural task families: explicit train/held-out parameter split, whole held-out families, determinism,
no credit for doing nothing or for empty outputs, generated tests and solutions that pass (real containers),
and `tasks generate` in every format."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.task_quality.validation import validate_tasks
from terminal_agent.tasks.families import (
    FAMILIES,
    family_parameter_space,
    generate_instances,
    get_family,
    held_out_families,
    split_of_key,
)
from terminal_agent.tasks.families.base import DEV_TOOLS, VALIDATED_BASE
from terminal_agent.tasks.loading import load_tasks
from terminal_agent.tasks.model import Task

ROOT = Path(__file__).resolve().parents[1]
NEW_FAMILIES = ("config-migrate", "fix-package-bug", "git-recover", "log-forensics", "shell-script", "sqlite-query")
"""Families whose structure differs from the first ten (several files, a database, git history, a program)."""
HELD_OUT_FAMILIES = ("copy-named-file", "count-file-lines", "fix-package-bug", "git-recover", "read-json-key",
                     "shell-script")
EASY_BAND_FAMILIES = ("copy-named-file", "count-file-lines", "read-json-key")
"""Issue 36: easy families held out whole, one or two commands each, a band the embedded 135M model can reach."""


def _split_with_keys(name: str) -> str:
    return "held_out" if get_family(name).held_out_family else "train"


def test_at_least_fifteen_families_and_the_new_ones_are_registered():
    assert len(FAMILIES) >= 15
    assert set(NEW_FAMILIES) <= set(FAMILIES)


def test_per_key_families_have_both_splits_and_held_out_families_only_held_out():
    for name in FAMILIES:
        family = get_family(name)
        train, held_out = family.split_keys("train"), family.split_keys("held_out")
        assert not set(train) & set(held_out), name
        assert sorted(train + held_out) == sorted(family.keys), name
        if family.held_out_family:
            assert train == [] and held_out == list(family.keys), name
        else:
            assert train and held_out, name
            assert all(split_of_key(name, key) == "held_out" for key in held_out)


def test_whole_families_are_held_out_and_have_no_training_instances():
    assert held_out_families() == sorted(HELD_OUT_FAMILIES)
    assert len(held_out_families()) >= 3 and len(FAMILIES) - len(held_out_families()) >= 12
    for name in held_out_families():
        space = family_parameter_space(name)
        assert space["held_out_family"] is True and space["train_keys"] == []
        assert generate_instances(name, 5, seed=1) == []  # train: no key, no instance
        held = generate_instances(name, 4, seed=1, split="held_out")
        assert len(held) == 4
        assert all(t.metadata["family_split"] == "held_out" and t.metadata["family_held_out"] for t in held)
    for name in set(FAMILIES) - set(held_out_families()):
        assert family_parameter_space(name)["held_out_family"] is False


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_held_out_instances_never_share_a_key_with_training_instances(name):
    train = generate_instances(name, 12, seed=3)
    held_out = generate_instances(name, 6, seed=3, split="held_out")
    train_keys = {task.metadata["family_key"] for task in train}
    held_keys = {task.metadata["family_key"] for task in held_out}
    space = family_parameter_space(name)
    assert train_keys <= set(space["train_keys"]) and held_keys <= set(space["held_out_keys"])
    assert not train_keys & held_keys
    assert held_out and (train or get_family(name).held_out_family)
    assert {t.metadata["family_split"] for t in train} <= {"train"}
    assert {t.metadata["family_split"] for t in held_out} == {"held_out"}
    assert not {t.task_id for t in train} & {t.task_id for t in held_out}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_instances_are_deterministic_distinct_and_complete(name):
    split = _split_with_keys(name)
    first = generate_instances(name, 6, seed=11, split=split)
    again = generate_instances(name, 6, seed=11, split=split)
    assert first == again
    assert [t.content_hashes() for t in first] == [t.content_hashes() for t in again]
    assert len({task.task_id for task in first}) == 6
    assert {task.difficulty for task in first} == set(get_family(name).difficulties)
    assert [t.task_id for t in first] != [t.task_id for t in generate_instances(name, 6, seed=12, split=split)]
    for task in first:
        assert Task.model_validate(task.model_dump()) == task  # the instance passes the task model as it is
        assert len(task.test_weights) >= 3 and task.unweighted_tests == [], task.task_id
        total = sum(task.test_weights.values())
        assert max(task.test_weights.values()) <= 0.6 * total, "no single test holds the credit"
        assert task.guards is not None and task.guards.tests, task.task_id
        assert not set(task.guards.tests) & set(task.test_weights), "guards earn nothing"
        assert set(task.guards.tests) <= set(task.test_functions)
        assert task.solution and task.solution.startswith("#!/bin/bash"), task.task_id
        assert task.dockerfile.startswith(f"FROM {VALIDATED_BASE}\nWORKDIR /app\n")
        assert "pip" not in task.dockerfile
        assert "apt-get" not in task.dockerfile.replace(DEV_TOOLS, ""), "only the shared DEV_TOOLS layer installs"
        assert task.metadata["family"] == name and task.task_id.startswith(f"gen-{name}-")


def test_dev_tools_layer_is_identical_to_the_corpus_form():
    sys.path.insert(0, str(ROOT / "dataset" / "corpus"))
    try:
        import _spec
    finally:
        sys.path.remove(str(ROOT / "dataset" / "corpus"))
    assert DEV_TOOLS == _spec.DEV_TOOLS


def test_unknown_family_key_split_and_difficulty_are_named_errors():
    with pytest.raises(ConfigError, match="unknown task family 'nope'; valid: archive-without"):
        generate_instances("nope", 1, 0)
    with pytest.raises(ConfigError, match="unknown split"):
        generate_instances("count-matches", 1, 0, split="test")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="difficulties"):
        generate_instances("count-matches", 1, 0, difficulties=["hard"])
    with pytest.raises(ConfigError, match="difficulty must be one of"):
        get_family("count-matches").instance("timeout", "hard", 0)  # type: ignore[arg-type]
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
    """Half of the first ten families a day (the other half the next day), one instance each; the new families:
    the test below; all: dataset/validate_corpus.py."""
    seed = _rotating_seed()
    tasks = []
    for index, name in enumerate(sorted(set(FAMILIES) - set(NEW_FAMILIES))):
        if (index + seed) % 2:
            continue
        offered = [d for d in ("easy", "medium") if d in get_family(name).difficulties]  # the easy band: easy only
        difficulty = offered[(index // 2 + seed) % len(offered)]
        split = "held_out" if (index + seed) % 3 == 0 else "train"
        tasks += generate_instances(name, 1, seed, split=split, difficulties=[difficulty])
    validations = validate_tasks(tasks, concurrency=3)
    bad = [(v.task_id, v.noop_score, v.oracle_score, v.problems, v.infrastructure_errors) for v in validations if not v.ok]
    assert not bad, f"seed {seed}: {bad}"
    assert all(v.noop_score <= 0.05 and v.oracle_score == 1.0 and v.empty_score <= v.noop_score for v in validations)


@pytest.mark.docker
def test_one_instance_of_each_new_family_validates_and_pays_nothing_for_empty_outputs():
    """The structurally new families: the no-op scores <= 0.05, creating the asked-for outputs empty (validation's
    empty-output probe, paths from metadata outputs) no more than the no-op, the reference solution 1.0. The
    difficulty and seed rotate with the day."""
    seed = _rotating_seed()
    tasks = []
    for index, name in enumerate(NEW_FAMILIES):
        difficulty = ["easy", "medium"][(index + seed) % 2]
        tasks += generate_instances(name, 1, seed, split=_split_with_keys(name), difficulties=[difficulty])
    assert len(tasks) == len(NEW_FAMILIES)
    validations = validate_tasks(tasks, concurrency=3)
    bad = [(v.task_id, v.noop_score, v.empty_score, v.oracle_score, v.problems, v.infrastructure_errors,
            v.failing_tests) for v in validations if not v.ok]
    assert not bad, f"seed {seed}: {bad}"
    for task, v in zip(tasks, validations):
        assert v.noop_score <= 0.05 and v.oracle_score == 1.0 and v.empty_score <= v.noop_score, v
        if task.metadata.get("outputs"):
            assert v.empty_paths == sorted(task.metadata["outputs"]), v.task_id  # the probe wrote the named outputs


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


def test_generate_command_refuses_the_train_split_of_a_whole_held_out_family(tmp_path):
    from terminal_agent.tasks.families import held_out_families

    family = held_out_families()[0]
    out = tmp_path / "x.csv"
    refused = subprocess.run([sys.executable, "-m", "terminal_agent", "tasks", "generate", family, "--count", "2",
                              "-o", str(out), "--to", "csv"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "held out as a whole family" in refused.stderr and not out.exists()
    written = subprocess.run([sys.executable, "-m", "terminal_agent", "tasks", "generate", family, "--count", "2",
                              "--split", "held_out", "-o", str(out), "--to", "csv"], capture_output=True, text=True,
                             timeout=60)
    assert written.returncode == 0 and out.exists(), written.stderr


def test_the_smoke_tasks_are_current_instances_of_their_family():
    """dataset/smoke/count_matches_train.csv (the README's main command trains on it) is what the generator makes
    of its keys and seeds today: a generator change shows here until the file is regenerated."""
    from pathlib import Path

    from terminal_agent.tasks.csv.format import read_tasks_csv
    from terminal_agent.tasks.families import get_family

    shipped = read_tasks_csv(Path(__file__).resolve().parents[1] / "dataset" / "smoke" / "count_matches_train.csv").tasks
    family = get_family("count-matches")
    assert len(shipped) == 6
    for task in shipped:
        again = family.instance(task.metadata["family_key"], task.difficulty, task.metadata["family_seed"])
        assert again.content_hashes() == task.content_hashes(), task.task_id
        assert task.metadata["family_split"] == "train"


def test_the_easy_band_families_are_held_out_whole_easy_and_deterministic():
    """Issue 36, item 4: each easy-band family is held out whole (no train instance, in the frozen held-out split),
    makes only easy instances, the same seed gives the same tasks, and its reference solution is one command."""
    from terminal_agent.task_quality.splits import read_splits

    splits = read_splits(ROOT / "dataset" / "splits" / "splits.json")
    for name in EASY_BAND_FAMILIES:
        family = get_family(name)
        assert family.held_out_family and family.difficulties == ("easy",) and family.split_keys("train") == []
        assert generate_instances(name, 3, seed=5) == []
        first = generate_instances(name, 5, seed=5, split="held_out")
        assert first == generate_instances(name, 5, seed=5, split="held_out")
        assert [t.content_hashes() for t in first] != [
            t.content_hashes() for t in generate_instances(name, 5, seed=6, split="held_out")]
        for task in first:
            assert task.difficulty == "easy" and "easy-band" in task.tags
            assert len(task.solution.strip().splitlines()) == 2, "a shebang and one command"
        assert name in splits["splits"]["held_out"]["families"] and name not in splits["splits"]["train"]["families"]
        assert name not in splits["splits"]["held_out_keys"]["families"]


def test_the_easy_band_answers_are_the_values_the_inputs_hold():
    """The tests' expected values are the inputs' own: the named file's line count, the named source's bytes, the
    key's value in the JSON (so no weighted test pays for the shape alone)."""
    import json

    for task in generate_instances("count-file-lines", 4, seed=2, split="held_out"):
        name = task.metadata["family_key"]
        assert f"EXPECTED = {len(task.files['data/' + name].splitlines())}" in task.test_source
    for task in generate_instances("copy-named-file", 4, seed=2, split="held_out"):
        source = task.metadata["family_parameters"]["source"]
        sizes = {path: len(text) for path, text in task.files.items() if path.startswith("inbox/")}
        assert max(sizes, key=sizes.get) != source, "copying the largest input must not solve it"
        assert repr(task.files[source].splitlines()) in task.test_source
    for task in generate_instances("read-json-key", 4, seed=2, split="held_out"):
        value = json.loads(task.files["book.json"])[task.metadata["family_key"]]
        assert f"VALUE = {str(value)!r}" in task.test_source


@pytest.mark.docker
def test_one_instance_of_each_easy_band_family_validates_in_containers():
    """No-op 0, empty outputs 0, reference solution 1.0, in real containers (seed rotating with the day)."""
    seed = _rotating_seed()
    tasks = [generate_instances(name, 1, seed, split="held_out")[0] for name in EASY_BAND_FAMILIES]
    validations = validate_tasks(tasks, concurrency=2)
    for task, v in zip(tasks, validations):
        assert v.ok, (v.task_id, v.problems, v.infrastructure_errors, v.failing_tests)
        assert v.noop_score == 0.0 and v.empty_score == 0.0 and v.oracle_score == 1.0, v
        assert v.empty_paths == sorted(task.metadata["outputs"]), v.task_id
