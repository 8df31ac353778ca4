"""Markdown tables of :class:`~terminal_agent.evaluation.behaviour.RunBehaviour` s side by side.

Rows are measures, columns the runs in the order given, and a last column the difference of the last run
minus the first (percentage points for shares). A second table compares the first words of bash commands,
a third pairs every later run with the first task by task, and the transcripts that could not be used are
listed by run. :func:`pair_by_task` is the pairing: per task, the share of its attempts that ended by ``finish``
(or by format errors, by max steps, or passed), compared between two runs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from terminal_agent.evaluation.behaviour_records import EpisodeBehaviour, RunBehaviour, share_of
from terminal_agent.outcome import Termination

MAX_PROBLEMS_LISTED = 20
"""Unusable transcripts named per run; the rest are counted."""


@dataclass(frozen=True)
class _Row:
    label: str
    value: Callable[[RunBehaviour], float | None]
    kind: str
    """``count``, ``share`` (shown in %), ``rate`` (3 decimals) or ``mean`` (2 decimals)."""


_COVERED = {Termination.FINISHED, Termination.FORMAT_ERRORS, Termination.MAX_STEPS}


def _rows(runs: Sequence[RunBehaviour]) -> list[_Row]:
    rows = [
        _Row("episodes", lambda r: r.episodes, "count"),
        _Row("transcripts read", lambda r: r.transcripts_read, "count"),
        _Row("pass rate", lambda r: r.pass_rate, "rate"),
        _Row("mean reward", lambda r: r.mean_reward, "rate"),
        _Row("mean turns", lambda r: r.mean_turns, "mean"),
        _Row("ended by the agent's finish", lambda r: r.finished_share, "share"),
        _Row("ended by format errors", lambda r: r.format_errors_share, "share"),
        _Row("used up max steps", lambda r: r.max_steps_share, "share"),
        _Row("ended by a timeout", lambda r: r.timeout_share, "share"),
        _Row("infrastructure errors", lambda r: r.infrastructure_share, "share"),
    ]
    others = sorted({t for r in runs for t in r.terminations} - {t.value for t in _COVERED})
    rows += [_Row(f"ended by {t}", _termination_share(t), "share") for t in others]
    rows += [
        _Row("replies without a runnable action", lambda r: r.format_error_reply_share, "share"),
        _Row("replies cut at the token cap", lambda r: r.length_cut_reply_share, "share"),
        _Row("mean reply tokens", lambda r: r.mean_reply_tokens, "mean"),
        _Row("bash commands", lambda r: r.bash_commands, "count"),
    ]
    tools = sorted({tool for r in runs for tool in r.tools_per_turn})
    rows += [_Row(f"`{tool}` actions per turn", _tool_per_turn(tool), "mean") for tool in tools]
    return rows


def _termination_share(termination: str) -> Callable[[RunBehaviour], float | None]:
    """A run's share of episodes that ended by ``termination`` (None for a run without episodes)."""
    return lambda r: r.terminations.get(termination, 0.0) if r.episodes else None


def _tool_per_turn(tool: str) -> Callable[[RunBehaviour], float | None]:
    """A run's ``tool`` actions per turn."""
    return lambda r: r.tools_per_turn.get(tool, 0.0)


@dataclass
class PairedMeasure:
    """One per-task measure of two runs, over the tasks both ran: on how many tasks it rose or fell."""

    measure: str
    """What is compared per task (each task's share of its attempts)."""
    tasks: int
    """Tasks present in both runs."""
    higher_in_b: float | None
    """Share of those tasks where the measure is higher in B than in A."""
    lower_in_b: float | None
    """Share of those tasks where it is lower in B."""


PAIRED_MEASURES: dict[str, Any] = {
    "ended by finish": lambda e: e.finished,
    "ended by format errors": lambda e: e.termination is Termination.FORMAT_ERRORS,
    "used up max steps": lambda e: e.termination is Termination.MAX_STEPS,
    "passed": lambda e: e.passed,
}
"""Per-episode yes/no measures compared task by task (a task's value: the share of its attempts)."""


def pair_by_task(a: RunBehaviour, b: RunBehaviour) -> list[PairedMeasure]:
    """For each of :data:`PAIRED_MEASURES`: the share of common tasks where B is higher / lower than A
    (with one attempt per task, "higher in B" of ``ended by finish`` is "B finished and A did not")."""
    def by_task(run: RunBehaviour) -> dict[str, list[EpisodeBehaviour]]:
        grouped: dict[str, list[EpisodeBehaviour]] = defaultdict(list)
        for episode in run.episode_records:
            grouped[episode.task_id].append(episode)
        return grouped

    tasks_a, tasks_b = by_task(a), by_task(b)
    common = sorted(set(tasks_a) & set(tasks_b))
    paired = []
    for measure, test in PAIRED_MEASURES.items():
        higher = lower = 0
        for task in common:
            value_a = sum(map(test, tasks_a[task])) / len(tasks_a[task])
            value_b = sum(map(test, tasks_b[task])) / len(tasks_b[task])
            higher += value_b > value_a
            lower += value_b < value_a
        paired.append(PairedMeasure(measure, len(common), share_of(higher, len(common)), share_of(lower, len(common))))
    return paired


def _value(value: float | None, kind: str) -> str:
    if value is None:
        return "n/a"
    if kind == "count":
        return f"{value:g}"
    if kind == "share":
        return f"{100 * value:.1f}%"
    return f"{value:.3f}" if kind == "rate" else f"{value:.2f}"


def _difference(first: float | None, last: float | None, kind: str) -> str:
    if first is None or last is None:
        return "n/a"
    delta = last - first
    if kind == "count":
        return f"{delta:+g}"
    if kind == "share":
        return f"{100 * delta:+.1f} pp"
    return f"{delta:+.3f}" if kind == "rate" else f"{delta:+.2f}"


def _table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def _names(runs: Sequence[RunBehaviour]) -> list[str]:
    return [f"`{r.name}`" for r in runs]


def _difference_header(runs: Sequence[RunBehaviour]) -> list[str]:
    return [f"`{runs[-1].name}` − `{runs[0].name}`"] if len(runs) > 1 else []


def measures_table(runs: Sequence[RunBehaviour]) -> str:
    """Measures by run, with the last − first difference when there are two or more."""
    lines = []
    for row in _rows(runs):
        values = [row.value(r) for r in runs]
        line = [row.label, *(_value(v, row.kind) for v in values)]
        if len(runs) > 1:
            line.append(_difference(values[0], values[-1], row.kind))
        lines.append(line)
    return _table(["measure", *_names(runs), *_difference_header(runs)], lines)


def bash_words_table(runs: Sequence[RunBehaviour]) -> str:
    """Share of each run's bash commands that start with each word of any run's top list."""
    counts = [sum((e.bash_first_words for e in r.episode_records), Counter()) for r in runs]
    words = list(dict.fromkeys(word for r in runs for word, _ in r.top_bash_words))
    lines = []
    for word in words:
        values = [c[word] / sum(c.values()) if c else None for c in counts]
        line = [f"`{word}`", *(_value(v, "share") for v in values)]
        if len(runs) > 1:
            line.append(_difference(values[0], values[-1], "share"))
        lines.append(line)
    return _table(["first word", *_names(runs), *_difference_header(runs)], lines)


def paired_table(runs: Sequence[RunBehaviour]) -> str:
    """Every later run against the first, over the tasks both ran: share of tasks higher / lower."""
    first = runs[0]
    pairs = [pair_by_task(first, later) for later in runs[1:]]
    header = ["per task (share of its attempts)", *(f"`{r.name}` vs `{first.name}` ({p[0].tasks} tasks)" for r, p in zip(runs[1:], pairs))]
    lines = []
    for index, measure in enumerate(pairs[0]):
        cells = []
        for pair in pairs:
            m = pair[index]
            cells.append("n/a" if m.higher_in_b is None else f"{_value(m.higher_in_b, 'share')} higher, {_value(m.lower_in_b, 'share')} lower")
        lines.append([measure.measure, *cells])
    return _table(header, lines)


def problems_markdown(runs: Sequence[RunBehaviour]) -> str:
    """The transcripts that could not be used, by run (empty when every transcript was read)."""
    parts = []
    for run in runs:
        if not run.problems:
            continue
        listed = [f"- `{p.path}`: {p.reason}" for p in run.problems[:MAX_PROBLEMS_LISTED]]
        if len(run.problems) > MAX_PROBLEMS_LISTED:
            listed.append(f"- ... and {len(run.problems) - MAX_PROBLEMS_LISTED} more")
        parts.append(f"`{run.name}` ({run.path}): {len(run.problems)} transcript(s) not used\n\n" + "\n".join(listed))
    return "\n\n".join(parts)


def behaviour_tables(runs: Sequence[RunBehaviour]) -> str:
    """The whole comparison as markdown: measures, bash first words, pairing by task, unusable transcripts."""
    if not runs:
        raise ValueError("behaviour_tables needs at least one run")
    parts = ["### Behaviour from transcripts", measures_table(runs)]
    if any(r.top_bash_words for r in runs):
        parts += ["First words of bash commands (share of each run's bash commands):", bash_words_table(runs)]
    if len(runs) > 1:
        parts += ["Paired by task (a task's value is the share of its attempts):", paired_table(runs)]
    problems = problems_markdown(runs)
    if problems:
        parts += ["Transcripts not used (their trials still count for endings and rewards):", problems]
    return "\n\n".join(parts) + "\n"


__all__ = ["PAIRED_MEASURES", "PairedMeasure", "behaviour_tables", "pair_by_task", "bash_words_table", "measures_table", "paired_table", "problems_markdown"]
