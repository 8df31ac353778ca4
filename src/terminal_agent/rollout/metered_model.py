"""The shared model client as one episode sees it: calls serialized when the client is not thread-safe, metered and recorded.

The recorded calls feed the trial's model time, queueing time and token counts, and its transcript.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.interfaces import ModelClient, ModelResponse
from terminal_agent.rollout.transcripts import to_jsonable


@dataclass
class _ModelCall:
    """One call as the transcript records it (its fields, in this order)."""

    messages: list[dict[str, str]]
    response: dict[str, Any] | None
    latency_s: float
    wait_s: float
    error: str | None = None


@dataclass
class MeteredModel:
    """Wraps the shared client for one episode: serializes calls if needed, meters and records them."""

    inner: ModelClient
    lock: threading.Lock | None
    sampling: dict[str, Any]
    calls: list[_ModelCall] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def is_thread_safe(self) -> bool:
        return self.lock is None

    def __getattr__(self, item: str) -> Any:  # count_tokens and other optional extras of the client
        return getattr(self.inner, item)

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        merged = {**self.sampling, **sampling}
        queued = time.monotonic()
        if self.lock is not None:
            self.lock.acquire()
        started = time.monotonic()
        try:
            response = self.inner.complete(messages, **merged)
        except Exception as exc:
            self._record(messages, None, queued, started, repr(exc))
            raise
        finally:
            if self.lock is not None:
                self.lock.release()
        self._record(messages, to_jsonable(response), queued, started)
        return response

    def _record(
        self, messages: list[dict[str, str]], response: Any, queued: float, started: float, error: str | None = None
    ) -> None:
        latency = time.monotonic() - started
        self.calls.append(_ModelCall([dict(m) for m in messages], response, latency, started - queued, error))

    @property
    def model_time_s(self) -> float:
        return sum(call.latency_s for call in self.calls)

    @property
    def wait_time_s(self) -> float:
        return sum(call.wait_s for call in self.calls)

    @property
    def prompt_tokens(self) -> int:
        return sum(int((call.response or {}).get("prompt_tokens", 0) or 0) for call in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(int((call.response or {}).get("completion_tokens", 0) or 0) for call in self.calls)
