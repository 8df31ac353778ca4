"""SandboxPool against the real daemon: warm acquire, fresh containers, background teardown."""

from __future__ import annotations

import datetime
import threading
import time

import pytest

from terminal_agent.errors import SandboxError
from terminal_agent.sandbox import labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.sandbox import docker_client
from terminal_agent.sandbox.pool import SandboxPool
from terminal_agent.tasks.model import TaskLimits

pytestmark = pytest.mark.docker


def _run_containers(run_id: str) -> list[dict]:
    return docker_client().api.containers(all=True, filters={"label": f"{labels.RUN_ID}={run_id}"})


def _wait_until(predicate, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, message
        time.sleep(0.05)


def test_warm_acquire_is_fast_fresh_and_torn_down_in_background(base_image):
    run_id = f"test-pool-{time.time_ns()}"
    limits = TaskLimits(memory_mb=256)
    pool = SandboxPool(SandboxConfig(pool_size=2), run_id=run_id)
    try:
        pool.prewarm(base_image, limits, wait=True)
        assert pool.warm_count(base_image, limits) == 2
        started = time.monotonic()
        first = pool.acquire(base_image, limits)
        acquire_s = time.monotonic() - started
        assert pool.stats.hits == 1 and pool.stats.misses == 0  # served warm, not started on the spot
        # the benchmark measures the 5 ms target; this bound only has to hold on a loaded CI machine
        assert acquire_s < 0.5, f"warm acquire took {acquire_s * 1000:.1f} ms"
        assert first.exec("echo warm", 10).output == "warm\n"
        assert first.exec("touch /tmp/dirty", 10).ok

        started = time.monotonic()
        pool.release(first)
        assert time.monotonic() - started < 0.5, "release must not wait for the removal"
        _wait_until(
            lambda: first.id not in {c["Id"] for c in _run_containers(run_id)}, 10, "released container was not removed"
        )

        second = pool.acquire(base_image, limits)
        assert second.id != first.id
        assert second.exec("ls /tmp/dirty 2>/dev/null || echo clean", 10).output.strip() == "clean"
        pool.release(second)
        _wait_until(lambda: pool.warm_count(base_image, limits) == 2, 20, "pool did not refill")
    finally:
        pool.close()
    _wait_until(lambda: not _run_containers(run_id), 10, "pool.close left containers")
    with pytest.raises(SandboxError):
        pool.acquire(base_image, limits)


def _docker_time(text: str) -> float:
    """Seconds since the epoch of a daemon timestamp like ``2026-11-30T00:30:00.123456789Z``."""
    seconds, _, fraction = text.rstrip("Z").partition(".")
    return datetime.datetime.fromisoformat(seconds).replace(tzinfo=datetime.timezone.utc).timestamp() + float(f"0.{fraction or 0}")


def test_cold_acquires_through_the_gate(base_image):
    """With a gate of 1, concurrent cold acquires start containers one after the other."""
    run_id = f"test-pool-gate-{time.time_ns()}"
    pool = SandboxPool(SandboxConfig(pool_size=0, max_concurrent_starts=1), run_id=run_id)
    acquired = []
    errors = []

    def take() -> None:
        try:
            acquired.append(pool.acquire(base_image))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=take) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors
        assert len({sandbox.id for sandbox in acquired}) == 3
        assert pool.stats.misses == 3 and pool.stats.started == 3
        assert all(sandbox.exec("echo x", 10).output == "x\n" for sandbox in acquired)
        api = docker_client().api
        spans = sorted(
            (_docker_time(info["Created"]), _docker_time(info["State"]["StartedAt"]))
            for info in (api.inspect_container(sandbox.id) for sandbox in acquired)
        )
        for (_, previous_started), (next_created, _) in zip(spans, spans[1:]):
            # the next container is created only after the previous one started and answered
            assert next_created > previous_started, f"two starts overlapped despite the gate: {spans}"
    finally:
        for sandbox in acquired:
            pool.release(sandbox)
        pool.close()
    _wait_until(lambda: not _run_containers(run_id), 10, "containers remained after close")
    assert pool.stats.torn_down == 3


def test_dead_warm_container_is_skipped(base_image):
    run_id = f"test-pool-dead-{time.time_ns()}"
    with SandboxPool(SandboxConfig(pool_size=1), run_id=run_id) as pool:
        pool.prewarm(base_image, wait=True)
        victim_id = _run_containers(run_id)[0]["Id"]
        docker_client().api.kill(victim_id)
        sandbox = pool.acquire(base_image)
        assert sandbox.id != victim_id
        assert sandbox.exec("echo alive", 10).output == "alive\n"
        pool.release(sandbox)
    _wait_until(lambda: not _run_containers(run_id), 10, "containers remained after close")
