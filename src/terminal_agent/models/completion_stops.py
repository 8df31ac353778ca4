"""Where a sampled reply ends, in tokens: shared by the one-at-a-time and the batched local clients.

A reply stops at the first of: a closed action tag (``</bash>`` closing a ``<bash>`` opened in the
reply, when ``stop_after_action``), a stop string, the end-of-sequence token, or the token cap.
The cut is made on token boundaries so that the returned ids decode to exactly the returned text:

- closed tag: the ids end with the token that completes the closing tag (any characters that
  token carries after ``>`` stay in the text; SmolLM2's tokenizer emits ``>`` on its own);
- stop string: the ids end with the last token that ends at or before the stop string's start
  (the stop string is never in the text; when it starts inside a token, that token's head is
  dropped too, so the text can be a few characters shorter than an OpenAI-style cut);
- end-of-sequence: the EOS id is kept (it was sampled and is trained on) but does not show in
  the text (special tokens are skipped when decoding).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from terminal_agent.models.base import first_closed_tag_end


@dataclass(frozen=True)
class StopRule:
    """The text-level stop conditions of one call."""

    stop_after_action: bool = True
    """Stop once a tag opened in the reply is closed."""
    action_tags: tuple[str, ...] | None = None
    """Tag names that count for ``stop_after_action`` (``None``: any tag)."""
    stop: tuple[str, ...] = ()
    """Stop strings (the reply ends before the first one)."""

    @classmethod
    def build(cls, stop_after_action: bool, action_tags: Sequence[str] | None, stop: object) -> StopRule:
        """From a client config and a call's ``stop`` keyword (``None``, a string or a list of strings)."""
        if stop is None:
            strings: tuple[str, ...] = ()
        elif isinstance(stop, str):
            strings = (stop,)
        elif isinstance(stop, Iterable):
            strings = tuple(str(s) for s in stop)
        else:
            raise TypeError(f"stop must be None, a string or a list of strings, not {type(stop).__name__}")
        tags = tuple(action_tags) if action_tags is not None else None
        return cls(stop_after_action=stop_after_action, action_tags=tags, stop=tuple(s for s in strings if s))

    def tag_end(self, text: str) -> int | None:
        return first_closed_tag_end(text, self.action_tags) if self.stop_after_action else None

    def stop_start(self, text: str) -> int | None:
        starts = [text.find(s) for s in self.stop if s in text]
        return min(starts) if starts else None

    def is_hit(self, text: str) -> bool:
        """True once ``text`` (the reply so far) holds a closed action tag or a stop string."""
        return self.tag_end(text) is not None or self.stop_start(text) is not None


@dataclass(frozen=True)
class CutCompletion:
    """The kept part of a sampled id sequence."""

    kept: int
    """How many of the sampled ids are kept (a prefix)."""
    text: str
    """``decode(ids[:kept])`` with special tokens skipped: the reply."""
    finish_reason: str
    """``stop`` (action, stop string or EOS) or ``length`` (the token cap ended it)."""


def cut_completion(
    ids: Sequence[int],
    decode: Callable[[Sequence[int]], str],
    rule: StopRule,
    eos_ids: set[int],
    max_new_tokens: int,
) -> CutCompletion:
    """Cut ``ids`` (all sampled ids of one reply) at the first stop condition, on a token boundary.

    ``decode`` must skip special tokens. See the module docstring for where each kind of stop cuts.
    """
    ids = list(ids)
    for index, token in enumerate(ids):
        if token in eos_ids:  # nothing after an EOS belongs to the reply
            ids = ids[: index + 1]
            break
    full = decode(ids)
    tag_end = rule.tag_end(full)
    stop_start = rule.stop_start(full)
    if tag_end is not None and (stop_start is None or tag_end <= stop_start):
        kept = len(ids)
        while kept > 1 and rule.tag_end(decode(ids[: kept - 1])) is not None:
            kept -= 1
        return CutCompletion(kept, decode(ids[:kept]), "stop")
    if stop_start is not None:
        kept = len(ids)
        while kept > 0:
            text = decode(ids[:kept])
            if len(text) <= stop_start and rule.stop_start(text) is None:
                break
            kept -= 1
        return CutCompletion(kept, decode(ids[:kept]), "stop")
    ended_by_eos = bool(ids) and ids[-1] in eos_ids
    finish = "length" if len(ids) >= max_new_tokens and not ended_by_eos else "stop"
    return CutCompletion(len(ids), full, finish)
