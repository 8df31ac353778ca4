"""One call that the env makes after grading: ask the judge in force (if any) and combine the reward.

Which judge is in force, in order:

1. the hot-switch control file (:mod:`terminal_agent.rewards.judge_control`), when one is
   configured and holds a good setting: its backend, model and weight;
2. a judge (or a model client) handed to the env in code;
3. ``JudgeConfig.backend`` with ``RewardConfig.judge_weight``.

The judge is not asked when the tests were not scored, when tampering was seen (the reward is 0
whatever a judge says), when its weight is 0 or when the backend is ``none``. A judge that fails
after its retries is recorded as ``judge_error`` and the reward follows
``RewardConfig.judge_failure_policy`` (the test score alone by default; never 0).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from terminal_agent.errors import ConfigError, JudgeError
from terminal_agent.interfaces import ModelClient
from terminal_agent.outcome import Grade
from terminal_agent.rewards.judge import NO_JUDGE, Judge, JudgeConfig, JudgeRequest, ModelClientJudge, run_judge
from terminal_agent.rewards.judge_factory import make_judge
from terminal_agent.rewards.judge_control import JudgeSetting, control_path, watcher_for
from terminal_agent.rewards.reward import RewardConfig, RewardOutcome, combine_reward

logger = logging.getLogger(__name__)

_JUDGES: dict[str, Judge] = {}
_JUDGES_LOCK = threading.Lock()


def current_setting(config: JudgeConfig) -> JudgeSetting | None:
    """The control file's setting in force (None: no control file configured, or none written yet)."""
    path = control_path(config.control_file)
    return None if path is None else watcher_for(path).current()


def judge_config_for(config: JudgeConfig, setting: JudgeSetting | None) -> JudgeConfig:
    """``config`` with the control file's backend and model (when it names a model) applied."""
    if setting is None:
        return config
    update: dict[str, Any] = {"backend": setting.backend}
    if setting.model is not None:
        update["model"] = setting.model
    return config.model_copy(update=update)


def shared_judge(config: JudgeConfig) -> Judge:
    """The process-wide judge for ``config`` (built once: the local backend loads a model)."""
    key = config.model_dump_json()
    with _JUDGES_LOCK:
        judge = _JUDGES.get(key)
    if judge is None:
        judge = make_judge(config)
        with _JUDGES_LOCK:
            judge = _JUDGES.setdefault(key, judge)
    return judge


def judge_and_combine(
    grade: Grade,
    reward: RewardConfig,
    config: JudgeConfig,
    make_request: Callable[[], JudgeRequest],
    *,
    judge: Judge | None = None,
    judge_client: ModelClient | None = None,
) -> tuple[RewardOutcome, dict[str, Any]]:
    """The episode's reward and the judge fields for ``info`` (``judge_backend``, ``judge_error``, ...)."""
    info: dict[str, Any] = {}
    try:
        setting = current_setting(config)
    except ConfigError as exc:  # a relative control path: the job's config applies, and it is said once per episode
        logger.warning("judge hot switch ignored: %s", exc)
        info["judge_control_error"] = str(exc)
        setting = None
    effective = judge_config_for(config, setting)
    weight = setting.weight if setting is not None and setting.weight is not None else None
    if setting is not None:
        info["judge_control"] = {"backend": setting.backend, "model": setting.model, "weight": setting.weight, "written_at": setting.written_at}
    in_code = setting is None and (judge is not None or judge_client is not None)
    enabled = (weight > 0 if weight is not None else reward.judge_enabled) and (in_code or effective.backend != NO_JUDGE)
    if not enabled or not grade.scored or grade.tamper_signals:
        off = reward if enabled else reward.model_copy(update={"judge_weight": 0.0, "judge_schedule": None})
        return combine_reward(grade, off, judge_weight=0.0 if not enabled else weight), info

    verdict = None
    error: str | None = None
    try:
        chosen = _choose_judge(effective, setting, judge, judge_client)
    except (JudgeError, ConfigError) as exc:  # the backend cannot be built (CLI missing, no model): judge_error
        chosen, error = None, str(exc)
        logger.warning("judge %s unavailable: %s", effective.backend, exc)
    if chosen is not None:
        info["judge_backend"] = getattr(chosen, "name", effective.backend)
        verdict, error = run_judge(
            chosen,
            make_request(),
            max_attempts=effective.max_attempts,
            backoff_initial_s=effective.backoff_initial_s,
            backoff_max_s=effective.backoff_max_s,
        )
    if verdict is not None:
        info.update(
            {
                "judge_backend": verdict.backend,
                "judge_reasoning": verdict.reasoning,
                "judge_latency_s": verdict.latency_s,
                "judge_cost_usd": verdict.cost_usd,
                "judge_attempts": verdict.attempts,
            }
        )
    else:
        info["judge_error"] = error or "the judge gave no verdict"
    outcome = combine_reward(
        grade, reward, verdict.score if verdict else None, info.get("judge_error"), judge_weight=weight
    )
    return outcome, info


def _choose_judge(
    config: JudgeConfig, setting: JudgeSetting | None, judge: Judge | None, client: ModelClient | None
) -> Judge:
    if setting is None or setting.backend == "model":  # "model" means the client handed over in code
        if judge is not None:
            return judge
        if client is not None:
            return ModelClientJudge(client, config)
    return shared_judge(config)


__all__ = ["current_setting", "judge_and_combine", "judge_config_for", "shared_judge"]
