"""A backend added from outside the package (``local_backend.py``, this directory): one module plus one registry
line, and the env, the episode loop, the pool and cleanup use it without an edit anywhere else.

Nothing here needs Docker: the ``local`` backend runs commands on this host in a temporary directory.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import local_backend
from terminal_agent.agent import TerminalBenchAgent
from terminal_agent.cli import app
from terminal_agent.env import DockerIsolatedEnv, EnvConfig
from terminal_agent.interfaces import GradingSandbox, Sandbox
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rollout.episode import run_episode
from terminal_agent.sandbox.backends import get_backend, resolve_task_image, start_sandbox
from terminal_agent.sandbox.cleanup import CleanupDaemon, find_leaked, sweep_leaked
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.pool import SandboxPool
from terminal_agent.sandbox.registry import SANDBOX_BACKENDS
from terminal_agent.tasks.model import Task, TaskLimits

pytestmark = pytest.mark.serial  # leaves or sweeps leaked sandboxes machine-wide: runs alone (scripts/test.sh)

LOCAL = SandboxConfig(backend="local")
TASK = Task(
    task_id="local-answer",
    instruction="Write 42 into answer.txt.",
    dockerfile="FROM terminal-agent/base:bookworm\n",  # never built: the local backend's image is the host
    test_source="def test_answer():\n    assert open('answer.txt').read().strip() == '42'\n",
    test_weights={"test_answer": 1.0},
)


def bash(command: str) -> str:
    return "<bash>\n" + yaml.safe_dump({"cmd": command}, default_style="|", width=10_000) + "</bash>"


def test_the_local_backend_is_in_the_registry_with_every_hook():
    assert "local" in SANDBOX_BACKENDS.names() and get_backend("local") is local_backend.BACKEND
    assert SandboxConfig(backend="local").backend == "local"  # the config accepts a name registered at run time


def test_start_exec_files_and_close_through_the_registry():
    image = resolve_task_image(LOCAL, TASK)
    with start_sandbox(LOCAL, image, TaskLimits(), run_id="test-local", env={"GREETING": "${NO_SUCH_VAR:-hi}"}) as sandbox:
        assert isinstance(sandbox, Sandbox) and not isinstance(sandbox, GradingSandbox)  # the agent's half only
        assert sandbox.exec("echo $GREETING > g.txt; cat g.txt", 10).output == "hi\n"  # task env templates resolved
        assert sandbox.read_file(f"{sandbox.work}/g.txt") == b"hi\n"
        sandbox.write_file(f"{sandbox.work}/sub/f.txt", b"x")
        assert sandbox.exec("cat sub/f.txt", 10).output == "x"
        timed = sandbox.exec("sleep 30", 0.5)
        assert timed.timed_out and timed.exit_code == 124 and timed.duration_s < 5
        with pytest.raises(PermissionError):
            sandbox.read_file("/etc/hostname")  # outside its directory: never the host's files
        directory = sandbox.directory
    assert not directory.exists()


def test_a_real_episode_runs_through_the_local_backend():
    """The real env, agent and episode loop on the local backend: the agent's commands run there; the grader
    that this backend cannot host flags the episode as a sandbox failure instead of scoring it 0."""
    before = set(local_backend.BACKEND.sandboxes().glob("lo-*"))
    model = ScriptedModelClient([bash("echo 42 > answer.txt && cat answer.txt"), "<finish>\nmessage: done\n</finish>"])
    env = DockerIsolatedEnv(TASK, EnvConfig(sandbox=LOCAL, run_id="test-local-episode"))
    result = run_episode(env, TerminalBenchAgent(), model, max_steps=4)
    assert result.turns == 2
    observations = " ".join(str(step.observation) for step in result.trajectory.steps)
    assert "42" in observations  # the bash action ran in the local sandbox
    assert not result.scored and result.error_kind == "sandbox", (result.termination, result.error_kind)
    assert "serves no grader" in str(result.grade), result.grade
    assert set(local_backend.BACKEND.sandboxes().glob("lo-*")) == before  # the env released its sandbox


def test_the_pool_serves_local_sandboxes():
    with SandboxPool(SandboxConfig(backend="local", pool_size=1), run_id="test-local-pool") as pool:
        pool.prewarm(local_backend.IMAGE, wait=True)
        assert pool.warm_count(local_backend.IMAGE) == 1
        sandbox = pool.acquire(local_backend.IMAGE)
        assert isinstance(sandbox, local_backend.LocalSandbox) and pool.stats.hits == 1
        assert sandbox.exec("echo pooled", 10).output == "pooled\n"
        pool.release(sandbox)
    assert not sandbox.is_alive() and pool.stats.torn_down >= 2  # the released one and the refill


def test_cleanup_lists_and_sweeps_a_local_sandbox_whose_owner_was_killed():
    holder = subprocess.Popen([sys.executable, local_backend.__file__, "hold"], stdout=subprocess.PIPE, text=True)
    try:
        sandbox_id = holder.stdout.readline().strip()
        assert sandbox_id.startswith("lo-")
        assert sandbox_id not in {obj.id for obj in find_leaked(backends=["local"])}  # its owner is alive
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    leaked = {obj.id: obj for obj in find_leaked()}  # every backend's hooks, this one's included
    assert leaked[sandbox_id].backend == "local" and "is gone" in leaked[sandbox_id].reason

    listed = CliRunner().invoke(app, ["cleanup"], env={"COLUMNS": "250"})
    assert listed.exit_code == 0, listed.output
    assert sandbox_id in listed.output and "local" in listed.output
    assert (local_backend.BACKEND.sandboxes() / sandbox_id).is_dir()  # a dry run removes nothing

    removed = sweep_leaked(backends=["local"])
    assert sandbox_id in {obj.id for obj in removed}
    assert not (local_backend.BACKEND.sandboxes() / sandbox_id).exists()


def test_the_cleanup_daemon_sweeps_local_leaks_and_close_ends_live_sandboxes():
    holder = subprocess.Popen([sys.executable, local_backend.__file__, "hold"], stdout=subprocess.PIPE, text=True)
    sandbox_id = holder.stdout.readline().strip()
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with CleanupDaemon(interval_s=0.2, backends=["local"]) as daemon:
        deadline = time.monotonic() + 10
        while (local_backend.BACKEND.sandboxes() / sandbox_id).exists():
            assert time.monotonic() < deadline, "the daemon did not remove the leaked local sandbox"
            time.sleep(0.05)
    assert daemon.removed >= 1

    live = start_sandbox(LOCAL, local_backend.IMAGE, run_id="test-local-close")
    get_backend("local").close()  # the close hook: every live sandbox of this process
    assert not live.is_alive() and not live.directory.exists()


class _DaemonLikeBackend(local_backend.LocalBackend):
    """The local backend behind a "daemon" that is down until ``wait_ready`` has waited for it (once)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.up = False
        self.waits: list[float] = []
        self.refused = 0
        self.started = 0

    def start(self, config, image_ref, limits, run_id, env, *, verifier_network=None):  # noqa: ANN001
        from terminal_agent.errors import SandboxUnavailableError

        if not self.up:
            self.refused += 1
            raise SandboxUnavailableError("the daemon is restarting")
        self.started += 1
        return super().start(config, image_ref, limits, run_id, env, verifier_network=verifier_network)

    def wait_ready(self, config, timeout_s: float) -> bool:  # noqa: ANN001
        self.waits.append(timeout_s)
        self.up = True
        return True


def test_a_sandbox_retry_waits_for_the_backend_to_answer(tmp_path):
    from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner

    backend = _DaemonLikeBackend(tmp_path)
    SANDBOX_BACKENDS.register("local-restarting")(backend)
    config = RolloutConfig(attempts=1, max_steps=3, concurrency=1, sweep_leaked=False, retries=1, retry_delay_s=0.0,
                           retry_wait_ready_s=7.0, sandbox=SandboxConfig(backend="local-restarting"))
    attempts: list = []
    runner = RolloutRunner(ScriptedModelClient([bash("echo 42 > answer.txt"), "<finish>\nmessage: done\n</finish>"]),
                           config, on_attempt=lambda spec, trial, final: attempts.append((trial.error, final)))
    trials = runner.run([TASK]).trials
    assert backend.refused == 1 and backend.waits == [7.0]  # the retry asked the backend before starting again
    assert backend.started == 1 and len(trials) == 1 and [final for _, final in attempts] == [False, True]
    assert attempts[0][0].kind == "sandbox" and "restarting" in attempts[0][0].message
    # the retry's episode ran in a started sandbox (this test backend runs no grader, so it is not scored)
    assert "restarting" not in (trials[0].error.message if trials[0].error else "")


def test_without_a_wait_ready_hook_a_backend_counts_as_ready():
    from terminal_agent.sandbox.backends import wait_until_ready

    assert not hasattr(local_backend.BACKEND, "wait_ready")
    assert wait_until_ready(LOCAL, 0.1) is True
