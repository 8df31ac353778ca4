"""``local``: the embedded model (SmolLM2-135M-Instruct) in this process.

No network and no cost, but a 135M-parameter model is a weak judge: use it for plumbing and
for the judge benchmark's floor, not to shape a real reward.
"""

from __future__ import annotations

from terminal_agent.interfaces import ModelClient
from terminal_agent.rewards.judge import JudgeConfig, ModelClientJudge


def make_local_judge(config: JudgeConfig, client: ModelClient | None = None) -> ModelClientJudge:
    from terminal_agent.models.embedded import EmbeddedModelClient, EmbeddedModelConfig

    embedded = EmbeddedModelClient(
        EmbeddedModelConfig(
            model_dir=config.local.model_dir,
            num_threads=config.local.num_threads,
            max_new_tokens=config.max_tokens,
            stop_after_action=False,  # a judge's reply may quote the agent's tags
        )
    )
    return ModelClientJudge(embedded, config, name=f"local:{embedded.name}", cost_of=lambda response: 0.0)
