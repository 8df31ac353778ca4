"""Network per phase on Docker: a sandbox without network has none from its first instruction on, set_network
switches a running one, sandboxes with network cannot reach each other, and the network is swept like containers.

The backend-independent part (loopback only when off, the host reachable when on, env) is in the self-check
suite (``test_self_check.py``), which runs on Docker, bwrap and Ray.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest
from test_self_check import HostListener, connect_probe, default_gateway

from terminal_agent.errors import SandboxError
from terminal_agent.sandbox import cleanup
from terminal_agent.sandbox.docker import network as docker_network
from terminal_agent.sandbox import labels as sandbox_labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.sandbox import DockerSandbox, docker_client
from terminal_agent.tasks.model import TaskLimits

pytestmark = [pytest.mark.docker, pytest.mark.serial]  # leaves or sweeps leaked sandboxes machine-wide: runs alone (scripts/test.sh)

DEVICES = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort"


def networks_of(sandbox) -> list[str]:
    return docker_network.attached_networks(docker_client().api, sandbox.id)


def test_set_network_gives_and_takes_the_network_of_a_running_sandbox(base_image):
    with DockerSandbox.start(base_image, limits=TaskLimits(network=False), run_id="test-network-phases",
                             verifier_network=True) as sandbox:
        assert networks_of(sandbox) == [] and sandbox.exec(DEVICES, 10).output.split() == ["lo"]
        assert sandbox.exec("sleep 321", 10, block=False).ok  # an agent process that lives across the switches

        sandbox.set_network(True)  # the verifier phase of a task whose verifier needs the network
        assert sandbox.network_enabled
        assert sandbox.exec(DEVICES, 10).output.split() == ["eth0", "lo"]
        gateway = default_gateway(sandbox)
        with HostListener() as listener:
            reached = sandbox.exec(connect_probe([gateway], listener.port), 20).output
        assert reached.startswith("connected " + listener.token), reached
        [network] = networks_of(sandbox)
        assert network.startswith(docker_network.NETWORK_PREFIX)

        sandbox.set_network(False)
        assert not sandbox.network_enabled and networks_of(sandbox) == []
        with HostListener() as listener:
            cut_off = sandbox.exec(connect_probe([gateway, "172.17.0.1"], listener.port) + "; " + DEVICES, 20)
        assert cut_off.output.split()[-1] == "lo" and "connected" not in cut_off.output, cut_off.output
        assert listener.accepted == 0
        assert sandbox.exec("pgrep -fx 'sleep 321' | wc -l", 10).output.strip() == "1", "the switches left processes alone"


def test_a_sandbox_without_network_is_never_connected(base_image):
    """One whose verifier will need the network is created in bridge mode (so that it can be connected later)
    and disconnected before it starts; the others take the quicker 'none' mode and cannot be connected."""
    api = docker_client().api
    with DockerSandbox.start(base_image, limits=TaskLimits(), run_id="test-network-phases",
                             verifier_network=True) as sandbox:
        info = api.inspect_container(sandbox.id)
        assert info["HostConfig"]["NetworkMode"] == "bridge"
        assert (info["NetworkSettings"]["Networks"] or {}) == {}
        assert not info["Config"].get("NetworkDisabled")
    with DockerSandbox.start(base_image, limits=TaskLimits(), run_id="test-network-phases") as sandbox:
        assert api.inspect_container(sandbox.id)["HostConfig"]["NetworkMode"] == "none"
        with pytest.raises(SandboxError, match="verifier_network=True"):
            sandbox.set_network(True)
        assert not sandbox.network_enabled and sandbox.exec(DEVICES, 10).output.split() == ["lo"]


def test_a_sandbox_with_network_can_lose_it_and_get_it_back(base_image):
    with DockerSandbox.start(base_image, limits=TaskLimits(network=True), run_id="test-network-phases") as sandbox:
        sandbox.set_network(False)  # a verifier that must run offline
        assert sandbox.exec(DEVICES, 10).output.split() == ["lo"]
        sandbox.set_network(True)
        devices = sandbox.exec(DEVICES, 10).output.split()
        assert len(devices) == 2 and "lo" in devices  # lo and the new interface (Docker may name it eth1)


def test_sandboxes_with_network_cannot_reach_each_other(base_image):
    first = DockerSandbox.start(base_image, limits=TaskLimits(network=True), run_id="test-network-phases")
    second = DockerSandbox.start(base_image, limits=TaskLimits(network=True), run_id="test-network-phases")
    try:
        assert networks_of(first) == networks_of(second)  # one network of this process, inter-container traffic off
        server = "python3 -c 'import socket;s=socket.socket();s.bind((\"0.0.0.0\",9123));s.listen();c,_=s.accept();c.send(b\"peer\")'"
        assert second.exec(server, 10, block=False).ok
        address = second.exec("hostname -I", 10).output.split()[0]
        time.sleep(0.5)
        attempt = first.exec(connect_probe([address], 9123), 20).output
        assert attempt.startswith("failed"), attempt
        with HostListener() as listener:  # the host is reachable from both
            assert first.exec(connect_probe([default_gateway(first)], listener.port), 20).output.startswith("connected")
    finally:
        first.close()
        second.close()


def test_the_network_carries_owner_labels_and_is_swept_after_its_owner_is_killed(base_image, tmp_path):
    api = docker_client().api
    script = textwrap.dedent(
        f"""
        import sys, time
        from terminal_agent.sandbox.docker.sandbox import DockerSandbox
        from terminal_agent.sandbox.docker.network import attached_networks
        from terminal_agent.tasks.model import TaskLimits
        sandbox = DockerSandbox.start({base_image!r}, limits=TaskLimits(network=True), run_id="test-network-sweep")
        print(attached_networks(sandbox._client.api, sandbox.id)[0], sandbox.id, flush=True)
        time.sleep(300)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        network, container = owner.stdout.readline().split()
        labels = api.inspect_network(network)["Labels"]
        assert labels[sandbox_labels.MANAGED] == "true" and labels[sandbox_labels.OWNER_PID] == str(owner.pid)
        assert labels[sandbox_labels.TTL_S] == "0"  # no TTL: it lives as long as its owner
        assert network not in {obj.name for obj in cleanup.find_leaked()}  # a live owner's network is left alone
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
    deadline = time.monotonic() + 30
    while api.containers(all=True, filters={"id": container}):  # the dead-man switch removes the container
        assert time.monotonic() < deadline, "the SIGKILLed owner's container is still there"
        time.sleep(0.2)
    leaked = {obj.name: obj for obj in cleanup.find_leaked()}
    assert leaked[network].kind == "network" and "gone" in leaked[network].reason
    cleanup.sweep_leaked()
    assert not api.networks(names=[network])


def test_without_isolation_sandboxes_use_dockers_default_bridge(base_image):
    config = SandboxConfig(isolate_networks=False)
    with DockerSandbox.start(base_image, limits=TaskLimits(network=True), config=config,
                             run_id="test-network-phases") as sandbox:
        assert networks_of(sandbox) == ["bridge"]
    with DockerSandbox.start(base_image, limits=TaskLimits(), config=config, run_id="test-network-phases",
                             verifier_network=True) as sandbox:
        sandbox.set_network(True)
        assert networks_of(sandbox) == ["bridge"] and len(sandbox.exec(DEVICES, 10).output.split()) == 2


def test_a_normal_exit_removes_the_network_even_with_a_sandbox_left_open(base_image):
    script = textwrap.dedent(
        f"""
        from terminal_agent.sandbox.docker.sandbox import DockerSandbox
        from terminal_agent.sandbox.docker.network import attached_networks
        from terminal_agent.tasks.model import TaskLimits
        sandbox = DockerSandbox.start({base_image!r}, limits=TaskLimits(network=True), run_id="test-network-exit")
        print(attached_networks(sandbox._client.api, sandbox.id)[0], flush=True)
        """  # no close(): the atexit hooks close the sandbox, then remove the network
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    network = done.stdout.split()[0]
    assert network.startswith(docker_network.NETWORK_PREFIX)
    assert not docker_client().api.networks(names=[network])
