"""Weighted grading: JUnit parsing and scoring, tamper rules, and the grader against real containers."""

from __future__ import annotations

import io
import textwrap
import time
import zipfile

import pytest

from terminal_agent.rewards.grading import Change, ChangeScan, GradingConfig, choose_interpreter, find_tamper_signals
from terminal_agent.rewards.verifier_bundle import get_bundle
from terminal_agent.rewards.weighted_pytest.grader import Grader
from terminal_agent.rewards.weighted_pytest.junit_scoring import parse_junit, score_tests
from terminal_agent.tasks.model import Task, TaskLimits

SOURCE = textwrap.dedent(
    """
    import os
    import pytest

    def test_a():
        assert os.path.exists("/app/a")

    @pytest.mark.parametrize("n", [1, 2])
    def test_b(n):
        assert os.path.exists(f"/app/b{n}")

    class TestC:
        def test_c(self):
            assert os.path.exists("/app/c")
    """
)


def make_task(source: str = SOURCE, weights: dict[str, float] | None = None, **limits) -> Task:
    return Task(
        task_id="grading-unit",
        instruction="make files",
        dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
        test_source=source,
        test_weights=weights or {"test_a": 1.0, "test_b": 2.0, "test_c": 1.0},
        limits=TaskLimits(**limits),
    )


def junit(*cases: str) -> bytes:
    return ('<?xml version="1.0"?><testsuites><testsuite name="pytest">' + "".join(cases) + "</testsuite></testsuites>").encode()


# --- pure functions ---------------------------------------------------------------------------
def test_score_is_weighted_over_all_declared_tests_and_unreported_ones_fail():
    reported = parse_junit(
        junit(
            '<testcase classname="t" name="test_a"/>',
            '<testcase classname="t" name="test_b[1]"/>',
            '<testcase classname="t" name="test_b[2]"><failure message="nope"/></testcase>',
        )
    )
    score, outcomes = score_tests(make_task(), reported)
    assert score == pytest.approx(1.0 / 4.0)  # a passes (1); b has a failing param (2); c never reported (1)
    by_name = {o.name: o for o in outcomes}
    assert by_name["test_a"].passed and by_name["test_a"].reported
    assert not by_name["test_b"].passed and by_name["test_b"].message == "nope"
    assert not by_name["test_c"].passed and not by_name["test_c"].reported


def test_skipped_and_errored_tests_do_not_pass_and_unweighted_tests_weigh_zero():
    reported = parse_junit(
        junit(
            '<testcase name="test_a"><skipped message="skip"/></testcase>',
            '<testcase name="test_b[1]"/>',
            '<testcase name="test_b[2]"/>',
            '<testcase classname="t.TestC" name="test_c"><error message="boom"/></testcase>',
        )
    )
    score, outcomes = score_tests(make_task(weights={"test_a": 1.0, "test_b": 3.0}), reported)
    assert score == pytest.approx(0.75)
    assert [o.weight for o in outcomes] == [1.0, 3.0, 0.0]


def test_unparsable_report_is_a_grading_error():
    from terminal_agent.errors import GradingError

    with pytest.raises(GradingError):
        parse_junit(b"<testsuites><testsuite>")


def scan(*changes: tuple[str, str, bool]) -> ChangeScan:
    return ChangeScan([Change(p, k, d) for p, k, d in changes], "diff")


def test_tamper_rules():
    python = "/usr/bin/python3"
    signals, pyc = find_tamper_signals(
        scan(
            ("/usr/lib/python3/dist-packages/evil.py", "A", False),
            ("/usr/local/lib/python3.11/dist-packages/x.pth", "A", False),
            ("/usr/lib/python3.11", "C", True),
            ("/usr/local/bin/python3", "A", False),
            ("/etc/python3.11/sitecustomize.py", "C", False),
            ("/app/x", "A", False),
        ),
        python,
    )
    assert signals == [] and pyc is False
    signals, pyc = find_tamper_signals(scan(("/usr/lib/python3.11/__pycache__/os.cpython-311.pyc", "C", False)), python)
    assert signals == [] and pyc is True
    for change in [
        ("/usr/lib/python3.11/os.py", "C", False),
        ("/usr/lib/python3.11/_json.py", "A", False),
        ("/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so", "D", False),
        ("/usr/bin/python3.11", "C", False),
        ("/usr/bin/python3", "D", False),
        ("/etc/ld.so.preload", "A", False),
        ("/usr/bin", "C", False),  # a directory replaced by a file or link
    ]:
        signals, _ = find_tamper_signals(scan(change), python)
        assert signals, change


def test_path_shadowing_rules():
    from terminal_agent.rewards.grading import find_path_shadowing
    from terminal_agent.rewards.tamper_detection import shadowing_probes

    def shadowing(*changes, image=("/usr/bin/python3", "/usr/bin/sh", "/usr/bin/cat", "/usr/bin/env")):
        listed = [Change(p, k, d) for p, k, d in changes]
        probes = shadowing_probes(listed)
        return find_path_shadowing(ChangeScan(listed, "diff", {p: p in image for p in probes}))

    found = shadowing(("/usr/local/bin/python3", "A", False), ("/usr/sbin/cat", "A", False), ("/usr/local/bin/mytool", "A", False))
    assert found.signals == [] and found.overrides == {"python3": "/usr/bin/python3", "cat": "/usr/bin/cat"}
    found = shadowing(("/usr/bin/cat", "C", False))  # a package upgrade may rewrite an unprotected program
    assert found.signals == [] and found.overrides == {}
    for change in [("/usr/bin/env", "C", False), ("/usr/bin/sh", "D", False), ("/usr/local/bin", "C", False), ("/usr/sbin", "D", True)]:
        assert shadowing(change).signals, change
    assert shadowing_probes([Change("/usr/local/bin/x", "A")])[:2] == ["/usr/local/sbin/x", "/usr/local/bin/x"]


def test_interpreter_choice_skips_added_interpreters():
    changes = scan(("/usr/bin/python3", "A", False))
    assert choose_interpreter(changes, ["/usr/bin/python3", "/usr/local/bin/python3"]) == "/usr/local/bin/python3"


def test_bundle_is_one_zip_with_pytest_and_bytecode():
    bundle = get_bundle()
    names = set(zipfile.ZipFile(io.BytesIO(bundle.data)).namelist())
    for required in ("pytest/__init__.py", "_pytest/main.py", "pluggy/__init__.py", "iniconfig/__init__.py",
                     "packaging/version.py", "pytest_timeout.py", "pygments/lexers/python.py"):
        assert required in names
    assert "_pytest/main.pyc" in names
    assert get_bundle() is bundle  # cached


# --- real containers --------------------------------------------------------------------------
@pytest.fixture(scope="module", params=["docker", "bwrap"])
def sandbox_factory(request, docker_client):
    """Sandboxes of the grading task's image on each backend (the grader sees only the Sandbox contract)."""
    from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig

    if request.param == "bwrap":
        from bwrap_support import bwrap_config

        config = bwrap_config([make_task()])
    else:
        config = SandboxConfig()
    image = resolve_task_image(config, make_task())
    started = []

    def start(task: Task):
        sandbox = start_sandbox(config, image, task.limits, run_id="test-grading")
        started.append(sandbox)
        return sandbox

    yield start
    for sandbox in started:
        sandbox.close()


@pytest.mark.docker
def test_grader_scores_partial_credit_with_timings(sandbox_factory):
    task = make_task()
    sandbox = sandbox_factory(task)
    sandbox.exec("mkdir -p /app && touch /app/a /app/b1 /app/c")
    result = Grader().grade(sandbox, task)
    assert result.scored, result.error
    assert result.score == pytest.approx(2.0 / 4.0)
    assert {t.name: t.passed for t in result.tests} == {"test_a": True, "test_b": False, "test_c": True}
    assert set(result.timings) >= {"kill_s", "inspect_s", "upload_s", "run_s", "read_s", "total_s"}
    info = result.to_info()
    assert info["scored"] is True and info["tamper_signals"] == []


@pytest.mark.docker
def test_grader_kills_agent_processes_before_running_tests(sandbox_factory):
    source = textwrap.dedent(
        """
        import os

        def test_no_agent_process_left():
            mine = {os.getpid(), os.getppid(), 1}
            others = []
            for pid in os.listdir("/proc"):
                if pid.isdigit() and int(pid) not in mine:
                    with open(f"/proc/{pid}/cmdline", "rb") as handle:
                        others.append(handle.read())
            assert not any(b"sleep" in c for c in others), others
        """
    )
    task = make_task(source, {"test_no_agent_process_left": 1.0})
    sandbox = sandbox_factory(task)
    sandbox.exec("for i in 1 2 3; do setsid nohup sleep 1000 >/dev/null 2>&1 & done", timeout=10)
    result = Grader().grade(sandbox, task)
    assert result.scored and result.score == 1.0, result.log_tail


@pytest.mark.docker
def test_a_hanging_test_fails_by_its_own_timeout_and_is_scored(sandbox_factory):
    source = "import time\n\ndef test_hang():\n    time.sleep(60)\n\ndef test_ok():\n    pass\n"
    task = make_task(source, {"test_hang": 1.0, "test_ok": 1.0}, test_timeout_s=4.0)
    result = Grader(GradingConfig(min_per_test_timeout_s=1.0)).grade(sandbox_factory(task), task)
    assert result.scored, result.error
    assert result.score == pytest.approx(0.5)


@pytest.mark.docker
def test_grader_past_its_deadline_is_not_scored(sandbox_factory):
    # the test blocks SIGALRM, so pytest-timeout cannot stop it: the host-side deadline must
    source = "import signal, time\n\ndef test_stuck():\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n    time.sleep(60)\n"
    task = make_task(source, {"test_stuck": 1.0}, test_timeout_s=2.0)
    result = Grader(GradingConfig(startup_grace_s=2.0, min_per_test_timeout_s=1.0)).grade(sandbox_factory(task), task)
    assert not result.scored
    assert result.score is None
    assert result.error_kind == "grading" and "deadline" in result.error
    assert result.to_info()["scored"] is False


@pytest.mark.docker
def test_a_test_that_leaves_a_child_holding_the_output_does_not_stall_grading(sandbox_factory):
    source = "import subprocess\n\ndef test_spawns():\n    subprocess.Popen(['sleep', '120'])\n"
    task = make_task(source, {"test_spawns": 1.0}, test_timeout_s=30.0)
    started = time.monotonic()
    result = Grader().grade(sandbox_factory(task), task)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert time.monotonic() - started < 25


@pytest.mark.docker
def test_a_verifier_crash_is_not_scored(sandbox_factory):
    source = "import os\nos._exit(3)\n\ndef test_never():\n    pass\n"
    task = make_task(source, {"test_never": 1.0})
    result = Grader().grade(sandbox_factory(task), task)
    assert not result.scored and result.error_kind == "grading"
    assert "no report" in result.error


@pytest.mark.docker
def test_a_collection_error_of_the_agents_code_scores_zero(sandbox_factory):
    source = "import sys\nsys.path.insert(0, '/app')\nfrom solution import answer\n\ndef test_answer():\n    assert answer() == 42\n"
    task = make_task(source, {"test_answer": 1.0})
    result = Grader().grade(sandbox_factory(task), task)
    assert result.scored and result.score == 0.0
    assert result.tests[0].reported is False


@pytest.mark.docker
def test_support_files_sit_beside_the_tests(sandbox_factory):
    source = ("from pathlib import Path\n\ndef test_fixture():\n    assert (Path(__file__).parent / 'data' / 'expected.txt').read_text() == 'ok'\n"
              "\ndef test_binary_fixture():\n    assert (Path(__file__).parent / 'data' / 'blob.bin').read_bytes() == bytes(range(256))\n")
    task = Task(
        task_id="grading-support",
        instruction="x",
        dockerfile="FROM terminal-agent/base:bookworm\n",
        test_source=source,
        test_support_files={"data/expected.txt": "ok", "data/blob.bin": bytes(range(256))},
        test_weights={"test_fixture": 1.0, "test_binary_fixture": 1.0},
    )
    result = Grader().grade(sandbox_factory(task), task)
    assert result.scored and result.score == 1.0, result.log_tail


class _SandboxWithBrokenKill:
    """A real sandbox whose kill_agent_processes misses everything (defence in depth)."""

    def __init__(self, sandbox):
        self._sandbox = sandbox

    def __getattr__(self, name):
        return getattr(self._sandbox, name)

    def kill_agent_processes(self) -> int:
        return 0


@pytest.mark.docker
def test_a_process_that_survived_the_kill_is_a_tamper_signal(sandbox_factory):
    task = make_task("def test_ok():\n    pass\n", {"test_ok": 1.0})
    sandbox = sandbox_factory(task)
    sandbox.exec("setsid nohup sleep 1000 >/dev/null 2>&1 &", timeout=10)
    result = Grader().grade(_SandboxWithBrokenKill(sandbox), task)
    assert result.scored and result.score == 0.0
    assert any("survived" in signal for signal in result.tamper_signals)


@pytest.mark.docker
@pytest.mark.parametrize("source", ["auto", "diff"])
def test_both_change_sources_see_interpreter_tampering(sandbox_factory, source):
    task = make_task("def test_ok():\n    pass\n", {"test_ok": 1.0})
    sandbox = sandbox_factory(task)
    sandbox.exec("echo '# x' >> /usr/lib/python3.11/os.py && mkdir -p /app/big && touch /app/big/f{1..200}")
    config = GradingConfig(change_source=source)
    result = Grader(config).grade(sandbox, task)
    # auto reads the overlay upper dir when this host can (root beside the daemon), else falls back;
    # bwrap's only listing is its own upper dir
    from terminal_agent.outcome import Grade
    from terminal_agent.rewards.grading import inspect_for_grading
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox

    expected = ("diff",) if source == "diff" and isinstance(sandbox, DockerSandbox) else ("upperdir", "diff")
    assert inspect_for_grading(sandbox, config, Grade(), {}).scan.source in expected  # the grader's step 2 as it ran
    assert result.scored and result.score == 0.0
    assert any("/usr/lib/python3.11/os.py" in signal for signal in result.tamper_signals)


@pytest.mark.docker
def test_a_symlinked_verifier_parent_is_replaced_not_followed(sandbox_factory):
    task = make_task("def test_ok():\n    pass\n", {"test_ok": 1.0})
    sandbox = sandbox_factory(task)
    assert sandbox.exec("mkdir -p /tmp/evil && cp -a /var/lib /tmp/varlib && rm -rf /var/lib && ln -s /tmp/evil /var/lib", 10).ok
    result = Grader().grade(sandbox, task)
    assert result.scored and result.score == 1.0 and result.tamper_signals == [], result
