"""Shared pieces of the model clients (the interface itself is :class:`terminal_agent.interfaces.ModelClient`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from terminal_agent.errors import ModelProviderError

SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "stop", "seed")
"""Sampling parameters every client understands (clients may accept more)."""

_OPEN_TAG = re.compile(r"<([A-Za-z_][\w-]*)(?:\s[^<>]*)?>")


class ContextWindowExceededError(ModelProviderError):
    """The prompt no longer fits the model's context window.

    Still a provider error (the sample is not scored as the model's failure), but callers can
    tell it apart: it will not go away by retrying the same prompt.
    """


def first_closed_tag_end(text: str, tags: Iterable[str] | None = None) -> int | None:
    """End offset of the first ``</name>`` that closes a ``<name ...>`` opened earlier in ``text``.

    ``tags`` limits which names count (``None``: any tag). Used to stop generation as soon as a
    complete action has been written, since one action per turn is what the agent executes first.
    """
    allowed = set(tags) if tags is not None else None
    for match in _OPEN_TAG.finditer(text):
        name = match.group(1)
        if allowed is not None and name not in allowed:
            continue
        close = text.find(f"</{name}>", match.end())
        if close != -1:
            return close + len(name) + 3
    return None
