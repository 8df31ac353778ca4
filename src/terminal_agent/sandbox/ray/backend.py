"""The ``ray`` sandbox backend: sandboxes spread over the Docker nodes of a Ray cluster.

>>> config = SandboxConfig(backend="ray")                                  # doctest: +SKIP
>>> sandbox = start_sandbox(config, resolve_task_image(config, task))      # doctest: +SKIP

Every node that advertises the custom resource ``terminal_agent_sandbox_host`` (``ray start
--resources '{"terminal_agent_sandbox_host": 1}'``) gets one
:class:`~terminal_agent.sandbox.ray.host.SandboxHost` actor, which claims it; the actor
builds images and runs containers on its node's Docker daemon. The driver's
:class:`RaySandboxFleet` starts each sandbox on the host with the fewest live sandboxes and hands
back a :class:`~terminal_agent.sandbox.ray.proxy.RaySandbox`, which serves the whole
Sandbox contract through the actor.

``resolve_task_image`` builds nothing on the driver (it may have no Docker at all): it returns a
reference of the task, and the host that starts the sandbox builds the task's image there, cached
by content hash like the Docker backend does. A plain image name is started as is.

Failures: no cluster, no host node, or every host full is :class:`SandboxUnavailableError`; a host
that dies makes its sandboxes broken (``SandboxError``, an infrastructure failure of those episodes
only) and the next start brings a new host up on that node if the node is still there.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import socket
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from terminal_agent.errors import SandboxError, SandboxUnavailableError
from terminal_agent.sandbox.backends import LeakedObject, SandboxCapacity
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.ray.settings import RaySandboxConfig, ray_settings
from terminal_agent.sandbox.ray.host import CallOutcome, HostDescription, SandboxHost, StartedSandbox
from terminal_agent.sandbox.ray.proxy import RaySandbox
from terminal_agent.tasks.model import Task, TaskLimits

logger = logging.getLogger(__name__)

TASK_REF_PREFIX = "ray-task:"
_MAX_TASK_REFS = 4096
_THREADS_PER_SANDBOX = 2  # a command and a liveness probe (or a close) at once


# --- task references ---------------------------------------------------------------------------
class TaskReferences:
    """``ray-task:<id>@<environment hash>`` -> Task, for the hosts to build from (least recently used dropped)."""

    def __init__(self, capacity: int = _MAX_TASK_REFS) -> None:
        self._tasks: OrderedDict[str, Task] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def remember(self, task: Task) -> str:
        digest = hashlib.sha256(task.content_hashes()["environment"].encode()).hexdigest()[:16]
        ref = f"{TASK_REF_PREFIX}{task.task_id}@{digest}"
        with self._lock:
            self._tasks[ref] = task
            self._tasks.move_to_end(ref)
            while len(self._tasks) > self._capacity:
                self._tasks.popitem(last=False)
        return ref

    def lookup(self, image_ref: str) -> "Task | str":
        """The task behind ``image_ref``, or ``image_ref`` itself when it names an image."""
        if not image_ref.startswith(TASK_REF_PREFIX):
            return image_ref
        with self._lock:
            task = self._tasks.get(image_ref)
        if task is None:
            raise SandboxUnavailableError(
                f"{image_ref!r} was not resolved in this process (call resolve_task_image first)"
            )
        return task


TASK_REFS = TaskReferences()


# --- the fleet of hosts --------------------------------------------------------------------------
@dataclass
class HostSlot:
    """The driver's view of one host actor."""

    node_id: str
    handle: Any
    description: HostDescription
    live: int = 0
    """Sandboxes this driver has open there (the load the scheduler balances)."""
    lost: str | None = None
    """Why the host is no longer used (it died or stopped answering)."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def release(self, _node_id: str) -> None:
        with self._lock:
            self.live = max(0, self.live - 1)


@dataclass(frozen=True)
class SlotReport:
    """Sandbox capacity of a cluster."""

    nodes: list[str]
    """Alive node ids that advertise the host resource."""
    per_node: int
    total: int


def ensure_ray(config: RaySandboxConfig) -> None:
    """Join the cluster unless this process already did. Raises SandboxUnavailableError when none answers."""
    import ray

    if ray.is_initialized():
        return
    try:
        ray.init(address=config.address or "auto", ignore_reinit_error=True, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise SandboxUnavailableError(
            f"no Ray cluster to join at {config.address or 'auto'!r} ({exc}); start one with "
            f"`ray start --head --resources '{{\"{config.host_resource}\": 1}}'` on each Docker node"
        ) from exc


def host_nodes(config: RaySandboxConfig) -> list[str]:
    """Ids of the alive nodes that advertise ``config.host_resource``."""
    import ray

    return [
        node["NodeID"]
        for node in ray.nodes()
        if node.get("Alive") and float((node.get("Resources") or {}).get(config.host_resource, 0)) >= 1
    ]


def sandbox_slots(config: SandboxConfig) -> SlotReport:
    """How many sandboxes the cluster can carry at once (host nodes x ``max_sandboxes_per_node``)."""
    settings = ray_settings(config)
    ensure_ray(settings)
    nodes = host_nodes(settings)
    per_node = settings.max_sandboxes_per_node
    return SlotReport(nodes, per_node, per_node * len(nodes))


class RaySandboxFleet:
    """One SandboxHost per host node of the cluster, and the choice of where each sandbox starts. Thread-safe."""

    def __init__(self, config: RaySandboxConfig, cleanup_interval_s: float = 120.0) -> None:
        self.config = config
        self.cleanup_interval_s = cleanup_interval_s
        self._slots: dict[str, HostSlot] = {}
        self._lock = threading.RLock()
        self._refreshed_at = float("-inf")
        self._actor_class: Any = None
        self._start_failures: dict[str, str] = {}
        """Nodes whose host did not come up at the last refresh, and why."""

    # --- hosts ----------------------------------------------------------------------------------
    def refresh(self) -> list[HostSlot]:
        """Bring a host up on every host node that has none (new nodes, hosts that died); the usable hosts."""
        import ray
        import ray.exceptions
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ensure_ray(self.config)
        with self._lock:
            if self._actor_class is None:
                self._actor_class = ray.remote(SandboxHost)
            wanted = [
                node for node in host_nodes(self.config)
                if node not in self._slots or self._slots[node].lost is not None
            ]
            pending = {}
            for node_id in wanted:
                old = self._slots.pop(node_id, None)
                if old is not None:
                    _kill_quietly(old.handle)
                handle = self._actor_class.options(
                    num_cpus=0,
                    resources={self.config.host_resource: 1},
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                    max_concurrency=self.config.max_sandboxes_per_node * _THREADS_PER_SANDBOX + 8,
                    max_restarts=0,
                ).remote(node_id, self.cleanup_interval_s)
                pending[node_id] = (handle, handle.describe.remote())
            deadline = time.monotonic() + self.config.host_start_timeout_s
            for node_id, (handle, ready) in pending.items():
                try:
                    description = ray.get(ready, timeout=max(0.1, deadline - time.monotonic()))
                except ray.exceptions.GetTimeoutError:
                    logger.warning(
                        "no sandbox host came up on node %s within %.0f s (its %s resource may be held by "
                        "another driver's host)", node_id[:12], self.config.host_start_timeout_s, self.config.host_resource,
                    )
                    _kill_quietly(handle)
                    self._start_failures[node_id] = (
                        f"no host came up within {self.config.host_start_timeout_s:.0f} s (is its "
                        f"{self.config.host_resource!r} resource held by another driver's host?)"
                    )
                    continue
                except ray.exceptions.RayError as exc:
                    logger.warning("the sandbox host of node %s failed to start: %s", node_id[:12], str(exc)[:500])
                    self._start_failures[node_id] = f"its host failed to start: {str(exc)[:300]}"
                    continue
                self._start_failures.pop(node_id, None)
                self._slots[node_id] = HostSlot(node_id, handle, description)
            self._refreshed_at = time.monotonic()
            return [slot for slot in self._slots.values() if slot.lost is None]

    def hosts(self) -> list[HostSlot]:
        """The usable hosts (refreshed when stale)."""
        if time.monotonic() - self._refreshed_at > self.config.refresh_interval_s:
            return self.refresh()
        with self._lock:
            return [slot for slot in self._slots.values() if slot.lost is None]

    def mark_lost(self, slot: HostSlot, reason: str) -> None:
        with self._lock:
            slot.lost = slot.lost or reason
            self._refreshed_at = float("-inf")  # the next start looks for a replacement

    def capacity(self) -> int:
        return self.config.max_sandboxes_per_node * len(self.hosts())

    # --- sandboxes ------------------------------------------------------------------------------
    def start(
        self,
        config: SandboxConfig,
        image: "str | Task",
        limits: TaskLimits,
        run_id: str | None,
        env: dict[str, str] | None = None,
        verifier_network: bool | None = None,
    ) -> RaySandbox:
        """Start a sandbox on the least loaded host (``env``: resolved here, on the driver).

        Raises SandboxUnavailableError when none can take it."""
        import ray
        import ray.exceptions

        run_id = run_id or f"ray-{socket.gethostname()}-pid{os.getpid()}"
        tried: set[str] = set()
        refreshed = False
        while True:
            slot = self._reserve(tried)
            if slot is None and not refreshed:
                refreshed = True
                self.refresh()
                continue
            if slot is None:
                raise SandboxUnavailableError(self._no_host_message(tried))
            tried.add(slot.node_id)
            wait_s = config.start_timeout_s + config.docker_timeout_s + self.config.call_grace_s
            if isinstance(image, Task):
                wait_s += 3600.0  # the host may build the task's image first
            try:
                outcome: CallOutcome = ray.get(
                    slot.handle.start.remote(image, limits, config, run_id, env or None, verifier_network),
                    timeout=wait_s,
                )
            except ray.exceptions.GetTimeoutError as exc:  # the host is alive but slow: its other sandboxes stay
                slot.release(slot.node_id)
                raise SandboxUnavailableError(
                    f"the sandbox host of node {slot.node_id[:12]} did not start a sandbox within {wait_s:.0f} s"
                ) from exc
            except ray.exceptions.RayError as exc:  # the host died (or cannot be reached): try another one
                slot.release(slot.node_id)
                if isinstance(exc, ray.exceptions.ActorDiedError):
                    self.mark_lost(slot, f"{type(exc).__name__}: {str(exc)[:300]}")
                logger.warning("sandbox host of node %s failed while starting a sandbox: %s", slot.node_id[:12], exc)
                continue
            if outcome.error is not None:
                slot.release(slot.node_id)
                raise outcome.error
            started: StartedSandbox = outcome.value
            return RaySandbox(
                slot.handle, slot.node_id, started, limits=limits, config=config, run_id=run_id,
                on_close=slot.release, on_host_died=functools.partial(self.mark_lost, slot),
            )

    def _reserve(self, exclude: set[str]) -> HostSlot | None:
        with self._lock:
            candidates = [
                slot for slot in self.hosts()
                if slot.node_id not in exclude and slot.live < self.config.max_sandboxes_per_node
            ]
            if not candidates:
                return None
            slot = min(candidates, key=lambda s: s.live)
            with slot._lock:
                slot.live += 1
            return slot

    def _no_host_message(self, tried: set[str]) -> str:
        with self._lock:
            slots = list(self._slots.values())
            failures = dict(self._start_failures)
        if not slots:
            if failures:
                return "no sandbox host could be started: " + "; ".join(
                    f"node {node[:12]}: {reason}" for node, reason in failures.items()
                )
            return (
                f"no sandbox host in the Ray cluster: no alive node advertises the {self.config.host_resource!r} "
                "resource (ray start --resources ...)"
            )
        usable = [s for s in slots if s.lost is None]
        if usable and all(s.live >= self.config.max_sandboxes_per_node for s in usable):
            return (
                f"every sandbox host is full ({len(usable)} node(s) x {self.config.max_sandboxes_per_node} sandboxes; "
                "raise sandbox.ray.max_sandboxes_per_node or add nodes)"
            )
        lost = "; ".join(f"{s.node_id[:12]}: {s.lost}" for s in slots if s.lost)
        return f"no sandbox host could start a sandbox (tried {len(tried)} node(s)){'; lost: ' + lost if lost else ''}"

    def close_all(self) -> int:
        """Close every sandbox on every host (of any driver); how many."""
        import ray

        with self._lock:
            slots = [s for s in self._slots.values() if s.lost is None]
        closed = 0
        for slot in slots:
            try:
                closed += int(ray.get(slot.handle.close_all.remote(), timeout=60))
            except Exception as exc:  # noqa: BLE001 - a lost host has removed its containers already
                logger.debug("close_all on %s: %s", slot.node_id[:12], exc)
            slot.live = 0
        return closed

    def shutdown(self) -> None:
        """Close every sandbox and end the host actors (their cleanup daemons with them)."""
        self.close_all()
        with self._lock:
            slots, self._slots = list(self._slots.values()), {}
            self._refreshed_at = float("-inf")
        for slot in slots:
            _kill_quietly(slot.handle)


def _kill_quietly(handle: Any) -> None:
    import ray

    try:
        ray.kill(handle, no_restart=True)
    except Exception as exc:  # noqa: BLE001 - an actor already gone is what we want
        logger.debug("ray.kill: %s", exc)


# --- one fleet per Ray session of this process ------------------------------------------------------
_FLEETS: dict[tuple[str, str, str], RaySandboxFleet] = {}
_FLEETS_LOCK = threading.Lock()


def fleet_for(config: SandboxConfig) -> RaySandboxFleet:
    """This process's fleet for the cluster it is connected to (joined now if need be)."""
    import ray

    settings = ray_settings(config)
    ensure_ray(settings)
    context = ray.get_runtime_context()
    key = (str(context.gcs_address), str(context.get_job_id()), settings.model_dump_json())
    with _FLEETS_LOCK:
        fleet = _FLEETS.get(key)
        if fleet is None:
            fleet = _FLEETS[key] = RaySandboxFleet(settings, config.cleanup_interval_s)
        return fleet


def shutdown_fleets() -> None:
    """End every fleet of this process (call before ``ray.shutdown()``)."""
    with _FLEETS_LOCK:
        fleets = list(_FLEETS.values())
        _FLEETS.clear()
    for fleet in fleets:
        fleet.shutdown()


class RayBackend:
    """Sandboxes on the Docker nodes of a Ray cluster (see the module docstring)."""

    def resolve_task_image(self, config: SandboxConfig, task: Task) -> str:
        return TASK_REFS.remember(task)

    def start(
        self,
        config: SandboxConfig,
        image_ref: str,
        limits: TaskLimits,
        run_id: str | None,
        env: dict[str, str] | None = None,
        *,
        verifier_network: bool | None = None,
    ) -> RaySandbox:
        try:
            image = TASK_REFS.lookup(image_ref)
            return fleet_for(config).start(config, image, limits, run_id, env, verifier_network)
        except SandboxError:
            raise
        except ImportError as exc:
            raise SandboxUnavailableError(
                "the ray sandbox backend needs Ray: pip install 'terminal-agent[ray]'"
            ) from exc

    def list_leaked(self, config: SandboxConfig, now: float | None = None) -> list[LeakedObject]:
        """Nothing on the driver: a ray sandbox is a container on a host node, removed when its host actor
        dies (the dead-man switch), and each host's cleanup daemon sweeps its node's Docker objects."""
        return []

    def sweep_leaked(
        self, config: SandboxConfig, leaked: list[LeakedObject] | None = None, now: float | None = None
    ) -> list[LeakedObject]:
        return []

    def capacity(self, config: SandboxConfig) -> SandboxCapacity:
        """Host nodes x ``max_sandboxes_per_node`` (joins the cluster if need be)."""
        report = sandbox_slots(config)
        resource = ray_settings(config).host_resource
        return SandboxCapacity(
            report.total,
            f"{len(report.nodes)} node(s) advertising {resource!r} x {report.per_node}",
            f"start Ray on more Docker nodes with --resources '{{\"{resource}\": 1}}', or raise "
            "sandbox.env.sandbox.ray.max_sandboxes_per_node",
        )

    def close(self) -> None:
        """End this process's fleets: their sandboxes are closed and their host actors ended."""
        shutdown_fleets()


BACKEND = RayBackend()
"""The object the registry's ``ray`` line names (Ray itself is imported on the first start)."""

__all__ = ["BACKEND", "RayBackend", "RaySandboxFleet", "SlotReport", "fleet_for", "sandbox_slots", "shutdown_fleets"]
