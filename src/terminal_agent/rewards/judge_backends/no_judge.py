"""``none``: the judge is off and the reward is the test score alone."""

from __future__ import annotations

from terminal_agent.errors import JudgeUnavailableError
from terminal_agent.interfaces import ModelClient
from terminal_agent.rewards.judge import NO_JUDGE, JudgeConfig, JudgeRequest, JudgeVerdict


class NoJudge:
    """Stands for "no judge"; reward code checks :attr:`is_off` and never calls it."""

    name = NO_JUDGE
    is_off = True

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        raise JudgeUnavailableError("the 'none' judge backend gives no score: the judge is off")


def make_no_judge(config: JudgeConfig, client: ModelClient | None = None) -> NoJudge:
    return NoJudge()
