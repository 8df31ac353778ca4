"""Issue 18, corpus audit part 1: the tasks of text_logs, debugging_python, debugging_shell, csv_json and
file_operations pay nothing for doing nothing, and tell the named wrong answers from right ones.

The fast tests check structural rules on every task of these modules. The Docker test runs the bad
behaviours each fix was made for (the naive fix, the constant-echo script, ``touch OUTPUT``, the no-op, a
cheat on the sample folder) as scripted agents in real containers, against the tasks built from the current
sources; each assertion fails on the task as it was before the fix (docs/corpus_audit_part1.md has the numbers).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from task_builders import corpus_specs

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("text_logs", "debugging_python", "debugging_shell", "csv_json", "file_operations")


def _specs():
    return corpus_specs(*MODULES)


SPECS = {spec.task_id: spec for spec in _specs()}


def _test_functions(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {node.name: ast.get_source_segment(source, node) or "" for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


@pytest.mark.parametrize("task_id", sorted(SPECS))
def test_structural_rules(task_id):
    spec = SPECS[task_id]
    task = spec.to_task()
    assert task.dockerfile.splitlines()[0] == "FROM python:3.11-slim-bookworm"
    weights = {name: w for name, w in task.test_weights.items() if w > 0}
    # meaningful partial credit: at least three paying tests, none holding most of the credit
    assert len(weights) >= 3, weights
    assert max(weights.values()) <= 0.6 * sum(weights.values()), weights
    functions = _test_functions(task.test_source)
    guards = set(task.guards.tests) if task.guards else set()
    assert set(weights) | guards == set(functions), "every test pays or guards, and every weight names a test"
    assert not set(weights) & guards
    # "inputs unchanged" checks never pay: any test comparing with the shipped files is a guard
    for name, body in functions.items():
        if "unchanged(" in body:
            assert name in guards, f"{name} checks shipped files but pays"
    if guards:
        assert task.guards.on_failure.value == "zero"


def test_held_out_tasks_of_these_modules():
    held = {tid: spec for tid, spec in SPECS.items() if spec.held_out}
    assert len(held) >= 3, sorted(held)  # the corpus-wide split is checked in tests/test_splits.py
    assert any(spec.difficulty in ("medium", "hard") for spec in held.values())
    assert all(spec.to_task().metadata.get("corpus_split") == "held_out" for spec in held.values())


def test_shipped_charcount_is_a_program_that_counts_bytes():
    """fix-unicode-char-count: the shipped script parses under Python 3.11 (it used a backslash inside an
    f-string expression, a SyntaxError before 3.12) and so shows the bug the prompt names."""
    source = SPECS["fix-unicode-char-count"].files["charcount.py"]
    ast.parse(source, feature_version=(3, 11))
    assert 'open(path, "rb")' in source and "len(data)" in source


# --- bad behaviours in real containers --------------------------------------------------------------------

FINISH = "<finish>\nmessage: done\n</finish>"


def _bash(command: str) -> str:
    body = "".join(f"  {line}\n" for line in command.splitlines())
    return f"<bash>\ncmd: |\n{body}timeout_secs: 120\n</bash>"


NAIVE_SUBSHELL_FIX = (
    "printf '%s\\n' '#!/bin/bash' 'count=0' 'while read -r line; do'"
    " '  case \"$line\" in admin:*) count=$((count + 1)) ;; esac' 'done < /app/users.txt' 'echo \"$count\"'"
    " > /app/count_admins.sh"
)
CONSTANT_ECHO = "printf '#!/bin/bash\\necho start\\necho 3\\necho done\\n' > /app/run.sh"
LRU_WITHOUT_ITEMS = """cat > /app/lru.py <<'EOF'
from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self._store = OrderedDict()

    def get(self, key, default=None):
        if key not in self._store:
            return default
        self._store.move_to_end(key)
        return self._store[key]

    def put(self, key, value):
        self._store[key] = value
        self._store.move_to_end(key)
        if len(self._store) > self.capacity:
            self._store.popitem(last=False)
EOF"""

# (label, task id, agent commands, check on the score, the score before the fix)
EPISODES = [
    ("naive subshell fix", "fix-subshell-counter", [NAIVE_SUBSHELL_FIX], lambda r: r <= 0.5, 1.0),
    ("constant echo", "fix-crlf-script", [CONSTANT_ECHO], lambda r: r <= 0.5, 1.0),
    ("rotation no-op", "fix-log-rotation", [], lambda r: r <= 0.05, 0.25),
    ("rotation cheat on the samples", "fix-log-rotation", ["cd /app/logs && rm -f 'app 1.log' 'app 2.log'"],
     lambda r: r <= 0.05, 0.625),
    ("one-word byte-count fix", "fix-unicode-char-count",
     ["sed -i 's/len(data)/len(data.decode())/' /app/charcount.py"], lambda r: r == 1.0, 0.0),
    ("lru without .items", "fix-lru-cache", [LRU_WITHOUT_ITEMS], lambda r: r == 1.0, 0.625),
    ("touch all.log", "merge-two-logs", ["touch /app/logs/all.log"], lambda r: r == 0.0, 0.571),
    ("touch invalid.txt", "validate-json-records", ["touch /app/invalid.txt"], lambda r: r == 0.0, 0.429),
    ("touch slow.log", "slow-requests", ["touch /app/slow.log"], lambda r: r == 0.0, 0.375),
    ("delete-empty no-op", "delete-empty-files", [], lambda r: r <= 0.05, 0.5),
    ("empty dirs deleted too", "delete-empty-files", ["find /app/data -empty -delete"], lambda r: r == 0.0, 1.0),
]


def run_episodes(specs: dict, episodes=EPISODES) -> dict[str, float | None]:
    """Score every episode's scripted agent on the task of ``specs`` (one runner, three at a time)."""
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner, TrialSpec

    tasks = {task_id: specs[task_id].to_task() for task_id in {e[1] for e in episodes}}
    replies = {}
    trials = []
    for attempt, (label, task_id, commands, _, _) in enumerate(episodes):
        replies[(task_id, attempt)] = [_bash(c) for c in commands] + [FINISH]
        trials.append(TrialSpec(tasks[task_id], attempt))
    runner = RolloutRunner(
        ScriptedModelClient([], name="part1"),
        RolloutConfig(concurrency=3, max_steps=3, sweep_leaked=False),
        model_for_trial=lambda spec: ScriptedModelClient(replies[(spec.task.task_id, spec.attempt)], name="part1"),
    )
    results = runner.run_trials(trials)
    by_attempt = {trial.attempt: trial for trial in results.trials}
    return {episodes[i][0]: (by_attempt[i].reward if by_attempt[i].scored else None) for i in range(len(episodes))}


@pytest.mark.docker
def test_named_bad_behaviours_no_longer_pay():
    scores = run_episodes(SPECS)
    assert None not in scores.values(), scores
    wrong = {label: (scores[label], before) for label, _, _, check, before in EPISODES if not check(scores[label])}
    assert not wrong, wrong
