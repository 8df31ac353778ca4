"""A judge by backend name: :data:`~terminal_agent.rewards.judge.JUDGE_BACKENDS`.

The backends (``judge_backends/``: litellm, claude-cli, local, none) import ``judge`` for its types; the
registry names each by where it lives (one ``register_path`` line) and imports it when it is first built.
"""

from __future__ import annotations

from terminal_agent.interfaces import ModelClient
from terminal_agent.rewards.judge import JUDGE_BACKENDS, Judge, JudgeConfig


def judge_backend_names() -> list[str]:
    """Every registered backend name."""
    return JUDGE_BACKENDS.names()


def make_judge(config: JudgeConfig | None = None, client: ModelClient | None = None) -> Judge:
    """Build the judge named by ``config.backend`` (unknown names list the valid ones)."""
    config = config or JudgeConfig()
    return JUDGE_BACKENDS.get(config.backend)(config, client)


__all__ = ["judge_backend_names", "make_judge"]
