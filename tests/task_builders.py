"""Tasks and paths shared by the task-format tests (tests/test_format_*.py, tests/test_task_*.py)."""

from __future__ import annotations

from pathlib import Path

from terminal_agent.tasks.model import Task, TaskLimits

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
    """The smallest valid task: one test, default limits, no files."""
    return Task(
        task_id=task_id,
        instruction="Do it.",
        dockerfile="FROM ubuntu:24.04\n",
        test_source="def test_a():\n    pass\n",
        test_weights={"test_a": 1.0},
    )


#: A rich task, one without solution/metadata/tags, and a plain one: what every round trip checks.
TASKS = [rich_task(), rich_task(task_id="no-solution", solution=None, metadata={}, tags=[]), plain_task()]


#: Binary files of the kinds real task sets ship (every one read back as bytes: none is valid UTF-8 text).
BINARY_FILES: dict[str, bytes] = {
    "fixtures/nul.bin": b"abc\x00def\x00\x00",
    "fixtures/latin1.txt": "café, naïve".encode("latin-1"),  # not UTF-8
    "fixtures/data.csv.gz": bytes.fromhex("1f8b0800000000000203") + bytes(range(200)),  # gzip header + body
    "img/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
}


def full_task(**overrides) -> Task:
    """A task that sets every field added for Harbor tasks, with binary files in every file map and CRLF text."""
    from terminal_agent.tasks.model import VerifierSpec

    fields = dict(
        task_id="full.task",
        instruction="Repair the archive.\r\nKeep CRLF ✓.",
        dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nCOPY fixtures/ /app/fixtures/\n",
        files={**BINARY_FILES, "notes/crlf.txt": "one\r\ntwo\r\n", "src/main.py": "print('hi')\n"},
        docker_image="images.example/full-task:1.0",
        env={"API_URL": "${API_URL:-http://localhost:8080}", "MODE": "test"},
        test_source=RICH_TESTS,
        test_support_files={"data/expected.bin": b"\xff\xfe\x00\x01", "data/expected.txt": "ok\r\n"},
        test_weights={"test_first": 1.0, "test_second": 2.0, "test_third": 0.5},
        solution="#!/bin/bash\ncp /solution/fixed.bin /app/\n",
        solution_files={"fixed.bin": b"\x00\x01\x02\xff", "notes.md": "# how\n"},
        limits=TaskLimits(build_timeout_s=1234.5, network=True, memory_mb=2048),
        verifier=VerifierSpec(
            env={"VERIFIER_TOKEN": "${TOKEN:-none}"}, user="tester", network=False, separate_environment=True,
            environment_dockerfile="FROM ubuntu:24.04\nRUN true\n", artifacts=["/app/out", "/logs/extra"],
        ),
        metadata={"source": "hand-written", "created_at": "2026-01-01"},
    )
    fields.update(overrides)
    return Task(**fields)


def harbor_mode_task(**overrides) -> Task:
    """A task graded by its own tests/test.sh (harbor mode): no Python test file, no weights, binary fixtures."""
    from terminal_agent.tasks.model import GradingMode, VerifierSpec

    fields = dict(
        task_id="harbor-mode",
        instruction="Make /app/out.txt say hi.",
        dockerfile="FROM ubuntu:24.04\n",
        test_source="",
        test_support_files={
            "test.sh": "#!/bin/bash\ngrep -q hi /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
            "fixture.gz": BINARY_FILES["fixtures/data.csv.gz"],
        },
        test_weights={},
        verifier=VerifierSpec(mode=GradingMode.HARBOR),
    )
    fields.update(overrides)
    return Task(**fields)


CORPUS_DIR = Path(__file__).resolve().parents[1] / "dataset" / "corpus"


def corpus_specs(*modules: str) -> list:
    """The ``Spec`` objects of the corpus modules ``modules`` (dataset/corpus/<name>.py), in order.

    Each module is loaded from its file under a private name, fresh on every call, so no installed distribution
    of the same name can stand in for it; dataset/corpus is on ``sys.path`` only while they load (for their
    ``from _spec import ...``)."""
    import importlib.util
    import sys

    sys.path.insert(0, str(CORPUS_DIR))
    try:
        specs = []
        for name in modules:
            found = importlib.util.spec_from_file_location(f"_corpus_{name}", CORPUS_DIR / f"{name}.py")
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
            specs.extend(module.TASKS)
        return specs
    finally:
        sys.path.remove(str(CORPUS_DIR))
