"""Oracle validation of every shipped task, and difficulty screening with resume - real containers."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from terminal_agent.tasks.loading import load_tasks
from terminal_agent.task_quality.screening import JOURNAL_FILE, ScreeningConfig, parse_band, screen_tasks, split_kept, verify_split
from terminal_agent.task_quality.validation import FINISH_REPLY, oracle_replies, validate_tasks

SHIPPED = Path(__file__).resolve().parents[1] / "dataset" / "latest_verified.csv"


@pytest.fixture(scope="module")
def shipped_tasks():
    return load_tasks(SHIPPED)


def test_parse_band_and_split_are_deterministic():
    assert parse_band("2..6") == (2, 6) and parse_band("1-3") == (1, 3)
    ids = [f"t{i}" for i in range(10)]
    train, held = split_kept(ids, 0.2, seed=0)
    assert len(held) == 2 and sorted(train + held) == ids
    assert split_kept(list(reversed(ids)), 0.2, seed=0) == (train, held)
    assert split_kept(ids, 0.2, seed=1) != (train, held)
    with pytest.raises(ValueError):
        ScreeningConfig(band=(5, 2))


def test_cli_rejects_unknown_task_ids_and_an_inverted_band():
    from typer.testing import CliRunner

    from terminal_agent.cli import app

    runner = CliRunner()
    unknown = runner.invoke(app, ["tasks", "validate", str(SHIPPED), "--task", "no-such-task"])
    assert unknown.exit_code == 2 and "no-such-task" in unknown.output
    inverted = runner.invoke(app, ["tasks", "screen", str(SHIPPED), "--band", "5..2"])
    assert inverted.exit_code == 2 and "5..2" in inverted.output


@pytest.mark.docker
def test_the_first_shipped_tasks_are_valid(shipped_tasks, tmp_path):
    # the whole corpus: tests/test_corpus.py (a rotating sample, and the pinned manifest) and dataset/validate_corpus.py
    first = shipped_tasks[:4]
    validations = validate_tasks(first, concurrency=2, output_dir=tmp_path)
    assert [v.task_id for v in validations] == [t.task_id for t in first]
    for v in validations:
        assert v.ok, f"{v.task_id}: {v.problems} {v.infrastructure_errors}"
        assert v.oracle_score == 1.0 and v.noop_score is not None and v.noop_score < 1.0
        assert set(v.hashes) == {"instruction", "environment", "tests", "weights"}


@pytest.mark.docker
def test_validation_catches_a_wrong_solution_and_tests_that_pass_untouched(shipped_tasks, tmp_path):
    base = shipped_tasks[0]
    wrong = base.model_copy(update={"task_id": "wrong-solution", "solution": "#!/bin/bash\ntrue\n"})
    trivial_tests = "def test_always():\n    assert True\n"
    trivial = base.model_copy(
        update={"task_id": "trivial-tests", "test_source": trivial_tests, "test_weights": {"test_always": 1.0}, "test_support_files": {}}
    )
    by_id = {v.task_id: v for v in validate_tasks([wrong, trivial], output_dir=tmp_path)}
    assert not by_id["wrong-solution"].ok and by_id["wrong-solution"].oracle_score < 1.0
    assert by_id["wrong-solution"].failing_tests
    assert not by_id["trivial-tests"].ok and by_id["trivial-tests"].noop_score == 1.0
    assert any("without any work" in p for p in by_id["trivial-tests"].problems)


def _policy(tasks, passes_per_task: dict[str, int]):
    """A scripted policy: the first N episodes of a task run its solution, the others give up at once."""
    from terminal_agent.models.scripted import ScriptedModelClient

    by_instruction = {t.instruction: t for t in tasks}
    started: Counter[str] = Counter()
    lock = threading.Lock()

    def reply(messages):
        task = next(t for text, t in by_instruction.items() if any(text in m["content"] for m in messages))
        if not any(m["role"] == "assistant" for m in messages):  # first turn of a new episode
            with lock:
                started[task.task_id] += 1
                solve = started[task.task_id] <= passes_per_task[task.task_id]
            return oracle_replies(task)[0] if solve else FINISH_REPLY
        return FINISH_REPLY

    return ScriptedModelClient(reply, name="scripted-policy"), started


@pytest.mark.docker
def test_screening_keeps_the_band_freezes_splits_and_resumes(shipped_tasks, tmp_path):
    tasks = shipped_tasks[:3]
    passes = {tasks[0].task_id: 3, tasks[1].task_id: 0, tasks[2].task_id: 2}
    model, started = _policy(tasks, passes)
    config = ScreeningConfig(attempts=3, band=(1, 2), held_out_fraction=0.5, max_steps=2, concurrency=2)
    summary = screen_tasks(tasks, model, tmp_path, config)
    rows = {row["task_id"]: row for row in summary["tasks"]}
    assert {t: rows[t]["passes"] for t in passes} == passes
    assert [t for t, row in rows.items() if row["kept"]] == [tasks[2].task_id]  # 3/3 and 0/3 are outside 1..2
    train = json.loads((tmp_path / "train.json").read_text())
    held = json.loads((tmp_path / "held_out.json").read_text())
    assert [e["task_id"] for e in train["tasks"] + held["tasks"]] == [tasks[2].task_id]
    manifest = tmp_path / ("train.json" if train["tasks"] else "held_out.json")
    assert verify_split(manifest, tasks) == []
    changed = tasks[2].model_copy(update={"instruction": tasks[2].instruction + " (edited)"})
    assert verify_split(manifest, [changed]) == [f"{tasks[2].task_id}: changed instruction"]
    assert sum(started.values()) == 9

    # Interruption: keep 5 journal lines plus half of the 6th, as a crash mid-write leaves it.
    journal = tmp_path / JOURNAL_FILE
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    kept_lines = [json.loads(line) for line in lines[:5]]
    model2, started2 = _policy(tasks, {t: 0 for t in passes})  # a resumed run that never passes
    summary2 = screen_tasks(tasks, model2, tmp_path, config.model_copy(update={"overwrite_splits": True}))
    assert sum(started2.values()) == 4  # only the 4 unfinished attempts ran again
    rows2 = {row["task_id"]: row for row in summary2["tasks"]}
    for task in tasks:
        kept_passes = sum(1 for e in kept_lines if e["task_id"] == task.task_id and e["reward"] == 1.0)
        assert rows2[task.task_id]["passes"] == kept_passes and rows2[task.task_id]["attempts"] == 3


@pytest.mark.docker
def test_validate_command_writes_the_manifest(shipped_tasks, tmp_path):
    from typer.testing import CliRunner

    from terminal_agent.cli import app

    task_id = shipped_tasks[-1].task_id
    result = CliRunner().invoke(app, ["tasks", "validate", str(SHIPPED), "--task", task_id, "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "validation.json").read_text())
    assert manifest["n_ok"] == 1 and list(manifest["tasks"]) == [task_id]
    assert manifest["tasks"][task_id]["hashes"] == shipped_tasks[-1].content_hashes()


def _write_harbor_task_with_solution_files(root: Path) -> Path:
    """A hand-written Harbor task whose solve.sh copies files it ships beside itself (as Harbor's oracle hands them
    over in /solution); the verifier checks the copies byte for byte."""
    task_dir = root / "solution-beside-solve"
    for folder in ("environment", "tests", "solution/data"):
        (task_dir / folder).mkdir(parents=True)
    (task_dir / "task.toml").write_text('version = "1.0"\n\n[verifier]\ntimeout_sec = 120.0\n\n[environment]\nmemory = "2G"\n')
    (task_dir / "instruction.md").write_text("Put the helper script and the blob in /app.\n")
    (task_dir / "environment" / "Dockerfile").write_text("FROM terminal-agent/base:bookworm\nWORKDIR /app\n")
    (task_dir / "tests" / "test.sh").write_text(
        "#!/bin/bash\n"
        "if [ \"$(bash /app/helper.sh)\" = ready ] && cmp -s /app/blob.bin /tests/expected.bin; then\n"
        "  echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n"
    )
    (task_dir / "tests" / "expected.bin").write_bytes(bytes(range(256)) * 4)
    (task_dir / "solution" / "solve.sh").write_text(
        "#!/bin/bash\nset -e\n# the files beside this script are under /solution, and apt must not ask\n"
        "[ \"$DEBIAN_FRONTEND\" = noninteractive ]\n"
        "cp /solution/helper.sh /app/helper.sh\ncp '/solution/data/blob one.bin' /app/blob.bin\n"
    )
    (task_dir / "solution" / "helper.sh").write_text("echo ready\n")
    (task_dir / "solution" / "data" / "blob one.bin").write_bytes(bytes(range(256)) * 4)
    return task_dir


@pytest.mark.docker
def test_the_oracle_hands_a_harbor_solution_its_files_in_slash_solution(tmp_path):
    [task] = load_tasks(_write_harbor_task_with_solution_files(tmp_path / "tasks"))
    assert set(task.solution_files) == {"helper.sh", "data/blob one.bin"}
    assert isinstance(task.solution_files["data/blob one.bin"], bytes)
    [validation] = validate_tasks([task], concurrency=1, output_dir=tmp_path / "runs")
    assert validation.ok, (validation.problems, validation.infrastructure_errors)
    assert validation.oracle_score == 1.0 and validation.noop_score == 0.0
