"""A deterministic model client for tests and demos: replies from a list or from a function.

It drives the real agent against a real container without any model; nothing is patched.

>>> client = ScriptedModelClient(["<bash>\\ncmd: ls\\n</bash>", "<finish>\\nmessage: done\\n</finish>"])
>>> client.complete([{"role": "user", "content": "hi"}]).text.startswith("<bash>")
True
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError, TerminalAgentError
from terminal_agent.interfaces import ModelResponse
from terminal_agent.user_files import read_user_text

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


MAX_REPLIES_FILE_BYTES = 64 * 1024 * 1024
"""Largest replies file read (a script of tens of thousands of long replies fits many times over)."""

YAML_SUFFIXES = (".yaml", ".yml")
"""Suffixes of a replies file read as YAML; any other file is read as JSON."""


def _parse_replies_text(text: str, path: Path) -> Any:
    """The parsed document of a replies file; ConfigError naming the file and the line when it does not parse."""
    where = f"scripted model: replies file {path}"
    if path.suffix.lower() in YAML_SUFFIXES:
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{where} is not valid YAML: {exc}") from None
        except RecursionError:  # the YAML parser recurses per level of nesting
            raise ConfigError(f"{where} is not valid YAML: nested too deeply") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            f"a file named {' or '.join(YAML_SUFFIXES)} is read as YAML"
        ) from None
    except RecursionError:  # json recurses per level of nesting
        raise ConfigError(f"{where} is not valid JSON: nested too deeply") from None


def load_replies_file(path: Path | str | None) -> list[str]:
    """The reply strings of a scripted-model file (YAML for ``.yaml``/``.yml``, JSON otherwise): a list of strings.

    Raises :class:`ConfigError` naming the file when it is missing, not a regular file, unreadable, larger than
    :data:`MAX_REPLIES_FILE_BYTES`, not UTF-8, not valid JSON/YAML or not a list of strings (naming the index of the
    first entry that is not a string). Nothing is written.
    """
    if path is None or str(path) == "":
        raise ConfigError("scripted model: no replies file given (spec scripted:FILE)")
    path = Path(path)
    where = f"scripted model: replies file {path}"
    text = read_user_text(path, kind="replies file", max_bytes=MAX_REPLIES_FILE_BYTES, prefix="scripted model: ")
    replies = _parse_replies_text(text, path)
    if not isinstance(replies, list):
        raise ConfigError(f"{where} must hold a list of reply strings, not {type(replies).__name__}")
    for index, reply in enumerate(replies):
        if not isinstance(reply, str):
            raise ConfigError(f"{where}: reply {index} is {type(reply).__name__}, not a string")
        if any(0xD800 <= ord(char) <= 0xDFFF for char in reply):  # a "\ud800" escape: no transcript could hold it
            raise ConfigError(f"{where}: reply {index} holds a lone surrogate, which is not valid Unicode text")
    return replies


__all__ = ["MAX_REPLIES_FILE_BYTES", "ScriptExhaustedError", "ScriptedModelClient", "load_replies_file"]
