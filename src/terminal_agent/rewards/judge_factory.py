"""A judge by backend name: :data:`~terminal_agent.rewards.judge.JUDGE_BACKENDS` with the built-in backends in it.

The backends (``judge_backends/``: litellm, claude-cli, local, none) import ``judge`` for its types and
its registry; this module imports them, so building a judge never needs ``judge`` to import its own
backends.
"""

from __future__ import annotations

from terminal_agent.interfaces import ModelClient
import terminal_agent.rewards.judge_backends  # noqa: F401 - registers the built-in backends (the module, not the package face: no circle)
from terminal_agent.rewards.judge import JUDGE_BACKENDS, Judge, JudgeConfig


def judge_backend_names() -> list[str]:
    """Every registered backend name."""
    return JUDGE_BACKENDS.names()


def make_judge(config: JudgeConfig | None = None, client: ModelClient | None = None) -> Judge:
    """Build the judge named by ``config.backend`` (unknown names list the valid ones)."""
    config = config or JudgeConfig()
    return JUDGE_BACKENDS.get(config.backend)(config, client)


__all__ = ["judge_backend_names", "make_judge"]
