"""Rewards: tamper-resistant weighted test grading, the LLM judge, and their combination."""

from terminal_agent.rewards.grading import DetailedGradeResult, Grader, GradingConfig, grade_episode
from terminal_agent.rewards.judge import (
    JUDGE_BACKENDS,
    JudgeConfig,
    JudgeRequest,
    JudgeVerdict,
    ModelClientJudge,
    make_judge,
    parse_judge_score,
    run_judge,
)
from terminal_agent.rewards.reward import RewardConfig, RewardOutcome, combine_reward

__all__ = [
    "JUDGE_BACKENDS",
    "DetailedGradeResult",
    "Grader",
    "GradingConfig",
    "JudgeConfig",
    "JudgeRequest",
    "JudgeVerdict",
    "ModelClientJudge",
    "RewardConfig",
    "RewardOutcome",
    "combine_reward",
    "grade_episode",
    "make_judge",
    "parse_judge_score",
    "run_judge",
]
