"""A task's disk quota in real sandboxes (``sandbox.storage``; tests/test_storage_limits.py has the formats).

The scripted model drives the real agent in a real Docker container (and a bwrap sandbox where bwrap runs):
a command that writes past a 20 MiB quota ends the episode as ``storage_limit``, scored with the grader's own
reward (the agent's doing, never an infrastructure error); under the quota nothing changes; ``refuse`` refuses
the task before it starts, naming it, while the other tasks of the run go on; ``ignore`` sets no quota.

This machine's daemon runs overlay2 on ext4, which has no per-container quota, so the measured path is what runs
here; a daemon that takes ``storage_opt`` gets a kernel quota instead (checked when it does).
"""

from __future__ import annotations

import pytest

from terminal_agent.errors import StorageQuotaRefusedError
from terminal_agent.outcome import Termination
from terminal_agent.sandbox import labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task, TaskLimits

BASE = "terminal-agent/base:bookworm"
QUOTA_MB = 20
WRITE_DONE = "echo ok > /app/done.txt"
OVER_QUOTA = f"{WRITE_DONE} && head -c {30 * 1024 * 1024} /dev/zero > /app/fill.bin && echo wrote"
UNDER_QUOTA = f"{WRITE_DONE} && head -c {5 * 1024 * 1024} /dev/zero > /app/fill.bin && echo wrote"


def _task(task_id: str, storage_mb: int | None = QUOTA_MB) -> Task:
    return Task(
        task_id=task_id,
        instruction="Write ok to /app/done.txt.",
        dockerfile=f"FROM {BASE}\nWORKDIR /app\n",
        test_source="def test_done():\n    assert open('/app/done.txt').read().strip() == 'ok'\n",
        test_weights={"test_done": 1.0},
        limits=TaskLimits(storage_mb=storage_mb, memory_mb=512, agent_timeout_s=120.0),
    )


def _replies(command: str) -> list[str]:
    return [f"<bash>\ncmd: {command}\n</bash>", "<finish>\nmessage: done\n</finish>"]


def _episode(task: Task, command: str, sandbox: SandboxConfig):
    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.env import DockerIsolatedEnv, EnvConfig
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.episode import run_episode

    env = DockerIsolatedEnv(task, EnvConfig(max_steps=4, sandbox=sandbox))
    return run_episode(env, TerminalBenchAgent(), ScriptedModelClient(_replies(command)), max_steps=4)


def _kernel_quota_here(config: SandboxConfig) -> bool:
    """Whether this daemon holds quotas in the kernel (then nothing is measured and nothing is refused)."""
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox

    with DockerSandbox.start(BASE, limits=TaskLimits(storage_mb=QUOTA_MB), config=config,
                             run_id="test-storage-quota") as sandbox:
        return sandbox.storage_enforcement == "kernel"


@pytest.mark.docker
def test_a_write_past_the_quota_ends_the_episode_as_the_agents_doing(base_image):
    config = SandboxConfig()  # the default policy: enforce
    if _kernel_quota_here(config):
        pytest.skip("this daemon holds the quota in the kernel: the write fails with ENOSPC instead")
    result = _episode(_task("fill-disk"), OVER_QUOTA, config)
    outcome = result.outcome
    assert outcome.termination is Termination.STORAGE_LIMIT, outcome
    assert not outcome.termination.is_infrastructure
    assert outcome.scored and outcome.error_kind is None
    assert result.reward == pytest.approx(1.0)  # graded as it stands: done.txt was written before the disk filled
    record = outcome.details["storage"]  # in the env's final info too
    assert record == result.info["storage"] and record["exceeded"] and record["quota_bytes"] == QUOTA_MB * 1024 * 1024
    assert record["used_bytes"] >= 30 * 1024 * 1024 and record["source"] in ("upperdir", "size_rw")


@pytest.mark.docker
def test_under_the_quota_nothing_changes_and_ignore_sets_none(base_image):
    under = _episode(_task("fill-some"), UNDER_QUOTA, SandboxConfig())
    assert under.outcome.termination is Termination.FINISHED and under.reward == pytest.approx(1.0)
    ignored = _episode(_task("fill-ignored"), OVER_QUOTA, SandboxConfig(storage="ignore"))
    assert ignored.outcome.termination is Termination.FINISHED and ignored.reward == pytest.approx(1.0)
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox, docker_client

    with DockerSandbox.start(BASE, limits=TaskLimits(storage_mb=QUOTA_MB), config=SandboxConfig(storage="ignore"),
                             run_id="test-storage-quota") as sandbox:
        assert sandbox.storage_enforcement == "none" and sandbox.check_storage() is None
        assert not docker_client().api.inspect_container(sandbox.id)["HostConfig"].get("StorageOpt")


@pytest.mark.docker
def test_refuse_refuses_the_task_before_it_starts_and_the_others_go_on(base_image, docker_client):
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner

    refuse = SandboxConfig(storage="refuse")
    if _kernel_quota_here(SandboxConfig()):
        pytest.skip("this daemon holds the quota in the kernel: nothing to refuse")
    mine = {"label": f"{labels.RUN_ID}=test-storage-quota"}  # this test's run only: other workers start containers
    before = {c.id for c in docker_client.containers.list(all=True, filters=mine)}
    with pytest.raises(StorageQuotaRefusedError) as info:
        from terminal_agent.sandbox.backends import start_sandbox

        start_sandbox(refuse, BASE, TaskLimits(storage_mb=QUOTA_MB), run_id="test-storage-quota", task_id="fill-disk")
    assert str(info.value).startswith("task fill-disk: its disk quota (limits.storage_mb = 20 MiB)")
    assert "sandbox.storage = 'refuse'" in str(info.value)
    assert {c.id for c in docker_client.containers.list(all=True, filters=mine)} <= before  # nothing was created

    model = ScriptedModelClient(lambda messages: _replies(UNDER_QUOTA)[0 if len(messages) <= 2 else 1])
    runner = RolloutRunner(model, RolloutConfig(max_steps=4, concurrency=1, sweep_leaked=False, sandbox=refuse))
    results = runner.run([_task("needs-a-quota"), _task("needs-none", storage_mb=None)])
    trials = {trial.task_id: trial for trial in results.trials}
    refused = trials["needs-a-quota"]
    assert refused.status == "error" and refused.error is not None and refused.error.kind == "sandbox"
    assert "task needs-a-quota:" in refused.error.message and "cannot be held by a kernel quota" in refused.error.message
    assert trials["needs-none"].status == "scored" and trials["needs-none"].reward == pytest.approx(1.0)


@pytest.mark.docker
def test_bwrap_measures_its_upper_directory(docker_client):
    from bwrap_support import bwrap_config

    from terminal_agent.sandbox.backends import start_sandbox

    over, under = _task("bwrap-fill-disk"), _task("bwrap-fill-some")
    config = bwrap_config([over, under])
    result = _episode(over, OVER_QUOTA, config)
    assert result.outcome.termination is Termination.STORAGE_LIMIT and result.outcome.scored
    assert result.reward == pytest.approx(1.0)
    calm = _episode(under, UNDER_QUOTA, config)
    assert calm.outcome.termination is Termination.FINISHED and calm.reward == pytest.approx(1.0)
    with pytest.raises(StorageQuotaRefusedError, match="task bwrap-fill-disk: .*bwrap backend"):
        start_sandbox(config.model_copy(update={"storage": "refuse"}), BASE, TaskLimits(storage_mb=QUOTA_MB),
                      run_id="test-storage-quota", task_id="bwrap-fill-disk")
