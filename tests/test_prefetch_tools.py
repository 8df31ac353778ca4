"""`terminal-agent tasks prefetch-tools`: the verifier tools of Harbor tasks, fetched into a cache before going offline."""

from __future__ import annotations

import json
import os

import pytest
from task_builders import harbor_mode_task, rich_task
from typer.testing import CliRunner

from terminal_agent.cli import app
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.verifier_runtime import ToolUnavailable, fetch_tool, parse_requirement
from terminal_agent.tasks.conversion import write_tasks

TB2_LINE = ("uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 -w iniconfig==2.0.0 pytest "
            "--ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA\n")


def _registry_or_skip(cache_dir) -> None:
    try:
        fetch_tool(parse_requirement("pytest-json-ctrf==0.3.5", "--ctrf"), HarborGradingConfig(tool_cache_dir=str(cache_dir)))
    except ToolUnavailable as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"this host reaches no package registry: {exc}")


def test_prefetch_fills_the_cache_with_what_the_verifiers_name(tmp_path):
    cache = tmp_path / "cache"
    _registry_or_skip(tmp_path / "probe-cache")
    script = "#!/bin/bash\n" + TB2_LINE + "echo 1 > /logs/verifier/reward.txt\n"
    tasks = [
        harbor_mode_task(task_id="needs-tools", test_support_files={"test.sh": script}),
        harbor_mode_task(task_id="needs-nothing"),
        rich_task(),  # weighted pytest: names no tool
    ]
    write_tasks(tasks, tmp_path / "tasks", "harbor")
    runner = CliRunner()
    first = runner.invoke(app, ["tasks", "prefetch-tools", str(tmp_path / "tasks"), "--cache-dir", str(cache), "--json"])
    assert first.exit_code == 0, first.output
    results = {entry["requirement"]: entry for entry in json.loads(first.stdout)}
    # pytest itself is served by the grader's own bundle; the plugin and the extra tool are fetched
    assert {"pytest-json-ctrf==0.3.5", "iniconfig==2.0.0"} <= set(results)
    assert all(entry["error"] is None and entry["wheels"] for entry in results.values()), results
    assert results["iniconfig==2.0.0"]["tasks"] == ["needs-tools"]
    cached = sorted(path.name for path in cache.rglob("*.whl"))
    assert any(name.startswith("iniconfig-2.0.0") for name in cached), cached
    assert any(name.startswith("pytest_json_ctrf-0.3.5") for name in cached), cached


def test_a_tool_that_cannot_be_fetched_fails_the_command_and_names_it(tmp_path):
    script = "#!/bin/bash\nuvx -w no-such-package-terminal-agent==0.0.1 pytest /tests\n"
    write_tasks([harbor_mode_task(task_id="bad-tool", test_support_files={"test.sh": script})], tmp_path / "tasks", "harbor")
    empty = tmp_path / "wheelhouse"
    empty.mkdir()
    result = CliRunner().invoke(app, [
        "tasks", "prefetch-tools", str(tmp_path / "tasks"), "--cache-dir", str(tmp_path / "cache"),
        "--wheelhouse", str(empty), "--json",
    ])
    assert result.exit_code == 1
    (entry,) = [e for e in json.loads(result.stdout) if e["requirement"].startswith("no-such-package")]
    assert entry["error"] and "no-such-package-terminal-agent==0.0.1" in entry["error"] and entry["wheels"] == []
