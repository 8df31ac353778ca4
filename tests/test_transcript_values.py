"""Transcripts and Harbor trials turn run records into JSON values: binary task files included."""

from __future__ import annotations

import enum
import gzip
import json

from terminal_agent.rollout.transcripts import to_jsonable
from terminal_agent.tasks.model import Task


def _task_with_archive() -> Task:
    return Task(task_id="archive-task", instruction="Unpack /app/data.gz.\n", dockerfile="FROM scratch\n",
                files={"data.gz": gzip.compress(b"payload"), "notes.txt": "plain\n"},
                test_source="def test_ok():\n    assert True\n", test_weights={"test_ok": 1.0})


def test_a_task_with_a_gzip_file_becomes_json():
    # a gzip stream starts 0x1f 0x8b: pydantic's JSON mode raises UnicodeDecodeError on it. A local training run
    # on the H200 stopped there when its trial writer met such a task (2026-12-04).
    task = _task_with_archive()
    value = to_jsonable({"trajectory": {"task": task}})
    text = json.dumps(value)
    files = value["trajectory"]["task"]["files"]
    assert files["notes.txt"] == "plain\n"
    assert files["data.gz"].startswith("\x1f\ufffd")  # decoded with replacement, not dropped
    assert json.loads(text)["trajectory"]["task"]["task_id"] == "archive-task"


def test_text_only_models_keep_their_json_mode_values():
    class Colour(enum.Enum):
        RED = "red"

    task = Task(task_id="plain", instruction="x\n", dockerfile="FROM scratch\n", files={"a.txt": "a\n"},
                test_source="def test_ok():\n    assert True\n", test_weights={"test_ok": 1.0})
    assert to_jsonable(task) == to_jsonable(task.model_dump(mode="json"))
    assert to_jsonable({"c": Colour.RED}) == {"c": "red"}
