"""The ``ray`` sandbox backend on a real two-node Ray cluster of this machine, every host on the local dockerd.

One cluster (two nodes of one CPU, each advertising the host resource) serves the whole module:
the sandbox self-check suite, grading through the proxy, load spreading and capacity, an env episode
whose host is killed while another rollout goes on, and a SIGKILLed driver leaving no container.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import yaml

ray = pytest.importorskip("ray", reason="the ray backend needs Ray: pip install 'terminal-agent[ray]'")

from ray.cluster_utils import Cluster  # noqa: E402

from terminal_agent.agent import TerminalBenchAgent  # noqa: E402
from terminal_agent.env import DockerIsolatedEnv, EnvConfig  # noqa: E402
from terminal_agent.errors import SandboxError, SandboxUnavailableError  # noqa: E402
from terminal_agent.interfaces import Sandbox  # noqa: E402
from terminal_agent.models.scripted import ScriptedModelClient  # noqa: E402
from terminal_agent.rewards.weighted_pytest.grader import Grader  # noqa: E402
from terminal_agent.rollout.episode import run_episode  # noqa: E402
from terminal_agent.sandbox import labels as sandbox_labels  # noqa: E402
from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox  # noqa: E402
from terminal_agent.sandbox.config import SandboxConfig  # noqa: E402
from terminal_agent.sandbox.ray.settings import DEFAULT_HOST_RESOURCE, RaySandboxConfig  # noqa: E402
from terminal_agent.sandbox.ray.backend import fleet_for, sandbox_slots, shutdown_fleets  # noqa: E402
from terminal_agent.sandbox.ray.proxy import RaySandbox  # noqa: E402
from terminal_agent.tasks.csv.format import read_tasks_csv  # noqa: E402
from terminal_agent.tasks.model import TaskLimits  # noqa: E402
from test_self_check import SandboxSelfCheck  # noqa: E402

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DATASET = REPO / "dataset" / "latest_verified.csv"
PER_NODE = 3
RAY_CONFIG = RaySandboxConfig(max_sandboxes_per_node=PER_NODE, host_start_timeout_s=90, refresh_interval_s=5)
FINISH = "<finish>\nmessage: done\n</finish>"


def ray_config(config: SandboxConfig | None = None) -> SandboxConfig:
    """``config`` (default settings when None) with the ray backend of this module's cluster."""
    return (config or SandboxConfig()).model_copy(update={"backend": "ray", "ray": RAY_CONFIG})


def bash(command: str) -> str:
    return "<bash>\n" + yaml.safe_dump({"cmd": command}, default_style="|", width=10_000) + "</bash>"


def containers_of(docker_client, run_id: str) -> list[dict]:
    return docker_client.api.containers(all=True, filters={"label": [f"{sandbox_labels.RUN_ID}={run_id}"]})


def wait_until(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"{what} within {timeout_s:.0f} s"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def ray_cluster(docker_client):
    """Two Ray nodes on this machine (one CPU each), both advertising the sandbox host resource."""
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {DEFAULT_HOST_RESOURCE: 1}, "include_dashboard": False},
    )
    try:
        cluster.add_node(num_cpus=1, resources={DEFAULT_HOST_RESOURCE: 1})
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
        yield cluster
    finally:
        shutdown_fleets()
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(scope="module")
def task(ray_cluster):
    from terminal_agent.sandbox.images.manager import ensure_task_image

    chosen = {t.task_id: t for t in read_tasks_csv(DATASET).tasks}["fix-stats-script"]
    ensure_task_image(chosen)  # both "nodes" share this dockerd: the hosts then find it cached by content hash
    return chosen


# --- the self-check suite, through the proxy -----------------------------------------------------
class TestRaySandboxSelfCheck(SandboxSelfCheck):
    """Every check of the Docker backend, with the container on a host actor and the calls through Ray."""

    @pytest.fixture(scope="class")
    def make_sandbox(self, ray_cluster, base_image):
        def make(limits: TaskLimits | None = None, config: SandboxConfig | None = None, env=None, verifier_network=None):
            return start_sandbox(
                ray_config(config), base_image, limits or TaskLimits(), run_id="test-ray-self-check", env=env,
                verifier_network=verifier_network,
            )

        return make

    def sandbox_exists(self, sandbox) -> bool:
        from terminal_agent.sandbox.docker.sandbox import docker_client

        return bool(docker_client().api.containers(all=True, filters={"id": sandbox.id}))

    def test_is_a_ray_proxy(self, sandbox):
        assert isinstance(sandbox, RaySandbox) and isinstance(sandbox, Sandbox)
        assert sandbox.node_id in {node["NodeID"] for node in ray.nodes()}

    def test_set_network_switches_the_container_through_its_host(self, make_sandbox):
        with make_sandbox(verifier_network=True) as sandbox:
            devices = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort"
            assert sandbox.exec(devices, 10).output.split() == ["lo"]
            sandbox.set_network(True)
            assert sandbox.network_enabled and sandbox.exec(devices, 10).output.split() == ["eth0", "lo"]
            sandbox.set_network(False)
            assert not sandbox.network_enabled and sandbox.exec(devices, 10).output.split() == ["lo"]

    def test_task_env_templates_resolve_on_the_driver(self, make_sandbox, monkeypatch):
        monkeypatch.setenv("TA_RAY_DRIVER_ONLY", "from-the-driver")
        with make_sandbox(env={"SEEN": "${TA_RAY_DRIVER_ONLY}"}) as sandbox:
            assert sandbox.exec("echo $SEEN", 10).output == "from-the-driver\n"


# --- placement, capacity, hosts ------------------------------------------------------------------
def test_a_host_builds_a_task_image_with_binary_files_byte_identical(ray_cluster, base_image):
    from test_binary_task_files import FILES, TASK, sha256, sums_in

    config = ray_config()
    with start_sandbox(config, resolve_task_image(config, TASK), TaskLimits(), run_id="test-ray-binary") as sandbox:
        expected = {path.removeprefix("fixtures/"): sha256(content) for path, content in FILES.items()
                    if path.startswith("fixtures/")}
        assert sums_in(sandbox, "/srv/fixtures") == expected


def test_sandboxes_spread_by_load_up_to_each_nodes_share(ray_cluster, base_image):
    config = ray_config()
    nodes = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    assert sandbox_slots(config).total == PER_NODE * len(nodes) == 6
    started = []
    try:
        for _ in range(PER_NODE * len(nodes)):
            started.append(start_sandbox(config, base_image, TaskLimits(), run_id="test-ray-spread"))
            counts = {}
            for sandbox in started:
                counts[sandbox.node_id] = counts.get(sandbox.node_id, 0) + 1
            assert max(counts.values()) - min(counts.get(n, 0) for n in nodes) <= 1, counts  # fewest live first
        assert {s.node_id for s in started} == nodes
        with pytest.raises(SandboxUnavailableError, match="every sandbox host is full"):
            start_sandbox(config, base_image, TaskLimits(), run_id="test-ray-spread")
        outputs = {s.exec("hostname", 10).output.strip() for s in started}
        assert len(outputs) == len(started)  # six distinct containers
        started.pop().close()  # a freed slot is usable again
        started.append(start_sandbox(config, base_image, TaskLimits(), run_id="test-ray-spread"))
    finally:
        for sandbox in started:
            sandbox.close()


def test_every_node_has_one_host_with_its_cleanup_daemon(ray_cluster):
    fleet = fleet_for(ray_config())
    hosts = fleet.refresh()
    assert sorted(h.node_id for h in hosts) == sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
    assert len({h.description.pid for h in hosts}) == len(hosts)
    wait_until(lambda: all(ray.get(h.handle.cleanup_sweeps.remote()) >= 1 for h in hosts), 30, "every host swept once")


def test_a_node_never_gets_a_second_host(ray_cluster, base_image):
    first = start_sandbox(ray_config(), base_image, TaskLimits(), run_id="test-ray-claim")  # this driver's hosts are up
    try:
        rival = ray_config().model_copy(update={"ray": RAY_CONFIG.model_copy(update={"host_start_timeout_s": 3})})
        with pytest.raises(SandboxUnavailableError, match="held by another driver's host"):
            start_sandbox(rival, base_image, TaskLimits(), run_id="test-ray-claim")
        assert first.exec("echo still", 10).output == "still\n"
    finally:
        first.close()


def test_no_host_node_is_a_clear_unavailable_error(ray_cluster, base_image):
    config = ray_config().model_copy(update={"ray": RAY_CONFIG.model_copy(update={"host_resource": "no_such_resource"})})
    with pytest.raises(SandboxUnavailableError, match="no_such_resource"):
        start_sandbox(config, base_image, TaskLimits(), run_id="test-ray-none")


def test_a_task_reference_unknown_to_this_process_is_refused(ray_cluster):
    with pytest.raises(SandboxUnavailableError, match="resolve_task_image"):
        start_sandbox(ray_config(), "ray-task:never@0123", TaskLimits(), run_id="test-ray-none")


# --- the launcher's slot check ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["prod_32b_2x8_h100", "prod_32b_4x8_h100"])
def test_multi_node_presets_use_the_ray_backend(name):
    from terminal_agent.env import env_config_from_args
    from terminal_agent.training.episode_args import workflow_args_for
    from terminal_agent.training.preset_config import load_preset

    preset = load_preset(name)
    config = env_config_from_args(workflow_args_for(preset)["env_args"]).sandbox
    assert preset.sandbox.backend == config.backend == "ray"
    assert config.ray.max_sandboxes_per_node * preset.cluster.nodes >= preset.agent.parallel_episodes


def test_launcher_checks_that_the_cluster_has_enough_sandbox_slots(ray_cluster):
    from terminal_agent.errors import TrainingSetupError
    from terminal_agent.training.preset_config import load_preset
    from terminal_agent.training.verl.machine_checks import check_sandbox_slots

    # two host nodes here: 2 x 80 slots cover the 128 episodes of the 2-node preset ...
    assert check_sandbox_slots(load_preset("prod_32b_2x8_h100")) == 160
    # ... but not 2 x 50, nor the 4-node preset's 256 episodes
    with pytest.raises(TrainingSetupError, match=r"agent.parallel_episodes is 128 .* 100 sandbox slot\(s\) \(2 node"):
        check_sandbox_slots(load_preset("prod_32b_2x8_h100", ["sandbox.env.sandbox.ray.max_sandboxes_per_node=50"]))
    with pytest.raises(TrainingSetupError, match="agent.parallel_episodes is 256 .* 160 sandbox slot"):
        check_sandbox_slots(load_preset("prod_32b_4x8_h100"))
    assert check_sandbox_slots(load_preset("prod_32b_8_gpus")) is None  # one node's docker: nothing to count


# --- grading through the proxy --------------------------------------------------------------------
def test_grading_through_ray_scores_solution_one_and_noop_below(ray_cluster, task):
    config = ray_config()
    image_ref = resolve_task_image(config, task)
    assert image_ref.startswith("ray-task:")  # the driver builds nothing; the host does
    solved = start_sandbox(config, image_ref, task.limits, run_id="test-ray-grading")
    noop = start_sandbox(config, image_ref, task.limits, run_id="test-ray-grading")
    try:
        assert solved.image.startswith("terminal-agent/task-fix-stats-script:")
        solved.write_file("/tmp/solution.sh", task.solution.encode())
        assert solved.exec("bash /tmp/solution.sh", 60).ok
        grader = Grader()
        good = grader.grade(solved, task)
        bad = grader.grade(noop, task)
        assert good.scored and good.score == pytest.approx(1.0), good.to_info()
        assert bad.scored and bad.score < 1.0, bad.to_info()
        assert not good.tamper_signals and not bad.tamper_signals
    finally:
        solved.close()
        noop.close()


# --- a host dies mid-episode; the other rollout goes on ----------------------------------------------
def test_killed_host_flags_its_episode_as_infrastructure_while_another_goes_on(ray_cluster, task, docker_client):
    env_config = EnvConfig(sandbox=ray_config(), run_id="test-ray-host-kill", max_steps=6)
    doomed_env, other_env = DockerIsolatedEnv(task, env_config), DockerIsolatedEnv(task, env_config)
    doomed_env.reset()
    other_env.reset()  # fewest live sandboxes: the second env lands on the other node
    doomed, other = doomed_env.sandbox, other_env.sandbox
    assert doomed.node_id != other.node_id
    doomed_container = doomed.id
    killed = threading.Event()
    other_going = threading.Event()

    def doomed_replies(messages):
        if len(messages) <= 2:
            return bash("echo working")
        other_going.wait(60)
        ray.kill(doomed.host, no_restart=True)  # the host actor of this env's node dies mid-episode
        killed.set()
        return bash("echo after the host died")

    def other_replies(messages):
        if len(messages) <= 2:
            other_going.set()
            killed.wait(60)  # the other rollout is in flight when the host dies, and goes on after
            return bash(task.solution)
        return FINISH

    results = {}

    def run(name, env, replies):
        results[name] = run_episode(env, TerminalBenchAgent(), ScriptedModelClient(replies), max_steps=6)

    threads = [
        threading.Thread(target=run, args=("doomed", doomed_env, doomed_replies)),
        threading.Thread(target=run, args=("other", other_env, other_replies)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert killed.is_set()
    lost = results["doomed"].outcome
    assert lost.termination.is_infrastructure and not lost.scored and lost.error_kind == "sandbox", lost.to_info()
    assert "host" in (lost.error or "")
    survivor = results["other"]
    assert survivor.scored and survivor.reward == pytest.approx(1.0), survivor.outcome.to_info()
    # the dead host's process took its attach sockets along: the container removed itself
    wait_until(lambda: not docker_client.api.containers(all=True, filters={"id": doomed_container}), 60,
               "the dead host's container is removed")
    # and the node gets a new host: sandboxes start on both nodes again
    config = ray_config()
    fresh = [start_sandbox(config, "terminal-agent/base:bookworm", TaskLimits(), run_id="test-ray-host-kill") for _ in range(2)]
    try:
        assert {s.node_id for s in fresh} == {doomed.node_id, other.node_id}
        assert all(s.exec("echo back", 10).output == "back\n" for s in fresh)
    finally:
        for sandbox in fresh:
            sandbox.close()
    with pytest.raises(SandboxError):
        doomed.exec("true", 5)


# --- the driver dies -------------------------------------------------------------------------------
DRIVER = textwrap.dedent(
    """
    import json, sys, time
    import ray
    from terminal_agent.sandbox.backends import start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig
    from terminal_agent.sandbox.ray.settings import RaySandboxConfig
    from terminal_agent.tasks.model import TaskLimits

    ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
    config = SandboxConfig(backend="ray", ray=RaySandboxConfig(max_sandboxes_per_node=2, host_start_timeout_s=90))
    sandboxes = [start_sandbox(config, "terminal-agent/base:bookworm", TaskLimits(), run_id=sys.argv[2]) for _ in range(4)]
    for s in sandboxes:
        s.exec("sleep 1000", block=False)
    print(json.dumps({"ids": [s.id for s in sandboxes], "nodes": sorted({s.node_id for s in sandboxes})}), flush=True)
    time.sleep(3600)
    """
)


def test_sigkilled_driver_leaves_no_container(ray_cluster, docker_client):
    shutdown_fleets()  # free this driver's claim on the host resource: the child driver brings its own hosts
    run_id = f"test-ray-driver-kill-{os.getpid()}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, "-c", DRIVER, ray_cluster.address, run_id],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        line = child.stdout.readline()
        assert line, f"driver failed: {child.stderr.read()[-3000:]}"
        report = json.loads(line)
        assert len(report["nodes"]) == 2  # its sandboxes are on both nodes
        assert len(containers_of(docker_client, run_id)) == 4
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    wait_until(lambda: not containers_of(docker_client, run_id), 90, "the dead driver's containers are removed")
