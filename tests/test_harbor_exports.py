"""The corpus's Harbor copies (``dataset/harbor/``, what ``tasks convert --to harbor`` writes) under stock Harbor 0.25:
its linter (``harbor lint --select ALL``) and its own task model (``TaskConfig``) are the reference.

* lint: only the three rules every Terminal-Bench 2 task also triggers fire (unpinned-image: the Dockerfiles name
  ``python:3.11-slim-bookworm`` by tag; root-agent: the agent runs as root here; shared-verifier: the verifier runs
  in the agent's sandbox, as ours does), each once per task;
* TaskConfig reads every task.toml, and where test.sh installs or downloads what it uses (ours install pinned pytest
  when the image has none; the Harbor-mode ones fetch uv) the verifier phase has the network, while the agent's
  phase keeps the task's own setting.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from harbor_reference import harbor, harbor_task_configs
from terminal_agent.tasks.csv.format import read_tasks_csv
from terminal_agent.tasks.harbor.format import read_harbor_task
from terminal_agent.tasks.harbor.task_toml_writer import verifier_installs

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = sorted(path for path in (ROOT / "dataset" / "harbor").iterdir() if (path / "task.toml").is_file())
TB2_RULES = {"unpinned-image", "root-agent", "shared-verifier"}


@pytest.fixture(scope="module")
def configs() -> dict[str, dict]:
    return {Path(path).name: config for path, config in harbor_task_configs(EXPORTS).items()}


def test_harbor_lint_finds_only_what_every_tb2_task_triggers():
    run = harbor("lint", "--select", "ALL", "--json", *map(str, EXPORTS))
    findings = json.loads(run.stdout)
    rules = Counter(finding["rule"] for finding in findings)
    assert set(rules) == TB2_RULES, [f for f in findings if f["rule"] not in TB2_RULES][:5]
    assert all(count == len(EXPORTS) for count in rules.values()), rules


def test_harbors_task_model_reads_every_export(configs):
    shipped = read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks
    assert len(configs) == len(EXPORTS) == len(shipped) >= 124  # every shipped task, the ten hard ones included
    refused = {name: config["error"] for name, config in configs.items() if "error" in config}
    assert not refused, refused


def test_the_verifier_has_the_network_its_test_script_needs(configs):
    needing = 0
    for folder in EXPORTS:
        task, config = read_harbor_task(folder), configs[folder.name]
        agent_public = config["environment"]["network_mode"] == "public"
        verifier_mode = config["verifier"].get("network_mode") or config["environment"]["network_mode"]
        # the agent's phase is what the task says, as our reading of it
        assert agent_public == task.limits.network, folder.name
        if verifier_installs(task):
            needing += 1
            assert verifier_mode == "public", folder.name
    assert needing == len(EXPORTS)  # every weighted test.sh may install pytest; the 15 Harbor-mode ones fetch uv


@pytest.mark.parametrize("schema, harbor_unset", [("1.0", True), ("1.4", True)])
def test_an_unset_cpu_and_memory_is_reported_as_each_schema_sets_it(tmp_path, schema, harbor_unset):
    """Harbor 0.25 leaves cpus and memory_mb unset (no limit) when a task names none; schema 1.0 defaulted them to 1
    CPU and 2048 MiB. The reading says which, and never calls the 1.0 values Harbor's default for a later schema."""
    from terminal_agent.tasks.harbor.task_toml import interpret_task_toml

    folder = tmp_path / "t"
    (folder / "environment").mkdir(parents=True)
    (folder / "task.toml").write_text(f'schema_version = "{schema}"\n\n[environment]\nbuild_timeout_sec = 600.0\n')
    config = harbor_task_configs([folder])[str(folder)]
    assert (config["environment"]["cpus"] is None) is harbor_unset
    reading = interpret_task_toml({"schema_version": schema, "environment": {"build_timeout_sec": 600.0}})
    notes = {s.key: s.note for s in reading.settings}
    if schema == "1.0":
        assert notes["environment.cpus"] == "Harbor's default"
    else:
        assert "leaves it unset (no limit)" in notes["environment.cpus"]
        assert "leaves it unset (no limit)" in notes["environment.memory_mb"]
