"""`terminal-agent tasks inspect`: what was read, which defaults apply, what is kept, what is refused."""

from __future__ import annotations

import json
import shutil

import pytest
from task_builders import DATA, rich_task
from typer.testing import CliRunner

from terminal_agent.cli import app
from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.harbor.format import write_harbor_task
from terminal_agent.tasks.harbor.task_toml import SettingStatus
from terminal_agent.tasks.inspection import inspect_tasks

HARBOR = DATA / "harbor_tasks"


def keys(inspection, status):
    return {setting.key for setting in inspection.of(status)}


def refused_copy(tmp_path, name="gpu-task"):
    """A copy of a fixture that asks for a GPU and a multi-step run: two refusals."""
    task_dir = tmp_path / name
    shutil.copytree(HARBOR / "prebuilt-image", task_dir)
    text = (task_dir / "task.toml").read_text().replace("[environment]", "[environment]\ngpus = 2")
    (task_dir / "task.toml").write_text(text + '\n[[steps]]\nname = "first"\n')
    return task_dir


def test_a_harbor_task_reports_mapped_defaults_kept_and_nothing_refused():
    report = inspect_tasks(HARBOR / "csv-report-1.0")
    assert report.ok and len(report.tasks) == 1
    (task,) = report.tasks
    assert task.task_id == "csv-report-1.0" and task.format == "harbor" and not task.written_here
    assert {"environment.memory", "environment.cpus", "environment.docker_image", "verifier.timeout_sec",
            "agent.timeout_sec", "environment.build_timeout_sec"} <= keys(task, SettingStatus.MAPPED)
    assert "environment.network_mode" in keys(task, SettingStatus.DEFAULT)
    assert {"version", "metadata.author_name"} <= keys(task, SettingStatus.KEPT)
    assert "environment.storage" in keys(task, SettingStatus.MAPPED)
    assert task.of(SettingStatus.REFUSED) == []
    memory = next(s for s in task.settings if s.key == "environment.memory")
    assert (memory.value, memory.field, memory.task_value) == ("2G", "limits.memory_mb", 2048)
    assert task.summary["grading"] == "harbor" and task.summary["limits"]["network"] is True


def test_defaults_are_listed_when_the_task_toml_says_little():
    (task,) = inspect_tasks(HARBOR / "prebuilt-image").tasks
    defaults = {s.key: s.task_value for s in task.of(SettingStatus.DEFAULT)}
    # no schema_version (Harbor 0.25 reads it as 1.4): an unnamed cpus stays unset (no limit), as Harbor's own
    assert defaults == {"environment.cpus": None, "environment.storage_mb": None, "environment.build_timeout_sec": 600.0,
                        "agent.timeout_sec": 600.0, "verifier.timeout_sec": 600.0}
    assert task.summary["limits"]["cpus"] is None


def test_every_refusal_of_a_task_is_listed_and_the_others_still_read(tmp_path):
    refused_copy(tmp_path)
    shutil.copytree(HARBOR / "sum-numbers", tmp_path / "sum-numbers")
    report = inspect_tasks(tmp_path)
    assert not report.ok
    by_name = {task.location.rsplit("/", 1)[-1]: task for task in report.tasks}
    bad, good = by_name["gpu-task"], by_name["sum-numbers"]
    assert keys(bad, SettingStatus.REFUSED) == {"environment.gpus", "steps"}
    assert bad.error_field == "environment.gpus" and bad.task_id is None and "GPU" in bad.error
    assert good.ok and good.task_id == "sum-numbers"
    assert keys(bad, SettingStatus.MAPPED) >= {"environment.docker_image", "environment.memory_mb"}


def test_a_task_written_here_is_marked_and_other_formats_get_a_summary(tmp_path):
    write_harbor_task(rich_task(), tmp_path / "ours")
    (task,) = inspect_tasks(tmp_path / "ours" / "rich.task_1").tasks
    assert task.written_here and task.ok and task.summary["grading"] == "weighted_pytest"
    (tb,) = inspect_tasks(DATA / "tb_tasks" / "greet-file").tasks
    assert tb.format == "tb" and tb.ok and tb.summary["tests"] >= 1
    # its docker-compose.yaml (one service built from the task folder) is the one set of settings it has
    assert [(s.key, s.task_value) for s in tb.settings] == [("docker-compose.yaml:services.client.build", "Dockerfile")]
    csv = inspect_tasks(DATA / "bad_rows.csv")
    assert {task.format for task in csv.tasks} == {"csv"} and not csv.ok
    assert any(task.ok for task in csv.tasks) and any(task.error for task in csv.tasks)


def test_a_symlinked_task_folder_in_a_collection_is_refused_unread(tmp_path):
    outside = tmp_path / "outside"
    shutil.copytree(HARBOR / "sum-numbers", outside / "sum-numbers")
    collection = tmp_path / "collection"
    shutil.copytree(HARBOR / "prebuilt-image", collection / "prebuilt-image")
    (collection / "linked").symlink_to(outside / "sum-numbers", target_is_directory=True)
    report = inspect_tasks(collection)
    assert not report.ok
    linked = next(task for task in report.tasks if task.location.endswith("linked"))
    assert "symlink" in linked.error and linked.settings == []


def test_a_missing_source_raises():
    with pytest.raises(TaskFormatError):
        inspect_tasks(DATA / "no-such-thing")


def test_cli_renders_the_report_and_exits_by_refusals(tmp_path):
    runner = CliRunner()
    good = runner.invoke(app, ["tasks", "inspect", str(HARBOR / "separate-verifier-1.1")])
    assert good.exit_code == 0, good.output
    assert "verifier.environment_mode" in good.output and "mapped" in good.output and "kept" in good.output
    bad = runner.invoke(app, ["tasks", "inspect", str(refused_copy(tmp_path))])
    assert bad.exit_code == 1
    assert "environment.gpus" in bad.output and "refused" in bad.output
    missing = runner.invoke(app, ["tasks", "inspect", str(tmp_path / "nothing")])
    assert missing.exit_code == 2


def test_cli_json_is_machine_readable(tmp_path):
    refused_copy(tmp_path)
    shutil.copytree(HARBOR / "csv-report-1.0", tmp_path / "csv-report-1.0")
    result = CliRunner().invoke(app, ["tasks", "inspect", str(tmp_path), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False and len(data["tasks"]) == 2
    tasks = {task["location"].rsplit("/", 1)[-1]: task for task in data["tasks"]}
    assert [entry["key"] for entry in tasks["gpu-task"]["refused"]] == ["environment.gpus", "steps"]
    memory = next(e for e in tasks["csv-report-1.0"]["mapped"] if e["key"] == "environment.memory")
    assert memory["task_value"] == 2048 and memory["value"] == "2G"
    assert {e["key"] for e in tasks["csv-report-1.0"]["kept"]} >= {"version"}
    storage = next(e for e in tasks["csv-report-1.0"]["mapped"] if e["key"] == "environment.storage")
    assert storage["task_value"] == 10240 and storage["value"] == "10G"
