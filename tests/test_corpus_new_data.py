"""The sqlite, log-forensics and multi-file corpus modules (dataset/corpus/): their tasks' structure, and one task
validated in real containers."""

from __future__ import annotations

import gzip
import io
import sqlite3
import zipfile
from pathlib import Path

import pytest

from terminal_agent.tasks.model import GradingMode
from task_builders import corpus_specs

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("sqlite_data", "log_forensics", "multi_file")


def _specs():
    return corpus_specs(*MODULES)


SPECS = _specs()


def test_counts_and_mix():
    assert len(SPECS) >= 14
    ids = [s.task_id for s in SPECS]
    assert len(ids) == len(set(ids))
    assert {s.difficulty for s in SPECS} <= {"medium", "hard"}
    assert sum(s.harbor for s in SPECS) >= 4
    held = [s for s in SPECS if s.held_out]
    assert 4 <= len(held) <= 6 and {s.difficulty for s in held} == {"medium"}
    binary = [s for s in SPECS if any(isinstance(v, bytes) for v in (*s.files.values(), *s.test_files.values()))]
    assert len(binary) >= 3


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.task_id)
def test_task_structure(spec):
    task = spec.to_task()
    weights = task.test_weights
    assert len(weights) >= 3 and all(w > 0 for w in weights.values())
    assert max(weights.values()) < sum(weights.values()) / 2, "one test holds half the credit or more"
    defined = {line.split("(")[0][4:] for line in task.test_source.splitlines() if line.startswith("def test_")}
    assert set(weights) | set(spec.guards) == defined, "every test is weighted or a guard"
    assert not set(spec.guards) & set(weights), "a guard carries weight"
    assert task.unweighted_tests == []
    assert task.solution.strip() and task.difficulty in ("medium", "hard")
    for path in task.files:
        assert not path.startswith("/") and ".." not in path.split("/")
    if spec.harbor:
        assert task.verifier.mode == GradingMode.HARBOR
        script = task.test_support_files["test.sh"]
        assert "ctrf" in script and all(name in script for name in weights)
    else:
        # the weighted-pytest grader ships test fixtures as text (binary ones travel base64-encoded)
        assert all(isinstance(v, str) for v in task.test_support_files.values())
    assert spec.held_out == (task.metadata.get("corpus_split") == "held_out")


def test_binary_fixtures_are_real(tmp_path):
    by_id = {s.task_id: s for s in SPECS}
    for task_id in ("sqlite-migrate-keep-data", "sqlite-repair-duplicates", "sqlite-view-trigger"):
        spec = by_id[task_id]
        for name, data in spec.files.items():
            if name.endswith((".db", ".sqlite")):
                (tmp_path / "x.db").write_bytes(data)
                con = sqlite3.connect(tmp_path / "x.db")
                assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
                assert con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] >= 2
                con.close()
    logs = by_id["logs-rotated-timeline"].files
    gz = [name for name in logs if name.endswith(".gz")]
    assert len(gz) >= 3 and all(gzip.decompress(logs[name]).decode().strip() for name in gz)
    archive = zipfile.ZipFile(io.BytesIO(by_id["logs-clock-skew-zip"].files["incident.zip"]))
    assert archive.testzip() is None and len([n for n in archive.namelist() if n.endswith(".log")]) >= 3


def test_fixtures_are_deterministic():
    again = _specs_fresh()
    for first, second in zip(SPECS, again):
        assert first.to_task().content_hashes() == second.to_task().content_hashes(), first.task_id


def _specs_fresh():
    return _specs()  # every call loads the modules afresh
