"""Task validation in bwrap from an image export: the library argument, `tasks validate --sandbox`, and the
device runbook's `validate_export.py` (does a held-out zero rest on tasks the sandboxes can solve?)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from terminal_agent.cli import app
from terminal_agent.tasks.loading import load_tasks

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "dataset" / "latest_verified.csv"
SCRIPT = ROOT / "training_scripts" / "device_run" / "validate_export.py"


def _script():
    spec = importlib.util.spec_from_file_location("validate_export", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_cli(*args: str):
    return CliRunner().invoke(app, ["tasks", "validate", str(SHIPPED), *args], env={"COLUMNS": "250"})


def test_validate_refuses_an_images_dir_without_bwrap_and_an_unknown_backend(tmp_path):
    wrong_pair = _run_cli("--images-dir", str(tmp_path))
    assert wrong_pair.exit_code == 2 and "--sandbox bwrap" in wrong_pair.output
    unknown = _run_cli("--sandbox", "nope")
    assert unknown.exit_code == 2 and "unknown sandbox backend 'nope'" in unknown.output


def test_validate_with_bwrap_runs_its_episodes_in_the_named_export(tmp_path):
    """With an empty export, every episode fails on the export (named), so no task is called valid."""
    from tests.bwrap_support import require_bwrap

    require_bwrap()
    task_id = load_tasks(SHIPPED)[0].task_id
    empty = tmp_path / "empty-export"
    empty.mkdir()
    result = _run_cli("--task", task_id, "--sandbox", "bwrap", "--images-dir", str(empty), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    manifest = json.loads((tmp_path / "out" / "validation.json").read_text())
    assert "no image export" in json.dumps(manifest) and str(empty) in json.dumps(manifest)


def test_validate_export_names_a_bad_bundle_and_an_export_without_split_tasks(tmp_path, capsys):
    script = _script()
    export = tmp_path / "export"
    export.mkdir()
    (export / "manifest.json").write_text(json.dumps({"tasks": {}, "images": {}}))
    assert script.main(["--export", str(export)]) == 2
    assert "no held_out task" in capsys.readouterr().err
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"tasks": 3}))
    assert script.main(["--export", str(export), "--bundle", str(bundle)]) == 2
    assert "dropped_tasks_big_layer" in capsys.readouterr().err
    bundle.write_text("{not json")
    assert script.main(["--export", str(export), "--bundle", str(bundle)]) == 2
    assert "not a readable bundle.json" in capsys.readouterr().err


@pytest.mark.docker
def test_validation_in_bwrap_passes_a_reference_solution_and_catches_a_wrong_one(tmp_path):
    from terminal_agent.task_quality.validation import validate_tasks
    from tests.bwrap_support import bwrap_config

    task = load_tasks(SHIPPED)[0]
    wrong = task.model_copy(update={"task_id": "wrong-solution-bwrap", "solution": "#!/bin/bash\ntrue\n"})
    sandbox = bwrap_config([task, wrong])
    by_id = {v.task_id: v for v in validate_tasks([task, wrong], concurrency=2, output_dir=tmp_path, sandbox=sandbox)}
    assert by_id[task.task_id].ok, by_id[task.task_id].problems + by_id[task.task_id].infrastructure_errors
    assert by_id[task.task_id].oracle_score == 1.0 and by_id[task.task_id].noop_score <= 0.05
    assert not by_id[wrong.task_id].ok and by_id[wrong.task_id].oracle_score < 1.0
    for kind in ("noop", "oracle"):  # the probes ran in the export's sandboxes, not in Docker
        assert json.loads((tmp_path / kind / "results.json").read_text())["run"]["sandbox_backend"] == "bwrap"
    transcript = next((tmp_path / "oracle").rglob("attempt-0.json"))
    assert json.loads(transcript.read_text())["episode"]["outcome"]["scored"] is True
