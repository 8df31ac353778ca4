"""The cheap-trick audit (``terminal-agent tasks audit``) and the review fixes of issue 36.

Fast checks (no container): every trick builds a script that bash parses for every shipped task; the skill-twin
check sees the review's twins and none in today's splits; no git task trusts a file in the image; the two rewrite
bypasses ship as negative solutions. In containers: each named review finding replayed against today's tasks (each
of these episodes scored above its bound on the tasks as they were), and the audit of a rotating sample of the
shipped corpus (two tasks a day) finds no trick that beats a task.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from terminal_agent.task_quality.audit import TrickOutcome, audit_report, audit_tasks
from terminal_agent.task_quality.cheap_tricks import CHEAP_TRICKS, builds_native_program
from terminal_agent.task_quality.skill_twins import skill_signature, skill_twins
from terminal_agent.task_quality.splits import is_marked_held_out
from terminal_agent.task_quality.validation import negative_replies, run_scripted_episodes, solution_script_replies
from terminal_agent.tasks.csv.format import read_tasks_csv
from terminal_agent.tasks.families import FAMILIES, generate_instances, get_family
from terminal_agent.tasks.model import Task

ROOT = Path(__file__).resolve().parents[1]
AUDIT_SAMPLE_SIZE = 2
SLOW_CATEGORIES = {"performance", "build-repair", "packaging", "services"}
"""Left out of CI's rotating audit sample: their timed tests and builds make one trick episode take minutes."""


def _tasks() -> list[Task]:
    return read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks


def _task(task_id: str) -> Task:
    return next(task for task in _tasks() if task.task_id == task_id)


def _split_members() -> tuple[list[Task], list[Task]]:
    tasks = _tasks()
    held = [t for t in tasks if is_marked_held_out(t)]
    train = [t for t in tasks if not is_marked_held_out(t)]
    for name in FAMILIES:
        family = get_family(name)
        if family.held_out_family:
            held += generate_instances(name, 10, 0, split="held_out", difficulties=list(family.difficulties))
        else:
            train += generate_instances(name, 20, 0, split="train", difficulties=list(family.difficulties))
    return held, train


# --- fast ---------------------------------------------------------------------------------------------------------
def test_every_trick_builds_a_script_bash_parses_for_every_shipped_task():
    built = 0
    for task in _tasks():
        for name in CHEAP_TRICKS.names():
            script = CHEAP_TRICKS.get(name).build(task)
            if script is None:
                continue
            built += 1
            check = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, timeout=10)
            assert check.returncode == 0, (task.task_id, name, check.stderr)
    assert built > 300


def test_the_skill_twin_check_sees_the_reviews_twins_and_none_in_todays_splits():
    held, train = _split_members()
    assert skill_twins(held, train) == []
    base = held[0]
    old_deleted_file = ("#!/bin/bash\nset -e\ncd /app/repo\ngone=$(git rev-list -n 1 HEAD -- docs/deploy.md)\n"
                        "git checkout \"$gone^\" -- docs/deploy.md\ngit commit -q -m 'Restore docs/deploy.md'\n")
    old_lost_branch = ("#!/bin/bash\nset -e\ncd /app/repo\ntip=$(git log -g --format='%H %s' HEAD | grep ' deploy: step 2 "
                       "(#501)$' | head -n 1 | cut -d' ' -f1)\ngit branch feature/deploy \"$tip\"\n")
    olds = [Task.model_validate({**base.model_dump(), "task_id": name, "solution": solution})
            for name, solution in (("old-deleted-file", old_deleted_file), ("old-lost-branch", old_lost_branch))]
    found = {(twin.held_out, twin.train) for twin in skill_twins(olds, train)}
    assert ("old-deleted-file", "git-restore-last-good-file") in found
    assert ("old-lost-branch", "git-recover-reset-commits") in found
    assert skill_signature(olds[0]).output_kind == "repository"


def test_the_held_out_families_have_no_key_the_review_called_a_twin():
    assert not {"deleted-file", "lost-branch"} & set(get_family("git-recover").keys)
    assert "dedupe" not in get_family("shell-script").keys


def test_no_git_task_reads_its_expected_hashes_from_the_image():
    git_tasks = [task for task in _tasks() if task.category == "git"]
    assert len(git_tasks) == 7
    for task in git_tasks:
        assert "/root/.corpus" not in task.test_source + task.dockerfile, task.task_id
    uses = [task for task in git_tasks if "recorded(" in task.test_source]
    assert len(uses) == 7 and all("\nRECORDED = {" in task.test_source for task in uses)
    assert sum("\nRECORDED = {'" in task.test_source for task in uses) >= 5


def test_the_rewrite_bypasses_ship_as_negative_solutions_worth_nothing():
    for task_id in ("speed-c-uniqcount", "install-wordfreq-release"):
        negatives = {n.name: n for n in _task(task_id).negative_solutions}
        assert negatives["python-rewrite"].max_score == 0.0, task_id


def test_format_only_tests_carry_no_weight_in_the_named_families():
    format_only = {"test_report_has_the_fields", "test_query_returns_the_columns", "test_every_service_is_there",
                   "test_answer_has_both_fields", "test_answer_is_a_commit", "test_answer_is_a_failing_commit",
                   "test_sample_output"}
    for name in ("log-forensics", "sqlite-query", "config-migrate", "git-recover", "shell-script"):
        family = get_family(name)
        for key in family.keys:
            task = family.instance(key, family.difficulties[-1], 0)
            assert not format_only & set(task.test_weights), (name, key)


def test_the_standin_rewrite_leaves_pip_only_tasks_alone():
    """A pip install builds nothing a stand-in replaces, and what it installs outside /app outlived the trick's
    "nothing to do" branch: package-quicknotes-cli scored 1.0 on the reference's own work (a false finding)."""
    standin = CHEAP_TRICKS.get("standin-rewrite").build
    for task_id in ("package-quicknotes-cli", "fix-chronokit-pyproject", "acme-namespace-plugins"):
        assert standin(_task(task_id)) is None, task_id
    for task_id in ("install-wordfreq-release", "speed-c-uniqcount", "fix-subshell-counter"):
        assert standin(_task(task_id)) is not None, task_id
    assert not builds_native_program("#!/bin/bash\n# install it first\n/app/venv/bin/pip install --no-index .\n")
    assert builds_native_program("#!/bin/bash\nmake clean && make\nmake install PREFIX=/app/prefix\n")


def test_the_audit_command_lists_its_tricks():
    result = subprocess.run([sys.executable, "-m", "terminal_agent", "tasks", "audit", "--list-tricks"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert {line.split()[0] for line in result.stdout.splitlines()} == set(CHEAP_TRICKS.names())


# --- in containers ------------------------------------------------------------------------------------------------
HEAD_HASH = """#!/bin/bash
cd /app/repo
head=$(git rev-parse HEAD)
echo "$head" > /app/first_bad.txt
python3 -c 'import json, sys; json.dump({"first_bad": sys.argv[1], "last_good": sys.argv[2], "failing_commits": 1},
    open("/app/bisect.json", "w"))' "$head" "$(git rev-parse HEAD^)"
"""
FORMAT_ONLY = {
    "log-forensics": 'echo \'{"count": 0, "first": "", "last": "", "top_host": ""}\' > /app/report.json\n',
    "sqlite-query": "echo 'SELECT 1, 2, 3, 4, 5, 6;' > /app/query.sql\n",
    "config-migrate": None,  # built per instance: every service, no keys
}
SQLITE_MERGE_ONLY = """#!/bin/bash
python3 - <<'PY'
import sqlite3
con = sqlite3.connect("/app/customers.sqlite")
with con:
    groups = {}
    for cid, email, created in con.execute("SELECT id, email, created_at FROM customers").fetchall():
        groups.setdefault(email.strip().lower(), []).append((created, cid))
    for email, members in groups.items():
        members.sort()
        keep = members[0][1]
        for _, cid in members[1:]:
            con.execute("UPDATE orders SET customer_id = ? WHERE customer_id = ?", (keep, cid))
            con.execute("DELETE FROM customers WHERE id = ?", (cid,))
        con.execute("UPDATE customers SET email = ? WHERE id = ?", (email, keep))
PY
"""


def _config_migrate_format_only(task: Task) -> str:
    output = task.metadata["outputs"][0]
    services = sorted({path.split("/")[-1].rsplit(".", 1)[0] for path in task.files if "/" in path})
    return f"python3 -c 'import json, sys; json.dump({{s: {{}} for s in sys.argv[1:]}}, open(\"{output}\", \"w\"))' " \
           + " ".join(services) + "\n"


@pytest.mark.docker
def test_the_reviews_findings_no_longer_pay_in_containers():
    """Each episode here earned its noted score on the tasks as they were; on today's tasks each earns nothing,
    except the partial repair of sqlite-repair-duplicates, which now keeps its credit."""
    episodes, expected = [], {}

    def add(task: Task, attempt: int, script: str, check) -> None:
        episodes.append((task, attempt, solution_script_replies(task, script)))
        expected[(task.task_id, attempt)] = check

    git = get_family("git-recover")
    for attempt, difficulty in enumerate(("easy", "medium")):  # old: 0.5 (the HEAD hash is a failing commit)
        add(git.instance("first-bad-commit", difficulty, 4), attempt, HEAD_HASH, lambda score: score == 0.0)
    for name in ("log-forensics", "sqlite-query", "config-migrate"):  # old: about 0.1 for the format alone
        family = get_family(name)
        task = family.instance(family.split_keys("train")[0], "easy", 4)
        script = FORMAT_ONLY[name] or _config_migrate_format_only(task)
        add(task, 0, "#!/bin/bash\n" + script, lambda score: score == 0.0)
    repair = _task("sqlite-repair-duplicates")  # old: 0 (the guard checked the final total)
    add(repair, 0, SQLITE_MERGE_ONLY, lambda score: 0.1 < score < 1.0)  # the survivors test: 1.5 of 8.5
    results = run_scripted_episodes("review", episodes, max_steps=2, concurrency=3)
    for key, check in expected.items():
        trial = results[key]
        assert trial.scored, (key, trial.error)
        assert check(trial.reward), (key, trial.reward, [t.name for t in trial.tests if t.passed])


@pytest.mark.docker
@pytest.mark.slow
def test_the_python_rewrites_earn_nothing_in_containers():
    """The negative solutions of the two rewrite bypasses (1.0 each on the tasks as they were) score 0."""
    tasks = [_task("speed-c-uniqcount"), _task("install-wordfreq-release")]
    episodes = [(task, 0, negative_replies(task, task.negative_solutions[0])) for task in tasks]
    results = run_scripted_episodes("negative", episodes, max_steps=2, concurrency=2)
    for task in tasks:
        trial = results[(task.task_id, 0)]
        assert trial.scored and trial.reward == 0.0, (task.task_id, trial.reward, trial.error)


def _rotating_audit_sample(tasks: list[Task]) -> list[Task]:
    """AUDIT_SAMPLE_SIZE quick tasks, a different slice every day."""
    quick = [task for task in tasks if task.category not in SLOW_CATEGORIES]
    start = (dt.date.today().toordinal() * AUDIT_SAMPLE_SIZE) % len(quick)
    return [quick[(start + index) % len(quick)] for index in range(AUDIT_SAMPLE_SIZE)]


@pytest.mark.docker
def test_the_audit_of_a_rotating_sample_finds_no_trick_that_beats_a_task(tmp_path):
    sample = _rotating_audit_sample(_tasks())
    audits = audit_tasks(sample, concurrency=3, output_dir=tmp_path)
    report = audit_report(audits, source="rotating sample", threshold=0.05)
    json.dumps(report)  # the report is JSON
    errors = [(a.task_id, r.trick, r.error) for a in audits for r in a.results
              if r.outcome is TrickOutcome.INFRASTRUCTURE_ERROR]
    assert not errors, errors
    assert report["n_beaten"] == 0, report["beaten"]
    ran = [r for a in audits for r in a.results if r.outcome is not TrickOutcome.NOT_APPLICABLE]
    assert len(ran) >= 4 and all(r.score is not None for r in ran)
