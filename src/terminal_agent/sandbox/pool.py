"""A warm pool of fresh sandboxes per (image, limits, env), with teardown off the caller's path.

* ``acquire`` hands out a sandbox that was started ahead of time (milliseconds) or, when none
  is warm, starts one now; either way it schedules a refill up to ``pool_size``.
* ``release`` never reuses a sandbox: it queues it for a background thread that closes it,
  so every rollout gets a fresh one and the caller does not wait for the removal.
* Starts go through one gate of ``max_concurrent_starts`` so that a burst of acquires does not
  overload the daemon (or the host).

Sandboxes are started by the backend ``config.backend`` through its ``start`` hook
(``terminal_agent.sandbox.backends``); the pool names none.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from terminal_agent.errors import SandboxError, StorageQuotaRefusedError
from terminal_agent.interfaces import Sandbox
from terminal_agent.sandbox.backends import get_backend
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.storage_quota import naming_task
from terminal_agent.sandbox.task_env import env_key, resolve_sandbox_env
from terminal_agent.tasks.model import TaskLimits

logger = logging.getLogger(__name__)

_PoolKey = tuple[str, str, str, bool]
"""(image, limits as JSON, resolved env, network later): sandboxes of different limits, env or network plan are
never shared."""


@dataclass(frozen=True)
class _Spec:
    """What the sandboxes of one key are started with."""

    limits: TaskLimits
    env: dict[str, str]
    verifier_network: bool | None


@dataclass
class PoolStats:
    """Counters of one pool's life."""

    hits: int = 0
    """Acquires served by a warm container."""
    misses: int = 0
    """Acquires that had to start a container on the spot."""
    started: int = 0
    """Containers started (warm and on the spot)."""
    start_failures: int = 0
    """Background warm starts that failed."""
    released: int = 0
    """Containers handed back for teardown."""
    torn_down: int = 0
    """Containers closed by the teardown threads."""


class SandboxPool:
    """Fresh, pre-started sandboxes of the backend ``config.backend``. Thread-safe."""

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        run_id: str | None = None,
        teardown_workers: int = 2,
    ) -> None:
        self.config = config or SandboxConfig()
        self.run_id = run_id
        self._gate = threading.BoundedSemaphore(self.config.max_concurrent_starts)
        self._lock = threading.Lock()
        self._warm: OrderedDict[_PoolKey, deque[Sandbox]] = OrderedDict()
        self._started_at: dict[int, float] = {}
        """id() of a warm sandbox -> when it was started (monotonic), for the age check."""
        self._pending: dict[_PoolKey, int] = {}
        self._specs: dict[_PoolKey, _Spec] = {}
        self._closed = False
        self.stats = PoolStats()
        self._starter = ThreadPoolExecutor(
            max_workers=self.config.max_concurrent_starts, thread_name_prefix="sandbox-warm"
        )
        self._teardown: queue.Queue[Sandbox | None] = queue.Queue()
        self._teardown_threads = [
            threading.Thread(target=self._teardown_loop, name=f"sandbox-teardown-{i}", daemon=True)
            for i in range(max(1, teardown_workers))
        ]
        for thread in self._teardown_threads:
            thread.start()

    # --- public ---------------------------------------------------------------------------------
    def acquire(
        self, image: str, limits: TaskLimits | None = None, *, env: dict[str, str] | None = None,
        task_id: str | None = None, verifier_network: bool | None = None,
    ) -> Sandbox:
        """A fresh running sandbox of ``image`` with ``limits`` and ``env`` (a task's env: its templates are
        resolved now, as :func:`~terminal_agent.sandbox.backends.start_sandbox` does; ``task_id`` is named
        in the error when one cannot be), ready for ``set_network(verifier_network)``.

        Raises :class:`~terminal_agent.errors.SandboxUnavailableError` when none can be started,
        :class:`~terminal_agent.errors.ConfigError` when ``env`` cannot be resolved.
        """
        limits = limits or TaskLimits()
        spec = _Spec(limits, resolve_sandbox_env(env, task_id=task_id), verifier_network)
        key = self._key(image, spec)
        while True:
            with self._lock:
                if self._closed:
                    raise SandboxError("the sandbox pool is closed")
                self._touch(key, spec)
                warm = self._warm[key]
                sandbox = warm.popleft() if warm else None
            if sandbox is None:
                break
            if self._usable(sandbox):
                with self._lock:
                    self.stats.hits += 1
                self._refill(key)
                return sandbox
            self.release(sandbox)
        with self._lock:
            self.stats.misses += 1
        self._refill(key)
        try:
            return self._start(image, spec)
        except StorageQuotaRefusedError as exc:  # the backend cannot know the task: name it
            raise naming_task(exc, task_id) from None

    def release(self, sandbox: Sandbox) -> None:
        """Hand ``sandbox`` back; it is closed and removed in the background, never reused."""
        with self._lock:
            self.stats.released += 1
        self._teardown.put(sandbox)

    def prewarm(
        self, image: str, limits: TaskLimits | None = None, wait: bool = False, *, env: dict[str, str] | None = None,
        verifier_network: bool | None = None,
    ) -> None:
        """Start filling the pool for ``(image, limits, env, verifier_network)``; with ``wait`` block until it is full."""
        spec = _Spec(limits or TaskLimits(), resolve_sandbox_env(env), verifier_network)
        key = self._key(image, spec)
        with self._lock:
            self._touch(key, spec)
        self._refill(key)
        if wait:
            deadline = time.monotonic() + self.config.start_timeout_s * max(1, self.config.pool_size)
            while time.monotonic() < deadline:
                with self._lock:
                    warm = len(self._warm.get(key, ()))
                    pending = self._pending.get(key, 0)
                if warm >= self.config.pool_size or not pending:
                    return
                time.sleep(0.02)

    def warm_count(
        self, image: str, limits: TaskLimits | None = None, *, env: dict[str, str] | None = None,
        verifier_network: bool | None = None,
    ) -> int:
        key = self._key(image, _Spec(limits or TaskLimits(), resolve_sandbox_env(env), verifier_network))
        with self._lock:
            return len(self._warm.get(key, ()))

    def close(self) -> None:
        """Close every warm container and finish the teardown queue. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            warm = [sandbox for sandboxes in self._warm.values() for sandbox in sandboxes]
            self._warm.clear()
        self._starter.shutdown(wait=True, cancel_futures=True)
        with self._lock:  # warm starts that finished during shutdown
            warm += [sandbox for sandboxes in self._warm.values() for sandbox in sandboxes]
            self._warm.clear()
        for sandbox in warm:
            self._teardown.put(sandbox)
        for _ in self._teardown_threads:
            self._teardown.put(None)
        for thread in self._teardown_threads:
            thread.join(timeout=120)

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- internals ------------------------------------------------------------------------------
    @staticmethod
    def _key(image: str, spec: _Spec) -> _PoolKey:
        network_later = bool(spec.verifier_network) and not spec.limits.network
        return image, spec.limits.model_dump_json(), env_key(spec.env), network_later

    def _touch(self, key: _PoolKey, spec: _Spec) -> None:
        """Mark ``key`` recently used; drop the least recently used keys beyond the cap (lock held)."""
        if key not in self._warm:
            self._warm[key] = deque()
            self._specs[key] = spec
        self._warm.move_to_end(key)
        while len(self._warm) > self.config.max_pool_images:
            old_key, sandboxes = self._warm.popitem(last=False)
            self._specs.pop(old_key, None)
            for sandbox in sandboxes:
                self._teardown.put(sandbox)

    def _usable(self, sandbox: Sandbox) -> bool:
        with self._lock:
            started = self._started_at.pop(id(sandbox), time.monotonic())
        too_old = time.monotonic() - started > self.config.ttl_s / 2
        return not too_old and sandbox.is_alive()

    def _refill(self, key: _PoolKey) -> None:
        with self._lock:
            if self._closed or key not in self._warm:
                return
            missing = self.config.pool_size - len(self._warm[key]) - self._pending.get(key, 0)
            if missing <= 0:
                return
            self._pending[key] = self._pending.get(key, 0) + missing
            spec = self._specs[key]
        for _ in range(missing):
            try:
                self._starter.submit(self._warm_one, key, spec)
            except RuntimeError:  # shut down meanwhile
                with self._lock:
                    self._pending[key] -= 1

    def _warm_one(self, key: _PoolKey, spec: _Spec) -> None:
        sandbox = None
        started = time.monotonic()
        try:
            sandbox = self._start(key[0], spec)
        except Exception as exc:  # noqa: BLE001 - a failed warm start is retried by the next acquire
            logger.warning("warm start of %s failed: %s", key[0], exc)
            with self._lock:
                self.stats.start_failures += 1
        finally:
            with self._lock:
                self._pending[key] = max(0, self._pending.get(key, 0) - 1)
                keep = sandbox is not None and not self._closed and key in self._warm
                if keep and sandbox is not None:
                    self._warm[key].append(sandbox)
                    self._started_at[id(sandbox)] = started
        if sandbox is not None and not keep:
            self._teardown.put(sandbox)

    def _start(self, image: str, spec: _Spec) -> Sandbox:
        backend = get_backend(self.config.backend)
        with self._gate:
            sandbox = backend.start(
                self.config, image, spec.limits, self.run_id, spec.env, verifier_network=spec.verifier_network
            )
        with self._lock:
            self.stats.started += 1
        return sandbox

    def _teardown_loop(self) -> None:
        while True:
            sandbox = self._teardown.get()
            if sandbox is None:
                return
            try:
                sandbox.close()
            finally:
                with self._lock:
                    self._started_at.pop(id(sandbox), None)
                    self.stats.torn_down += 1
