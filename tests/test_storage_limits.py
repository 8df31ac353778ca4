"""A task's disk quota (``limits.storage_mb``; Harbor ``storage_mb`` or the deprecated ``storage = "10G"``): mapped,
round-tripping through every format, absent from the hashes and files of tasks without one; the host policy
(``sandbox.storage``) as a typed setting; the measuring parts on a real directory. The sandboxes: see
tests/sandbox/test_storage_quota_sandboxes.py."""

from __future__ import annotations

import os
import subprocess
import time
import tomllib

import pytest
import yaml
from task_builders import rich_task

from terminal_agent.errors import StorageQuotaRefusedError
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.storage_quota import StorageWatch, directory_disk_bytes, naming_task, storage_enforcement
from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.harbor.format import read_harbor_task, write_harbor_task
from terminal_agent.tasks.harbor.task_toml import SettingStatus, interpret_task_toml
from terminal_agent.tasks.model import TaskLimits
from terminal_agent.tasks.parquet.rows import read_parquet, task_from_flat_dict, task_to_flat_dict, write_parquet
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task


def _every_format(task, tmp_path):
    """``task`` read back from CSV, a flat parquet dict, a parquet file, terminal-bench and Harbor."""
    return {
        "csv": read_tasks_csv(write_tasks_csv([task], tmp_path / "t.csv")).tasks[0],
        "flat": task_from_flat_dict(task_to_flat_dict(task)),
        "parquet": read_parquet(write_parquet([task], tmp_path / "t.parquet"))[0],
        "terminal-bench": read_tb_task(write_tb_task(task, tmp_path / "tb")),
        "harbor": read_harbor_task(write_harbor_task(task, tmp_path / "harbor")),
    }


@pytest.mark.parametrize("storage_mb", [20, 10240, None])
def test_a_disk_quota_round_trips_through_every_format(tmp_path, storage_mb):
    task = rich_task(limits=TaskLimits(storage_mb=storage_mb, cpus=None, memory_mb=None))
    for name, again in _every_format(task, tmp_path).items():
        assert again == task, name
        assert again.limits.storage_mb == storage_mb, name
    environment = tomllib.loads((tmp_path / "harbor" / task.task_id / "task.toml").read_text())["environment"]
    assert environment.get("storage_mb") == storage_mb  # Harbor's own key, read by stock Harbor


def test_a_task_without_a_quota_is_written_and_hashed_as_before_the_field_existed(tmp_path):
    task = rich_task()
    assert task.limits.storage_mb is None  # the default: no quota
    with_quota = task.model_copy(update={"limits": task.limits.model_copy(update={"storage_mb": 20})})
    # limits are in no content hash (pinned validation manifests) and the image does not depend on them
    assert task.content_hashes() == with_quota.content_hashes()
    assert "storage_mb" not in (write_tb_task(task, tmp_path / "tb") / "task.yaml").read_text()
    harbor_toml = (write_harbor_task(task, tmp_path / "harbor") / "task.toml").read_text()
    assert "storage" not in harbor_toml  # neither in [environment] nor in our table's limits / unset_limits
    flat = task_to_flat_dict(task)
    assert flat["limit_storage_mb"] == 0 and "limits" not in flat  # 0: none; one struct schema in every row
    assert "storage_mb" not in write_tasks_csv([task], tmp_path / "t.csv").read_text()


@pytest.mark.parametrize(("environment", "expected"), [
    ('storage = "10G"', 10240),  # the Terminal-Bench 2 spelling
    ("storage_mb = 20", 20),
    ('storage = "20M"\nstorage_mb = 20', 20),
    ("", None),
])
def test_harbor_storage_is_mapped_onto_the_limit(environment, expected):
    reading = interpret_task_toml(tomllib.loads(f'version = "1.0"\n[environment]\n{environment}\n'))
    assert not reading.refused
    assert reading.fields["limits"]["storage_mb"] == expected
    settings = [s for s in reading.settings if s.key.startswith("environment.storage")]
    assert settings and all(s.field == "limits.storage_mb" for s in settings)
    wanted = SettingStatus.MAPPED if environment else SettingStatus.DEFAULT
    assert all(s.status is wanted for s in settings)


def test_disagreeing_storage_spellings_are_refused_naming_both():
    reading = interpret_task_toml(tomllib.loads('[environment]\nstorage = "10G"\nstorage_mb = 20\n'))
    (refusal,) = reading.refused
    assert refusal.key.startswith("environment.storage") and "disagree" in refusal.note
    assert "10240" in refusal.note and "20" in refusal.note


def test_a_tb2_task_keeps_its_own_storage_spelling_when_written_back(tmp_path):
    task_dir = tmp_path / "tb2"
    (task_dir / "environment").mkdir(parents=True)
    (task_dir / "tests").mkdir()
    (task_dir / "task.toml").write_text('version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n\n'
                                        '[environment]\nmemory = "2G"\nstorage = "10G"\n')
    (task_dir / "instruction.md").write_text("Write hello to /app/out.txt.\n")
    (task_dir / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    (task_dir / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    task = read_harbor_task(task_dir)
    assert task.limits.storage_mb == 10240
    same = (write_harbor_task(task, tmp_path / "same") / "task.toml").read_text()
    assert 'storage = "10G"' in same and "storage_mb" not in same
    smaller = task.model_copy(update={"limits": task.limits.model_copy(update={"storage_mb": 5120})})
    written = write_harbor_task(smaller, tmp_path / "smaller")
    assert 'storage = "5G"' in (written / "task.toml").read_text()
    assert read_harbor_task(written).limits.storage_mb == 5120
    none = task.model_copy(update={"limits": task.limits.model_copy(update={"storage_mb": None})})
    written = write_harbor_task(none, tmp_path / "none")
    assert "storage" not in tomllib.loads((written / "task.toml").read_text())["environment"]
    assert read_harbor_task(written).limits.storage_mb is None


def test_the_storage_policy_is_a_typed_setting_that_round_trips():
    assert SandboxConfig().storage == "enforce"
    for policy in ("enforce", "refuse", "ignore"):
        config = SandboxConfig.model_validate(yaml.safe_load(yaml.safe_dump(
            SandboxConfig(storage=policy, storage_measure_share=0.25).model_dump())))
        assert (config.storage, config.storage_measure_share) == (policy, 0.25)
    with pytest.raises(ValueError, match="storage"):
        SandboxConfig(storage="quota")
    with pytest.raises(ValueError, match="storage_measure_share"):
        SandboxConfig(storage_measure_share=0)


def test_each_policy_decides_how_a_quota_is_held():
    def plan(quota, policy, kernel):
        return storage_enforcement(quota, policy, kernel=kernel, backend="docker", why_no_kernel="ext4 here")

    assert plan(None, "refuse", False) == "none"  # no quota asked: nothing to refuse
    assert plan(20, "ignore", True) == "none"
    assert plan(20, "enforce", True) == plan(20, "refuse", None) == "kernel"  # None: not known yet, tried
    assert plan(20, "enforce", False) == "measured"
    with pytest.raises(StorageQuotaRefusedError) as info:
        plan(20, "refuse", False)
    assert "storage_mb = 20" in str(info.value) and "ext4 here" in str(info.value) and "'enforce'" in str(info.value)
    named = naming_task(info.value, "fill-disk")
    assert str(named).startswith("task fill-disk: its disk quota")
    assert naming_task(named, "fill-disk") is named


def test_the_writable_layer_is_counted_in_disk_blocks_as_du_counts_it(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data").write_bytes(os.urandom(3 * 1024 * 1024))
    os.link(tmp_path / "sub" / "data", tmp_path / "hardlink")  # counted once
    with open(tmp_path / "sparse", "wb") as sparse:
        sparse.truncate(1024 ** 3)  # 1 GiB apparent, no blocks: no disk taken
    for index in range(200):
        (tmp_path / "sub" / f"f{index}").write_text("x")
    du = int(subprocess.run(["du", "-s", "-B1", str(tmp_path)], capture_output=True, text=True,
                            check=True).stdout.split()[0])
    measured = directory_disk_bytes(str(tmp_path))
    own = os.lstat(tmp_path).st_blocks * 512  # du counts the top directory itself, the walk only what is in it
    assert measured == du - own
    assert 3 * 1024 * 1024 <= measured < 8 * 1024 * 1024
    assert directory_disk_bytes(str(tmp_path / "gone")) == 0


def test_a_watch_spends_at_most_its_share_of_the_wall_clock_measuring():
    calls = []

    def slow_measure():
        calls.append(time.monotonic())
        time.sleep(0.05)
        return 30 * 1024 * 1024, "upperdir"

    watch = StorageWatch(20, slow_measure, share=0.5)
    first = watch.check()
    assert first.exceeded and first.used_bytes == 30 * 1024 * 1024 and first.quota_bytes == 20 * 1024 * 1024
    assert watch.check() is first and len(calls) == 1  # 0.05 s walk at share 0.5: the next waits >= 0.1 s
    time.sleep(0.11)
    assert watch.check() is not first and len(calls) == 2
    assert "30.0 MiB, over the task's disk quota of 20 MiB" in first.describe()
