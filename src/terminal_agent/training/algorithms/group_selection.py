"""Which samples of a batch of groups a trainer may learn from, and why the others are left out.

Order of decisions, per group (all attempts at one task):

1. **Infrastructure masking.** A sample whose :class:`~terminal_agent.outcome.EpisodeOutcome` is
   not ``trainable`` (sandbox broke, image missing, grader crashed, provider failed...) is removed
   from its group before anything is computed: it never enters the group mean as a reward of 0 and
   no token of it is trained.
2. **Truncation policy.** An episode cut by a budget (turn, token, output, context or time limit)
   is the model's doing: the grader scores what it left behind and the sample is kept with that
   reward, exactly as rLLM grades a truncated episode. A completion cut by the per-turn length cap
   (``finish_reason == "length"``) is trained as sampled (no end token is appended). Both are
   counted. ``mask_truncated=True`` drops truncated episodes instead (as if masked).
3. **Zero-variance rejection** (``reject_zero_variance``): a group whose remaining rewards all
   agree (population std < 1e-8, rLLM's "uninformative" threshold; a group of one included) has a
   zero advantage everywhere and is dropped whole. Without it, such a group is kept and its
   samples get rLLM's advantage (0 for n > 1; ``r / (1 + eps)`` for a group of one).
4. An empty group (every attempt masked) is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from terminal_agent.outcome import EpisodeOutcome, Termination

ZERO_VARIANCE_STD = 1e-8
"""Groups whose reward std is below this carry no learning signal."""

TRUNCATING_TERMINATIONS = frozenset(
    {
        Termination.TRUNCATED,
        Termination.MAX_STEPS,
        Termination.MAX_TOKENS,
        Termination.OUTPUT_LIMIT,
        Termination.CONTEXT_LIMIT,
        Termination.AGENT_TIMEOUT,
        Termination.EPISODE_TIMEOUT,
    }
)


def is_truncated(outcome: EpisodeOutcome) -> bool:
    """True when a budget (not the agent's own ``finish``) ended a scored episode."""
    return outcome.termination in TRUNCATING_TERMINATIONS


@dataclass
class GroupSelection:
    """The outcome of :func:`select_groups`: which samples train and the counts for metrics."""

    kept: list[list[int]] = field(default_factory=list)
    """Per input group, the indices of its samples that train (empty when the group was dropped)."""
    masked_infrastructure: int = 0
    """Samples removed because an infrastructure failure ended them."""
    masked_truncated: int = 0
    """Samples removed by ``mask_truncated``."""
    truncated: int = 0
    """Scored samples ended by a budget (kept unless ``mask_truncated``)."""
    length_cut_turns: int = 0
    """Turns whose completion hit the per-turn token cap, over all trainable samples."""
    groups_dropped_zero_variance: int = 0
    groups_dropped_empty: int = 0

    @property
    def groups_kept(self) -> int:
        return sum(1 for k in self.kept if k)

    @property
    def samples_kept(self) -> int:
        return sum(len(k) for k in self.kept)


def select_groups(
    groups: Sequence[Sequence[EpisodeOutcome]],
    *,
    reject_zero_variance: bool = True,
    mask_truncated: bool = False,
) -> GroupSelection:
    """Decide, for each group of outcomes, which samples a trainer uses (see the module doc)."""
    selection = GroupSelection()
    for group in groups:
        kept: list[int] = []
        for i, outcome in enumerate(group):
            if not outcome.trainable:
                selection.masked_infrastructure += 1
                continue
            if is_truncated(outcome):
                selection.truncated += 1
                if mask_truncated:
                    selection.masked_truncated += 1
                    continue
            selection.length_cut_turns += sum(1 for t in outcome.turn_tokens if t.finish_reason == "length")
            kept.append(i)
        if not kept:
            selection.groups_dropped_empty += 1
            selection.kept.append([])
            continue
        rewards = np.array([group[i].reward for i in kept], dtype=np.float64)
        if reject_zero_variance and float(np.std(rewards)) < ZERO_VARIANCE_STD:
            selection.groups_dropped_zero_variance += 1
            selection.kept.append([])
            continue
        selection.kept.append(kept)
    return selection


__all__ = ["GroupSelection", "TRUNCATING_TERMINATIONS", "ZERO_VARIANCE_STD", "is_truncated", "select_groups"]
