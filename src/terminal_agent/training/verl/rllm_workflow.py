"""``TerminalTaskWorkflow``: our agent and env as an rLLM Workflow (rLLM HEAD's only training path).

rLLM HEAD trains through ``AgentTrainer(workflow_class=..., workflow_args=..., backend="verl")``. Its
stock ``MultiTurnWorkflow`` cannot train our agent: it never sets ``step.model_output``, and rLLM's
verl transform drops every step without it (zero training rows). This workflow instead runs the
project's one episode engine (:mod:`terminal_agent.rollout.engine`, the same one eval and
the local trainer use) in a worker thread, with rLLM's rollout engine seen as a model client, and:

* records on every step the prompt ids, completion ids, logprobs and finish reason the engine
  reported (``step.model_output``, ``prompt_ids``, ``response_ids``, ``logprobs``);
* grades an episode the loop cut (turn budget, per-reply output limit) and closes the env in
  ``finally`` (rLLM never calls ``close()``);
* puts grade, ``scored``, termination and error kind in the step and trajectory metadata, where both
  rLLM Step versions keep it;
* maps our :class:`~terminal_agent.outcome.Termination` onto rLLM's ``TerminationReason``;
* never lets an infrastructure failure train as reward 0: the workflow retries such an episode
  itself through the one retry loop (:func:`~terminal_agent.rollout.episode_batch.run_with_retries`:
  ``infra_retries`` more attempts, each with a fresh container), and if it stays broken returns
  it with no steps (rLLM's transform drops an episode without steps from the batch) and
  ``TerminationReason.UNKNOWN``. Not ``ERROR``: rLLM's verl trainer builds its engine with
  ``raise_on_error=True``, so an ``ERROR`` would be retried ``retry_limit`` times and then stop the
  whole run for one broken task. The facts (``scored`` False, ``error_kind``, ``error``) are in the
  trajectory metadata and in ``episode.info["terminal_agent"]``.

``workflow_args``: the episode spec's serialisation
(:meth:`~terminal_agent.rollout.episode_spec.EpisodeSpec.to_workflow_args`, read back here by
:meth:`~terminal_agent.rollout.episode_spec.EpisodeSpec.from_workflow_args`, which names a bad key): ``agent_args``
(``AgentConfig`` fields; training mode is forced), ``env_args`` (``EnvConfig`` fields), ``max_steps``,
``max_tokens_per_turn`` (the per-reply cap, sent as ``max_tokens``), ``max_context_tokens`` (stop, graded, before a
turn whose prompt plus reply cap could not fit), ``compaction`` (must stay off in training; True is refused) and
``timeout`` (the agent's budget in the one deadline rule, which gives each task's episode its wall clock, grading
included); then the Workflow's own knobs: ``sampling`` (more sampling
keys), ``max_total_tokens``, ``stop_on_output_limit``, ``model_timeout_s``, ``infra_retries``,
``token_in_token_out`` (None, the default: render prompt ids ourselves whenever the engine takes token ids, as
verl's ``VerlEngine`` does; False: always the engine's ``get_model_response``; True: require it), ``chat_parser``
(an import path ``"package.module:Name"`` of a parser class or factory called with the engine's tokenizer, for a
template our parser cannot render turn by turn; default ``chat_parser_for``) and ``harbor_rollouts`` (a
:class:`~terminal_agent.training.verl.rllm_rollout_trials.RllmRolloutTrialsSettings` as a dict: keep the training
episodes as Harbor trials in ``RUN/rollouts/``, one job per step; None: not kept). The task of each episode is
rLLM's ``extra_info`` dict (a flat task row, ``terminal_agent.tasks.parquet.rows``).

With token ids (see :class:`~terminal_agent.training.verl.rllm_engines.RolloutEngineModelClient`) the chat
parser is :func:`~terminal_agent.training.verl.rllm_chat_parser.chat_parser_for` the engine's tokenizer, built
once per pooled workflow, and every turn's prompt extends the previous turn's prompt and completion
token for token.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from copy import deepcopy
from typing import Any

from terminal_agent.compat.rllm import RLLM_AVAILABLE, step_metadata
from terminal_agent.errors import ConfigError
from terminal_agent.evaluation.results import PASS_THRESHOLD
from terminal_agent.outcome import EpisodeOutcome, Termination

if not RLLM_AVAILABLE:  # ModuleNotFoundError naming rllm: callers tell "rLLM missing" from a broken install
    raise ModuleNotFoundError(
        "terminal_agent.training.verl.rllm_workflow needs rLLM: "
        'pip install "rllm @ git+https://github.com/rllm-org/rllm@9beb6e0f676a46d38858991fd79ac5f8e0b16d4c" (see docs/rllm.md)',
        name="rllm",
    )

from rllm.agents.agent import Episode  # noqa: E402
from rllm.workflows.workflow import TerminationReason, Workflow  # noqa: E402

from terminal_agent.agent import TerminalBenchAgent  # noqa: E402
from terminal_agent.env import DockerIsolatedEnv  # noqa: E402
from terminal_agent.training.verl.rllm_rollout_trials import (  # noqa: E402
    RllmRolloutEpisode,
    rollout_recorder_for,
    rows_in_verl_batch,
)
from terminal_agent.rollout.engine import EpisodeEngine  # noqa: E402
from terminal_agent.rollout.episode_batch import RetryPolicy, run_with_retries  # noqa: E402
from terminal_agent.rollout.episode_record import EpisodeRecord  # noqa: E402
from terminal_agent.rollout.episode_spec import WORKFLOW_ARG_KEYS, EpisodeSpec  # noqa: E402
from terminal_agent.tasks.model import Task  # noqa: E402
from terminal_agent.tasks.parquet.rows import task_from_flat_dict  # noqa: E402
from terminal_agent.training.verl.rllm_engines import RolloutEngineModelClient, engine_takes_token_ids  # noqa: E402

logger = logging.getLogger(__name__)

TRAJECTORY_NAME = "terminal_agent"


def group_trajectory_uid(episode_uid: str) -> str:
    """The trajectory uid of every episode of one GRPO group: ``"<row uid>:<TRAJECTORY_NAME>"``.

    rLLM's engine names an episode ``"<row uid>:<rollout index>"`` (the ``rollout.n`` episodes of one dataset row
    share the row uid). rLLM HEAD's verl transform keys each row by ``trajectory.uid`` and
    ``AgentWorkflowPPOTrainer.fit_agent`` hands verl's ``compute_advantage`` that key as the GRPO group: with
    rLLM's default (a fresh uuid4 per trajectory) every episode was a group of one, so the advantage was the
    reward itself, with no baseline and never negative (``critic/advantages/min`` 0.0 at every step of the H200
    runs). One uid per row makes the group the row's ``rollout.n`` episodes, as GRPO means. rLLM's rejection
    sampling drops trajectories by uid, a whole group at a time, which this keeps right."""
    row_uid, _, _rollout = episode_uid.rpartition(":")
    return f"{row_uid or episode_uid}:{TRAJECTORY_NAME}"
"""The trajectory (role) name rLLM groups and reports by."""

_REASONS = {
    Termination.FINISHED: TerminationReason.ENV_DONE,
    Termination.FORMAT_ERRORS: TerminationReason.ENV_DONE,
    Termination.MAX_STEPS: TerminationReason.MAX_TURNS_EXCEEDED,
    Termination.TRUNCATED: TerminationReason.MAX_TURNS_EXCEEDED,
    Termination.MAX_TOKENS: TerminationReason.MAX_RESPONSE_LENGTH_EXCEEDED,
    Termination.OUTPUT_LIMIT: TerminationReason.MAX_RESPONSE_LENGTH_EXCEEDED,
    Termination.CONTEXT_LIMIT: TerminationReason.MAX_PROMPT_LENGTH_EXCEEDED,
    Termination.AGENT_TIMEOUT: TerminationReason.TIMEOUT,
    Termination.EPISODE_TIMEOUT: TerminationReason.TIMEOUT,
    Termination.STORAGE_LIMIT: TerminationReason.ENV_DONE,  # the env ended it: the agent outgrew its disk quota
}


def rllm_termination_reason(termination: Termination) -> Any:
    """rLLM's ``TerminationReason`` for a scored ending of ours (see the module doc for unscored ones)."""
    if termination.is_infrastructure:
        return TerminationReason.UNKNOWN
    return _REASONS[termination]


def rllm_is_validating(engine: Any) -> bool:
    """Whether rLLM's engine is running validation episodes (``AgentWorkflowEngine.execute_tasks_verl`` sets the
    rollout engine's ``validate``; its base class declares ``is_validation``)."""
    return bool(getattr(engine, "validate", False) or getattr(engine, "is_validation", False))


INFRASTRUCTURE_KINDS = frozenset({"sandbox", "infrastructure", "image", "provider", "grading", "judge", "internal"})
"""The error kinds of the endings rLLM would otherwise see as the model's (every ``Termination.is_infrastructure``
one): the Workflow tries such an episode again, ``infra_retries`` times, at once."""


def _task_of_row(row: dict[str, Any] | None) -> Task | None:
    """The task of rLLM's ``extra_info`` row, or None where there is none or it is broken: the env's reset is then
    handed the row itself, and the error it raises is the episode's record."""
    if row is None:
        return None
    try:
        return task_from_flat_dict(row)
    except ValueError:  # a broken row (TaskFormatError, a bad limit): reported by env.reset, kept in the record
        return None


class TerminalTaskWorkflow(Workflow):
    """One terminal task per ``run``: our agent and env, one episode, rLLM's Episode out (see module doc)."""

    def __init__(
        self,
        rollout_engine: Any,
        executor: Any,
        *,
        sampling: dict[str, Any] | None = None,
        max_total_tokens: int | None = None,
        stop_on_output_limit: bool = True,
        model_timeout_s: float | None = None,
        infra_retries: int = 1,
        token_in_token_out: bool | None = None,
        chat_parser: str | None = None,
        harbor_rollouts: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """``kwargs``: the episode spec's arguments (:data:`~terminal_agent.rollout.episode_spec.WORKFLOW_ARG_KEYS`,
        read back by :meth:`EpisodeSpec.from_workflow_args`) and rLLM's own."""
        self.spec = EpisodeSpec.among_workflow_args(kwargs)
        """The episode spec the arguments hold: this Workflow's env, agent and engine are built from it."""
        rllm_args = {key: value for key, value in kwargs.items() if key not in WORKFLOW_ARG_KEYS}
        super().__init__(rollout_engine=rollout_engine, executor=executor, **rllm_args)
        self.agent = self._new_agent()  # compaction True raises
        """The agent of the current (or last) episode; each attempt gets a new one (:meth:`_new_agent`)."""
        self.env = self._new_env()
        """The env of the current (or last) episode; each attempt gets a new one (:meth:`_new_env`)."""
        self.max_steps = self.spec.max_steps
        self.max_context_tokens = self.spec.max_context_tokens
        self.max_total_tokens = max_total_tokens
        self.stop_on_output_limit = stop_on_output_limit
        self.model_timeout_s = model_timeout_s
        self.infra_retries = max(0, int(infra_retries))
        self.token_in_token_out = token_in_token_out
        self.chat_parser_path = chat_parser
        self.chat_parser: Any = None
        """The parser the token-in-token-out client renders with (built on the first episode, then reused)."""
        self.engine = EpisodeEngine(self.spec.episode_settings(
            sampling=sampling, max_total_tokens=max_total_tokens, stop_on_output_limit=stop_on_output_limit,
            keep_calls=False,
        ))
        """The one episode engine, as this Workflow runs it. Its wall clock is the one deadline rule for each task
        (:meth:`deadline_s`); an episode past it is closed and scored as eval and the local trainer score it. Each
        attempt builds its own env and agent, so a late thread of a closed episode touches nothing of the pooled
        Workflow's next one. rLLM's own ``timeout`` keeps rLLM's default: the engine's deadline ends every episode
        first."""
        self.sampling = dict(self.engine.settings.sampling)
        self.retry = RetryPolicy(retries=self.infra_retries, error_kinds=INFRASTRUCTURE_KINDS, delay_s=0.0)
        """Every infrastructure kind earns another attempt, at once."""
        self.last_result: EpisodeRecord | None = None
        """The last episode's result (outcome, timings), for callers that want more than rLLM's Episode."""
        self.rollout_recorder = rollout_recorder_for(harbor_rollouts) if harbor_rollouts else None
        """Where training episodes become Harbor trials (shared by the pooled workflows of a run); None: nowhere."""

    def reset(self, task: dict[str, Any] | None = None, uid: str | None = None) -> None:
        """Remember the task and uid and reset the agent; the env starts in the worker thread, not here."""
        self.uid = uid
        self.task = task
        self._completed_trajectories: list[Any] = []  # rLLM's Workflow state: its Trajectory objects
        self.agent.reset()

    async def run(self, task: dict[str, Any], uid: str, **kwargs: Any) -> Episode:
        loop = asyncio.get_running_loop()
        clients: list[RolloutEngineModelClient] = []

        def attempt() -> EpisodeRecord:
            """A fresh start (the agent reset, a new client) through the engine, which closes the env whatever
            happens; on rLLM's executor."""
            self.reset(task=task, uid=uid)
            client = RolloutEngineModelClient(
                self.rollout_engine,
                loop,
                timeout_s=self.model_timeout_s,
                token_in_token_out=self.token_in_token_out,
                chat_parser=self.chat_parser or self._configured_chat_parser(),
                application_id=uid,
                **kwargs,
            )
            self.chat_parser = client.chat_parser
            clients.append(client)
            return self.engine.run(self._new_env, self._new_agent, client, task_id=task_id,
                                   task=parsed if parsed is not None else task, deadline_s=deadline_s)

        task_id = str((task or {}).get("task_id") or getattr(self.env.task, "task_id", None) or "?")
        parsed = _task_of_row(task)  # once: the deadline reads its limits and every attempt's env resets to it
        deadline_s = self.spec.deadline_s(parsed.limits) if parsed is not None else None
        result: EpisodeRecord = await self.run_in_executor(run_with_retries, attempt, self.retry, task_id=task_id)
        self.last_result = result
        outputs = clients[-1].outputs
        episode = self._episode(result, outputs, task, uid)
        if self.rollout_recorder is not None and not rllm_is_validating(self.rollout_engine):
            try:
                await self.run_in_executor(self.rollout_recorder.record, self._rollout_episode(result, outputs, episode))
            except Exception:  # noqa: BLE001 - the Harbor copy is for people to read; it never fails the training episode
                logger.exception("task %s: could not keep the episode as a Harbor trial", result.outcome.task_id)
        return episode

    def deadline_s(self, task: dict[str, Any] | None) -> float | None:
        """The wall clock of one episode of ``task`` (a flat task row), grading included: the spec's deadline rule
        with the task's own limits. None where the row is no task: the env's reset then reports it as the
        episode's error."""
        parsed = _task_of_row(task)
        return self.spec.deadline_s(parsed.limits) if parsed is not None else None

    def _new_env(self) -> DockerIsolatedEnv:
        """A fresh env of the spec, kept as :attr:`env` (called by the engine inside the episode's wall clock)."""
        self.env = DockerIsolatedEnv(config=self.spec.env)
        return self.env

    def _new_agent(self) -> TerminalBenchAgent:
        """A fresh training agent of the spec, kept as :attr:`agent`."""
        self.agent = TerminalBenchAgent(self.spec.agent_config(training=True))
        return self.agent

    def _rollout_episode(self, result: EpisodeRecord, outputs: list[Any], episode: Episode) -> RllmRolloutEpisode:
        """The episode as the Harbor recorder takes it: the agent's whole trajectory (an unscored episode's too), the
        rows verl gets of it and the policy version that sampled it."""
        [trajectory] = episode.trajectories
        versions = [v for v in (getattr(o, "weight_version", None) for o in outputs) if isinstance(v, int)]
        engine_version = getattr(self.rollout_engine, "weight_version", 0)
        return RllmRolloutEpisode(
            rllm_episode_id=str(episode.id),
            trajectory_uid=getattr(trajectory, "uid", None),
            policy_version=min(versions) if versions else int(engine_version or 0),
            task_id=result.outcome.task_id,
            outcome=result.outcome,
            trajectory=self.agent.trajectory,
            final_observation=result.final_observation,
            model_s=result.model_s,
            env_s=result.env_s,
            wall_s=result.wall_s,
            trained_rows=rows_in_verl_batch([s.prompt_ids for s in trajectory.steps], [s.response_ids for s in trajectory.steps]),
            is_correct=bool(episode.is_correct),
        )

    def _configured_chat_parser(self) -> Any:
        """The ``chat_parser`` of ``workflow_args`` built for the engine's tokenizer (None: the client picks one)."""
        if not self.chat_parser_path or not engine_takes_token_ids(self.rollout_engine):
            return None
        module_name, _, name = str(self.chat_parser_path).partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(f"workflow_args.chat_parser {self.chat_parser_path!r}: {type(exc).__name__}: {exc} "
                              "(expected 'package.module:Name')") from exc
        return factory(self.rollout_engine.tokenizer)

    def _episode(self, result: EpisodeRecord, outputs: list[Any], task: Any, uid: str) -> Episode:
        outcome: EpisodeOutcome = result.outcome
        trajectory = deepcopy(self.agent.trajectory)
        trajectory.name = TRAJECTORY_NAME
        trajectory.uid = group_trajectory_uid(uid)
        trajectory.task = task
        steps = [step for step in trajectory.steps if step.chat_completions]
        if len(outputs) != len(steps):
            logger.warning("task %s: %d model outputs for %d steps", outcome.task_id, len(outputs), len(steps))
        for step, output in zip(steps, outputs):
            step.model_output = output
            step.prompt_ids = list(output.prompt_ids or [])
            step.response_ids = list(output.completion_ids or [])
            step.logprobs = list(output.logprobs or [])
            step_metadata(step)["finish_reason"] = output.finish_reason
        facts = {**outcome.to_info(), "task_id": outcome.task_id, "model_s": result.model_s, "env_s": result.env_s}
        for step in steps:
            step.reward = 0.0
        if steps:
            steps[-1].done = True
            step_metadata(steps[-1]).update(facts)
        step_metadata(trajectory).update(facts)
        if outcome.trainable:
            if steps:
                steps[-1].reward = result.reward
            trajectory.steps = steps
        else:
            trajectory.steps = []  # nothing of an unscored episode may reach the batch
        trajectory.reward = result.reward if outcome.trainable else 0.0
        episode = Episode(id=uid, task=task, trajectories=[trajectory])
        reason = rllm_termination_reason(outcome.termination) if outcome.trainable else TerminationReason.UNKNOWN
        error = None
        if not outcome.trainable:
            error = {
                "error_message": outcome.error or f"episode ended ({outcome.termination.value}) without a score",
                "error_type": outcome.error_kind or "unscored",
            }
        episode = self.postprocess_episode(episode, reason, error=error)
        # Episode.info on both rLLM versions; under its own key: rLLM reads info["error"] as a dict
        step_metadata(episode)["terminal_agent"] = facts
        episode.metrics.update(
            {
                "scored": float(outcome.scored),
                # rLLM logs each of these as batch/<name> (the mean over the step's episodes)
                "pass_rate": float(outcome.trainable and result.reward >= PASS_THRESHOLD),
                "turns": float(outcome.turns),
                "model_s": result.model_s,
                "env_s": result.env_s,
            }
        )
        return episode


__all__ = ["INFRASTRUCTURE_KINDS", "TRAJECTORY_NAME", "TerminalTaskWorkflow", "rllm_is_validating",
           "rllm_termination_reason"]
