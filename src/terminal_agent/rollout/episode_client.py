"""The model client as one episode sees it: the one wrapper evaluation, the trainers and the benchmarks share.

It serializes calls when the client is not thread-safe (the embedded model), seeds each call when the episode
has a seed, meters every call (latency, time queued), keeps each reply's text and token ids, and, for a trainer,
refuses a reply without token ids (the trainers never re-tokenize text).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.interfaces import ModelClient, ModelResponse
from terminal_agent.outcome import TurnTokens
from terminal_agent.rollout.episode_record import ModelCall


def turn_tokens_of(response: ModelResponse) -> TurnTokens | None:
    """The exact tokens of one model call, when the client reports them."""
    if response.prompt_ids is None or response.completion_ids is None:
        return None
    return TurnTokens(
        prompt_ids=list(response.prompt_ids),
        completion_ids=list(response.completion_ids),
        logprobs=list(response.logprobs) if response.logprobs is not None else None,
        finish_reason=response.finish_reason,
    )


class EpisodeClient:
    """Wraps a :class:`ModelClient` for one episode; see the module docstring.

    ``lock``: held around each call (a client that is not thread-safe, shared by concurrent episodes).
    ``sampling``: keywords under every call's own. ``seed``: call ``i`` samples with ``seed + i``.
    ``require_tokens``: a reply without token ids and logprobs is a :class:`ConfigError`, raised at once.
    ``keep_calls``: keep each call's chat and response (transcripts), not only its timing.
    """

    def __init__(
        self,
        inner: ModelClient,
        *,
        lock: threading.Lock | None = None,
        sampling: dict[str, Any] | None = None,
        seed: int | None = None,
        require_tokens: bool = False,
        keep_calls: bool = True,
    ):
        self.inner = inner
        self.name = inner.name
        self.lock = lock
        self.sampling = dict(sampling or {})
        self.seed = seed
        self.require_tokens = require_tokens
        self.keep_calls = keep_calls
        self.calls: list[ModelCall] = []
        self.texts: list[str] = []
        self.turn_tokens: list[TurnTokens] = []
        self.model_time_s = 0.0
        self.wait_time_s = 0.0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.first_call_at: float | None = None
        """``time.monotonic()`` of the episode's first model call."""
        self.last_reply_at: float | None = None
        """``time.monotonic()`` of its last reply."""

    @property
    def is_thread_safe(self) -> bool:
        return self.lock is None

    def __getattr__(self, item: str) -> Any:  # count_tokens and other optional extras of the client
        return getattr(self.inner, item)

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        merged = {**self.sampling, **sampling}
        if self.seed is not None:
            merged["seed"] = self.seed + len(self.texts)
        queued = time.monotonic()
        if self.first_call_at is None:
            self.first_call_at = queued
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
        self.last_reply_at = time.monotonic()
        self._record(messages, response, queued, started)
        tokens = turn_tokens_of(response)
        if self.require_tokens and (tokens is None or tokens.logprobs is None):
            raise ConfigError(
                f"the policy client {self.name!r} returned no token ids/logprobs; a trainer needs a "
                "token-in/token-out client (the embedded or batched client)"
            )
        if tokens is not None:
            self.turn_tokens.append(tokens)
        self.texts.append(response.text)
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens
        return response

    def _record(
        self, messages: list[dict[str, str]], response: ModelResponse | None, queued: float, started: float,
        error: str | None = None,
    ) -> None:
        latency = time.monotonic() - started
        self.model_time_s += latency
        self.wait_time_s += started - queued
        if self.keep_calls:
            self.calls.append(ModelCall(tuple(dict(m) for m in messages), response, latency, started - queued, error))


__all__ = ["EpisodeClient", "turn_tokens_of"]
