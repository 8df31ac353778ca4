"""Issue 18, part 2 of the corpus audit: no reward without work in the originals, config-editing, algorithms,
backup-archive, performance and edge-case tasks (dataset/corpus/<module>.py).

The Docker test replays the behaviours that used to earn credit (doing nothing, writing empty outputs, deleting
everything) as scripted agents in real containers against the tasks built from the current sources, in one batch,
and checks what each scores now; the old scores are in ``BAD_EPISODES``. The fast tests check the structural rules
on every task of these modules. docs/corpus_audit_part2.md lists every change with its before and after numbers.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from terminal_agent.task_quality.similarity import NEAR_TWIN, SimilarityIndex
from terminal_agent.tasks.csv.format import read_tasks_csv
from terminal_agent.tasks.model import Task
from task_builders import corpus_specs

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "dataset" / "corpus"
MODULES = ("originals", "config_editing", "algorithms", "backup_archive", "performance", "edge_cases")
ORIGINAL_IDS = ["fix-stats-script", "count-log-levels", "make-project-tree", "csv-to-json-summary"]
VALIDATED_BASE_LINE = "FROM python:3.11-slim-bookworm"


def _specs():
    return corpus_specs(*MODULES)


def _tasks() -> dict[str, Task]:
    return {spec.task_id: spec.to_task() for spec in _specs()}


def _test_functions(source: str) -> list[str]:
    tree = ast.parse(source)
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


# --- structural rules, no Docker --------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", _specs(), ids=lambda spec: spec.task_id)
def test_task_structure(spec):
    task = spec.to_task()
    assert task.dockerfile.splitlines()[:2] == [VALIDATED_BASE_LINE, "WORKDIR /app"]
    functions = _test_functions(task.test_source)
    weights = task.test_weights
    guards = task.guards.tests if task.guards else []
    # every test is weighted or a guard; guards carry no weight
    assert sorted(functions) == sorted([*weights, *guards]), task.task_id
    assert not set(weights) & set(guards)
    # meaningful partial credit: at least 3 weighted tests, none holding most of the credit
    assert len(weights) >= 3 and all(w > 0 for w in weights.values())
    assert max(weights.values()) <= 0.6 * sum(weights.values()), weights
    # a guard that zeroes or caps: "inputs unchanged" tests are never paid for
    for name in guards:
        assert "unchanged" in name or "kept" in name or "untouched" in name or "intact" in name or "still" in name, name
    assert task.solution and subprocess.run(["bash", "-n"], input=task.solution, text=True).returncode == 0


def test_unchanged_checks_are_guards_not_credit():
    """A weighted test that only compares a shipped file with its original pays a no-op agent."""
    for task in _tasks().values():
        tree = ast.parse(task.test_source)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in task.test_weights:
                calls = [n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
                assert "unchanged" not in calls, f"{task.task_id}: {node.name} pays for an unchanged input"


def test_originals_replace_the_hand_kept_rows():
    tasks = _tasks()
    csv_rows = {task.task_id: task for task in read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks}
    for task_id in ORIGINAL_IDS:
        assert task_id in tasks and task_id in csv_rows
        assert tasks[task_id].files == csv_rows[task_id].files, task_id
        assert tasks[task_id].use_case_category == "corpus"


def test_held_out_tasks_have_no_near_twin_here():
    specs = _specs()
    held = [spec.task_id for spec in specs if spec.held_out]
    assert len(held) >= 3  # the corpus-wide split is checked in tests/test_splits.py
    assert "medium" in {spec.difficulty for spec in specs if spec.held_out}
    index = SimilarityIndex([spec.to_task() for spec in specs])
    for task_id in held:
        closest = max((index.similarity(task_id, other.task_id) for other in specs if not other.held_out),
                      key=lambda pair: pair.score)
        assert closest.score < NEAR_TWIN, closest.to_dict()


# --- the named fixes, replayed in real containers -----------------------------------------------------------------

FINISH = "<finish>\nmessage: done\n</finish>"


def _bash(command: str) -> str:
    return f"<bash>\ncmd: {command}\ntimeout_secs: 120\n</bash>"


BAD_EPISODES = {
    # (task, behaviour): (replies, score before the fix, highest score allowed now)
    ("roman-numerals", "no-op"): ([FINISH], 0.25, 0.0),
    ("prune-old-backups", "no-op"): ([FINISH], 0.625, 0.0),
    ("prune-old-backups", "delete every backup"): ([_bash("rm -f /app/backups/backup-2*.tar.gz"), FINISH], 0.625, 0.0),
    ("speed-up-dedupe", "no-op"): ([FINISH], 0.429, 0.0),
    ("speed-up-shell-sum", "no-op"): ([FINISH], 0.429, 0.0),
    ("ini-add-section", "no-op"): ([FINISH], 0.429, 0.0),
    ("extract-one-file", "touch OUTPUT"): (
        [_bash("mkdir -p /app/restore/project/config && touch /app/restore/project/config/app.ini"), FINISH], 0.571, 0.0),
    ("merge-intervals", "touch OUTPUT"): ([_bash("touch /app/merged.txt"), FINISH], 0.25, 0.0),
    ("nginx-listen-port", "empty the config"): ([_bash("truncate -s 0 /app/nginx.conf"), FINISH], 0.25, 0.0),
}
PARTIAL_EPISODES = {
    # a partly right solution still earns part of the credit: (replies, expected score)
    ("extract-one-file", "restored without its mtime"): (
        [_bash("mkdir -p /app/restore/project/config && tar -xzOf /app/backups/project.tar.gz project/config/app.ini"
               " > /app/restore/project/config/app.ini"), FINISH], 1.5 / 3.5 + 1.0 / 3.5),
}


@pytest.fixture(scope="module")
def replayed():
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner, TrialSpec

    tasks = _tasks()
    plan = list(BAD_EPISODES.items()) + list(PARTIAL_EPISODES.items())
    replies = {}
    specs = []
    for attempt, ((task_id, behaviour), entry) in enumerate(plan):
        replies[(task_id, attempt)] = entry[0]
        specs.append(TrialSpec(tasks[task_id], attempt))
    runner = RolloutRunner(
        ScriptedModelClient([], "unused"),
        RolloutConfig(concurrency=3, max_steps=3, sweep_leaked=False),
        model_for_trial=lambda spec: ScriptedModelClient(replies[(spec.task.task_id, spec.attempt)], "replay"),
    )
    results = runner.run_trials(specs)
    by_key = {}
    for trial in results.trials:
        task_id, behaviour = plan[trial.attempt][0]
        assert trial.task_id == task_id
        by_key[(task_id, behaviour)] = trial
    return by_key


@pytest.mark.docker
@pytest.mark.parametrize("key", list(BAD_EPISODES), ids=lambda key: f"{key[0]}:{key[1]}")
def test_bad_behaviour_earns_nothing(replayed, key):
    trial = replayed[key]
    _, before, allowed = BAD_EPISODES[key]
    assert trial.scored, trial.error
    assert trial.reward <= allowed < before, (key, trial.reward, [t.name for t in trial.tests if t.passed])


@pytest.mark.docker
@pytest.mark.parametrize("key", list(PARTIAL_EPISODES), ids=lambda key: f"{key[0]}:{key[1]}")
def test_partial_work_earns_partial_credit(replayed, key):
    trial = replayed[key]
    assert trial.scored, trial.error
    assert trial.reward == pytest.approx(PARTIAL_EPISODES[key][1], abs=1e-6)
