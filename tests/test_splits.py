"""Frozen splits: the committed dataset/splits/splits.json resolves to tasks; held-out shares nothing with training
(no task, no family, no near-twin); every shipped task and every family instance is pinned by its content hashes,
so an edited task, an edited file or a changed generator is refused until the splits are refrozen on purpose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from terminal_agent.errors import ConfigError
from terminal_agent.task_quality.similarity import NEAR_TWIN, SimilarityIndex, closest_pairs
from terminal_agent.task_quality.splits import (
    canonical_sha256,
    freeze_splits,
    is_held_out_family,
    read_splits,
    resolve_split,
    write_splits,
)
from terminal_agent.tasks.csv.format import read_tasks_csv

ROOT = Path(__file__).resolve().parents[1]
SPLITS = ROOT / "dataset" / "splits" / "splits.json"


@pytest.fixture(scope="module")
def tasks():
    return read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks


@pytest.fixture(scope="module")
def document():
    return read_splits(SPLITS)


def _resigned(document):
    document["content_sha256"] = canonical_sha256({k: v for k, v in document.items() if k != "content_sha256"})
    return document


def test_committed_splits_resolve_and_share_nothing(tasks, document):
    resolved = {name: resolve_split(document, name, tasks) for name in document["splits"]}
    ids = {name: {t.task_id for t in chosen} for name, chosen in resolved.items()}
    assert not ids["train"] & ids["held_out"] and not ids["train"] & ids["held_out_keys"]
    assert {t.task_id for t in tasks} <= ids["train"] | ids["held_out"]  # every shipped task is in one split
    held_families = {t.metadata["family"] for t in resolved["held_out"] if "family" in t.metadata}
    train_families = {t.metadata["family"] for t in resolved["train"] if "family" in t.metadata}
    assert len(held_families) >= 3 and len(held_families | train_families) >= 15
    assert not held_families & train_families  # whole families are held out
    assert all(is_held_out_family(name) for name in held_families)
    for family in train_families:
        train_keys = {t.metadata["family_key"] for t in resolved["train"] if t.metadata.get("family") == family}
        other_keys = {t.metadata["family_key"] for t in resolved["held_out_keys"] if t.metadata.get("family") == family}
        assert not train_keys & other_keys, family
    hand_written = [t for t in resolved["held_out"] if "family" not in t.metadata]
    assert len(hand_written) >= 24
    for name in ("train", "held_out"):
        assert {"easy", "medium"} <= {t.difficulty for t in resolved[name] if "family" not in t.metadata}, name
    for name in ("train", "held_out"):  # issue 36: the Terminal-Bench-2-hard tasks, in both splits
        assert any(t.difficulty == "hard" for t in resolved[name] if "family" not in t.metadata), name


def test_committed_splits_are_current(tasks, document):
    """Refreezing with the recorded settings gives the committed file: a task or generator change fails here
    until python dataset/freeze_splits.py is run on purpose."""
    train_families = document["splits"]["train"]["families"]
    held_families = document["splits"]["held_out"]["families"]
    family_seeds = {name: spec["seed"] for part in document["splits"].values()
                    for name, spec in part["families"].items() if spec["seed"] != document["seed"]}
    again = freeze_splits(
        tasks, seed=document["seed"], family_count=next(iter(train_families.values()))["count"],
        held_out_family_count=next(iter(held_families.values()))["count"], bands=document.get("bands"),
        family_seeds=family_seeds,
    )
    assert again == document, "run python dataset/freeze_splits.py --keep-bands (a task or family changed)"


def test_no_held_out_task_is_a_near_twin_and_the_closest_pairs_are_recorded(document):
    check = document["near_twin_check"]
    assert check["threshold"] == NEAR_TWIN and len(check["closest"]) >= 10
    assert all(pair["score"] < NEAR_TWIN for pair in check["closest"])
    assert check["closest"] == sorted(check["closest"], key=lambda pair: -pair["score"])


def test_a_changed_task_an_edited_file_and_a_changed_generator_are_refused(tasks, document, tmp_path):
    held_id = next(iter(document["splits"]["held_out"]["task_ids"]))
    changed = [t.model_copy(update={"instruction": t.instruction + " (edited)"}) if t.task_id == held_id else t
               for t in tasks]
    with pytest.raises(ConfigError, match=f"{held_id}: changed instruction"):
        resolve_split(document, "held_out", changed)
    with pytest.raises(ConfigError, match="unknown split"):
        resolve_split(document, "test", tasks)

    family, spec = next(iter(document["splits"]["train"]["families"].items()))
    regenerated = json.loads(json.dumps(document))
    pinned = regenerated["splits"]["train"]["families"][family]["instances"]
    first = next(iter(pinned))
    pinned[first] = {**pinned[first], "tests": "0" * 64}  # what a changed generator looks like to the pin
    with pytest.raises(ConfigError, match=f"family {family}: 1 instance\\(s\\) changed.*refreeze"):
        resolve_split(_resigned(regenerated), "train", tasks)

    path = write_splits(document, tmp_path / "splits.json")
    assert read_splits(path) == document
    edited = json.loads(path.read_text())
    edited["splits"]["train"]["families"][family]["seed"] = 99
    path.write_text(json.dumps(edited))
    with pytest.raises(ConfigError, match="content_sha256"):
        read_splits(path)


def test_freezing_refuses_a_held_out_near_twin_and_hard_tasks_in_one_split_only(tasks):
    train_task = next(t for t in tasks if t.metadata.get("corpus_split") != "held_out" and t.difficulty == "medium")
    twin = train_task.model_copy(update={"task_id": train_task.task_id + "-twin",
                                         "metadata": {**train_task.metadata, "corpus_split": "held_out"}})
    with pytest.raises(ConfigError, match=f"near-twins.*{twin.task_id} ~ {train_task.task_id}"):
        freeze_splits([*tasks, twin], family_count=2, held_out_family_count=2)
    # the held-out hard tasks relabelled: the hard ones sit in the train split only
    train_only_hard = [t.model_copy(update={"difficulty": "medium"})
                       if t.difficulty == "hard" and t.metadata.get("corpus_split") == "held_out" else t for t in tasks]
    with pytest.raises(ConfigError, match="split 'held_out' holds no hard hand-written task"):
        freeze_splits(train_only_hard, family_count=2, held_out_family_count=2)


def test_similarity_is_one_for_a_copy_zero_for_unrelated_text_and_skips_parts_both_lack(tasks):
    a, b = tasks[0], tasks[1]
    copy = a.model_copy(update={"task_id": "copy-of-a"})
    unrelated = a.model_copy(update={"task_id": "unrelated", "instruction": "zebra quokka marmot",
                                     "files": {}, "solution": "xylophone\n", "solution_files": {}})
    index = SimilarityIndex([a, b, copy, unrelated])
    assert index.similarity(a.task_id, "copy-of-a").score == pytest.approx(1.0)
    alone = index.similarity(a.task_id, "unrelated")
    assert alone.score < 0.05
    bare = a.model_copy(update={"task_id": "bare", "files": {}})
    bare_twin = bare.model_copy(update={"task_id": "bare-twin"})
    pair = SimilarityIndex([bare, bare_twin, b]).similarity("bare", "bare-twin")
    assert pair.parts["files"] is None and pair.score == pytest.approx(1.0)
    best = closest_pairs([copy], [b, a], top=1)
    assert best[0].train == a.task_id


def test_loading_the_shipped_splits_holds_every_task_to_the_no_work_rule(tmp_path):
    from terminal_agent.training.train_splits import frozen_splits

    train, held_out = frozen_splits(SPLITS, ROOT / "dataset" / "latest_verified.csv")
    assert train and held_out
    shipped = tmp_path / "latest_verified.csv"
    shipped.write_bytes((ROOT / "dataset" / "latest_verified.csv").read_bytes())
    manifest = json.loads((ROOT / "dataset" / "validation_manifest.json").read_text())
    paying = next(t.task_id for t in held_out if "family" not in t.metadata)
    manifest["tasks"][paying]["noop_score"] = 0.25  # what a task that pays doing nothing records
    (tmp_path / "validation_manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match=f"{paying}.*no-op"):
        frozen_splits(SPLITS, shipped)
