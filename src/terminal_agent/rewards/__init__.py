"""Rewards: tamper-resistant grading (weighted pytest; the Harbor verifier mode), the LLM judge, and their combination."""

from terminal_agent.rewards.grading import DetailedGradeResult, Grader, GradingConfig, grade_episode
from terminal_agent.rewards.grading_modes import GRADING_MODES, ModeGraders
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.harbor_verifier import HarborGradeResult, HarborGrader
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
    "GRADING_MODES",
    "HarborGradeResult",
    "HarborGrader",
    "HarborGradingConfig",
    "JUDGE_BACKENDS",
    "ModeGraders",
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
