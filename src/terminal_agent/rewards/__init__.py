"""Rewards: tamper-resistant grading (weighted pytest; the Harbor verifier mode), the LLM judge, and their combination.

One sub-package per grading mode (``weighted_pytest/``, ``harbor/``), reached through the table of
:mod:`terminal_agent.tasks.grading_mode_registry`; beside them what every mode shares (``grading``,
``grading_modes``, ``agent_processes``, ``tamper_detection``, ``guard_scoring``, ``verifier_bundle``,
``verifier_runtime``, ``harbor_config``), the judge (``judge`` and ``judge_*``, ``judge_backends/``) and the reward
(``reward``, ``reward_schedule``, ``episode_judging``).

Names are imported lazily: every task read imports its grading mode's task-field rules
(``weighted_pytest/task_fields.py``, ``harbor/task_fields.py``), which must not pull in the graders and the judge.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "judge_and_combine": "terminal_agent.rewards.episode_judging",
    "GradingConfig": "terminal_agent.rewards.grading",
    "GRADING_MODES": "terminal_agent.rewards.grading_modes",
    "ModeGraders": "terminal_agent.rewards.grading_modes",
    "HarborVerifierFacts": "terminal_agent.rewards.harbor.verifier",
    "HarborGrader": "terminal_agent.rewards.harbor.verifier",
    "HarborGradingConfig": "terminal_agent.rewards.harbor_config",
    "JUDGE_BACKENDS": "terminal_agent.rewards.judge",
    "JudgeConfig": "terminal_agent.rewards.judge",
    "JudgeRequest": "terminal_agent.rewards.judge",
    "JudgeVerdict": "terminal_agent.rewards.judge",
    "ModelClientJudge": "terminal_agent.rewards.judge",
    "parse_judge_score": "terminal_agent.rewards.judge",
    "run_judge": "terminal_agent.rewards.judge",
    "make_judge": "terminal_agent.rewards.judge_factory",
    "REWARD_PRESETS": "terminal_agent.rewards.reward",
    "RewardConfig": "terminal_agent.rewards.reward",
    "RewardOutcome": "terminal_agent.rewards.reward",
    "combine_reward": "terminal_agent.rewards.reward",
    "reward_at_step": "terminal_agent.rewards.reward",
    "JudgeWeightSchedule": "terminal_agent.rewards.reward_schedule",
    "judge_weight_at": "terminal_agent.rewards.reward_schedule",
    "Grader": "terminal_agent.rewards.weighted_pytest.grader",
    "grade_episode": "terminal_agent.rewards.weighted_pytest.grader",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'terminal_agent.rewards' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
