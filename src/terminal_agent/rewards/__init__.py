"""Rewards: tamper-resistant grading (weighted pytest; the Harbor verifier mode), the LLM judge, and their combination.

One sub-package per grading mode (``weighted_pytest/``, ``harbor/``), reached through the table of
:mod:`terminal_agent.tasks.grading_mode_registry`; beside them what every mode shares (``grading``,
``grading_modes``, ``agent_processes``, ``tamper_detection``, ``guard_scoring``, ``verifier_bundle``,
``verifier_runtime``, ``harbor_config``), the judge (``judge`` and ``judge_*``, ``judge_backends/``) and the reward
(``reward``, ``reward_schedule``, ``episode_judging``).
"""

from terminal_agent.rewards.episode_judging import judge_and_combine
from terminal_agent.rewards.grading import GradingConfig
from terminal_agent.rewards.grading_modes import GRADING_MODES, ModeGraders
from terminal_agent.rewards.harbor.verifier import HarborGrader, HarborVerifierFacts
from terminal_agent.rewards.harbor_config import HarborGradingConfig
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
from terminal_agent.rewards.reward import REWARD_PRESETS, RewardConfig, RewardOutcome, combine_reward, reward_at_step
from terminal_agent.rewards.reward_schedule import JudgeWeightSchedule, judge_weight_at
from terminal_agent.rewards.weighted_pytest.grader import Grader, grade_episode

__all__ = [
    "GRADING_MODES",
    "HarborGrader",
    "HarborVerifierFacts",
    "HarborGradingConfig",
    "JUDGE_BACKENDS",
    "ModeGraders",
    "REWARD_PRESETS",
    "JudgeWeightSchedule",
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
