"""A deterministic model client for tests and demos: replies from a list or from a function.

It drives the real agent against a real container without any model; nothing is patched.

>>> client = ScriptedModelClient(["<bash>\\ncmd: ls\\n</bash>", "<finish>\\nmessage: done\\n</finish>"])
>>> client.complete([{"role": "user", "content": "hi"}]).text.startswith("<bash>")
True
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from terminal_agent.errors import TerminalAgentError
from terminal_agent.interfaces import ModelResponse

Reply = str | ModelResponse
ReplyFunction = Callable[[list[dict[str, str]]], Reply]


class ScriptExhaustedError(TerminalAgentError, RuntimeError):
    """The script has no reply left for this call (the test wrote fewer replies than turns)."""


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


class ScriptedModelClient:
    """Implements :class:`terminal_agent.interfaces.ModelClient` from a fixed script.

    ``replies`` is a list (each item a reply text or a full :class:`ModelResponse`, e.g. with
    ``finish_reason="length"``) consumed in order, or a function of the messages. Token counts are
    estimated (4 characters a token) unless the reply is a ``ModelResponse`` that carries them.
    ``calls`` keeps the messages of every call, for assertions.
    """

    def __init__(self, replies: Sequence[Reply] | ReplyFunction, name: str = "scripted"):
        self.name = name
        self._function: ReplyFunction | None = replies if callable(replies) else None
        self._replies: list[Reply] = [] if callable(replies) else list(replies)
        self._position = 0
        self._lock = threading.Lock()
        self.calls: list[list[dict[str, str]]] = []

    @property
    def remaining(self) -> int | None:
        """Replies left in a list script; None for a function script."""
        return None if self._function else len(self._replies) - self._position

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse:
        started = time.monotonic()
        with self._lock:
            self.calls.append([dict(m) for m in messages])
            if self._function is not None:
                reply = self._function(messages)
            else:
                if self._position >= len(self._replies):
                    raise ScriptExhaustedError(
                        f"scripted model {self.name!r} ran out of replies after {len(self._replies)} call(s); "
                        "add replies to the script or lower max_steps"
                    )
                reply = self._replies[self._position]
                self._position += 1
        if isinstance(reply, ModelResponse):
            response = dataclasses.replace(reply)  # a copy: token ids and logprobs included
        elif isinstance(reply, str):
            response = ModelResponse(text=reply)
        else:
            raise TypeError(f"a script reply must be str or ModelResponse, not {type(reply).__name__}")
        if not response.prompt_tokens:
            response.prompt_tokens = sum(_estimate_tokens(m.get("content", "")) for m in messages)
        if not response.completion_tokens:
            response.completion_tokens = _estimate_tokens(response.text)
        if not response.latency_s:
            response.latency_s = time.monotonic() - started
        return response


__all__ = ["ScriptExhaustedError", "ScriptedModelClient"]
