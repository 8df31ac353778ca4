"""DockerIsolatedEnv: one terminal task in its own container, as an rLLM ``BaseEnv``.

Lifecycle (rLLM's engines call it in several shapes; all work):

* construction: ``DockerIsolatedEnv(task, config)``, ``DockerIsolatedEnv.from_dict({**extra_info,
  **env_args})`` (rLLM v0.2.1), or ``DockerIsolatedEnv(**env_args)`` with no task at all (rLLM HEAD's
  workflows build one env per pooled workflow and hand it a task per episode);
* ``reset(task=None | dict | Task)`` starts a fresh container for the given (or the current) task,
  releasing any previous one, and returns ``({"instruction": ..., "task_id": ...}, info)``. It is
  idempotent per task: a second reset of the same task before any step returns the same episode
  (``MultiTurnWorkflow`` resets twice and never calls ``close()``); a new task releases the old
  container and image;
* ``step(action)`` takes an rLLM ``Action`` or its payload (the model's reply text), runs the
  reply's actions in the container and returns ``(observation, reward, done, info)``;
* the episode ends on ``finish``, after ``max_consecutive_error_turns`` replies in a row with no
  runnable action, at ``max_steps``, past the task's ``agent_timeout_s``, or when the sandbox
  breaks; on done the env grades (tests, optional judge), releases the container and puts the
  grade, the reward and ``scored`` in ``info``;
* ``compute_final_reward()`` grades an episode that the engine cut (max steps or tokens).

Every ending (graded, broken sandbox, never started) is built first as a typed
:class:`~terminal_agent.outcome.EpisodeOutcome` (``env.outcome``); the ``info`` dicts that leave the env
are derived from it (:meth:`EpisodeOutcome.final_info`), and so are ``env.termination``, ``env.final_reward`` and
``env.final_info`` (views, never stored copies). A sample that could not be scored (grader,
judge or sandbox failure) has termination ``<kind>_error`` (the agent's own ending kept as
``info["agent_ending"]``), ``info["scored"] = False`` and ``info["error_kind"]``, and returns reward 0.0
so that trainers mask it. The outcome is also left on the episode's
:class:`~terminal_agent.outcome_handoff.OutcomeHandoff` (in ``reset()``'s info), so a cut episode's
last step carries its grade.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.actions import ActionConfig, ToolContext, run_turn
from terminal_agent.compat.rllm import BaseEnv, action_payload
from terminal_agent.errors import ConfigError, SandboxError, error_kind
from terminal_agent.interfaces import Sandbox
from terminal_agent.outcome import EpisodeOutcome, Grade, Termination
from terminal_agent.outcome_handoff import HANDOFF_KEY, OutcomeHandoff
from terminal_agent.rewards.episode_judging import judge_and_combine
from terminal_agent.rewards.grading import GradingConfig
from terminal_agent.rewards.grading_modes import EpisodeGrader, GraderSettings, ModeGraders, grade_sandbox
from terminal_agent.rewards.judge import Judge, JudgeConfig, JudgeRequest
from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.sandbox import SandboxConfig
from terminal_agent.sandbox.storage_quota import storage_over_quota
from terminal_agent.tasks.model import Task
from terminal_agent.tasks.parquet.rows import FLAT_TASK_KEYS, task_from_flat_dict

if TYPE_CHECKING:
    from terminal_agent.sandbox.pool import SandboxPool

logger = logging.getLogger(__name__)

_SHARED_GRADERS = ModeGraders()
"""The graders of every grading mode for envs with the default grading and sandbox settings."""


class EnvConfig(BaseModel):
    """Settings of one :class:`DockerIsolatedEnv` (all of them can come from rLLM ``env_args``)."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(30, ge=1)
    """Model replies per episode; the episode is graded when they run out."""
    actions: ActionConfig = Field(default_factory=ActionConfig)
    """Action/tool limits (output caps, timeouts, consecutive error turns)."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    """How containers are started."""
    grading: GradingConfig = Field(default_factory=GradingConfig)
    """How the tests are run."""
    reward: RewardConfig = Field(default_factory=RewardConfig)
    """Test/judge weights and the judge failure policy."""
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    """Judge backend settings and hot-switch control file (asked only when the judge weight is above 0)."""
    run_id: str | None = None
    """Label of the containers (cleanup scope); defaults to one per process."""


SHORTCUT_KEYS = ("test_weight", "judge_weight", "reward_weights", "judge_failure_policy", "env_config")
"""Flat rLLM ``env_args`` shortcuts that :func:`env_config_from_args` understands besides ``ENV_ARG_KEYS``."""
ROW_BOOKKEEPING_KEYS = ("index", "uid", "split", "data_source", "ability", "task_format")
"""Keys rLLM/verl add to a row's ``extra_info`` that mean nothing to the env."""

ENV_ARG_KEYS = {
    "max_steps": "max_steps",
    "run_id": "run_id",
    "actions": "actions",
    "action_config": "actions",
    "sandbox": "sandbox",
    "sandbox_config": "sandbox",
    "grading": "grading",
    "reward": "reward",
    "judge": "judge",
}


def env_config_from_args(args: dict[str, Any]) -> EnvConfig:
    """Pick the env arguments out of a flat rLLM dict (task fields are ignored).

    Accepted: the ``EnvConfig`` keys (``max_steps``, ``actions``/``action_config``, ``sandbox``/
    ``sandbox_config``, ``grading``, ``reward``, ``judge``, ``run_id``), a whole ``env_config``
    mapping, and the shortcuts ``test_weight``, ``judge_weight``, ``reward_weights``
    (``{"tests": w, "judge": w}``) and ``judge_failure_policy``.
    """
    data: dict[str, Any] = dict(args.get("env_config") or {})
    for key, target in ENV_ARG_KEYS.items():
        if key in args and args[key] is not None:
            data[target] = args[key]
    reward = dict(data.get("reward") or {})
    weights = args.get("reward_weights") or {}
    if "tests" in weights:
        reward["test_weight"] = weights["tests"]
    if "judge" in weights:
        reward["judge_weight"] = weights["judge"]
    for key in ("test_weight", "judge_weight", "judge_failure_policy"):
        if key in args and args[key] is not None:
            reward[key] = args[key]
    if reward:
        data["reward"] = reward
    return EnvConfig.model_validate(data)


class DockerIsolatedEnv(BaseEnv):
    """One task, one container per episode. Thread-safe across instances (one episode per instance)."""

    def __init__(
        self,
        task: Task | dict[str, Any] | None = None,
        config: EnvConfig | None = None,
        *,
        judge: Judge | None = None,
        judge_client: Any = None,
        pool: SandboxPool | None = None,
        grader: EpisodeGrader | None = None,
        **env_args: Any,
    ) -> None:
        """``env_args`` are the flat keys ``from_dict`` accepts (``max_steps``, ``run_id``, ``sandbox``, ...,
        and a flat task's fields); an unknown key is a :class:`ConfigError` naming it."""
        unknown = sorted(set(env_args) - set(ENV_ARG_KEYS) - set(SHORTCUT_KEYS) - FLAT_TASK_KEYS - set(ROW_BOOKKEEPING_KEYS))
        if unknown:
            valid = ", ".join(sorted(set(ENV_ARG_KEYS) | set(SHORTCUT_KEYS)))
            raise ConfigError(f"DockerIsolatedEnv: unknown argument(s) {', '.join(unknown)}; env keys: {valid}")
        if env_args and config is not None and set(env_args) - FLAT_TASK_KEYS - set(ROW_BOOKKEEPING_KEYS):
            raise ConfigError("DockerIsolatedEnv: give either config= or flat env arguments, not both")
        if task is None and "instruction" in env_args:
            task = env_args  # a flat task row passed as keywords, as from_dict would get it
        self.task: Task | None = self._as_task(task) if task is not None else None
        self.config = config or env_config_from_args(env_args)
        self.pool = pool
        # grader=: one grader for every task; otherwise the grader of each task's mode (task.verifier.mode)
        default = self.config.grading == GradingConfig() and self.config.sandbox == SandboxConfig() and self.config.run_id is None
        self.grader: EpisodeGrader = grader or (_SHARED_GRADERS if default else ModeGraders(
            GraderSettings(grading=self.config.grading, sandbox=self.config.sandbox, run_id=self.config.run_id)
        ))
        self.judge = judge
        self.judge_client = judge_client
        self._image: str | None = None
        self._sandbox: Sandbox | None = None
        self._ctx: ToolContext | None = None
        self._lock = threading.RLock()
        self._closed_under_episode = threading.Event()
        """Set by a :meth:`close` that could not wait for the running step, reset or grading: this env's episode
        is over and it starts no sandbox again."""
        self._reset_state()
        self._fresh_reset: tuple[dict[str, Any], dict[str, Any]] | None = None
        self.outcome: EpisodeOutcome | None = None
        """How the last episode ended (None until it has)."""

    # --- rLLM construction --------------------------------------------------------------------
    @staticmethod
    def from_dict(info: dict[str, Any]) -> "DockerIsolatedEnv":
        """Build from ``{**extra_info, **env_args}`` (a parquet row of ``tasks.parquet.rows``)."""
        return DockerIsolatedEnv(task_from_flat_dict(info), env_config_from_args(info))

    @staticmethod
    def _as_task(task: Any) -> Task:
        if isinstance(task, Task):
            return task
        if isinstance(task, (dict, str)):
            return task_from_flat_dict(task)
        raise ConfigError(f"DockerIsolatedEnv: a task must be a Task or a flat task dict, not {type(task).__name__}")

    @staticmethod
    def is_multithread_safe() -> bool:
        return True

    # --- episode ------------------------------------------------------------------------------
    def _reset_state(self) -> None:
        self.steps = 0
        self.done = False
        self.consecutive_error_turns = 0
        self.transcript: list[tuple[str, str]] = []
        self.episode_id = uuid.uuid4().hex[:12]
        self.handoff = OutcomeHandoff(self.episode_id)
        self.started_at = time.monotonic()
        self.env_time_s = 0.0

    def reset(self, task: Task | dict[str, Any] | None = None, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode of ``task`` (default: the current task). See the module docstring."""
        with self._lock:
            if task is not None:
                new_task = self._as_task(task)
                if new_task != self.task:
                    self._release()
                    self.task, self._image, self._fresh_reset = new_task, None, None
                elif self._fresh_reset is not None and self._sandbox is not None and self.steps == 0 and not self.done:
                    # the same task reset twice before a step: one episode, one container (started ahead of
                    # time); the agent's clock starts now, when the episode's caller gets it
                    self.started_at = time.monotonic()
                    observation, info = self._fresh_reset
                    return dict(observation), dict(info)  # copies: the agent takes the hand-off out of its info
            if self.task is None:
                raise ConfigError("DockerIsolatedEnv.reset(): no task; pass reset(task=...) or build the env with one")
            self._release()
            self._reset_state()
            self._fresh_reset = None
            self.outcome = None
            started = time.monotonic()
            if self._image is None:
                from terminal_agent.sandbox.backends import resolve_task_image

                self._image = resolve_task_image(self.config.sandbox, self.task)
            self._sandbox = self._start_sandbox(self._image)
            if self._closed_under_episode.is_set():  # closed (the caller's wall clock) while the sandbox started
                self._release()
                raise SandboxError("the env was closed while its sandbox started")
            actions = self.config.actions
            if "default_timeout_secs" not in actions.model_fields_set:
                actions = actions.model_copy(update={"default_timeout_secs": self.task.limits.command_timeout_s})
            self._ctx = ToolContext(sandbox=self._sandbox, config=actions)
            self.started_at = time.monotonic()
            observation = {"instruction": self.task.instruction, "task_id": self.task.task_id}
            info = {
                "task_id": self.task.task_id,
                "episode_id": self.episode_id,
                "image": self._image,
                "container_id": self._sandbox.id,
                "reset_s": time.monotonic() - started,
                "max_steps": self.config.max_steps,
                HANDOFF_KEY: self.handoff,
            }
            self._fresh_reset = (observation, info)
            return dict(observation), dict(info)

    def _current_task(self) -> Task:
        if self.task is None:
            raise ConfigError("DockerIsolatedEnv: no task; pass reset(task=...) or build the env with one")
        return self.task

    def _start_sandbox(self, image: str) -> Sandbox:
        # the task's env (Harbor [environment.env]) is the persistent shell's; its ${VAR} templates are
        # resolved from this process's environment when the sandbox starts (ConfigError naming VAR and the task).
        # verifier_network: the grader's set_network for the verifier phase can then connect a sandbox started
        # without network (Docker starts the others in the quicker 'none' mode)
        task = self._current_task()
        verifier_network = task.verifier.verifier_network(task.limits.network)
        if self.pool is not None:
            return self.pool.acquire(
                image, task.limits, env=task.env, task_id=task.task_id, verifier_network=verifier_network
            )
        from terminal_agent.sandbox.backends import start_sandbox

        # run_id None: the sandbox labels the container with this process's run id (one per process)
        return start_sandbox(
            self.config.sandbox, image, task.limits, self.config.run_id,
            env=task.env, task_id=task.task_id, verifier_network=verifier_network,
        )

    def step(self, action: Any) -> tuple[Any, float, bool, dict[str, Any]]:
        with self._lock:
            if self.done:
                done_info: dict[str, Any] = dict(self.final_info or {})
                done_info["note"] = "step after done"
                return "", float(self.final_reward or 0.0), True, done_info
            if self._sandbox is None or self._ctx is None:
                raise RuntimeError("step() before reset()")
            task = self._current_task()
            payload = action_payload(action)
            reply = payload if isinstance(payload, str) else ("" if payload is None else str(payload))
            self._fresh_reset = None
            self.steps += 1
            started = time.monotonic()
            info: dict[str, Any] = {"task_id": task.task_id, "step": self.steps}
            try:
                turn = run_turn(reply, self._ctx)
                over_quota = storage_over_quota(self._sandbox)  # the turn's end: its commands' boundary
            except SandboxError as exc:
                self.env_time_s += time.monotonic() - started
                return self._finish_unscored(exc, info)
            self.env_time_s += time.monotonic() - started
            self.transcript.append((reply, turn.observation))
            info.update(
                {
                    "actions": turn.actions,
                    "only_errors": turn.only_errors,
                    "truncated_reply": turn.truncated_reply,
                    "turn_s": time.monotonic() - started,
                }
            )
            self.consecutive_error_turns = self.consecutive_error_turns + 1 if turn.only_errors else 0
            termination: Termination | None = None
            if over_quota is not None:  # a measured disk quota passed: the agent's doing, graded as it stands
                termination = Termination.STORAGE_LIMIT
            elif turn.finished:
                termination = Termination.FINISHED
                info["finish_message"] = turn.finish_message
            elif self.consecutive_error_turns >= self._ctx.config.max_consecutive_error_turns:
                termination = Termination.FORMAT_ERRORS
            elif self.steps >= self.config.max_steps:
                termination = Termination.MAX_STEPS
            elif time.monotonic() - self.started_at > task.limits.agent_timeout_s:
                termination = Termination.AGENT_TIMEOUT
            if termination is None:
                return turn.observation, 0.0, False, info
            reward, final = self._grade_and_release(
                termination, {"storage": over_quota.as_info()} if over_quota is not None else None)
            info.update(final)
            return turn.observation, reward, True, info

    def compute_final_reward(self, termination: Termination | str = Termination.TRUNCATED) -> float:
        """Grade now if the episode was cut before done (rLLM calls this after max steps).

        The returned float is all rLLM v0.2.1 keeps; the whole outcome (grade, ``scored``,
        termination, error kind) is in ``outcome`` (``final_info`` is derived from it) and reaches the
        agent's last step through the episode's hand-off. ``termination`` says who cut the episode.
        """
        with self._lock:
            if self.outcome is not None:
                return float(self.final_reward or 0.0)
            if self._sandbox is None:  # never started (or reset failed): nothing to grade, not the model's fault
                self._end(self._unscored(
                    Termination.NOT_STARTED, "sandbox",
                    "compute_final_reward() before a successful reset(): no episode to grade",
                ))
                return 0.0
            reward, _ = self._grade_and_release(Termination.parse(termination))
            return reward

    def close(self) -> None:
        """Release the sandbox. From another thread while a step, a reset or grading runs (a caller's wall clock
        passed), it does not wait for them: the sandbox is closed under the running command, which dies with it,
        and the episode's own thread then finds it gone and ends unscored."""
        if self._lock.acquire(blocking=False):
            try:
                self._release()
            finally:
                self._lock.release()
            return
        self._closed_under_episode.set()
        sandbox = self._sandbox
        if sandbox is not None:
            sandbox.close()  # straight to close, never back to a pool: a sandbox killed mid-command is not fresh

    # --- internals ----------------------------------------------------------------------------
    def _release(self) -> None:
        sandbox, self._sandbox, self._ctx = self._sandbox, None, None
        if sandbox is None:
            return
        if self.pool is not None:
            self.pool.release(sandbox)
        else:
            sandbox.close()

    def _finish_unscored(self, exc: BaseException, info: dict[str, Any]) -> tuple[Any, float, bool, dict[str, Any]]:
        logger.warning("task %s: episode ended by %s: %s", self._current_task().task_id, type(exc).__name__, exc)
        kind = error_kind(exc)
        final = self._end(self._unscored(Termination.for_error_kind(kind), kind, f"{type(exc).__name__}: {exc}"))
        self._release()
        info.update(final)
        return "", 0.0, True, info

    def _unscored(self, termination: Termination, kind: str, error: str) -> EpisodeOutcome:
        return EpisodeOutcome(
            task_id=self.task.task_id if self.task is not None else "?",
            termination=termination, scored=False, reward=None, error_kind=kind, error=error,
            turns=self.steps, episode_id=self.episode_id,
        )

    def _grade_and_release(self, termination: Termination,
                           extra_details: dict[str, Any] | None = None) -> tuple[float, dict[str, Any]]:
        self.done = True
        task, sandbox = self._current_task(), self._sandbox
        if sandbox is None:
            raise RuntimeError("grading without a sandbox: the callers check that the episode started")
        grade = grade_sandbox(self.grader, sandbox, task)
        self._release()  # the judge reads the transcript, not the container: free it before a slow judge call
        reward, judge_info = judge_and_combine(
            grade, self.config.reward, self.config.judge, lambda: self._judge_request(grade),
            judge=self.judge, judge_client=self.judge_client,
        )
        details: dict[str, Any] = {"grading_s": grade.duration_s, "env_s": self.env_time_s, **judge_info,
                                   **(extra_details or {})}
        kind = error = None
        if not reward.scored:  # the grader or the judge failed: an infrastructure ending, whoever ended the turns
            kind = grade.error_kind or ("judge" if judge_info.get("judge_error") else "grading")
            error = grade.error or judge_info.get("judge_error")
            details["agent_ending"] = termination.value
            termination = Termination.for_error_kind(kind)
        final = self._end(EpisodeOutcome(
            task_id=task.task_id,
            termination=termination,
            scored=reward.scored,
            reward=reward.reward if reward.scored else None,
            test_score=grade.score if grade.scored else None,
            error_kind=kind,
            error=error,
            tampered=reward.scored and bool(grade.tamper_signals),
            turns=self.steps,
            grade=grade,
            reward_parts=reward.parts(),
            episode_id=self.episode_id,
            details=details,
        ))
        return float(self.final_reward or 0.0), final

    def _end(self, outcome: EpisodeOutcome) -> dict[str, Any]:
        """Record the episode's one outcome: the typed record, the info derived from it, the hand-off to the agent."""
        self.done = True
        self.outcome = outcome
        self.handoff.leave(outcome)
        return outcome.final_info()

    def _judge_request(self, grade: Grade) -> JudgeRequest:
        lines = []
        for number, (reply, observation) in enumerate(self.transcript, 1):
            lines.append(f"--- turn {number}: agent ---\n{reply}\n--- turn {number}: result ---\n{observation}")
        passed = sum(1 for t in grade.tests if t.passed)
        summary = f"{passed}/{len(grade.tests)} tests passed, weighted score {grade.score:.2f}"
        return JudgeRequest(self._current_task().instruction, "\n".join(lines), summary)

    # --- views of the outcome (rLLM and the logs read these names) ---------------------------------
    @property
    def termination(self) -> str | None:
        """Why the last episode ended (its outcome's termination value; None until it has)."""
        return self.outcome.termination.value if self.outcome is not None else None

    @property
    def final_reward(self) -> float | None:
        """The last episode's reward as rLLM takes it: 0.0 when it cannot be trained on; None until it ended."""
        if self.outcome is None:
            return None
        return float(self.outcome.reward) if self.outcome.trainable and self.outcome.reward is not None else 0.0

    @property
    def final_info(self) -> dict[str, Any] | None:
        """The last episode's final info (:meth:`EpisodeOutcome.final_info`, a fresh dict); None until it ended."""
        return self.outcome.final_info() if self.outcome is not None else None

    @property
    def sandbox(self) -> Sandbox | None:
        """The running sandbox of the current episode (None before reset and after done)."""
        return self._sandbox


__all__ = ["DockerIsolatedEnv", "EnvConfig", "env_config_from_args"]
