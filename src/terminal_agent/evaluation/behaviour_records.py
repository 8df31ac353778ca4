"""What an agent *does* in an evaluation run, read off its transcripts, and how runs differ.

Pass rates say whether a model got better; this says how: does it stop by calling ``finish``, write
fewer replies without a runnable action, hit the token cap less, run other commands. One run
directory (``terminal-agent eval run -o DIR``, or the learning experiment's ``eval_base`` /
``eval_warm_start`` / ``eval_trained``) holds ``results.json`` and ``transcripts/TASK/attempt-N.json``.

* The episodes are the trials of ``results.json``: their termination, reward and pass come from there
  (old files' ``error`` / ``wall_clock`` terminations are read as the enum, see
  :mod:`terminal_agent.evaluation.results`).
* The reply-level measures come from each trial's transcript: the trajectory's steps (``info.actions``,
  ``info.only_errors``) and the recorded model calls (``finish_reason``, token counts). A transcript that
  is missing, not JSON or not shaped like one is counted and named in :attr:`RunBehaviour.problems`;
  its trial still counts for the terminations and the rewards.

:func:`summarize_run` gives a :class:`RunBehaviour`. The tables and the pairing by task are
:mod:`terminal_agent.evaluation.behaviour_report`; :mod:`terminal_agent.evaluation.behaviour` is the entry point.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terminal_agent.errors import ConfigError
from terminal_agent.evaluation.results import RunResults, TrialResult
from terminal_agent.outcome import Termination

DEFAULT_TOP_WORDS = 8
"""How many of the most common first words of bash commands a summary keeps."""

TIMEOUTS = frozenset({Termination.AGENT_TIMEOUT, Termination.EPISODE_TIMEOUT})
"""Endings by a wall clock (the task's agent budget, the runner's episode clock)."""

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class TranscriptProblem:
    """A transcript that could not be used (its trial still counts for terminations and rewards)."""

    path: str
    """The transcript's path, relative to the run directory."""
    reason: str
    """What is wrong: missing, not JSON, not shaped like a transcript, or no trial of results.json."""


@dataclass
class EpisodeBehaviour:
    """One trial: its ending from results.json, its replies from the transcript (zero when unread)."""

    task_id: str
    attempt: int
    termination: Termination
    """Why the episode ended."""
    scored: bool
    """Graded (not an infrastructure error)."""
    passed: bool
    reward: float | None
    turns: int
    """Model calls of the episode (results.json)."""
    transcript_read: bool = False
    """False when the transcript was missing or unusable (see the run's problems)."""
    steps: int = 0
    """Trajectory steps whose env record says whether the reply had a runnable action."""
    format_error_steps: int = 0
    """Of those, replies with no runnable action (``only_errors``)."""
    replies: int = 0
    """Model replies with a known finish reason."""
    length_cut_replies: int = 0
    """Of those, replies cut at the per-reply token cap (``finish_reason == "length"``)."""
    reply_tokens: list[int] = field(default_factory=list)
    """Completion tokens of each reply whose count is known (token ids, else the client's count)."""
    tools: Counter[str] = field(default_factory=Counter)
    """Actions that ran, by tool name (malformed tags are not counted: they are the format errors)."""
    bash_first_words: Counter[str] = field(default_factory=Counter)
    """First word of each bash command (leading ``VAR=value`` assignments skipped, paths cut to their name)."""

    @property
    def finished(self) -> bool:
        """Ended by the agent's own ``finish``."""
        return self.termination is Termination.FINISHED


@dataclass
class RunBehaviour:
    """The behaviour of one run, every share over the run's own episodes or replies."""

    name: str
    """What the tables call the run."""
    path: str
    """The run directory, as given."""
    episodes: int
    """Trials in results.json."""
    transcripts_read: int
    """Trials whose transcript was read."""
    mean_turns: float | None
    """Model calls per scored episode (as ``eval report`` counts them; an infrastructure error's are left out)."""
    terminations: dict[str, float]
    """Share of episodes per :class:`Termination` value (only those that occur)."""
    finished_share: float | None
    """Share of episodes ended by the agent's ``finish``."""
    format_errors_share: float | None
    """Share of episodes ended by too many replies in a row without a runnable action."""
    max_steps_share: float | None
    """Share of episodes that used up their turns."""
    timeout_share: float | None
    """Share of episodes ended by a wall clock (agent or episode timeout)."""
    infrastructure_share: float | None
    """Share of episodes the infrastructure broke (not scored)."""
    format_error_reply_share: float | None
    """Share of replies without a runnable action."""
    length_cut_reply_share: float | None
    """Share of replies cut at the per-reply token cap."""
    mean_reply_tokens: float | None
    """Completion tokens per reply, over replies with a known count."""
    tools_per_turn: dict[str, float]
    """Actions run per step, by tool name."""
    bash_commands: int
    """Bash commands run."""
    top_bash_words: list[tuple[str, float]]
    """The most common first words of bash commands, with their share of all bash commands."""
    pass_rate: float | None
    """Mean over tasks of each task's pass share (scored trials), as ``eval report`` computes it."""
    mean_reward: float | None
    """Mean over tasks of each task's mean reward (scored trials)."""
    problems: list[TranscriptProblem] = field(default_factory=list)
    """Transcripts that could not be used."""
    episode_records: list[EpisodeBehaviour] = field(default_factory=list, repr=False)
    """The per-trial records the numbers come from (task pairing reads them)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, without the per-trial records."""
        return {
            **{name: getattr(self, name) for name in self.__dataclass_fields__ if name not in ("problems", "episode_records")},
            "top_bash_words": [[word, share] for word, share in self.top_bash_words],
            "problems": [{"path": p.path, "reason": p.reason} for p in self.problems],
        }


# --- reading ------------------------------------------------------------------------------------
def read_run_results(run_dir: Path) -> RunResults:
    """The results of the run in ``run_dir``; ConfigError naming the path unless it is a directory holding a
    valid results.json."""
    if not run_dir.is_dir():
        raise ConfigError(f"run directory {run_dir} is not a directory (give the output directory of `eval run`)")
    if not (run_dir / "results.json").is_file():
        raise ConfigError(f"run directory {run_dir} has no results.json: it is not the output directory of `eval run`")
    return RunResults.read(run_dir)


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def first_word(command: str) -> str | None:
    """The program a bash command starts with: ``FOO=1 /usr/bin/python3 x.py`` -> ``python3``.

    Blank lines, a ``#!`` line and comment lines are skipped: a script written as one command
    (``#!/bin/bash`` then ``awk ...``) counts as its first real command, ``awk``."""
    for line in command.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for word in line.split():
            if _ASSIGNMENT.match(word):
                continue
            return word.rsplit("/", 1)[-1] or word
    return None


def _reply_tokens(response: dict[str, Any]) -> int | None:
    ids = response.get("completion_ids")
    if isinstance(ids, list) and ids:
        return len(ids)
    count = response.get("completion_tokens")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None


def _read_replies(episode: EpisodeBehaviour, transcript: dict[str, Any]) -> None:
    """Fill ``episode``'s reply-level counts from a transcript's steps and model calls."""
    trajectory = _as_dict(_as_dict(transcript.get("episode")).get("trajectory"))
    for step in _as_list(trajectory.get("steps")):
        info = _as_dict(_as_dict(step).get("info"))
        if isinstance(info.get("only_errors"), bool):
            episode.steps += 1
            episode.format_error_steps += int(info["only_errors"])
        for action in _as_list(info.get("actions")):
            action = _as_dict(action)
            name = action.get("name")
            if not isinstance(name, str) or action.get("format_error"):
                continue
            episode.tools[name] += 1
            command = _as_dict(action.get("args")).get("cmd")
            if name == "bash" and isinstance(command, str):
                word = first_word(command)
                if word:
                    episode.bash_first_words[word] += 1
    for call in _as_list(transcript.get("model_calls")):
        response = _as_dict(_as_dict(call).get("response"))
        if not response:
            continue  # a failed call (provider error) has no reply
        reason = response.get("finish_reason")
        if isinstance(reason, str):
            episode.replies += 1
            episode.length_cut_replies += int(reason == "length")
        tokens = _reply_tokens(response)
        if tokens is not None:
            episode.reply_tokens.append(tokens)


def _load_transcript(run_dir: Path, relative: str) -> tuple[dict[str, Any] | None, str | None]:
    """The transcript at ``run_dir/relative`` or why it cannot be used."""
    path = run_dir / relative
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None, "missing"
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"not JSON ({exc})"
    except RecursionError:  # json recurses per level of nesting
        return None, "not JSON (nested too deeply)"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    if not isinstance(data, dict) or not isinstance(data.get("model_calls", []), list):
        return None, "not a transcript (expected an object with model_calls and episode)"
    return data, None


def _episode_of(trial: TrialResult) -> EpisodeBehaviour:
    return EpisodeBehaviour(
        task_id=trial.task_id, attempt=trial.attempt, termination=trial.termination, scored=trial.scored,
        passed=trial.passed, reward=trial.reward, turns=trial.turns,
    )


def read_episodes(run_dir: Path) -> tuple[list[EpisodeBehaviour], list[TranscriptProblem]]:
    """Every trial of ``run_dir``'s results.json with its transcript's counts, and the transcripts that failed.

    Raises :class:`ConfigError` naming the path when ``run_dir`` is not a run directory or its results.json
    is not one; a bad transcript is never an error.
    """
    run_dir = Path(run_dir)
    results = read_run_results(run_dir)
    episodes: list[EpisodeBehaviour] = []
    problems: list[TranscriptProblem] = []
    expected: set[Path] = set()
    for trial in sorted(results.trials, key=lambda t: (t.task_id, t.attempt)):
        episode = _episode_of(trial)
        episodes.append(episode)
        if not trial.transcript:  # the runner could not write it (its OSError was logged)
            problems.append(TranscriptProblem(f"{trial.task_id} attempt {trial.attempt}", "results.json names no transcript"))
            continue
        expected.add((run_dir / trial.transcript).resolve())
        transcript, reason = _load_transcript(run_dir, trial.transcript)
        if transcript is None:
            problems.append(TranscriptProblem(trial.transcript, reason or "unusable"))
        else:
            _read_replies(episode, transcript)
            episode.transcript_read = True
    # transcripts/TASK/attempt-N.json (rollout.transcripts) of trials results.json does not list: a run killed
    # between a transcript and its results line, or a late thread of a timed-out episode
    recorded = [Path(trial.transcript) for trial in results.trials if trial.transcript]
    roots = {path.parts[0] for path in recorded if not path.is_absolute() and len(path.parts) > 2 and path.parts[0] != ".."}
    for path in sorted(p for root in roots for p in (run_dir / root).glob("*/*.json")):
        if path.resolve() not in expected:
            problems.append(TranscriptProblem(str(path.relative_to(run_dir)), "no trial in results.json (not counted)"))
    return episodes, problems


# --- summarizing --------------------------------------------------------------------------------
def share_of(part: int, whole: int) -> float | None:
    """``part / whole``; None for nothing to share."""
    return part / whole if whole else None


def _task_mean(values_by_task: Mapping[str, Sequence[float]]) -> float | None:
    means = [sum(values) / len(values) for values in values_by_task.values() if values]
    return sum(means) / len(means) if means else None


def summarize_episodes(
    name: str, path: str, episodes: Sequence[EpisodeBehaviour], problems: Sequence[TranscriptProblem] = (),
    *, top: int = DEFAULT_TOP_WORDS,
) -> RunBehaviour:
    """The :class:`RunBehaviour` of these episodes."""
    n = len(episodes)
    scored = [e for e in episodes if e.scored]
    endings = Counter(e.termination for e in episodes)
    steps = sum(e.steps for e in episodes)
    replies = sum(e.replies for e in episodes)
    tokens = [t for e in episodes for t in e.reply_tokens]
    tools: Counter[str] = sum((e.tools for e in episodes), Counter())
    words: Counter[str] = sum((e.bash_first_words for e in episodes), Counter())
    bash = sum(words.values())
    rewards: dict[str, list[float]] = defaultdict(list)
    passes: dict[str, list[float]] = defaultdict(list)
    for e in episodes:
        if e.scored and e.reward is not None:
            rewards[e.task_id].append(float(e.reward))
            passes[e.task_id].append(1.0 if e.passed else 0.0)
    return RunBehaviour(
        name=name,
        path=path,
        episodes=n,
        transcripts_read=sum(e.transcript_read for e in episodes),
        mean_turns=sum(e.turns for e in scored) / len(scored) if scored else None,
        terminations={t.value: endings[t] / n for t in Termination if endings[t]},
        finished_share=share_of(endings[Termination.FINISHED], n),
        format_errors_share=share_of(endings[Termination.FORMAT_ERRORS], n),
        max_steps_share=share_of(endings[Termination.MAX_STEPS], n),
        timeout_share=share_of(sum(endings[t] for t in TIMEOUTS), n),
        infrastructure_share=share_of(sum(c for t, c in endings.items() if t.is_infrastructure), n),
        format_error_reply_share=share_of(sum(e.format_error_steps for e in episodes), steps),
        length_cut_reply_share=share_of(sum(e.length_cut_replies for e in episodes), replies),
        mean_reply_tokens=sum(tokens) / len(tokens) if tokens else None,
        tools_per_turn={tool: count / steps for tool, count in sorted(tools.items())} if steps else {},
        bash_commands=bash,
        top_bash_words=[(word, count / bash) for word, count in words.most_common(top)],
        pass_rate=_task_mean(passes),
        mean_reward=_task_mean(rewards),
        problems=list(problems),
        episode_records=list(episodes),
    )


def summarize_run(run_dir: Path | str, name: str | None = None, *, top: int = DEFAULT_TOP_WORDS) -> RunBehaviour:
    """The behaviour of the run in ``run_dir`` (named ``name``, default the directory's name)."""
    run_dir = Path(run_dir)
    episodes, problems = read_episodes(run_dir)
    return summarize_episodes(name or run_dir.name, str(run_dir), episodes, problems, top=top)


__all__ = [
    "DEFAULT_TOP_WORDS",
    "EpisodeBehaviour",
    "RunBehaviour",
    "TranscriptProblem",
    "first_word",
    "share_of",
    "read_episodes",
    "read_run_results",
    "summarize_episodes",
    "summarize_run",
]
