"""Rewards: tamper-resistant weighted test grading, the LLM judge, and their combination."""

from terminal_agent.rewards.grading import DetailedGradeResult, Grader, GradingConfig, grade_episode
from terminal_agent.rewards.judge import (
    JUDGE_BACKENDS,
    JudgeConfig,
    JudgeRequest,
    JudgeVerdict,
    ModelClientJudge,
    parse_judge_score,
    run_judge,
)
from terminal_agent.rewards.judge_factory import make_judge
from terminal_agent.rewards.episode_judging import judge_and_combine
from terminal_agent.rewards.reward import REWARD_PRESETS, RewardConfig, RewardOutcome, combine_reward, reward_at_step
from terminal_agent.rewards.reward_schedule import JudgeWeightSchedule, judge_weight_at

__all__ = [
    "JUDGE_BACKENDS",
    "REWARD_PRESETS",
    "JudgeWeightSchedule",
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
    "judge_and_combine",
    "judge_weight_at",
    "make_judge",
    "parse_judge_score",
    "reward_at_step",
    "run_judge",
]
