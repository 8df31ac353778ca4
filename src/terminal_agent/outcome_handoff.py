"""Hands an episode's final outcome from the env to the agent that played it, keyed by episode id.

Why it exists: rLLM v0.2.1's ``AgentExecutionEngine`` grades an episode it cut (max steps, token
budget) by calling ``env.compute_final_reward()``, keeps only the returned float as the last step's
reward, and never tells the agent. Without a hand-off, a cut episode's last step would carry no
grade, no ``scored`` flag and no termination, and an unscored episode would look like reward 0.

The env publishes its final info under the episode id it also put in ``reset()``'s info; the agent
takes it the next time its trajectory is read (the engine reads ``agent.trajectory`` right after
``compute_final_reward()``). Both live in the same process (the engine's thread pool). Entries
that nobody takes are dropped oldest-first beyond :data:`MAX_ENTRIES`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

MAX_ENTRIES = 4096
"""Outcomes kept at most (an agent that never reads its trajectory must not grow memory)."""

_BOARD: OrderedDict[str, dict[str, Any]] = OrderedDict()
_LOCK = threading.Lock()


def publish(episode_id: str, final_info: dict[str, Any]) -> None:
    """Leave ``final_info`` for the agent of ``episode_id`` (a later publish replaces it)."""
    with _LOCK:
        _BOARD[episode_id] = dict(final_info)
        _BOARD.move_to_end(episode_id)
        while len(_BOARD) > MAX_ENTRIES:
            _BOARD.popitem(last=False)


def take(episode_id: str | None) -> dict[str, Any] | None:
    """The final info published for ``episode_id``, removed from the board; None when there is none."""
    if not episode_id:
        return None
    with _LOCK:
        return _BOARD.pop(episode_id, None)


__all__ = ["MAX_ENTRIES", "publish", "take"]
