"""TerminalBenchAgent: the rLLM agent that keeps the chat for terminal tasks.

It owns the conversation (system prompt, task, turns), not the execution: the environment runs
each reply's actions (``terminal_agent.actions.run_turn``) and sends back the observation.

Two behaviours beyond bookkeeping:

* **Compaction** - when the estimated tokens of the chat pass ``compaction_threshold_tokens``,
  the oldest turns are replaced by a summary built from them without any model call (last
  commands and exit codes, files written/read, todo list and notes). The system prompt, the task
  and the last ``keep_last_turns`` turns stay verbatim.
* **Length correction** - a reply that hit the output limit (``finish_reason="length"`` or an
  action tag left open) without any complete action gets one corrective line in front of the
  next observation; never twice in a row.

**Training mode** (``training=True``, what both trainers use) keeps the chat token-consistent:
every turn's prompt is the previous prompt plus the reply exactly as sampled plus the new
observation. Replies are stored verbatim (think blocks included) and compaction is off, because
rLLM's Token mode (and our own trainer) merge a trajectory's turns by that prefix property; a
rewritten history makes rLLM zero the response masks with only a warning. Asking for compaction in
training mode is a :class:`~terminal_agent.errors.ConfigError`.

Metadata goes where both rLLM versions keep it (:func:`~terminal_agent.compat.rllm.step_metadata`),
and the env's final outcome reaches the last step even when the engine, not the env, ended the
episode (the episode's :class:`~terminal_agent.outcome_handoff.OutcomeHandoff`, taken from ``reset()``'s info).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.actions import ActionConfig, ParsedAction, ReplyText, parse_reply
from terminal_agent.actions.base import cap_text
from terminal_agent.actions.tools.bash import BashArgs
from terminal_agent.actions.tools.file import FileArgs
from terminal_agent.actions.tools.scratchpad import ScratchpadArgs
from terminal_agent.actions.tools.todo import TodoArgs, TodoList
from terminal_agent.compat.rllm import Action, BaseAgent, Step, Trajectory, step_metadata
from terminal_agent.errors import ConfigError, ToolError
from terminal_agent.outcome import TurnTokens
from terminal_agent.outcome_handoff import HANDOFF_KEY, OutcomeHandoff
from terminal_agent.prompts import render_system_prompt

logger = logging.getLogger(__name__)

TASK_KEYS = ("instruction", "task", "question", "prompt", "problem", "observation")
LENGTH_CORRECTION = (
    "Your last reply was cut off at the output limit before any action was complete, so nothing ran. "
    "Reply shorter: a sentence or two of thinking, then one action with its closing tag."
)


class AgentConfig(BaseModel):
    """Settings of :class:`TerminalBenchAgent`."""

    model_config = ConfigDict(extra="forbid")

    system_prompt: str | None = None
    """A replacement system prompt template (may use ``${max_timeout_secs}`` etc.); None uses the packaged one."""
    training: bool = False
    """Token-consistent chat for trainers: replies kept verbatim, compaction off (see the module docstring)."""
    compaction: bool | None = None
    """Summarise the oldest turns past the threshold; None means on, except in training mode (off)."""
    compaction_threshold_tokens: int = Field(6000, ge=256)
    """Estimated chat size above which the oldest turns are summarised."""
    keep_last_turns: int = Field(4, ge=1)
    """Turns kept verbatim at compaction (fewer, down to one, if the chat is still too large)."""
    chars_per_token: float = Field(3.5, gt=0)
    """Characters per token of the estimate used when no token counter is given."""
    max_observation_chars: int = Field(12000, ge=500)
    """Cap of one observation as stored in the chat (middle cut, announced)."""
    summary_max_commands: int = Field(10, ge=1)
    """How many of the last commands the compaction summary lists."""
    length_correction: bool = True
    """Send the corrective message after a reply that hit the output limit with no action."""
    actions: ActionConfig = Field(default_factory=ActionConfig)
    """The action limits the system prompt states (keep equal to the environment's)."""


@dataclass
class Turn:
    """One model reply and the observation that answered it."""

    reply: str
    actions: list[ParsedAction] = field(default_factory=list)
    observation: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    """The env's record of each action tag it met, in order (``info["actions"]``: name, ok, exit code, format error)."""


def task_text(observation: Any) -> str:
    """The task instruction inside the environment's first observation."""
    if isinstance(observation, dict):
        for key in TASK_KEYS:
            if isinstance(observation.get(key), str):
                return str(observation[key])
    return observation if isinstance(observation, str) else str(observation)


def build_summary(turns: list[Turn], max_commands: int = 10) -> str:
    """A deterministic summary of ``turns`` (no model call)."""
    commands: list[str] = []
    written: list[str] = []
    read: list[str] = []
    todos = TodoList()
    notes: list[str] = []
    for turn in turns:
        # the env's records of the actions that ran (a format error's record is not an action's), in order
        ran_records = [r for r in turn.records if not r.get("format_error")]
        for index, action in enumerate(turn.actions):
            record = ran_records[index] if index < len(ran_records) else None
            ran = record is not None
            args = action.args
            if isinstance(args, BashArgs):
                cmd = " ".join(args.cmd.split())
                cmd = cmd if len(cmd) <= 120 else cmd[:117] + "..."
                if record is None:
                    status = "not run"
                elif not args.block:
                    status = "started in background"
                else:
                    code = record.get("exit_code")
                    status = f"exit {code}" if code is not None else "no exit code"
                commands.append(f"- `{cmd}` -> {status}")
            elif isinstance(args, FileArgs) and record is not None and record.get("ok"):
                target = written if args.action in ("write", "edit", "multi_edit") else read
                for path in [args.path] if args.path else list(args.paths or []):
                    if path not in target:
                        target.append(path)
            elif isinstance(args, TodoArgs) and ran:
                for op in args.operations:
                    try:
                        todos.apply(op)
                    except ToolError:
                        pass
            elif isinstance(args, ScratchpadArgs) and ran and args.action == "add_note":
                notes.append((args.note or "").strip())
    lines = [f"[Summary of the first {len(turns)} turns, removed to save space]"]
    if commands:
        shown = commands[-max_commands:]
        lines.append(f"Commands (last {len(shown)} of {len(commands)}):")
        lines.extend(shown)
    else:
        lines.append("Commands: none.")
    lines.append("Files written or edited: " + (", ".join(written) or "none") + ".")
    lines.append("Files read: " + (", ".join(read) or "none") + ".")
    if todos.items:
        lines.append("Todo list:\n" + todos.render())
    if notes:
        lines.append("Notes:\n" + "\n".join(f"{n}. {note}" for n, note in enumerate(notes, 1)))
    return "\n".join(lines)


class TerminalBenchAgent(BaseAgent):
    """Chat bookkeeping for terminal tasks (see the module docstring).

    ``count_tokens(messages) -> int`` (for example ``EmbeddedModelClient.count_tokens``) replaces
    the characters-per-token estimate used for compaction.
    """

    def __init__(
        self,
        config: AgentConfig | dict[str, Any] | None = None,
        count_tokens: Callable[[list[dict[str, str]]], int] | None = None,
        **overrides: Any,
    ) -> None:
        if isinstance(config, dict):
            config = AgentConfig(**{**config, **overrides})
        elif config is None:
            config = AgentConfig(**overrides)
        elif overrides:
            config = config.model_copy(update=overrides)
        if config.training and config.compaction:
            raise ConfigError(
                "agent: compaction=true with training=true: compaction rewrites earlier turns, so a turn's prompt no "
                "longer extends the previous one and rLLM's Token mode zeroes every response mask (the episode trains "
                "on nothing). Set compaction=false (the default in training mode) or raise compaction_threshold_tokens "
                "in eval only"
            )
        self.config: AgentConfig = config
        self.compaction_enabled = config.compaction if config.compaction is not None else not config.training
        self.count_tokens = count_tokens
        self.system_prompt = render_system_prompt(config.actions, config.system_prompt)
        self.reset()

    # --- rLLM surface ---------------------------------------------------------------------------
    def reset(self) -> None:
        self._trajectory = Trajectory()
        self._task: str | None = None
        self._turns: list[Turn] = []
        self._compacted = 0
        self._summary: str | None = None
        self._pending_observation: Any = None
        self._correction_pending = False
        self._corrected_last = False
        self._handoff: OutcomeHandoff | None = None

    @property
    def trajectory(self) -> Trajectory:
        self._absorb_final_outcome()
        return self._trajectory

    @property
    def chat_completions(self) -> list[dict[str, str]]:
        task = self._task or ""
        if self._summary:
            task = f"{task}\n\n{self._summary}"
        messages = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": task}]
        for turn in self._turns[self._compacted :]:
            messages.append({"role": "assistant", "content": turn.reply})
            if turn.observation is not None:
                messages.append({"role": "user", "content": turn.observation})
        return messages

    def update_from_env(self, observation: Any, reward: float, done: bool, info: dict[str, Any], **kwargs: Any) -> None:
        if self._task is None:
            self._task = task_text(observation)
            self._pending_observation = observation
            if self._trajectory.task is None:  # rLLM's workflows set the task dict; keep theirs
                self._trajectory.task = self._task
            # the env's hand-off of this episode; taken out so no step or log dict carries it
            handoff = info.pop(HANDOFF_KEY, None) if isinstance(info, dict) else None
            self._handoff = handoff if isinstance(handoff, OutcomeHandoff) else None
            return
        text = observation if isinstance(observation, str) else str(observation)
        if self._correction_pending:
            text = f"{LENGTH_CORRECTION}\n\n{text}" if text else LENGTH_CORRECTION
            self._correction_pending = False
        text = cap_text(text, self.config.max_observation_chars)
        if self._turns and self._turns[-1].observation is None:
            self._turns[-1].observation = text
            records = info.get("actions") if isinstance(info, dict) else None
            self._turns[-1].records = list(records) if isinstance(records, list) else []
        self._pending_observation = text
        if self._trajectory.steps:
            step = self._trajectory.steps[-1]
            step.reward = reward
            step.done = done
            step_metadata(step).update(info or {})
        if done and self._handoff is not None:
            self._handoff.take()  # the step info above already holds the final outcome
        self._compact_if_needed()

    def update_from_model(self, response: str, **kwargs: Any) -> Action:
        response = response or ""
        parsed = parse_reply(response)
        hit_limit = kwargs.get("finish_reason") == "length" or parsed.truncated
        if hit_limit and not parsed.actions and self.config.length_correction and not self._corrected_last:
            self._correction_pending = True
            self._corrected_last = True
        elif not (hit_limit and not parsed.actions):
            self._corrected_last = False
        # Training keeps the reply exactly as sampled so the next prompt extends this one token for token.
        kept = response if self.config.training else parsed.text
        self._turns.append(Turn(reply=kept, actions=parsed.actions))
        step = Step(
            chat_completions=self.chat_completions,
            observation=self._pending_observation,
            thought=parsed.thought,
            action=parsed.text,
            model_response=response,
        )
        if hit_limit:
            step_metadata(step)["truncated_reply"] = True
        self._trajectory.steps.append(step)
        return Action(action=ReplyText(parsed))  # the env runs this parse: the reply is parsed once

    def record_tokens(self, tokens: TurnTokens) -> None:
        """Put the exact token ids (and logprobs) of the latest model call on the latest step."""
        if not self._trajectory.steps:
            raise RuntimeError("record_tokens() before update_from_model()")
        step = self._trajectory.steps[-1]
        step.prompt_ids = list(tokens.prompt_ids)
        step.response_ids = list(tokens.completion_ids)
        step.logprobs = list(tokens.logprobs) if tokens.logprobs is not None else []
        step_metadata(step)["finish_reason"] = tokens.finish_reason

    def get_current_state(self) -> Step | None:
        self._absorb_final_outcome()
        return self._trajectory.steps[-1] if self._trajectory.steps else None

    def _absorb_final_outcome(self) -> None:
        """Merge the env's final outcome (left when the engine cut the episode) into the last step."""
        outcome = self._handoff.take() if self._handoff is not None else None
        if outcome is None:
            return
        final = outcome.final_info()
        if self._trajectory.steps:
            step = self._trajectory.steps[-1]
            step_metadata(step).update(final)
            step.done = True
        step_metadata(self._trajectory).update(final)

    # --- compaction -----------------------------------------------------------------------------
    def estimate_tokens(self, messages: list[dict[str, str]] | None = None) -> int:
        messages = self.chat_completions if messages is None else messages
        if self.count_tokens is not None:
            return int(self.count_tokens(messages))
        return int(sum(len(message["content"]) / self.config.chars_per_token + 4 for message in messages))

    @property
    def compacted_turns(self) -> int:
        """How many of the oldest turns are replaced by the summary."""
        return self._compacted

    def _compact_if_needed(self) -> None:
        if not self.compaction_enabled:
            return
        threshold = self.config.compaction_threshold_tokens
        if self.estimate_tokens() <= threshold:
            return
        keep = min(self.config.keep_last_turns, len(self._turns) - 1)
        while keep >= 1:
            cut = len(self._turns) - keep
            if cut > self._compacted:
                self._compacted = cut
                self._summary = build_summary(self._turns[:cut], self.config.summary_max_commands)
                logger.debug("compacted %d turns (%d kept)", cut, keep)
                if self.estimate_tokens() <= threshold:
                    return
            keep -= 1
