"""Service tasks: the reference solution starts a daemon and the tests talk to it, as in Terminal-Bench 2
(mailman, git-multibranch) and terminal-bench v1 (jupyter-notebook-server).

Harbor runs the verifier beside the agent's processes, and terminal-bench v1 runs its tests beside them, so
the grader keeps them for those tasks: frozen while it inspects and stages, running while the tests run,
frozen again when the tests are over, killed before anything is read (``rewards/agent_processes.py``,
``rewards/assets/agent_gate.py``). Shown here through the real env and grader in real containers, on
Docker and bwrap: the oracle of a TB2-style service task of our own scores 1.0 and a no-op 0; the same oracle
scores 0 when the agent's processes are killed (the old behaviour); and a reward file written by an agent
process (a ``setsid`` writer that keeps rewriting ``reward.txt``, one that waits for the verifier's own write
and overwrites it) never counts, nor do tests an agent process rewrote while they ran. Controls show that the
same writers win against a harness that leaves the agent's processes running unchecked.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest
import yaml

from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.env import DockerIsolatedEnv, EnvConfig
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rewards.agent_processes import KEEP, KILL, agent_process_policy
from terminal_agent.rewards.grading import GradingConfig
from terminal_agent.rollout.episode import run_episode
from terminal_agent.task_quality.validation import noop_replies, oracle_replies
from terminal_agent.tasks.harbor.format import read_harbor_task
from terminal_agent.tasks.model import GradingMode, Task, TaskLimits, VerifierSpec

PORT = 8642
NUMBERS = [17, 4, 23, 8, 15, 42, 16, 99, 7, 1]
ANSWER = sum(n * n for n in NUMBERS)  # the service answers the sum of squares of /app/numbers.txt

TASK_TOML = textwrap.dedent(
    """\
    version = "1.0"

    [metadata]
    author_name = "terminal-agent tests"
    difficulty = "easy"
    category = "system-administration"
    tags = ["service", "http"]

    [verifier]
    timeout_sec = 120.0

    [agent]
    timeout_sec = 600.0

    [environment]
    build_timeout_sec = 600.0
    cpus = 1
    memory_mb = 2048
    allow_internet = false
    """
)
INSTRUCTION = textwrap.dedent(
    f"""\
    Run an HTTP service on 127.0.0.1:{PORT} that answers `GET /sum-of-squares` with the sum of the squares of
    the integers in /app/numbers.txt (one per line), as plain text, and `GET /health` with `ok`.
    Start it in the background so that it is still running when the tests execute.
    """
)
DOCKERFILE = "FROM terminal-agent/base:bookworm\nWORKDIR /app\nCOPY numbers.txt /app/numbers.txt\n"
SERVER = textwrap.dedent(
    f"""\
    import http.server

    def answer():
        with open("/app/numbers.txt") as handle:
            return sum(int(line) ** 2 for line in handle if line.strip())

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = {{"/sum-of-squares": str(answer()), "/health": "ok"}}.get(self.path)
            self.send_response(200 if body else 404)
            self.end_headers()
            self.wfile.write((body or "not found").encode())

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", {PORT}), Handler).serve_forever()
    """
)
SOLVE_SH = (
    "#!/bin/bash\nset -e\n"
    f"cat > /app/server.py <<'EOF'\n{SERVER}EOF\n"
    "nohup python3 /app/server.py > /tmp/server.log 2>&1 &\n"
    f"for i in $(seq 100); do python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:{PORT}/health\")' "
    "2>/dev/null && exit 0; sleep 0.1; done\n"
    "echo 'the server did not come up' >&2; exit 1\n"
)
TEST_SH = textwrap.dedent(
    """\
    #!/bin/bash
    apt-get update
    apt-get install -y curl
    curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
    source $HOME/.local/bin/env
    uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 \\
      pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
    if [ $? -eq 0 ]; then
      echo 1 > /logs/verifier/reward.txt
    else
      echo 0 > /logs/verifier/reward.txt
    fi
    """
)
TEST_OUTPUTS = textwrap.dedent(
    f"""\
    import urllib.request

    URL = "http://127.0.0.1:{PORT}"


    def fetch(path):
        with urllib.request.urlopen(URL + path, timeout=10) as response:
            return response.status, response.read().decode().strip()


    def test_health():
        assert fetch("/health") == (200, "ok")


    def test_sum_of_squares():
        assert fetch("/sum-of-squares") == (200, "{ANSWER}")
    """
)


def write_service_task(parent: Path, name: str = "http-sum-of-squares") -> Path:
    """A Terminal-Bench 2 task directory: task.toml, instruction.md, environment/, solution/, tests/."""
    root = parent / name
    files = {
        "task.toml": TASK_TOML,
        "instruction.md": INSTRUCTION,
        "environment/Dockerfile": DOCKERFILE,
        "environment/numbers.txt": "".join(f"{n}\n" for n in NUMBERS),
        "solution/solve.sh": SOLVE_SH,
        "tests/test.sh": TEST_SH,
        "tests/test_outputs.py": TEST_OUTPUTS,
    }
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def bash(command: str) -> str:
    return "<bash>\n" + yaml.safe_dump({"cmd": command, "timeout_secs": 120}, default_style="|", width=10_000) + "</bash>"


FINISH = "<finish>\nmessage: done\n</finish>"


def background(name: str, script: str) -> str:
    """An agent action that leaves ``script`` running in its own session, immune to SIGTERM/SIGHUP."""
    return (f"mkdir -p /opt/agent && cat > /opt/agent/{name}.sh <<'__TA_EOF__'\ntrap '' TERM INT HUP\n{script}\n__TA_EOF__\n"
            f"setsid nohup bash /opt/agent/{name}.sh >/dev/null 2>&1 < /dev/null & sleep 0.3; pgrep -c -f {name}.sh")


WRITERS: dict[str, str] = {
    # the brief's writer: rewrites reward.txt to 1 as fast as it can, from before test.sh starts to the end
    "setsid_writer": "while :; do mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; done 2>/dev/null",
    # waits for the verifier's own reward and overwrites it at once (a harness that only kills the agent's
    # processes after test.sh exits loses this race)
    "racer": ("f=/logs/verifier/reward.txt\n"
              "while :; do if [ -s $f ] && [ \"$(cat $f)\" != 1 ]; then echo 1 > $f; fi; done 2>/dev/null"),
    # plants reward.txt and kills test.sh before the verifier can write its own
    "killer": ("while :; do for p in $(pgrep -f tests/test.sh); do echo 1 > /logs/verifier/reward.txt; kill -9 $p; done; "
               "sleep 0.01; done 2>/dev/null"),
    # rewrites the tests as soon as they appear, so that they pass without the service
    "test_rewriter": ("while :; do if [ -f /tests/test_outputs.py ] && ! grep -q FORGED /tests/test_outputs.py; then "
                      "printf '# FORGED\\ndef test_health():\\n    pass\\n\\ndef test_sum_of_squares():\\n    pass\\n' "
                      "> /tests/test_outputs.py; fi; sleep 0.005; done 2>/dev/null"),
    # drops a conftest that passes every test into /tests as soon as it appears, and removes it again
    "conftest_planter": ("while :; do if [ -f /tests/test.sh ] && [ ! -f /tests/conftest.py ]; then "
                         "printf 'import pytest\\n@pytest.hookimpl(hookwrapper=True)\\ndef pytest_runtest_makereport(item, call):\\n"
                         "    outcome = yield\\n    outcome.get_result().outcome = \"passed\"\\n' > /tests/conftest.py; "
                         "sleep 3; rm -f /tests/conftest.py; fi; sleep 0.005; done 2>/dev/null"),
}


@pytest.fixture(scope="module")
def service_task(tmp_path_factory) -> Task:
    return read_harbor_task(write_service_task(tmp_path_factory.mktemp("tb2")))


@pytest.fixture(scope="module")
def v1_task() -> Task:
    """The same service as a terminal-bench v1 task (weighted pytest, read from a task.yaml terminal-bench wrote)."""
    return Task(
        task_id="tb-http-sum-of-squares", instruction=INSTRUCTION, dockerfile=DOCKERFILE,
        files={"numbers.txt": "".join(f"{n}\n" for n in NUMBERS)}, test_source=TEST_OUTPUTS,
        test_weights={"test_health": 1.0, "test_sum_of_squares": 1.0}, solution=SOLVE_SH,
        metadata={"parser_name": "pytest"}, limits=TaskLimits(test_timeout_s=60),
    )


@pytest.fixture(scope="module")
def images(docker_client, service_task, v1_task):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    return [ensure_task_image(service_task), ensure_task_image(v1_task)]


@pytest.fixture(params=["docker", "bwrap"])
def backend(request, service_task, v1_task):
    from terminal_agent.sandbox.config import SandboxConfig

    if request.param == "docker":
        return SandboxConfig()
    from bwrap_support import bwrap_config

    return bwrap_config([service_task, v1_task])


def run(task: Task, replies: list[str], sandbox=None, grading: GradingConfig | None = None):
    from terminal_agent.sandbox.config import SandboxConfig

    config = EnvConfig(max_steps=len(replies) + 1, sandbox=sandbox or SandboxConfig(), grading=grading or GradingConfig())
    env = DockerIsolatedEnv(task, config)
    return run_episode(env, TerminalBenchAgent(), ScriptedModelClient(replies), max_steps=len(replies) + 1)


# --- which mode keeps what (no container) -------------------------------------------------------------
def test_the_policy_per_mode(service_task, v1_task):
    assert agent_process_policy(service_task).action == KEEP  # Harbor: the verifier runs beside the agent
    assert agent_process_policy(v1_task).action == KEEP  # terminal-bench v1: the tests run beside it
    own = v1_task.model_copy(update={"metadata": {}})
    assert agent_process_policy(own).action == KILL  # the project's own weighted tasks
    assert agent_process_policy(own.model_copy(update={"metadata": {"agent_processes": "keep"}})).action == KEEP
    assert agent_process_policy(service_task, "kill").action == KILL
    separate = service_task.model_copy(update={"verifier": VerifierSpec(mode=GradingMode.HARBOR, separate_environment=True)})
    assert agent_process_policy(separate).action == KILL
    custom = service_task.model_copy(update={"test_support_files": {"test.sh": "#!/bin/bash\npython3 /tests/judge.py\n"}})
    assert "no pytest" in agent_process_policy(custom).reason


def _agent_gate_module():
    import importlib.util
    from importlib import resources

    path = resources.files("terminal_agent.rewards").joinpath("assets", "agent_gate.py")
    spec = importlib.util.spec_from_file_location("_agent_gate_under_test", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_last_change_decides_who_wrote_a_reward(tmp_path):
    """The judgement alone, from recorded phases (never ``freeze``/``thaw`` here: on this host they would stop
    every process but init): a reward last changed while the agent's processes ran is untrusted, one the
    verifier rewrote after they were frozen is not; a staged file changed while they ran is reported, one
    changed while they were frozen is not."""
    gate = _agent_gate_module().AgentGate(keep=[], frozen=[], already_stopped=[])
    planted, rewritten, staged, later = (tmp_path / n for n in ("planted.txt", "rewritten.txt", "staged.py", "later.py"))
    staged.write_text("def test_a():\n    assert False\n")
    later.write_text("x = 1\n")
    gate.watch([str(planted), str(rewritten)], "reward")
    gate.watch([str(staged), str(later)], "staged")
    gate.record("running")
    planted.write_text("1\n")  # an agent process, while they run
    rewritten.write_text("1\n")
    staged.write_text("def test_a():\n    assert True\n")  # same size, same tick: the hash shows it
    gate.record("frozen")
    rewritten.write_text("0\n")  # the verifier, after its tests
    later.write_text("x = 2\n")
    gate.record("frozen")
    verdict = gate.verdict()
    assert verdict["untrusted"] == [str(planted)]
    assert verdict["changed"] == [str(staged)]


def test_an_unarmed_gate_signals_nothing(monkeypatch):
    """Outside the verifier runner (here: on the host running the tests) a gate refuses to stop or kill."""
    module = _agent_gate_module()
    sent = []
    monkeypatch.setattr(module.os, "kill", lambda pid, signum: sent.append((pid, signum)))
    gate = module.AgentGate(keep=[], frozen=[], already_stopped=[])
    for action in (lambda: gate.freeze(set()), gate.kill_all):
        with pytest.raises(RuntimeError, match="not armed"):
            action()
    assert sent == []


# --- Terminal-Bench 2 (Harbor mode), Docker and bwrap -------------------------------------------------
@pytest.mark.docker
def test_oracle_scores_one_with_its_daemon_kept(images, service_task, backend):
    result = run(service_task, oracle_replies(service_task), backend)
    assert result.scored and result.reward == pytest.approx(1.0), (result.error, result.grade)
    assert result.grade.agent_processes == "kept" and not result.grade.tamper_signals
    assert sorted(t.name for t in result.grade.tests if t.passed) == [
        "test_outputs.py::test_health", "test_outputs.py::test_sum_of_squares"]


@pytest.mark.docker
def test_no_op_scores_zero(images, service_task, backend):
    result = run(service_task, noop_replies(), backend)
    assert result.scored and result.reward == 0.0, (result.error, result.grade)
    assert not result.grade.tamper_signals


@pytest.mark.docker
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_what_an_agent_process_writes_never_counts(images, service_task, backend, writer):
    result = run(service_task, [bash(background(writer, WRITERS[writer])), FINISH], backend)
    assert result.scored, (writer, result.error)
    assert result.reward == 0.0, (writer, result.grade)
    assert result.grade.agent_processes == "kept"
    if writer == "killer":  # the verifier never wrote a reward: the one there is the agent's
        assert any("reward.txt was last written while" in s for s in result.grade.tamper_signals), result.grade
    if writer == "test_rewriter":  # its forged tests passed, and do not count
        assert any("/tests/test_outputs.py" in s for s in result.grade.tamper_signals), result.grade
    if writer == "conftest_planter":  # gone by the end, but /tests changed while the agent's processes ran
        assert any("staged files changed" in s and "/tests" in s for s in result.grade.tamper_signals), result.grade


@pytest.mark.docker
def test_the_oracle_beside_a_writer_keeps_its_own_reward(images, service_task):
    result = run(service_task, [*oracle_replies(service_task)[:-1], bash(background("racer", WRITERS["racer"])), FINISH])
    assert result.scored and result.reward == pytest.approx(1.0), (result.error, result.grade)


@pytest.mark.docker
def test_killing_the_agents_processes_scores_the_oracle_zero(images, service_task):
    """Control: the old behaviour (every agent process killed before test.sh) fails the service task."""
    result = run(service_task, oracle_replies(service_task), grading=GradingConfig(agent_processes="kill"))
    assert result.scored and result.reward == 0.0, (result.error, result.grade)
    assert result.grade.agent_processes == "killed"


NAIVE_TEST_SH = (
    f"#!/bin/bash\npython3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:{PORT}/health\")' "
    "&& echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n"
)


@pytest.mark.docker
@pytest.mark.parametrize("writer", ["setsid_writer", "racer"])
def test_the_writers_win_against_a_harness_that_leaves_them_running(images, service_task, writer):
    """Control: test.sh run beside the agent's processes with nothing frozen, the reward read when it exits
    (as a harness that only keeps the daemons would) gives the writer its 1."""
    import io
    import tarfile

    from terminal_agent.sandbox.backends import start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig

    sandbox = start_sandbox(SandboxConfig(), images[0], service_task.limits, run_id="test-service-naive")
    try:
        sandbox.exec(background(writer, WRITERS[writer]), timeout=30)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            text = NAIVE_TEST_SH.encode()
            info = tarfile.TarInfo("tests/test.sh")
            info.size, info.mode = len(text), 0o755
            tar.addfile(info, io.BytesIO(text))
        sandbox.exec("rm -rf /logs/verifier; mkdir -p /logs/verifier", timeout=10)
        sandbox.put_archive("/", buffer.getvalue())
        sandbox.run_privileged(["bash", "-c", "cd /app && bash /tests/test.sh"], 60)
        seen = set()
        # the harness reads while the writer runs (a read can fall between truncate and write); on a loaded host the
        # writer's busy loop may not get the CPU for a while: the reads go on for seconds, not a fixed count
        deadline = time.monotonic() + 15
        while b"1" not in seen and time.monotonic() < deadline:
            seen.add(sandbox.read_file("/logs/verifier/reward.txt").strip())
            time.sleep(0.005)
        assert b"1" in seen, (writer, seen)
    finally:
        sandbox.close()


# --- terminal-bench v1 (weighted pytest mode) ---------------------------------------------------------
JUNIT_FORGER = (
    "x='<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\" tests=\"2\">"
    "<testcase classname=\"test_outputs\" name=\"test_health\"/><testcase classname=\"test_outputs\" "
    "name=\"test_sum_of_squares\"/></testsuite></testsuites>'\n"
    "while :; do for d in /var/lib/ta-verifier-*; do [ -d $d/out ] && { echo \"$x\" > $d/out/report.xml; "
    "echo '{\"survivors\": 0, \"realpath\": \"'$d'\"}' > $d/out/status.json; }; done; done 2>/dev/null"
)


@pytest.mark.docker
def test_terminal_bench_v1_oracle_scores_one_and_no_op_zero(images, v1_task, backend):
    oracle = run(v1_task, oracle_replies(v1_task), backend)
    assert oracle.scored and oracle.reward == pytest.approx(1.0), (oracle.error, oracle.grade)
    assert oracle.grade.agent_processes == "kept"
    noop = run(v1_task, noop_replies(), backend)
    assert noop.scored and noop.reward == 0.0, (noop.error, noop.grade)


V1_TEST_REWRITER = (
    "while :; do for f in /var/lib/ta-verifier-*/tests/test_outputs.py; do [ -f $f ] && ! grep -q FORGED $f && "
    "printf '# FORGED\\ndef test_health():\\n    pass\\n\\ndef test_sum_of_squares():\\n    pass\\n' > $f; "
    "done; done 2>/dev/null"
)


@pytest.mark.docker
@pytest.mark.parametrize("forger", ["junit", "tests"])
def test_terminal_bench_v1_forged_reports_and_tests_never_count(images, v1_task, backend, forger):
    script = JUNIT_FORGER if forger == "junit" else V1_TEST_REWRITER
    result = run(v1_task, [bash(background(forger, script)), FINISH], backend)
    assert result.scored and result.reward == 0.0, (result.error, result.grade)
    assert result.grade.agent_processes == "kept"
    if forger == "tests":
        assert any("test_outputs.py" in s for s in result.grade.tamper_signals), result.grade


# --- the freeze itself ----------------------------------------------------------------------------------
@pytest.mark.docker
def test_the_shell_server_freezes_every_process_but_init_and_itself(images, service_task, backend):
    from terminal_agent.sandbox.backends import start_sandbox

    sandbox = start_sandbox(backend, images[0], service_task.limits, run_id="test-service-freeze")
    try:
        sandbox.exec("setsid nohup sleep 997 >/dev/null 2>&1 & setsid nohup sleep 998 >/dev/null 2>&1 & "
                     "sleep 0.3; pkill -STOP -f 'sleep 997'", timeout=10)
        held = sandbox.freeze_agent_processes()
        assert held["stopped"] and len(held["already_stopped"]) == 1 and not held["running"], held
        states = sandbox.run_privileged(["sh", "-c", "for p in /proc/[0-9]*; do echo $(cat $p/stat 2>/dev/null | "
                                         "sed 's/.*) //' | cut -d' ' -f1) $(cat $p/comm 2>/dev/null); done"], 30)
        sleeps = [line.split()[0] for line in states.output.splitlines() if line.endswith(" sleep")]
        assert sorted(sleeps) == ["T", "T"], states.output
        assert sandbox.kill_agent_processes() >= 2
    finally:
        sandbox.close()


class _SandboxWhoseFreezeMisses:
    """A real sandbox whose freeze stops nothing (defence in depth: the runner checks for itself)."""

    def __init__(self, sandbox):
        self._sandbox = sandbox

    def __getattr__(self, name):
        return getattr(self._sandbox, name)

    def freeze_agent_processes(self):
        return {"stopped": [], "already_stopped": [], "running": []}


@pytest.mark.docker
def test_a_process_that_escaped_the_freeze_is_a_tamper_signal(images, service_task):
    from terminal_agent.rewards.harbor.verifier import HarborGrader
    from terminal_agent.sandbox.backends import start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig

    sandbox = start_sandbox(SandboxConfig(), images[0], service_task.limits, run_id="test-service-escape")
    try:
        assert sandbox.exec(SOLVE_SH.split("\n", 1)[1], timeout=60).exit_code == 0
        result = HarborGrader().grade(_SandboxWhoseFreezeMisses(sandbox), service_task)
        assert result.scored and result.score == 0.0, (result.error, result.log_tail)
        assert any("ran after the grader froze" in signal for signal in result.tamper_signals), result.tamper_signals
    finally:
        sandbox.close()


@pytest.mark.docker
def test_what_the_tests_write_into_their_home_is_no_tampering(images, v1_task):
    """The weighted runner's HOME is its verifier dir: caches the tests write there while the agent's processes
    run are the verifier's own doing."""
    source = TEST_OUTPUTS + textwrap.dedent(
        """

        def test_cache_in_home():
            import os

            os.makedirs(os.path.expanduser("~/.cache/some-library"), exist_ok=True)
            with open(os.path.expanduser("~/.cache/some-library/state"), "w") as handle:
                handle.write("x")
        """
    )
    task = v1_task.model_copy(update={"test_source": source, "test_weights": {**v1_task.test_weights, "test_cache_in_home": 1.0}})
    result = run(task, oracle_replies(task))
    assert result.scored and result.reward == pytest.approx(1.0), (result.error, result.grade)
    assert result.grade.agent_processes == "kept" and not result.grade.tamper_signals
