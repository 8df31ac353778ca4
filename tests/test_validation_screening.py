"""Oracle validation of every shipped task, and difficulty screening with resume - real containers."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.tasks.families.base import dockerfile_for
from terminal_agent.tasks.loading import load_tasks
from terminal_agent.tasks.model import Task, TaskLimits, TestGuards
from terminal_agent.task_quality.no_work_rule import check_against_manifest, require_no_work_rule, rule_problems
from terminal_agent.task_quality.screening import JOURNAL_FILE, ScreeningConfig, parse_band, screen_tasks, split_kept, verify_split
from terminal_agent.task_quality.validation import (
    FINISH_REPLY,
    empty_output_paths,
    empty_output_replies,
    oracle_replies,
    validate_tasks,
    validation_manifest,
)

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
    first = shipped_tasks[:3]
    validations = validate_tasks(first, concurrency=3, output_dir=tmp_path)
    assert [v.task_id for v in validations] == [t.task_id for t in first]
    for v in validations:
        assert v.ok, f"{v.task_id}: {v.problems} {v.infrastructure_errors}"
        assert v.oracle_score == 1.0 and v.noop_score <= 0.05 and v.empty_score <= v.noop_score
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
    assert any(p.startswith("no-op rule") for p in by_id["trivial-tests"].problems)


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


# --- the no-work rule, the empty-output probe and the screening spread (issue 18) -------------------------------

TINY_PRELUDE = "from pathlib import Path\n\n"


def _tiny_task(task_id: str, tests: str, weights: dict[str, float], solution: str, **update) -> Task:
    """A task on the validated base: ships /app/in.txt ("6 7"), and a RUN step makes /app/made.txt, a file the
    empty-output probe must leave alone (the tests name it, the task's files do not)."""
    files = {"in.txt": "6 7\n"}
    fields = dict(
        task_id=task_id,
        instruction="Write the product of the two numbers in /app/in.txt to /app/out.txt, one line.",
        dockerfile=dockerfile_for(files, ["RUN echo made > /app/made.txt"]),
        files=files,
        test_source=TINY_PRELUDE + tests,
        test_weights=weights,
        solution=solution,
        limits=TaskLimits(agent_timeout_s=60, test_timeout_s=60),
    )
    fields.update(update)
    return Task(**fields)


SOLVE = "#!/bin/bash\nset -e\nset -- $(cat /app/in.txt)\necho $(( $1 * $2 )) > /app/out.txt\n"
GOOD_TESTS = '''
OUT = Path("/app/out.txt")


def test_out_is_one_line():
    assert OUT.read_text().count("\\n") == 1


def test_out_is_the_product():
    assert OUT.read_text().strip() == "42"


def test_out_is_a_number():
    assert OUT.read_text().strip().isdigit()


def test_made_is_left_alone():
    assert Path("/app/made.txt").read_text() == "made\\n"
'''
# pays a no-op agent: half the credit checks only that the input is still there
PAYS_NOOP_TESTS = '''
def test_out_is_the_product():
    assert Path("/app/out.txt").read_text().strip() == "42"


def test_input_kept():
    assert Path("/app/in.txt").read_text() == "6 7\\n"
'''
# pays `touch /app/out.txt`: existence, and a check that holds vacuously on an empty file
PAYS_TOUCH_TESTS = '''
OUT = Path("/app/out.txt")


def test_out_exists():
    assert OUT.exists()


def test_no_blank_lines():
    assert all(line.strip() for line in OUT.read_text().splitlines())


def test_out_is_the_product():
    assert OUT.read_text().strip() == "42"
'''


def test_empty_output_paths_from_the_tests_and_from_metadata():
    tests = '''
OUT = Path("/app/out dir/result.txt")
def test_a():
    run("bash", "-c", "sort /app/in.txt > /tmp/sorted.txt; cat /tmp/sorted.txt")
    Path(f"/app/report_{1}.txt")
    Path("/tests/expected.txt"); Path("/usr/bin/python3"); Path("/app/logs/"); Path("/app/nested/deep/x.log")
    assert "/app/in.txt" and "https://images.example/app/page" and "2025/01/02" and ratio == 3/4
'''
    task = _tiny_task("paths", tests, {"test_a": 1.0}, SOLVE,
                      test_support_files={"helper.sh": "#!/bin/bash\ncmp /srv/data/out.bin /tests/want.bin\n"})
    # shipped /app/in.txt, the grader's /tests, the system's /usr, the folder /app/nested/deep above a named file,
    # f-string pieces, URL paths and fractions are not outputs; /app/logs/ (a trailing slash) is a folder
    assert empty_output_paths(task) == [
        "/app/nested/deep/x.log", "/app/out dir/result.txt", "/srv/data/out.bin", "/tmp/sorted.txt",
    ]
    listed = task.model_copy(update={"metadata": {"outputs": ["out.txt", "/var/lib/app/state.db"]}})
    assert empty_output_paths(listed) == ["/app/out.txt", "/var/lib/app/state.db"]


def test_the_probe_command_creates_missing_files_empty_and_truncates_nothing(tmp_path):
    existing = tmp_path / "kept.txt"
    existing.write_text("precious\n")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    new = tmp_path / "new dir" / "sub" / "out.txt"
    paths = [str(existing), str(new), str(tmp_path / "link")]
    command_reply, finish = empty_output_replies(paths)
    assert finish == FINISH_REPLY
    import yaml

    body = command_reply.removeprefix("<bash>\n").removesuffix("\n</bash>")
    command = yaml.safe_load(body)["cmd"]  # the agent reads the action's body as YAML
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert existing.read_text() == "precious\n" and new.read_bytes() == b""
    assert (tmp_path / "link").is_symlink() and not (tmp_path / "nowhere").exists()  # a dangling link is left alone
    assert proc.stdout == f"probe created {new}\n"


def test_rule_problems_name_the_rule_and_the_scores():
    assert rule_problems(0.0, 0.0, 1.0) == [] and rule_problems(0.05, 0.05, 1.0) == []
    assert rule_problems(None, None, None) == []  # unscored episodes are infrastructure errors, judged elsewhere
    [noop] = rule_problems(0.25, 0.25, 1.0)
    assert noop.startswith("no-op rule") and "0.250 > 0.05" in noop
    [empty] = rule_problems(0.0, 0.5, 1.0)
    assert empty.startswith("empty-output rule") and "0.500 > the no-op's 0.000" in empty
    [oracle] = rule_problems(0.0, 0.0, 0.5, ["test_b"])
    assert oracle.startswith("oracle rule") and "0.500 < 1.0" in oracle and "test_b" in oracle
    assert len(rule_problems(0.5, 0.75, 0.0)) == 3


def _entry(task: Task, **scores) -> dict:
    return {"ok": True, "noop_score": 0.0, "empty_score": 0.0, "oracle_score": 1.0, "hashes": task.content_hashes(),
            "problems": [], "infrastructure_errors": [], **scores}


def test_check_against_manifest_and_require(tmp_path):
    ids = ["good", "missing", "changed", "paid-noop", "paid-touch", "bad-oracle", "old-manifest"]
    tasks = [_tiny_task(i, GOOD_TESTS, {"test_out_is_the_product": 1.0}, SOLVE) for i in ids]
    by_id = {t.task_id: t for t in tasks}
    entries = {
        "good": _entry(by_id["good"]),
        "changed": _entry(by_id["changed"].model_copy(update={"instruction": "other"})),
        "paid-noop": _entry(by_id["paid-noop"], noop_score=0.1, empty_score=0.1),
        "paid-touch": _entry(by_id["paid-touch"], empty_score=0.04),
        "bad-oracle": _entry(by_id["bad-oracle"], oracle_score=0.75),
        "old-manifest": {k: v for k, v in _entry(by_id["old-manifest"]).items() if k != "empty_score"},
    }
    problems = check_against_manifest(tasks, {"tasks": entries})
    assert problems == [
        "missing: not in the validation manifest; validate it",
        "changed: changed since it was validated (instruction); re-validate it",
        "paid-noop: no-op rule: a no-op agent scores 0.100 > 0.05 (the tests pay for doing nothing)",
        "paid-touch: empty-output rule: writing empty outputs scores 0.040 > the no-op's 0.000 "
        "(a test holds on an empty output)",
        "bad-oracle: oracle rule: the reference solution scores 0.750 < 1.0",
        "old-manifest: no empty_score in the manifest; re-validate it",
    ]
    assert check_against_manifest([by_id["good"]], {"tasks": entries}) == []
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"tasks": entries}))
    require_no_work_rule([by_id["good"]], path)  # fine: no exception
    with pytest.raises(ConfigError, match=r"6 problem\(s\)") as raised:
        require_no_work_rule(tasks, path)
    assert "paid-touch: empty-output rule" in str(raised.value)
    with pytest.raises(ConfigError, match="no validation manifest"):
        require_no_work_rule(tasks, tmp_path / "absent.json")


@pytest.mark.docker
def test_validation_refuses_tasks_that_pay_for_no_work(tmp_path):
    fine = _tiny_task("tiny-fine", GOOD_TESTS, {"test_out_is_one_line": 1.0, "test_out_is_the_product": 2.0,
                                               "test_out_is_a_number": 1.0, "test_made_is_left_alone": 0.0},
                      SOLVE, guards=TestGuards(tests=["test_made_is_left_alone"]))
    pays_noop = _tiny_task("tiny-pays-noop", PAYS_NOOP_TESTS, {"test_out_is_the_product": 1.0, "test_input_kept": 1.0},
                           SOLVE)
    pays_touch = _tiny_task("tiny-pays-touch", PAYS_TOUCH_TESTS,
                            {"test_out_exists": 1.0, "test_no_blank_lines": 1.0, "test_out_is_the_product": 2.0}, SOLVE)
    validations = validate_tasks([fine, pays_noop, pays_touch], concurrency=3, output_dir=tmp_path)
    by_id = {v.task_id: v for v in validations}
    for v in validations:
        assert v.infrastructure_errors == [] and v.oracle_score == 1.0, (v.task_id, v.infrastructure_errors)

    ok = by_id["tiny-fine"]
    assert ok.ok, ok.problems
    assert (ok.noop_score, ok.empty_score) == (0.0, 0.0)
    assert ok.empty_paths == ["/app/made.txt", "/app/out.txt"]
    # the probe made the missing output and left the file of the RUN step alone (its guard passed, see above,
    # and the transcript says which paths it created)
    transcripts = "".join(p.read_text(errors="replace") for p in (tmp_path / "empty").rglob("*") if p.is_file())
    assert "probe created /app/out.txt" in transcripts and "probe created /app/made.txt" not in transcripts

    noop = by_id["tiny-pays-noop"]
    assert not noop.ok and noop.noop_score == 0.5
    assert [p.split(":")[0] for p in noop.problems] == ["no-op rule"]

    touch = by_id["tiny-pays-touch"]
    assert not touch.ok and touch.noop_score == 0.0 and touch.empty_score == 0.5
    assert [p.split(":")[0] for p in touch.problems] == ["empty-output rule"] and "0.500" in touch.problems[0]

    manifest = validation_manifest(validations)
    assert manifest["tasks"]["tiny-pays-touch"]["empty_score"] == 0.5
    assert check_against_manifest([fine, pays_noop, pays_touch], manifest) == [
        f"tiny-pays-noop: {noop.problems[0]}", f"tiny-pays-touch: {touch.problems[0]}",
    ]


def _partial_policy(rewards_in_order: dict[str, list[str]]):
    """A scripted policy: the n-th episode of a task runs the n-th command of its list ("" gives up at once)."""
    from terminal_agent.models.scripted import ScriptedModelClient

    started: Counter[str] = Counter()
    lock = threading.Lock()

    def reply(messages):
        if any(m["role"] == "assistant" for m in messages):
            return FINISH_REPLY
        task_id = next(t for t in rewards_in_order if f"[{t}]" in messages[-1]["content"] or
                       any(f"[{t}]" in m["content"] for m in messages))
        with lock:
            command = rewards_in_order[task_id][started[task_id]]
            started[task_id] += 1
        return f"<bash>\ncmd: {command}\n</bash>" if command else FINISH_REPLY

    return ScriptedModelClient(reply, name="scripted-spread"), started


@pytest.mark.docker
def test_screening_reports_the_spread_and_the_share_of_all_equal_groups(tmp_path):
    weights = {"test_out_is_one_line": 1.0, "test_out_is_the_product": 1.0, "test_out_is_a_number": 1.0}
    spread = _tiny_task("tiny-spread", GOOD_TESTS, weights, SOLVE,
                        instruction="[tiny-spread] Write the product of the numbers in /app/in.txt to /app/out.txt.")
    flat = _tiny_task("tiny-flat", GOOD_TESTS, weights, SOLVE,
                      instruction="[tiny-flat] Write the product of the numbers in /app/in.txt to /app/out.txt.")
    # tiny-spread: rewards 0 (nothing), 2/3 (a number on one line, the wrong one), 1 (the product)
    # tiny-flat: three times nothing, rewards 0, 0, 0: all equal
    model, started = _partial_policy({
        "tiny-spread": ["", "echo 41 > /app/out.txt", "echo 42 > /app/out.txt"],
        "tiny-flat": ["", "", ""],
    })
    config = ScreeningConfig(attempts=3, band=(1, 2), held_out_fraction=0.0, max_steps=2, concurrency=3)
    summary = screen_tasks([spread, flat], model, tmp_path, config)
    assert sum(started.values()) == 6
    rows = {row["task_id"]: row for row in summary["tasks"]}
    s, f = rows["tiny-spread"], rows["tiny-flat"]
    assert s["passes"] == 1 and s["kept"] and not s["all_equal"]
    assert (s["reward_min"], s["reward_max"]) == (0.0, 1.0)
    assert s["mean_reward"] == pytest.approx(5 / 9)
    assert s["reward_std"] == pytest.approx(statistics.pstdev([0.0, 2 / 3, 1.0]))
    assert f["all_equal"] is True and f["reward_std"] == 0.0 and (f["reward_min"], f["reward_max"]) == (0.0, 0.0)
    assert (summary["n_all_equal"], summary["n_complete"], summary["share_all_equal"]) == (1, 2, 0.5)
    written = json.loads((tmp_path / "screening.json").read_text())
    assert written["share_all_equal"] == 0.5 and written["model"] == "scripted-spread"

    # the CLI's table and summary line show them
    from rich.console import Console

    from terminal_agent.cli.task_quality_commands import screening_footer, screening_table

    console = Console(width=200, record=True)
    console.print(screening_table(written))
    lines = {line.split()[1]: line for line in console.export_text().splitlines() if "tiny-" in line}
    assert "0.00..1.00" in lines["tiny-spread"] and f"{s['reward_std']:.3f}" in lines["tiny-spread"]
    assert "0.00..0.00" in lines["tiny-flat"] and "yes" in lines["tiny-flat"].split("0.000")[-1]
    assert "All-equal groups (no GRPO signal): 1/2 complete (50%)" in screening_footer(written, tmp_path)

    # the frozen splits' bands carry the model, the spread and the share
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dataset"))
    try:
        from freeze_splits import bands_from_screening
    finally:
        sys.path.pop(0)
    bands = bands_from_screening(written, "test")
    assert bands["model"] == "scripted-spread" and bands["share_all_equal"] == 0.5
    assert bands["tasks"]["tiny-flat"]["all_equal"] is True and bands["tasks"]["tiny-spread"]["band"] == "inside"
    assert bands["tasks"]["tiny-spread"]["reward_std"] == pytest.approx(s["reward_std"])
