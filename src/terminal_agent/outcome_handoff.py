"""Hands one episode's outcome from the env to the agent that played it, through an object of that episode.

Why it exists: rLLM v0.2.1's ``AgentExecutionEngine`` grades an episode it cut (max steps, token
budget) by calling ``env.compute_final_reward()``, keeps only the returned float as the last step's
reward, and never tells the agent. Without a hand-off, a cut episode's last step would carry no
grade, no ``scored`` flag and no termination, and an unscored episode would look like reward 0.

The env makes one :class:`OutcomeHandoff` per episode and puts it in ``reset()``'s info under
:data:`HANDOFF_KEY`; the engine passes that info to ``agent.update_from_env``, where the agent takes
the hand-off out (so no later dict carries it). When the env records the outcome it leaves it there;
the agent absorbs it the next time its trajectory is read (the engine reads ``agent.trajectory``
right after ``compute_final_reward()``). Nothing is shared between episodes or kept in the process:
the hand-off lives as long as the env and agent of its episode hold it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from terminal_agent.outcome import EpisodeOutcome

HANDOFF_KEY = "outcome_handoff"
"""The key of ``reset()``'s info that carries the episode's :class:`OutcomeHandoff`."""


class OutcomeHandoff:
    """One episode's outcome, left by the env and taken once by the agent."""

    __slots__ = ("episode_id", "_outcome", "_lock")

    def __init__(self, episode_id: str) -> None:
        self.episode_id = episode_id
        """The episode this hand-off belongs to."""
        self._outcome: EpisodeOutcome | None = None
        self._lock = threading.Lock()

    def leave(self, outcome: "EpisodeOutcome") -> None:
        """Leave the episode's outcome (a later leave replaces one not yet taken)."""
        with self._lock:
            self._outcome = outcome

    def take(self) -> "EpisodeOutcome | None":
        """The outcome left, removed; None when there is none (not ended yet, or already taken)."""
        with self._lock:
            outcome, self._outcome = self._outcome, None
            return outcome

    # A copied info dict (an engine that deep-copies it) must still reach this episode's hand-off.
    def __copy__(self) -> "OutcomeHandoff":
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> "OutcomeHandoff":
        return self

    def __repr__(self) -> str:
        return f"OutcomeHandoff({self.episode_id!r})"


__all__ = ["HANDOFF_KEY", "OutcomeHandoff"]
