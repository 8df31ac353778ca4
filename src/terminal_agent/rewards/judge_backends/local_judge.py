"""``local``: the embedded model (SmolLM2-135M-Instruct) in this process.

No network and no cost, but a 135M-parameter model is a weak judge: use it for plumbing and
for the judge benchmark's floor, not to shape a real reward.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.interfaces import ModelClient
from terminal_agent.rewards.judge import JudgeConfig, ModelClientJudge


class LocalJudgeOptions(BaseModel):
    """Settings of the ``local`` backend, the embedded model in this process (the section ``judge.local``)."""

    model_config = ConfigDict(extra="forbid")

    model_dir: Path | None = None
    """A transformers directory to load; ``None`` uses the cached conversion of the embedded model."""
    num_threads: int | None = Field(default=None, ge=1)
    """torch threads while generating; ``None``: the embedded client's default."""


def make_local_judge(config: JudgeConfig, client: ModelClient | None = None) -> ModelClientJudge:
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

    options = config.backend_settings("local", LocalJudgeOptions)
    embedded = EmbeddedModelClient(
        EmbeddedModelConfig(
            model_dir=options.model_dir,
            num_threads=options.num_threads,
            max_new_tokens=config.max_tokens,
            stop_after_action=False,  # a judge's reply may quote the agent's tags
        )
    )
    return ModelClientJudge(embedded, config, name=f"local:{embedded.name}", cost_of=lambda response: 0.0)
