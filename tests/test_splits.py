"""Frozen splits: the committed dataset/splits/splits.json resolves to tasks, held-out shares nothing
with training (no task, no family key), and any edit of a task or of the file is detected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.task_quality.splits import freeze_splits, read_splits, resolve_split, write_splits
from terminal_agent.tasks.csv_format import read_tasks_csv

ROOT = Path(__file__).resolve().parents[1]
SPLITS = ROOT / "dataset" / "splits" / "splits.json"


@pytest.fixture(scope="module")
def tasks():
    return read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks


def test_committed_splits_resolve_and_do_not_overlap(tasks):
    document = read_splits(SPLITS)
    train = resolve_split(document, "train", tasks)
    held_out = resolve_split(document, "held_out", tasks)
    assert not {t.task_id for t in train} & {t.task_id for t in held_out}
    shipped = {t.task_id for t in tasks}
    assert {t.task_id for t in train + held_out} >= shipped  # every shipped task is in one split
    for family in document["splits"]["train"]["families"]:
        train_keys = {t.metadata["family_key"] for t in train if t.metadata.get("family") == family}
        held_keys = {t.metadata["family_key"] for t in held_out if t.metadata.get("family") == family}
        assert train_keys and held_keys and not train_keys & held_keys, family


def test_committed_splits_are_current(tasks):
    """Re-freezing with the recorded settings gives the committed splits (bands aside)."""
    document = read_splits(SPLITS)
    again = freeze_splits(tasks, held_out_fraction=document["held_out_fraction"], seed=document["seed"],
                          family_count=document["splits"]["train"]["families"]["count-matches"]["count"],
                          bands=document.get("bands"))
    assert again == document, "run python dataset/freeze_splits.py (a task or family changed)"


def test_a_changed_task_or_an_edited_file_is_refused(tasks, tmp_path):
    document = freeze_splits(tasks[:10], seed=1, family_count=4)
    path = write_splits(document, tmp_path / "splits.json")
    assert read_splits(path) == document
    (held_id,) = list(document["splits"]["held_out"]["task_ids"])[:1]
    changed = [t.model_copy(update={"instruction": t.instruction + " (edited)"}) if t.task_id == held_id else t for t in tasks]
    with pytest.raises(ConfigError, match=f"{held_id}: changed instruction"):
        resolve_split(document, "held_out", changed)
    with pytest.raises(ConfigError, match="unknown split"):
        resolve_split(document, "test", tasks)
    edited = json.loads(path.read_text())
    edited["splits"]["train"]["families"]["top-words"]["seed"] = 99
    path.write_text(json.dumps(edited))
    with pytest.raises(ConfigError, match="content_sha256"):
        read_splits(path)
