"""Readers and writers of every task format: lossless round trips, foreign inputs, bad rows, loading."""

from __future__ import annotations

import ast
import csv
import json
import os
import stat
import sys
import tomllib
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from terminal_agent.errors import ConfigError, TaskFormatError
from terminal_agent.tasks.conversion import atomic_output_dir, atomic_output_file, convert_tasks, split_tasks
from terminal_agent.tasks.csv_format import read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.harbor import dump_toml, read_harbor_task, write_harbor_task
from terminal_agent.tasks.loading import detect_source_kind, load_tasks
from terminal_agent.tasks.model import Task, TaskLimits
from terminal_agent.tasks.parquet_rows import (
    read_parquet,
    task_from_flat_dict,
    task_to_flat_dict,
    task_to_row,
    write_parquet,
)
from terminal_agent.tasks.terminal_bench import read_tb_task, write_tb_task

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[1]

RICH_TESTS = '''"""Tests with unicode: ✓ café."""
import json


def test_first():
    assert "naïve" == "naïve"


class TestMore:
    def test_second(self):
        assert json.loads("[1]") == [1]

    def test_third(self):
        assert True
'''


def rich_task(**overrides) -> Task:
    """A task that uses every field: files in subdirs, support files, unicode, CRLF, float weights, all limits."""
    fields = dict(
        task_id="rich.task_1",
        instruction="Fix the script.\n\n  Keep \"quotes\", 'apostrophes', tabs\tand ünïcode ✓ 漢字.\nLast line",
        title="A rich — task",
        difficulty="hard",
        category="debugging",
        use_case_category="fix | things",
        tags=["python", "with space", "pipe|tag", "ünï"],
        dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nCOPY src/ /app/src/\nCOPY data.csv /app/\n",
        files={"src/main.py": "print('héllo')\n", "data.csv": "a,b\r\n1,\"x, y\"\r\n", "src/empty.txt": ""},
        test_source=RICH_TESTS,
        test_support_files={"fixtures/expected.json": '{"k": "välue"}\n', "helper.txt": "line1\nline2"},
        test_weights={"test_first": 0.1, "test_second": 2.75, "test_third": 1e-3},
        solution="#!/bin/bash\nset -e\ncat > /app/x <<'EOF'\nmulti\n  line ✓\nEOF\n",
        limits=TaskLimits(
            agent_timeout_s=123.5, test_timeout_s=45.25, command_timeout_s=7.5, cpus=1.5, memory_mb=768, pids=99,
            network=True,
        ),
        metadata={
            "created_at": "2024-01-02T03:04:05Z",
            "updated_at": "2024-02-03",
            "author_name": "Zoë",
            "reviewer": "kim",
            "empty": "",
            "nothing": None,
            "count": 3,
            "nested": {"list": [1, 2.5, "x"], "flag": False},
        },
    )
    fields.update(overrides)
    return Task(**fields)


def plain_task(task_id: str = "plain") -> Task:
    return Task(
        task_id=task_id,
        instruction="Do it.",
        dockerfile="FROM ubuntu:24.04\n",
        test_source="def test_a():\n    pass\n",
        test_weights={"test_a": 1.0},
    )


TASKS = [rich_task(), rich_task(task_id="no-solution", solution=None, metadata={}, tags=[]), plain_task()]


# --- round trips ---------------------------------------------------------------------------------
def test_csv_round_trip_is_lossless(tmp_path):
    path = write_tasks_csv(TASKS, tmp_path / "tasks.csv")
    result = read_tasks_csv(path)
    assert result.errors == []
    assert result.tasks == TASKS


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.task_id)
def test_terminal_bench_round_trip_is_lossless(tmp_path, task):
    task_dir = write_tb_task(task, tmp_path)
    assert task_dir == tmp_path / task.task_id
    assert read_tb_task(task_dir) == task


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.task_id)
def test_harbor_round_trip_is_lossless(tmp_path, task):
    task_dir = write_harbor_task(task, tmp_path)
    assert read_harbor_task(task_dir) == task


def test_parquet_round_trip_is_lossless(tmp_path):
    path = write_parquet(TASKS, tmp_path / "train.parquet")
    assert read_parquet(path) == TASKS


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.task_id)
def test_flat_dict_round_trip_and_json_safety(task):
    flat = task_to_flat_dict(task)
    assert all(isinstance(value, (str, int, float, bool)) for value in flat.values())
    assert json.loads(json.dumps(flat)) == flat
    assert task_from_flat_dict(flat) == task
    assert task_from_flat_dict(json.dumps(flat)) == task


def test_every_format_chained_returns_the_same_task(tmp_path):
    task = rich_task()
    via_tb = read_tb_task(write_tb_task(task, tmp_path / "tb"))
    via_harbor = read_harbor_task(write_harbor_task(via_tb, tmp_path / "harbor"))
    write_tasks_csv([via_harbor], tmp_path / "t.csv")
    via_csv = read_tasks_csv(tmp_path / "t.csv").tasks[0]
    write_parquet([via_csv], tmp_path / "t.parquet")
    assert read_parquet(tmp_path / "t.parquet") == [task]


# --- native slots of each format ----------------------------------------------------------------
def test_terminal_bench_layout_and_native_keys(tmp_path):
    task_dir = write_tb_task(rich_task(), tmp_path)
    data = yaml.safe_load((task_dir / "task.yaml").read_text())
    assert data["instruction"] == rich_task().instruction
    assert data["max_agent_timeout_sec"] == 123.5 and data["max_test_timeout_sec"] == 45.25
    assert data["parser_name"] == "pytest" and data["author_name"] == "Zoë"
    assert data["tags"] == rich_task().tags
    assert data["terminal_agent"]["test_weights"] == {"test_first": 0.1, "test_second": 2.75, "test_third": 1e-3}
    assert (task_dir / "tests" / "test_outputs.py").read_text() == RICH_TESTS
    assert (task_dir / "tests" / "fixtures" / "expected.json").is_file()
    assert (task_dir / "src" / "main.py").read_text(encoding="utf-8") == "print('héllo')\n"
    assert (task_dir / "data.csv").read_bytes() == b'a,b\r\n1,"x, y"\r\n'
    assert os.access(task_dir / "solution.sh", os.X_OK) and os.access(task_dir / "run-tests.sh", os.X_OK)
    assert "test_outputs.py" in (task_dir / "run-tests.sh").read_text()


def test_harbor_layout_and_native_keys(tmp_path):
    task_dir = write_harbor_task(rich_task(limits=TaskLimits(cpus=2.0, memory_mb=640)), tmp_path)
    data = tomllib.loads((task_dir / "task.toml").read_text())
    assert data["agent"]["timeout_sec"] == 600.0 and data["verifier"]["timeout_sec"] == 120.0
    assert data["environment"] == {"cpus": 2, "memory_mb": 640, "allow_internet": False}
    assert data["metadata"]["difficulty"] == "hard" and data["metadata"]["tags"] == rich_task().tags
    assert data["metadata"]["terminal_agent"]["test_weights"]["test_second"] == 2.75
    assert (task_dir / "instruction.md").read_text(encoding="utf-8") == rich_task().instruction
    assert (task_dir / "environment" / "Dockerfile").read_text() == rich_task().dockerfile
    assert (task_dir / "solution" / "solve.sh").is_file()
    test_sh = (task_dir / "tests" / "test.sh").read_text()
    assert "/logs/verifier/reward.txt" in test_sh and '"test_second": 2.75' in test_sh
    # a fractional CPU quota has no native Harbor slot (Harbor wants an integer): kept in our table only
    fractional = tomllib.loads((write_harbor_task(rich_task(), tmp_path / "f") / "task.toml").read_text())
    assert "cpus" not in fractional["environment"]
    assert fractional["metadata"]["terminal_agent"]["limits"]["cpus"] == 1.5


def test_parquet_rows_have_the_shape_verl_and_rllm_expect(tmp_path):
    row = task_to_row(rich_task(), split="test", index=7)
    assert row["prompt"] == [{"role": "user", "content": rich_task().instruction}]
    assert row["data_source"] == "terminal_agent"
    write_parquet([rich_task(), plain_task()], tmp_path / "d.parquet")
    table = pq.read_table(tmp_path / "d.parquet")
    assert {"prompt", "data_source", "extra_info", "reward_model", "ability"} <= set(table.column_names)
    extra = table.column("extra_info").to_pylist()
    # verl's RLHFDataset calls extra_info.get("index"): a mapping, numbered in file order
    assert [info.get("index") for info in extra] == [0, 1]
    # rLLM calls env_class.from_dict({**extra_info, **env_args}); unknown keys are ignored
    env_args = {"max_steps": 12, "reward_fn": "weighted", "some_flag": True}
    assert task_from_flat_dict({**extra[0], **env_args}) == rich_task()


def test_flat_dict_reports_the_bad_field():
    flat = task_to_flat_dict(plain_task())
    with pytest.raises(TaskFormatError) as info:
        task_from_flat_dict({**flat, "test_weights": "{not json"})
    assert info.value.field == "test_weights"
    with pytest.raises(TaskFormatError) as info:
        task_from_flat_dict({**flat, "test_weights": json.dumps({"test_nope": 1})})
    assert info.value.field == "task"
    assert "test_nope" in str(info.value)
    with pytest.raises(TaskFormatError) as info:
        task_from_flat_dict({**flat, "limits": "[1]"})
    assert info.value.field == "limits" and "JSON object" in str(info.value)
    assert task_from_flat_dict({**flat, "limits": "null"}).limits == plain_task().limits


# --- foreign inputs -------------------------------------------------------------------------------
def test_reading_a_terminal_bench_task_written_elsewhere():
    task = read_tb_task(DATA / "tb_tasks" / "greet-file")
    assert task.task_id == "greet-file"
    assert task.instruction == 'Create /app/greeting.txt containing the line "hello, world".'
    assert task.test_weights == {"test_file_exists": 1.0, "test_text": 1.0}  # equal weights
    assert task.limits.agent_timeout_s == 240.0 and task.limits.test_timeout_s == 30.0
    assert task.files == {"seed.txt": "seed\n", "docker-compose.yaml": (DATA / "tb_tasks/greet-file/docker-compose.yaml").read_text()}
    assert task.metadata["author_email"] == "author@example.com"
    assert task.metadata["expert_time_estimate_min"] == 1
    assert "custom runner" in task.metadata["tb_run_tests_sh"]  # a custom run-tests.sh is kept
    assert task.solution.startswith("#!/bin/bash")


def test_a_foreign_terminal_bench_task_survives_conversion(tmp_path):
    task = read_tb_task(DATA / "tb_tasks" / "greet-file")
    rewritten = write_tb_task(task, tmp_path)
    assert "custom runner" in (rewritten / "run-tests.sh").read_text()
    assert yaml.safe_load((rewritten / "task.yaml").read_text())["author_email"] == "author@example.com"
    assert read_tb_task(rewritten) == task
    assert read_harbor_task(write_harbor_task(task, tmp_path / "h")) == task


def test_reading_a_harbor_task_written_elsewhere(tmp_path):
    task = read_harbor_task(DATA / "harbor_tasks" / "sum-numbers")
    assert task.instruction == "Write the sum of the numbers in /app/numbers.txt to /app/sum.txt.\n"
    assert task.test_weights == {"test_sum_file": 1.0}
    assert task.limits.agent_timeout_s == 420.0 and task.limits.test_timeout_s == 90.0
    assert task.limits.cpus == 2 and task.limits.memory_mb == 2048 and task.limits.network is False
    assert task.files == {"numbers.txt": "1\n2\n3\n"}
    assert task.test_support_files == {"expected.txt": "6\n"}
    assert task.metadata["expert_time_estimate_min"] == 3.5
    assert task.metadata["harbor"]["environment"] == {"build_timeout_sec": 600.0, "storage_mb": 10240}
    assert task.metadata["harbor_test_file"] == "test_state.py"
    rewritten = write_harbor_task(task, tmp_path)
    assert (rewritten / "tests" / "test_state.py").is_file()
    assert "test_state.py" in (rewritten / "tests" / "test.sh").read_text()
    assert read_harbor_task(rewritten) == task


@pytest.mark.parametrize(
    "breakage, field",
    [
        (lambda d: (d / "task.yaml").write_text("instruction: [unclosed\n"), "task.yaml"),
        (lambda d: (d / "Dockerfile").unlink(), "Dockerfile"),
        (lambda d: (d / "tests" / "test_outputs.py").unlink(), "tests"),
        (lambda d: (d / "task.yaml").write_text("instruction: ''\n"), "instruction"),
        (lambda d: (d / "seed.txt").write_bytes(b"\xff\xfe\x00binary"), "files"),
    ],
)
def test_broken_terminal_bench_dirs_name_the_field(tmp_path, breakage, field):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    breakage(task_dir)
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert info.value.field == field
    assert info.value.location == str(task_dir)


def test_writers_refuse_files_that_clash_with_the_layout(tmp_path):
    with pytest.raises(TaskFormatError, match="clashes"):
        write_tb_task(rich_task(files={"tests/x.py": "x"}), tmp_path)
    with pytest.raises(TaskFormatError, match="clashes"):
        write_harbor_task(rich_task(test_support_files={"test.sh": "x"}), tmp_path)


# --- CSV specifics ----------------------------------------------------------------------------------
def test_bad_rows_are_reported_with_line_and_field_and_good_rows_kept():
    result = read_tasks_csv(DATA / "bad_rows.csv")
    assert [task.task_id for task in result.tasks] == ["good-one", "good-two"]
    reported = [(error.location, error.field) for error in result.errors]
    assert reported == [
        ("bad_rows.csv:11", "test_weights"),  # bad JSON
        ("bad_rows.csv:19", "test_weights"),  # names a test that does not exist
        ("bad_rows.csv:27", "prompt"),  # empty prompt
        ("bad_rows.csv:35", "task_id"),  # duplicate id
        ("bad_rows.csv:43", "task_id"),  # unsafe id
        ("bad_rows.csv:51", "test_weights"),  # all zero
    ]
    messages = [str(error) for error in result.errors]
    assert "not valid JSON" in messages[0] and "test_zzz" in messages[1]
    assert "first used on line 2" in messages[3] and "safe directory name" in messages[4]


def test_line_numbers_hold_for_crlf_files_with_a_bom(tmp_path):
    text = (DATA / "bad_rows.csv").read_text(encoding="utf-8")
    crlf = tmp_path / "bad_rows.csv"
    crlf.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    result = read_tasks_csv(crlf)
    assert [error.location for error in result.errors] == [error.location for error in read_tasks_csv(DATA / "bad_rows.csv").errors]
    assert [task.task_id for task in result.tasks] == ["good-one", "good-two"]


def test_an_empty_task_list_round_trips(tmp_path):
    write_tasks_csv([], tmp_path / "e.csv")
    assert read_tasks_csv(tmp_path / "e.csv").tasks == []
    write_parquet([], tmp_path / "e.parquet")
    assert read_parquet(tmp_path / "e.parquet") == []


def test_unknown_columns_and_timestamps_are_kept_in_metadata(tmp_path):
    result = read_tasks_csv(DATA / "bad_rows.csv")
    good_one, good_two = result.tasks
    assert good_one.metadata == {"created_at": "2024-01-01", "updated_at": "2024-01-02", "reviewer": "kim"}
    assert "reviewer" not in good_two.metadata  # empty cell: nothing to keep
    assert good_one.tags == ["x", "y"] and good_one.files == {"a.txt": "hi"}
    assert good_one.instruction == "Line one.\nLine two ✓."
    write_tasks_csv(result.tasks, tmp_path / "out.csv")
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["reviewer"] == "kim" and rows[0]["created_at"] == "2024-01-01" and rows[0]["tags"] == "x|y"
    assert read_tasks_csv(tmp_path / "out.csv").tasks == result.tasks


def test_csv_accepts_a_weight_list_and_a_file_list(tmp_path):
    path = tmp_path / "list.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_id", "prompt", "dockerfile", "test_functions", "test_weights", "additional_files"])
        writer.writerow(["t", "p", "FROM a\n", "def test_x():\n    pass\ndef test_y():\n    pass\n", "[1, 2.5]",
                         json.dumps([{"path": "f.txt", "content": "c"}])])
    (task,) = read_tasks_csv(path).tasks
    assert task.test_weights == {"test_x": 1.0, "test_y": 2.5} and task.files == {"f.txt": "c"}


def test_csv_file_level_problems_raise(tmp_path):
    (tmp_path / "no_cols.csv").write_text("task_id,prompt\nx,y\n")
    with pytest.raises(TaskFormatError, match="test_weights"):
        read_tasks_csv(tmp_path / "no_cols.csv")
    with pytest.raises(TaskFormatError, match="cannot open"):
        read_tasks_csv(tmp_path / "missing.csv")


# --- loading ------------------------------------------------------------------------------------------
def test_load_tasks_detects_every_source_kind(tmp_path):
    tasks = [rich_task(), plain_task()]
    write_tasks_csv(tasks, tmp_path / "t.csv")
    write_parquet(tasks, tmp_path / "t.parquet")
    for task in tasks:
        write_tb_task(task, tmp_path / "tb")
        write_harbor_task(task, tmp_path / "harbor")
    mixed = tmp_path / "mixed"
    write_tb_task(tasks[0], mixed)
    write_harbor_task(tasks[1], mixed)
    assert detect_source_kind(tmp_path / "t.csv") == "csv"
    assert detect_source_kind(tmp_path / "tb" / "plain") == "tb"
    assert detect_source_kind(tmp_path / "harbor" / "plain") == "harbor"
    assert detect_source_kind(mixed) == "collection"
    for source in ("t.csv", "t.parquet", "tb", "harbor", "mixed"):
        assert sorted(load_tasks(tmp_path / source), key=lambda t: t.task_id) == sorted(tasks, key=lambda t: t.task_id)
    assert load_tasks(tmp_path / "tb" / "plain") == [plain_task()]
    with pytest.raises(TaskFormatError, match="not a task source"):
        load_tasks(tmp_path / "tb" / "plain" / "tests")


def test_load_tasks_is_strict_unless_asked(caplog):
    with pytest.raises(TaskFormatError) as info:
        load_tasks(DATA / "bad_rows.csv")
    assert "6 bad task(s)" in str(info.value) and "bad_rows.csv:43" in str(info.value)
    good = load_tasks(DATA / "bad_rows.csv", strict=False)
    assert [task.task_id for task in good] == ["good-one", "good-two"]
    assert sum("bad_rows.csv:" in record.getMessage() for record in caplog.records) == 6


# --- atomic output ---------------------------------------------------------------------------------------
def test_a_failed_directory_write_leaves_the_old_output_intact(tmp_path):
    out = tmp_path / "out"
    write_tb_task(plain_task(), out)
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    with pytest.raises(RuntimeError):
        with atomic_output_dir(out) as temp_dir:
            write_tb_task(rich_task(), temp_dir)
            raise RuntimeError("crash in the middle")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temp dir left behind


def test_convert_writes_good_tasks_and_strict_writes_nothing(tmp_path):
    out = tmp_path / "tasks"
    report = convert_tasks(DATA / "bad_rows.csv", out, "harbor")
    assert not report.ok and len(report.errors) == 6
    assert sorted(p.name for p in out.iterdir()) == ["good-one", "good-two"]
    write_tb_task(plain_task("older"), tmp_path / "keep")
    strict = convert_tasks(DATA / "bad_rows.csv", tmp_path / "keep", "tb", strict=True)
    assert strict.output is None
    assert [p.name for p in (tmp_path / "keep").iterdir()] == ["older"]


def test_convert_refuses_to_replace_a_directory_that_is_not_tasks(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="refusing"):
        convert_tasks(DATA / "tb_tasks", tmp_path, "tb")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_split_is_deterministic_and_disjoint():
    tasks = [plain_task(f"t{i}") for i in range(10)]
    train, test = split_tasks(tasks, 0.3, seed=1)
    assert len(test) == 3 and len(train) == 7
    assert {t.task_id for t in train}.isdisjoint({t.task_id for t in test})
    assert split_tasks(tasks, 0.3, seed=1) == (train, test)
    assert split_tasks(tasks, 0.3, seed=2) != (train, test)


# --- the project's own sample tasks ------------------------------------------------------------------
def test_the_sample_dataset_is_well_formed():
    result = read_tasks_csv(REPO / "dataset" / "latest_verified.csv")
    assert result.errors == []
    assert len(result.tasks) >= 4
    stdlib = set(sys.stdlib_module_names)
    for task in result.tasks:
        assert task.solution and task.solution.startswith("#!/bin/bash"), task.task_id
        assert 2 <= len(task.test_weights) <= 4, task.task_id
        assert task.dockerfile.startswith("FROM ubuntu:24.04\nWORKDIR /app\n"), task.task_id
        assert "apt-get" not in task.dockerfile and "pip" not in task.dockerfile, task.task_id
        for source in task.files:
            assert source.split("/")[0] in task.dockerfile, f"{task.task_id}: {source} is never copied"
        imported = set()
        for node in ast.walk(ast.parse(task.test_source)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
        assert imported <= stdlib, f"{task.task_id} tests import {imported - stdlib}"
        assert "/app" in task.test_source


def test_atomic_output_honours_the_umask_without_changing_it(tmp_path):
    previous = os.umask(0o027)
    try:
        with atomic_output_file(tmp_path / "out.csv") as temp:
            temp.write_text("x")
        with atomic_output_dir(tmp_path / "tasks") as temp_dir:
            (temp_dir / "a").mkdir()
        assert os.umask(0o027) == 0o027  # reading the umask did not leave it changed
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out.csv").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "tasks").stat().st_mode) == 0o750


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda data: data.update(terminal_agent={**data["terminal_agent"], "limits": [1]}), "terminal_agent.limits"),
        (lambda data: data.update(terminal_agent={**data["terminal_agent"], "metadata": "x"}), "terminal_agent.metadata"),
    ],
)
def test_wrongly_typed_task_yaml_values_are_format_errors(tmp_path, edit, field):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    data = yaml.safe_load((task_dir / "task.yaml").read_text())
    edit(data)
    (task_dir / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert info.value.field == field and info.value.location == str(task_dir)


def test_early_descriptions_list_and_scalar_tags_are_read(tmp_path):
    task_dir = write_tb_task(read_tb_task(DATA / "tb_tasks" / "greet-file"), tmp_path)
    data = yaml.safe_load((task_dir / "task.yaml").read_text())
    instruction = data.pop("instruction")
    data.pop("terminal_agent")
    data.update(descriptions=[{"key": "base", "description": instruction}], tags="single")
    (task_dir / "task.yaml").write_text(yaml.safe_dump(data))
    task = read_tb_task(task_dir)
    assert task.instruction == instruction and task.tags == ["single"]
    data["descriptions"] = ["not a mapping"]
    (task_dir / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(TaskFormatError) as info:
        read_tb_task(task_dir)
    assert info.value.field == "instruction"


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda data: data.update(verifier="fast"), "verifier"),
        (lambda data: data.update(environment=[1]), "environment"),
        (lambda data: data["metadata"]["terminal_agent"].update(limits="none"), "terminal_agent.limits"),
        (lambda data: data["metadata"]["terminal_agent"].update(metadata_json=3), "terminal_agent.metadata_json"),
    ],
)
def test_wrongly_typed_task_toml_values_are_format_errors(tmp_path, edit, field):
    task_dir = write_harbor_task(rich_task(), tmp_path)
    data = tomllib.loads((task_dir / "task.toml").read_text())
    edit(data)
    (task_dir / "task.toml").write_text(dump_toml(data))
    with pytest.raises(TaskFormatError) as info:
        read_harbor_task(task_dir)
    assert info.value.field == field and info.value.location == str(task_dir)
