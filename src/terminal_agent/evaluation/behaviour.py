"""How evaluation runs differ in what the agent does, from their transcripts: the entry point.

>>> print(behaviour_markdown({"base": Path("runs/eval-base"), "trained": Path("runs/eval-trained")}))  # doctest: +SKIP

One :class:`~terminal_agent.evaluation.behaviour_records.RunBehaviour` per run (endings, format errors, replies
cut at the token cap, tools per turn, the first words of bash commands, reply length, pass rate and mean reward),
read by :mod:`terminal_agent.evaluation.behaviour_records`; the tables and the pairing by task are
:mod:`terminal_agent.evaluation.behaviour_report`. ``terminal-agent eval behaviour RUN_DIR ...`` prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from terminal_agent.evaluation.behaviour_records import DEFAULT_TOP_WORDS, RunBehaviour, summarize_run
from terminal_agent.evaluation.behaviour_report import behaviour_tables, pair_by_task


def summarize_runs(run_dirs: Mapping[str, Path | str], *, top: int = DEFAULT_TOP_WORDS) -> list[RunBehaviour]:
    """One summary per ``{name: run directory}``, in order. Raises ConfigError naming the path of one
    that is not a run directory (a bad transcript is never an error: it is counted in the summary)."""
    return [summarize_run(Path(path), name, top=top) for name, path in run_dirs.items()]


def behaviour_markdown(run_dirs: Mapping[str, Path | str], *, top: int = DEFAULT_TOP_WORDS) -> str:
    """Markdown tables comparing the runs ``{name: run directory}``; the first is the baseline, the
    difference column is the last minus the first."""
    return behaviour_tables(summarize_runs(run_dirs, top=top))


def behaviour_json(runs: list[RunBehaviour]) -> dict[str, Any]:
    """The summaries and the pairing of every later run with the first, JSON-safe."""
    first = runs[0] if runs else None
    return {
        "runs": [run.to_dict() for run in runs],
        "paired_with_first": {
            run.name: [vars(measure) for measure in pair_by_task(first, run)] for run in runs[1:]
        } if first is not None else {},
    }


__all__ = ["behaviour_json", "behaviour_markdown", "summarize_runs"]
