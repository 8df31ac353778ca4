"""Harbor task directories: Harbor's settings read as Harbor reads them (schema 1.0 and 1.1+, deprecated spellings),
refusals naming the key, binary files, and task.toml written back with tomlkit (comments, order, unused keys kept).

The fixture tasks under tests/data/harbor_tasks/ are written for these tests (none is a copy of a public task).
"""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import tomllib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tomlkit
from task_builders import DATA, TASKS, rich_task

from terminal_agent.errors import TaskFormatError
from terminal_agent.tasks.harbor.format import read_harbor_dir, read_harbor_task, write_harbor_task
from terminal_agent.tasks.harbor.task_toml import SettingStatus, parse_size_mb
from terminal_agent.tasks.harbor.task_toml_writer import TASK_TOML_METADATA_KEY
from terminal_agent.tasks.model import GradingMode, TaskLimits, VerifierSpec

HARBOR = DATA / "harbor_tasks"
FIXTURES = ["sum-numbers", "csv-report-1.0", "separate-verifier-1.1", "prebuilt-image"]


def copy_fixture(name, tmp_path):
    target = tmp_path / name
    shutil.copytree(HARBOR / name, target)
    return target


def edit_toml(task_dir, old, new):
    path = task_dir / "task.toml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def settings_by_key(task_dir):
    return {setting.key: setting for setting in read_harbor_dir(task_dir).config.settings}


def without_kept_toml(task):
    return task.model_copy(update={"metadata": {k: v for k, v in task.metadata.items() if k != TASK_TOML_METADATA_KEY}})


# --- our own tasks -------------------------------------------------------------------------------
@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.task_id)
def test_our_tasks_round_trip_losslessly(tmp_path, task):
    task_dir = write_harbor_task(task, tmp_path)
    assert read_harbor_task(task_dir) == task


def test_our_task_gets_harbor_keys_and_its_own_table(tmp_path):
    task_dir = write_harbor_task(rich_task(limits=TaskLimits(cpus=2.0, memory_mb=640)), tmp_path)
    data = tomllib.loads((task_dir / "task.toml").read_text())
    assert data["schema_version"] == "1.1"
    assert data["agent"]["timeout_sec"] == 600.0 and data["verifier"]["timeout_sec"] == 120.0
    assert data["environment"] == {"build_timeout_sec": 600.0, "cpus": 2, "memory_mb": 640, "allow_internet": False}
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


def test_our_task_in_harbor_mode_with_every_new_field_round_trips(tmp_path):
    task = rich_task(
        test_source="",
        test_weights={"ctrf::test_a": 2.0},
        test_support_files={"test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n", "data.bin": b"\0\xff\x01"},
        files={"blob.gz": gzip.compress(b"payload"), "notes.txt": "x\n"},
        solution_files={"helper.bin": b"\x89PNG\r\n\x1a\n\0"},
        docker_image="example.invalid/img:1",
        env={"TOKEN": "${HOST_TOKEN:-none}"},
        limits=TaskLimits(cpus=3, memory_mb=1500, network=True, build_timeout_s=77.0, pids=42, command_timeout_s=9),
        verifier=VerifierSpec(mode=GradingMode.HARBOR, env={"A": "1"}, user="1000", network=False,
                              separate_environment=True, environment_dockerfile="FROM ubuntu:24.04\nRUN true\n",
                              artifacts=["/app/out", "/tmp/log.txt"]),
    )
    task_dir = write_harbor_task(task, tmp_path)
    assert read_harbor_task(task_dir) == task
    data = tomllib.loads((task_dir / "task.toml").read_text())
    # what Harbor itself reads from the same folder
    assert data["environment"]["docker_image"] == "example.invalid/img:1" and data["environment"]["env"] == task.env
    assert data["verifier"]["environment_mode"] == "separate" and data["verifier"]["user"] == "1000"
    assert data["verifier"]["environment"]["network_mode"] == "no-network"
    assert data["artifacts"] == ["/app/out", "/tmp/log.txt"]
    assert (task_dir / "tests" / "Dockerfile").read_text() == "FROM ubuntu:24.04\nRUN true\n"
    assert (task_dir / "tests" / "data.bin").read_bytes() == b"\0\xff\x01"
    assert not (task_dir / "tests" / "test_outputs.py").exists()


# --- reading Harbor's own tasks -----------------------------------------------------------------
def test_schema_1_0_in_the_tb2_spelling():
    task_dir = HARBOR / "csv-report-1.0"
    task = read_harbor_task(task_dir)
    assert task.limits.memory_mb == 2048  # memory = "2G" is 2048 MiB, not 1024
    assert task.limits.network is True  # Harbor's default: internet allowed
    assert task.limits.cpus == 1 and task.limits.build_timeout_s == 450.0
    assert task.limits.agent_timeout_s == 900.0 and task.limits.test_timeout_s == 300.0
    assert task.docker_image == "example.invalid/fixtures/csv-report:2026"
    assert task.dockerfile.startswith("FROM ubuntu:24.04")
    assert task.verifier.mode is GradingMode.HARBOR and task.test_weights == {}
    assert task.test_support_files["test.sh"].startswith("#!/bin/bash")
    assert "uvx -p 3.13" in task.test_support_files["test.sh"]
    assert task.test_functions == ["test_total_file_exists", "test_total_is_right"]
    assert (task.difficulty, task.category, task.tags) == ("easy", "data-processing", ["csv", "python"])
    assert task.metadata["author_email"] == "fixtures@example.invalid"
    settings = settings_by_key(task_dir)
    assert settings["environment.memory"].status is SettingStatus.MAPPED
    assert settings["environment.memory"].task_value == 2048
    assert settings["environment.storage"].status is SettingStatus.MAPPED  # the deprecated "10G": a disk quota
    assert settings["environment.storage"].task_value == 10240 and task.limits.storage_mb == 10240
    assert settings["environment.network_mode"].status is SettingStatus.DEFAULT
    assert settings["version"].status is SettingStatus.KEPT


def test_schema_1_1_with_task_table_verifier_settings_and_a_separate_verifier():
    task_dir = HARBOR / "separate-verifier-1.1"
    task = read_harbor_task(task_dir)
    verifier = task.verifier
    assert verifier.mode is GradingMode.HARBOR
    assert verifier.env == {"REPORT_PATH": "/app/report.json", "STRICT": "1"} and verifier.user == "grader"
    assert verifier.separate_environment is True
    assert verifier.environment_dockerfile == "FROM ubuntu:24.04\nRUN useradd grader\n"  # tests/Dockerfile
    assert "Dockerfile" not in task.test_support_files
    # the declared verifier environment has its own baseline: no network, while the agent's is public
    assert task.limits.network is True and verifier.network is False
    assert verifier.artifacts == ["/app/report.json", "/app/logs"]
    assert task.env == {"API_TOKEN": "${FIXTURE_TOKEN}", "LEVEL": "${FIXTURE_LEVEL:-info}"}  # templates as written
    assert task.limits.cpus == 2 and task.limits.memory_mb == 3072 and task.limits.agent_timeout_s == 1200.0
    assert task.test_source == "" and set(task.test_support_files) == {"test.sh", "check_report.py"}
    settings = settings_by_key(task_dir)
    kept = {key for key, s in settings.items() if s.status is SettingStatus.KEPT}
    assert {"task", "source", "custom_flag", "solution.env", "environment.skills_dir",
            "verifier.environment.cpus", "verifier.environment.memory_mb", "artifacts[1].destination"} <= kept
    assert settings["agent.user"].status is SettingStatus.MAPPED
    assert settings["environment.storage_mb"].status is SettingStatus.MAPPED
    assert settings["environment.storage_mb"].field == "limits.storage_mb"
    assert settings["verifier.environment.network_mode"].field == "verifier.network"


def test_docker_image_without_a_dockerfile(tmp_path):
    task = read_harbor_task(HARBOR / "prebuilt-image")
    assert task.docker_image == "example.invalid/fixtures/prebuilt:1"
    assert task.dockerfile == "FROM example.invalid/fixtures/prebuilt:1\n"
    assert task.limits.memory_mb == 4096 and task.limits.network is False
    out = write_harbor_task(task, tmp_path)
    assert not (out / "environment" / "Dockerfile").exists()  # the writer does not invent one
    assert read_harbor_task(out) == task
    # a changed Dockerfile is written
    changed = task.model_copy(update={"dockerfile": "FROM ubuntu:24.04\n"})
    out = write_harbor_task(changed, tmp_path / "changed")
    assert (out / "environment" / "Dockerfile").read_text() == "FROM ubuntu:24.04\n"


def test_no_dockerfile_and_no_docker_image_is_an_error(tmp_path):
    task_dir = copy_fixture("sum-numbers", tmp_path)
    (task_dir / "environment" / "Dockerfile").unlink()
    with pytest.raises(TaskFormatError, match="names no docker_image") as info:
        read_harbor_task(task_dir)
    assert info.value.field == "environment"


def test_missing_test_sh_is_an_error(tmp_path):
    task_dir = copy_fixture("prebuilt-image", tmp_path)
    (task_dir / "tests" / "test.sh").unlink()
    with pytest.raises(TaskFormatError) as info:
        read_harbor_task(task_dir)
    assert info.value.field == "tests/test.sh"


def test_the_older_fixture_reads_in_harbor_mode(tmp_path):
    task = read_harbor_task(HARBOR / "sum-numbers")
    assert task.instruction == "Write the sum of the numbers in /app/numbers.txt to /app/sum.txt.\n"
    assert task.verifier.mode is GradingMode.HARBOR and task.test_weights == {}
    assert task.limits.agent_timeout_s == 420.0 and task.limits.test_timeout_s == 90.0
    assert task.limits.cpus == 2 and task.limits.memory_mb == 2048 and task.limits.network is False
    assert task.files == {"numbers.txt": "1\n2\n3\n"}
    assert set(task.test_support_files) == {"expected.txt", "test.sh"}
    assert task.test_functions == ["test_sum_file"]
    assert task.metadata["expert_time_estimate_min"] == 3.5
    assert task.metadata["harbor_test_file"] == "test_state.py"
    rewritten = write_harbor_task(task, tmp_path)
    assert (rewritten / "tests" / "test_state.py").is_file() and not (rewritten / "tests" / "test_outputs.py").exists()
    assert read_harbor_task(rewritten) == task


@pytest.mark.parametrize("text, mib", [("2G", 2048), ("10G", 10240), ("512M", 512), ("1.5g", 1536), ("4096K", 4)])
def test_size_strings_are_parsed_as_harbor_parses_them(text, mib):
    assert parse_size_mb(text) == mib


def test_memory_and_memory_mb_that_disagree_are_refused(tmp_path):
    task_dir = copy_fixture("csv-report-1.0", tmp_path)
    edit_toml(task_dir, 'storage = "10G"', 'storage = "10G"\nmemory_mb = 1024')
    with pytest.raises(TaskFormatError, match="disagree") as info:
        read_harbor_task(task_dir)
    assert info.value.field == "environment.memory_mb"


def test_network_mode_wins_over_allow_internet_and_agent_override(tmp_path):
    task_dir = copy_fixture("prebuilt-image", tmp_path)
    edit_toml(task_dir, "allow_internet = false", 'allow_internet = false\nnetwork_mode = "public"')
    assert read_harbor_task(task_dir).limits.network is True
    (task_dir / "task.toml").write_text((task_dir / "task.toml").read_text() + '\n[agent]\nnetwork_mode = "no-network"\n')
    task = read_harbor_task(task_dir)
    # the agent phase has no network; the verifier phase keeps the environment's baseline (public)
    assert task.limits.network is False and task.verifier.network is True


# --- refusals ------------------------------------------------------------------------------------
REFUSED = [
    ("environment.gpus", "[environment]", "[environment]\ngpus = 1"),
    ("environment.gpu_types", "[environment]", '[environment]\ngpu_types = ["H100"]'),
    ("environment.mcp_servers", "[environment]",
     '[environment]\nmcp_servers = [{ name = "search", transport = "sse", url = "http://mcp.invalid/sse" }]'),
    ("environment.healthcheck", "[environment]", '[environment]\nhealthcheck = { command = "true" }'),
    ("environment.network_mode", "[environment]", '[environment]\nnetwork_mode = "allowlist"'),
    ("environment.allowed_hosts", "[environment]", '[environment]\nallowed_hosts = ["packages.example"]'),
    ("environment.workdir", "[environment]", '[environment]\nworkdir = "/work"'),
    ("environment.os", "[environment]", '[environment]\nos = "windows"'),
    ("environment.tpu", "[environment]", '[environment]\ntpu = { type = "v6e", topology = "2x2" }'),
    ("environment.memory", "[environment]", '[environment]\nmemory = "lots"'),
    ("environment.cpus", "[environment]", "[environment]\ncpus = 0"),
    ("agent.user", "[environment]", '[agent]\nuser = "agent"\n\n[environment]'),
    ("agent.network_mode", "[environment]", '[agent]\nnetwork_mode = "allowlist"\n\n[environment]'),
    ("verifier.allowed_hosts", "[environment]", '[verifier]\nallowed_hosts = ["example.com"]\n\n[environment]'),
    ("verifier.environment_mode", "[environment]", '[verifier]\nenvironment_mode = "elsewhere"\n\n[environment]'),
    ("verifier.environment", "[environment]", "[verifier.environment]\ncpus = 1\n\n[environment]"),
    ("steps", "[metadata]", '[[steps]]\nname = "one"\n\n[metadata]'),
    ("artifacts[0]", "[metadata]", 'artifacts = ["relative/path"]\n\n[metadata]'),
    ("artifacts[0].service", "[metadata]", 'artifacts = [{ source = "/app/x", service = "db" }]\n\n[metadata]'),
    ("verifier", 'schema_version = "1.1"', 'schema_version = "1.1"\nverifier = "fast"'),
    ("verifier.env", "[environment]", "[verifier]\nenv = { A = 1 }\n\n[environment]"),
]


@pytest.mark.parametrize("key, old, new", REFUSED, ids=[case[0] for case in REFUSED])
def test_a_setting_that_cannot_be_honoured_is_refused_naming_its_key(tmp_path, key, old, new):
    task_dir = copy_fixture("prebuilt-image", tmp_path)
    edit_toml(task_dir, old, new)
    with pytest.raises(TaskFormatError) as info:
        read_harbor_task(task_dir)
    assert info.value.field == key and info.value.location == str(task_dir)
    refused = [s.key for s in read_harbor_dir(task_dir).config.refused]
    assert key in refused


@pytest.mark.parametrize("name", ["docker-compose.yaml", "docker-compose.yml"])
def test_a_compose_environment_is_refused(tmp_path, name):
    task_dir = copy_fixture("sum-numbers", tmp_path)
    (task_dir / "environment" / name).write_text("services:\n  main:\n    build: .\n")
    with pytest.raises(TaskFormatError, match="compose") as info:
        read_harbor_task(task_dir)
    assert info.value.field == f"environment/{name}"


def test_settings_that_ask_for_nothing_are_kept_not_refused(tmp_path):
    task_dir = copy_fixture("prebuilt-image", tmp_path)
    edit_toml(task_dir, "[environment]", '[environment]\ngpus = 0\nmcp_servers = []\nos = "linux"')
    read_harbor_task(task_dir)
    settings = settings_by_key(task_dir)
    assert all(settings[key].status is SettingStatus.KEPT for key in
               ("environment.gpus", "environment.mcp_servers", "environment.os"))


# --- binary files ---------------------------------------------------------------------------------
def _git_bundle(tmp_path) -> bytes:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tmp_path)}
    (repo / "f.txt").write_text("leak\n")
    for command in (["git", "init", "-q"], ["git", "add", "f.txt"], ["git", "commit", "-qm", "c"],
                    ["git", "bundle", "create", "-q", str(tmp_path / "r.bundle"), "--all"]):
        subprocess.run(command, cwd=repo, env=env, check=True, capture_output=True)
    return (tmp_path / "r.bundle").read_bytes()


def binary_fixtures(tmp_path) -> dict[str, bytes]:
    sink = io.BytesIO()
    pq.write_table(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}), sink)
    tif = b"II*\x00\x08\x00\x00\x00" + bytes(range(256)) * 4  # little-endian TIFF header and raw samples
    return {"image.tif": tif, "table.parquet": sink.getvalue(), "archive.gz": gzip.compress(b"x" * 1000),
            "repo.bundle": _git_bundle(tmp_path)}


def test_binary_fixtures_of_every_kind_read_and_round_trip(tmp_path):
    blobs = binary_fixtures(tmp_path)
    task_dir = copy_fixture("csv-report-1.0", tmp_path)
    for where in ("environment", "tests", "solution"):
        for name, data in blobs.items():
            (task_dir / where / "fixtures").mkdir(parents=True, exist_ok=True)
            (task_dir / where / "fixtures" / name).write_bytes(data)
    task = read_harbor_task(task_dir)
    for files in (task.files, task.test_support_files, task.solution_files):
        assert {f"fixtures/{name}": data for name, data in blobs.items()}.items() <= files.items()
        assert all(isinstance(files[f"fixtures/{name}"], bytes) for name in blobs)
    out = write_harbor_task(task, tmp_path / "out")
    for where in ("environment", "tests", "solution"):
        for name, data in blobs.items():
            assert (out / where / "fixtures" / name).read_bytes() == data
    assert read_harbor_task(out) == task
    table = pq.read_table(io.BytesIO(task.files["fixtures/table.parquet"]))
    assert table.column("name").to_pylist() == ["a", "b", "c"]


# --- writing back: tomlkit -----------------------------------------------------------------------
@pytest.mark.parametrize("name", FIXTURES)
def test_an_unchanged_harbor_task_is_written_back_byte_for_byte(tmp_path, name):
    task = read_harbor_task(HARBOR / name)
    out = write_harbor_task(task, tmp_path)
    assert (out / "task.toml").read_bytes() == (HARBOR / name / "task.toml").read_bytes()
    assert read_harbor_task(out) == task
    for path in (HARBOR / name).rglob("*"):
        if path.is_file():
            assert (out / path.relative_to(HARBOR / name)).read_bytes() == path.read_bytes(), path


def test_changed_values_are_updated_in_place_keeping_comments_order_and_unused_keys(tmp_path):
    original = (HARBOR / "csv-report-1.0" / "task.toml").read_text()
    task = read_harbor_task(HARBOR / "csv-report-1.0")
    changed = task.model_copy(update={
        "limits": task.limits.model_copy(update={"memory_mb": 4096, "network": False, "test_timeout_s": 60.0}),
        "docker_image": "example.invalid/other:2",
    })
    out = write_harbor_task(changed, tmp_path)
    text = (out / "task.toml").read_text()
    assert 'memory = "4G"    # deprecated spelling: 2048 MiB' in text  # same spelling, comment kept
    assert 'storage = "10G"' in text and "junior_time_estimate_min = 15.0" in text
    assert "timeout_sec = 60.0  # the verifier installs its own tools" in text
    assert text.startswith("# A schema 1.0 task in the Terminal-Bench 2 spelling")
    assert 'docker_image = "example.invalid/other:2"' in text and "allow_internet = false" in text
    # every line that did not change is still there, in the same order
    untouched = [line for line in original.splitlines() if not line.startswith(("memory", "timeout_sec = 300",
                                                                                  "docker_image"))]
    assert [line for line in text.splitlines() if line in untouched] == untouched
    assert without_kept_toml(read_harbor_task(out)) == without_kept_toml(changed)


def test_every_field_of_a_harbor_task_round_trips_after_changes(tmp_path):
    task = read_harbor_task(HARBOR / "separate-verifier-1.1")
    changed = task.model_copy(update={
        "title": "A title Harbor has no key for",
        "use_case_category": "reports",
        "difficulty": "medium", "category": "json", "tags": ["a", "b"],
        "docker_image": "example.invalid/prebuilt:3",
        "env": {"ONLY": "${ONE}"},
        "test_weights": {"check_report": 1.0},
        "files": {"data/in.bin": b"\x00\x01"},
        "solution_files": {"helper.sh": "echo\n"},
        "metadata": {**task.metadata, "reviewer": "kim", "score": 0.5},
        "limits": TaskLimits(agent_timeout_s=33.0, test_timeout_s=44.0, command_timeout_s=5.0, cpus=1.5,
                             memory_mb=5000, storage_mb=7000, pids=77, network=False, build_timeout_s=66.0),
        "verifier": VerifierSpec(mode=GradingMode.HARBOR, env={"B": "2"}, user="0", network=True,
                                 separate_environment=True, environment_dockerfile="FROM example.invalid/v:1\n",
                                 artifacts=["/app/only"]),
    })
    out = write_harbor_task(changed, tmp_path)
    again = read_harbor_task(out)
    assert without_kept_toml(again) == without_kept_toml(changed)
    text = (out / "task.toml").read_text()
    assert 'name = "fixtures/separate-verifier"' in text and 'custom_flag = "an unknown top-level key"' in text
    assert 'SOLUTION_MODE = "reference"' in text and "storage_mb = 7000" in text
    # and once written, it stays put
    assert read_harbor_task(write_harbor_task(again, tmp_path / "twice")) == again


def test_a_harbor_task_switched_to_weighted_pytest_is_written_as_ours(tmp_path):
    task = read_harbor_task(HARBOR / "csv-report-1.0")
    weighted = task.model_copy(update={
        "verifier": VerifierSpec(), "test_weights": {"test_total_file_exists": 1.0, "test_total_is_right": 3.0},
        "test_support_files": {k: v for k, v in task.test_support_files.items() if k != "test.sh"},
    })
    out = write_harbor_task(weighted, tmp_path)
    assert "test_total_is_right" in (out / "tests" / "test.sh").read_text()
    assert read_harbor_task(out) == weighted


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda data: data.update(verifier="fast"), "verifier"),
        (lambda data: data.update(environment=[1]), "environment"),
        (lambda data: data["metadata"]["terminal_agent"].update(limits="none"), "terminal_agent.limits"),
        (lambda data: data["metadata"]["terminal_agent"].update(metadata_json=3), "terminal_agent.metadata_json"),
        (lambda data: data["metadata"]["terminal_agent"].update(verifier_json="{"), "terminal_agent.verifier_json"),
    ],
)
def test_wrongly_typed_task_toml_values_are_format_errors(tmp_path, edit, field):
    task_dir = write_harbor_task(rich_task(), tmp_path)
    data = tomllib.loads((task_dir / "task.toml").read_text())
    edit(data)
    (task_dir / "task.toml").write_text(tomlkit.dumps(data))
    with pytest.raises(TaskFormatError) as info:
        read_harbor_task(task_dir)
    assert info.value.field == field and info.value.location == str(task_dir)


def test_invalid_toml_is_a_format_error(tmp_path):
    task_dir = copy_fixture("prebuilt-image", tmp_path)
    (task_dir / "task.toml").write_text("[environment\n")
    with pytest.raises(TaskFormatError) as info:
        read_harbor_task(task_dir)
    assert info.value.field == "task.toml"


@pytest.mark.docker
def test_our_generated_test_sh_writes_the_weighted_score_harbor_reads(tmp_path, docker_client):
    """Harbor itself runs our test.sh: tests/ at /tests, run it, read /logs/verifier/reward.txt (the image has no
    pytest: the host's pure-Python pytest is mounted, as a verifier runtime would be)."""
    import _pytest
    import iniconfig
    import packaging
    import pluggy
    import py
    import pygments
    import pytest as pytest_module
    from pathlib import Path

    task = rich_task(
        test_source="def test_pass():\n    assert True\n\n\ndef test_fail():\n    assert False\n",
        test_weights={"test_pass": 1.0, "test_fail": 3.0}, test_support_files={},
    )
    task_dir = write_harbor_task(task, tmp_path)
    site = tmp_path / "site"
    for module in (pytest_module, _pytest, pluggy, iniconfig, packaging, pygments, py):
        source = Path(module.__file__)
        if source.name == "__init__.py":
            shutil.copytree(source.parent, site / source.parent.name)
        else:
            site.mkdir(exist_ok=True)
            shutil.copy(source, site / source.name)
    logs = tmp_path / "logs"
    logs.mkdir()
    docker_client.containers.run(
        "terminal-agent/base:bookworm", ["bash", "/tests/test.sh"], remove=True, network_disabled=True,
        environment={"PYTHONPATH": "/site"},
        volumes={str(task_dir / "tests"): {"bind": "/tests", "mode": "ro"}, str(site): {"bind": "/site", "mode": "ro"},
                 str(logs): {"bind": "/logs", "mode": "rw"}},
    )
    assert float((logs / "verifier" / "reward.txt").read_text()) == pytest.approx(0.25)


@pytest.mark.parametrize("via, name", [("csv", "t.csv"), ("parquet", "t.parquet"), ("tb", "tb")])
def test_harbor_tasks_survive_every_other_format_and_come_back_byte_for_byte(tmp_path, via, name):
    from terminal_agent.tasks.conversion import convert_tasks
    from terminal_agent.tasks.loading import load_tasks

    source = tmp_path / "source"
    shutil.copytree(HARBOR, source)
    for blob_name, data in binary_fixtures(tmp_path).items():
        (source / "csv-report-1.0" / "tests" / blob_name).write_bytes(data)
    assert convert_tasks(source, tmp_path / name, via).ok
    assert convert_tasks(tmp_path / name, tmp_path / "back", "harbor").ok
    originals = {task.task_id: task for task in load_tasks(source)}
    assert {task.task_id: task for task in load_tasks(tmp_path / "back")} == originals
    for task_id in originals:
        for path in (source / task_id).rglob("*"):
            if path.is_file():
                assert (tmp_path / "back" / task_id / path.relative_to(source / task_id)).read_bytes() == \
                    path.read_bytes(), path


def test_our_table_in_a_harbor_task_comes_and_goes_with_what_it_carries(tmp_path):
    task = read_harbor_task(HARBOR / "prebuilt-image")
    titled = write_harbor_task(task.model_copy(update={"title": "Hello", "test_weights": {"hello": 1.0}}),
                               tmp_path / "titled")
    data = tomllib.loads((titled / "task.toml").read_text())
    assert data["metadata"]["terminal_agent"] == {"harbor_native": True, "title": "Hello",
                                                  "test_weights": {"hello": 1.0}}
    again = read_harbor_task(titled)
    assert again.title == "Hello" and again.verifier.mode is GradingMode.HARBOR
    cleared = write_harbor_task(again.model_copy(update={"title": "", "test_weights": {}}), tmp_path / "cleared")
    assert "terminal_agent" not in tomllib.loads((cleared / "task.toml").read_text())["metadata"]


def test_a_numeric_verifier_user_is_kept_as_written(tmp_path):
    task_dir = copy_fixture("prebuilt-image", tmp_path)
    (task_dir / "task.toml").write_text((task_dir / "task.toml").read_text() + "\n[verifier]\nuser = 1000\n")
    task = read_harbor_task(task_dir)
    assert task.verifier.user == "1000"
    out = write_harbor_task(task.model_copy(update={"instruction": "Other.\n"}), tmp_path / "out")
    assert "user = 1000\n" in (out / "task.toml").read_text()


def test_toml_dates_in_metadata_become_iso_text_and_stay_dates_in_the_file(tmp_path):
    task_dir = copy_fixture("prebuilt-image", tmp_path)
    edit_toml(task_dir, '[metadata]', '[metadata]\ncreated = 2026-01-02T03:04:05Z\nday = 2026-02-03')
    task = read_harbor_task(task_dir)
    assert task.metadata["created"] == "2026-01-02T03:04:05+00:00" and task.metadata["day"] == "2026-02-03"
    from terminal_agent.tasks.csv.format import read_tasks_csv, write_tasks_csv

    write_tasks_csv([task], tmp_path / "t.csv")  # JSON-safe: the CSV writer takes it
    (back,) = read_tasks_csv(tmp_path / "t.csv").tasks
    out = write_harbor_task(back, tmp_path / "out")
    assert (out / "task.toml").read_text() == (task_dir / "task.toml").read_text()
