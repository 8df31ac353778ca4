"""The one typed episode spec: what every episode of a run is built from (env, agent, episode settings, deadline).

:meth:`EpisodeSpec.from_preset` derives it once from a preset's common sections (``sandbox``, ``reward``,
``agent``, ``lengths``); the local trainer builds its envs, agents, engine settings and deadlines from it, and the
rLLM Workflow gets it as its keyword arguments (:meth:`EpisodeSpec.to_workflow_args`) and reads them back with the
same type (:meth:`EpisodeSpec.from_workflow_args`). Evaluation, which has no preset, builds one of its
``RolloutConfig`` (:meth:`~terminal_agent.rollout.runner.RolloutConfig.episode_spec`); code without a preset
(tests, benchmarks, a trainer config built directly) builds a small one (:meth:`EpisodeSpec.small`). A bad value
is a :class:`~terminal_agent.errors.ConfigError` that names its key: the preset key from a preset,
``workflow_args.<key>`` from the Workflow's arguments.

The serialisation holds only the values that were set (the preset's, never a copy of every default), so the
dry run shows what the preset says and a round trip gives back an equal spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from terminal_agent.agent import AgentConfig
from terminal_agent.backend_settings import BackendSettingsHost
from terminal_agent.env import ENV_ARG_KEYS, SHORTCUT_KEYS, EnvConfig, env_config_from_args
from terminal_agent.errors import ConfigError
from terminal_agent.rewards.reward import RewardConfig
from terminal_agent.rollout.engine import EpisodeSettings, episode_deadline_s
from terminal_agent.sandbox.config import SandboxConfig

if TYPE_CHECKING:
    from terminal_agent.tasks.model import TaskLimits
    from terminal_agent.training.preset_config import TrainingPreset

WORKFLOW_ARG_KEYS = ("agent_args", "env_args", "max_steps", "max_tokens_per_turn", "max_context_tokens",
                     "compaction", "timeout")
"""The Workflow's keyword arguments that are the spec (the Workflow's own knobs and rLLM's are not)."""


class EpisodeSpec(BaseModel):
    """How each episode of a run is built and bounded. Field names are the Workflow's argument names (``agent`` and
    ``env`` serialise as ``agent_args`` and ``env_args``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)

    agent: AgentConfig = Field(default_factory=AgentConfig, alias="agent_args")
    """The agent's settings (a trainer forces ``training`` on and sets ``compaction`` from the field below)."""
    env: EnvConfig = Field(default_factory=EnvConfig, alias="env_args")
    """The env's settings: sandbox (with its backend), actions, grading, reward and judge (preset ``sandbox.env``
    with ``sandbox.backend``, ``agent.max_turns`` and ``reward`` on top)."""
    max_steps: int = Field(30, ge=1)
    """Model replies per episode (preset ``agent.max_turns``); the episode is graded when they run out."""
    max_tokens_per_turn: int | None = Field(None, ge=1)
    """Token cap of one reply, sent as ``max_tokens`` (preset ``lengths.max_response_length_per_turn``); None: the
    model's own."""
    max_context_tokens: int | None = Field(None, ge=1)
    """The episode's context (preset ``lengths.max_model_len``): a turn whose prompt plus reply cap could not fit
    ends the episode, graded; None: no check."""
    compaction: bool | None = None
    """Summarise old turns (preset ``agent.compaction``); trainers refuse True (it rewrites the trained history)."""
    timeout: float | None = Field(None, gt=0)
    """The agent's wall clock of one episode in seconds (preset ``agent.trajectory_timeout_s``): rLLM's episode
    timeout in the Workflow, the env's agent time limit where it is the shorter, and the agent budget of the one
    deadline rule (:meth:`deadline_s`); None: the task's own limits."""

    # --- from a preset -------------------------------------------------------------------------------
    @classmethod
    def from_preset(cls, preset: TrainingPreset) -> "EpisodeSpec":
        """The spec of ``preset``'s common sections. A bad ``sandbox.env`` value is a ConfigError naming its preset
        key (``sandbox.env.sandbox.ray.max_sandboxes_per_node``, ``sandbox.backend``, ``reward.test_weight`` ...)."""
        env_args: dict[str, Any] = dict(preset.sandbox.env)
        sandbox = dict(env_args.pop("sandbox", None) or env_args.pop("sandbox_config", None) or {})
        env_args["max_steps"] = preset.agent.max_turns
        env_args["sandbox"] = {**sandbox, "backend": preset.sandbox.backend}
        env_args["reward"] = preset.reward.model_dump()
        unknown = sorted(set(env_args) - set(_ENV_ARG_NAMES))
        if unknown:
            raise ConfigError(f"sandbox.env.{unknown[0]}: unknown key; the env's keys: "
                              f"{', '.join(sorted(EnvConfig.model_fields))}")
        try:
            env = env_config_from_args(env_args)
        except ValidationError as exc:
            raise ConfigError(_first_error(exc, _preset_key)) from None
        return cls(
            agent=AgentConfig(),
            env=env,
            max_steps=preset.agent.max_turns,
            max_tokens_per_turn=preset.lengths.max_response_length_per_turn,
            max_context_tokens=preset.lengths.max_model_len,
            compaction=preset.agent.compaction,
            timeout=preset.agent.trajectory_timeout_s,
        )

    # --- built in code ---------------------------------------------------------------------------------
    @classmethod
    def small(cls, max_steps: int = 4, *, sandbox: SandboxConfig | None = None, max_tokens_per_turn: int = 128,
              max_context_tokens: int = 2048, timeout: float = 600.0,
              reward: RewardConfig | None = None) -> "EpisodeSpec":
        """A spec built in code, without a preset (tests, benchmarks, scripts, a trainer config built directly):
        ``max_steps`` replies of at most ``max_tokens_per_turn`` tokens in ``max_context_tokens`` of context, in
        ``sandbox`` (default: a default :class:`~terminal_agent.sandbox.config.SandboxConfig`), rewarded by
        ``reward`` (default: the tests alone), ``timeout`` seconds of agent wall clock, no compaction. The
        defaults are a small run on a small model (4 turns of 128 tokens in the packaged SmolLM2's 2048)."""
        env = EnvConfig(max_steps=max_steps, reward=reward if reward is not None else RewardConfig(),
                        sandbox=sandbox if sandbox is not None else SandboxConfig())
        return cls(env=env, max_steps=max_steps, max_tokens_per_turn=max_tokens_per_turn,
                   max_context_tokens=max_context_tokens, compaction=False, timeout=timeout)

    # --- as the Workflow's arguments -------------------------------------------------------------------
    def to_workflow_args(self) -> dict[str, Any]:
        """The Workflow's keyword arguments of this spec: the values that were set, JSON-plain, read back equal by
        :meth:`from_workflow_args`."""
        data = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        for key, model in (("agent_args", self.agent), ("env_args", self.env)):
            if key in data:
                _drop_filled_sections(model, data[key])
        return data

    @classmethod
    def from_workflow_args(cls, args: Mapping[str, Any]) -> "EpisodeSpec":
        """The spec the Workflow's arguments hold (the keys of :data:`WORKFLOW_ARG_KEYS`; a missing one takes its
        default). An unknown key or a bad value is a ConfigError naming ``workflow_args.<key>``."""
        unknown = sorted(set(args) - set(WORKFLOW_ARG_KEYS))
        if unknown:
            raise ConfigError(f"workflow_args.{unknown[0]}: no key of the episode spec; its keys: "
                              f"{', '.join(WORKFLOW_ARG_KEYS)}")
        try:
            return cls.model_validate({key: value for key, value in args.items()
                                       if not (value is None and key in ("agent_args", "env_args"))})
        except ValidationError as exc:
            raise ConfigError(_first_error(exc, lambda loc: "workflow_args." + ".".join(loc))) from None

    @classmethod
    def among_workflow_args(cls, args: Mapping[str, Any]) -> "EpisodeSpec":
        """The spec in the Workflow's whole arguments (its own knobs, ``harbor_rollouts`` and rLLM's are skipped)."""
        return cls.from_workflow_args({key: args[key] for key in WORKFLOW_ARG_KEYS if key in args})

    # --- what an episode is built from ---------------------------------------------------------------
    def agent_config(self, *, training: bool) -> AgentConfig:
        """The agent's settings, ``training`` mode set and ``compaction`` from the spec when it says (True in
        training mode raises a ConfigError: it would rewrite the trained history)."""
        update: dict[str, Any] = {"training": training}
        if self.compaction is not None:
            update["compaction"] = self.compaction
        return AgentConfig.model_validate({**self.agent.model_dump(exclude_unset=True), **update})

    def env_config(self, *, run_id: str | None = None) -> EnvConfig:
        """The env's settings; ``run_id`` labels the sandboxes when the spec names no run of its own."""
        if run_id is None or self.env.run_id is not None:
            return self.env
        return self.env.model_copy(update={"run_id": run_id})

    def episode_settings(self, *, sampling: Mapping[str, Any] | None = None, **settings: Any) -> EpisodeSettings:
        """The engine's settings of this spec: its turns, context and reply cap (as ``sampling["max_tokens"]``
        over ``sampling``); ``settings`` are the caller's other :class:`EpisodeSettings` fields."""
        merged = dict(sampling or {})
        if self.max_tokens_per_turn is not None:
            merged["max_tokens"] = self.max_tokens_per_turn
        return EpisodeSettings(max_steps=self.max_steps, sampling=merged, max_context_tokens=self.max_context_tokens,
                               **settings)

    def with_max_steps(self, max_steps: int) -> "EpisodeSpec":
        """This spec with ``max_steps`` model replies per episode (the engine's and the env's)."""
        return self.model_copy(update={"max_steps": max_steps,
                                       "env": self.env.model_copy(update={"max_steps": max_steps})})

    def deadline_s(self, limits: TaskLimits) -> float:
        """The wall clock of one episode of a task with ``limits``, by the one deadline rule
        (:func:`~terminal_agent.rollout.engine.episode_deadline_s`), this spec's ``timeout`` as the agent budget."""
        return episode_deadline_s(limits, agent_budget_s=self.timeout)


_ENV_ARG_NAMES = (*ENV_ARG_KEYS, *(key for key in SHORTCUT_KEYS if key != "env_config"))
"""The keys a preset's ``sandbox.env`` may hold (:func:`~terminal_agent.env.env_config_from_args`'s, less its whole
``env_config`` mapping)."""


def _drop_filled_sections(model: BaseModel, data: dict[str, Any]) -> None:
    """Remove from ``data`` (``model``'s dump of set values) the backend sections a
    :class:`~terminal_agent.backend_settings.BackendSettingsHost` filled with its defaults (dumped as ``{}``)."""
    for key, value in list(data.items()):
        part = getattr(model, key, None)
        if isinstance(model, BackendSettingsHost) and key not in type(model).model_fields and value == {}:
            del data[key]
        elif isinstance(part, BaseModel) and isinstance(value, dict):
            _drop_filled_sections(part, value)


def _preset_key(loc: tuple[str, ...]) -> str:
    """The preset key of an ``EnvConfig`` error location."""
    if loc[:1] == ("max_steps",):
        return "agent.max_turns"
    if loc[:2] == ("sandbox", "backend"):
        return "sandbox.backend"
    if loc[:1] == ("reward",):
        return ".".join(loc)
    return ".".join(("sandbox.env", *loc))


def _first_error(exc: ValidationError, key_of: Callable[[tuple[str, ...]], str]) -> str:
    """``KEY: message (got VALUE)`` of the first error of ``exc``; ``key_of(loc)`` names the key."""
    first = exc.errors()[0]
    loc = tuple(str(part) for part in first.get("loc", ()))
    message = "unknown key" if first.get("type") == "extra_forbidden" else str(first.get("msg", exc))
    value = first.get("input")
    shown = f" (got {_shown(value)})" if "input" in first and not isinstance(value, dict) else ""
    return f"{key_of(loc)}: {message.removeprefix('Value error, ')}{shown}"


def _shown(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


__all__ = ["WORKFLOW_ARG_KEYS", "EpisodeSpec"]
