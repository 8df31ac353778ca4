"""Oracle validation: no reward without work, and the reference solution passes.

For each task three episodes run through the real environment and grader:

* **no-op** - the agent finishes at once; the score must be at most
  :data:`~terminal_agent.task_quality.no_work_rule.NO_WORK_MAX_SCORE` (0.05);
* **empty-output** - the agent creates an empty file at every output path of the task (see
  :func:`empty_output_paths`) that does not exist yet, then finishes; the score must not exceed the
  no-op's (a test that holds on an empty output pays ``touch OUTPUT``). Nothing that exists is touched.
  A task with no output path skips this episode: it would be the no-op episode, whose score it takes;
* **oracle** - as Harbor's oracle agent does, the reference solution and the files beside it
  (``solution/`` of a Harbor task) are written under ``/solution`` (base64, so no quoting or
  byte can break them) and ``/solution/solve.sh`` runs with bash and
  ``DEBIAN_FRONTEND=noninteractive``, then the agent finishes; the score must be exactly 1.0.
* **negative solutions** - each of ``task.negative_solutions`` runs exactly as the oracle runs the reference
  solution; each must score at most its ``max_score``.

The rule itself is :mod:`terminal_agent.task_quality.no_work_rule`. All episodes use the scripted model
client, so no private hook into the environment is needed. An episode that infrastructure kept from being
scored is an infrastructure error, never a task failure. The result records each task's content hashes
(:meth:`Task.content_hashes`) in a JSON manifest.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import posixpath
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from terminal_agent.interfaces import ModelClient
from terminal_agent.evaluation.results import TrialResult
from terminal_agent.task_quality.no_work_rule import (
    NO_WORK_MAX_SCORE,
    ORACLE_SCORE,
    SCORE_TOLERANCE,
    negative_problems,
    rule_problems,
)
from terminal_agent.rollout.runner import ProgressCallback, RolloutConfig, RolloutRunner, TrialSpec
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import NegativeSolution, Task

logger = logging.getLogger(__name__)

#: Where the oracle puts the solution's files (Harbor's ``EnvironmentPaths.solution_dir``).
ORACLE_SOLUTION_DIR = "/solution"
ORACLE_SCRIPT_PATH = f"{ORACLE_SOLUTION_DIR}/solve.sh"
FINISH_REPLY = "<finish>\nmessage: done\n</finish>"
MANIFEST_VERSION = 2
"""2: entries carry ``empty_score`` and ``empty_paths`` (the empty-output probe)."""


def oracle_replies(task: Task, timeout_s: float | None = None) -> list[str]:
    """Scripted replies that put ``task.solution`` and ``task.solution_files`` under ``/solution``, run
    ``/solution/solve.sh`` and finish (a solve.sh may read its own files there, as under Harbor)."""
    if not task.solution:
        raise ValueError(f"task {task.task_id} has no reference solution")
    return solution_script_replies(task, task.solution, timeout_s)


def negative_replies(task: Task, negative: NegativeSolution, timeout_s: float | None = None) -> list[str]:
    """Scripted replies that run a negative solution exactly as the oracle runs the reference solution."""
    return solution_script_replies(task, negative.script, timeout_s)


def solution_script_replies(task: Task, script: str, timeout_s: float | None = None,
                            extra_files: Mapping[str, str | bytes] | None = None) -> list[str]:
    """Scripted replies that write ``script`` as ``/solution/solve.sh`` beside ``task.solution_files`` (and
    ``extra_files``), run it with bash and finish."""
    files: dict[str, str | bytes] = {**task.solution_files, **(extra_files or {}), "solve.sh": script}
    folders = sorted({posixpath.dirname(f"{ORACLE_SOLUTION_DIR}/{path}") for path in files})
    writes = ["mkdir -p -- " + " ".join(shlex.quote(folder) for folder in folders)]
    for path in sorted(files):
        content = files[path]
        data = content.encode() if isinstance(content, str) else content
        encoded = base64.b64encode(data).decode()
        writes.append(f"printf %s {encoded} | base64 -d > {shlex.quote(f'{ORACLE_SOLUTION_DIR}/{path}')}")
    timeout = timeout_s or min(600.0, task.limits.agent_timeout_s)
    command = " && ".join(writes) + f" && DEBIAN_FRONTEND=noninteractive bash {ORACLE_SCRIPT_PATH}"
    run = f"<bash>\ncmd: {command}\ntimeout_secs: {timeout:g}\n</bash>"
    return [run, FINISH_REPLY]


def noop_replies() -> list[str]:
    return [FINISH_REPLY]


#: Roots never taken for outputs: the grader's and oracle's folders, and the system's own.
_NOT_OUTPUT_ROOTS = frozenset({"tests", "logs", "solution", "proc", "sys", "dev", "usr", "bin", "sbin", "lib",
                               "lib32", "lib64", "boot"})
#: What ends a path token in test source: quotes, blanks, and Python / shell punctuation.
_TOKEN_SPLIT = re.compile(r"""[\s'"`,;:()<>|&=\\]+""")
_ABSOLUTE_PATH = re.compile(r"^/[A-Za-z0-9._@+-]+(?:/[A-Za-z0-9._@+-]+)*$")
#: A whole string literal that is an absolute path, blanks inside names allowed ("/app/my notes.txt").
_QUOTED_PATH = re.compile(r"""(["'])(/[A-Za-z0-9._@+-]+(?:[ /][A-Za-z0-9._@+-]+)*)\1""")
_TEST_SUFFIXES = (".py", ".sh", ".bash")
MAX_EMPTY_OUTPUTS = 64
"""At most this many paths are created by the empty-output probe (the first in sorted order)."""


def _test_texts(task: Task) -> list[str]:
    texts = [task.test_source]
    for path, content in sorted(task.test_support_files.items()):
        if isinstance(content, str) and path.endswith(_TEST_SUFFIXES):
            texts.append(content)
    return texts


def test_named_paths(task: Task) -> list[str]:
    """Every absolute path literal of the task's tests (see :func:`empty_output_paths`) outside the grader's,
    the oracle's and the system's folders, shipped files and folders included, sorted."""
    found: list[str] = []
    for text in _test_texts(task):
        found += [match.group(2) for match in _QUOTED_PATH.finditer(text)]
        # then the paths inside longer strings and shell lines, token by token
        rest = _QUOTED_PATH.sub(" ", text)
        found += [token for token in _TOKEN_SPLIT.split(rest) if _ABSOLUTE_PATH.match(token)]
    named: set[str] = set()
    for path in found:
        normal = posixpath.normpath(path)
        if normal.split("/")[1] not in _NOT_OUTPUT_ROOTS and ".." not in normal.split("/"):
            named.add(normal)
    return sorted(named)


def empty_output_paths(task: Task) -> list[str]:
    """The paths the empty-output probe creates (empty files), when they do not exist in the container.

    ``task.metadata["outputs"]`` when the task lists them (absolute, or relative to ``/app``). Otherwise
    derived from the tests (``test_source`` and the ``.py`` / ``.sh`` files beside it): every absolute
    path literal, i.e. a whole quoted string made of ``/name`` segments (``[A-Za-z0-9._@+-]`` and blanks
    inside names), or else a token between blanks, quotes or punctuation made of such segments without
    blanks (inside a longer string or a shell line; f-string pieces, globs and a trailing ``/`` do not
    qualify), minus

    * paths under the grader's, the oracle's and the system's folders (``/tests``, ``/logs``,
      ``/solution``, ``/proc``, ``/sys``, ``/dev``, ``/usr``, ``/bin``, ``/lib`` ...);
    * files the task ships (``/app/<path>`` for every path of ``task.files``);
    * paths that are a folder above another path the tests or the task name (they are directories).

    Whatever else exists in the pristine container (made by a ``RUN`` step, or the image's own) is left
    alone: the probe's command only creates a path that does not exist (``[ -e P ] || ...``). The heuristic
    may take a path the task never writes (a URL path in a log line, a file a test expects to be absent);
    the probe then creates one stray empty file, which can only lower its score. A task whose outputs the
    heuristic misses lists them in ``metadata["outputs"]``.
    """
    listed = task.metadata.get("outputs")
    if listed:
        paths = {p if p.startswith("/") else posixpath.join("/app", p) for p in listed if isinstance(p, str) and p}
        return sorted(posixpath.normpath(p) for p in paths)[:MAX_EMPTY_OUTPUTS]
    named = set(test_named_paths(task))
    shipped = {posixpath.normpath(f"/app/{path}") for path in task.files}
    everything = named | shipped
    folders = {posixpath.dirname(p) for p in everything}
    for path in list(folders):
        while path not in ("/", ""):
            path = posixpath.dirname(path)
            folders.add(path)
    return sorted(p for p in named - shipped if p not in folders)[:MAX_EMPTY_OUTPUTS]


def empty_output_replies(paths: Sequence[str]) -> list[str]:
    """Scripted replies that create an empty file at each path that does not exist yet, then finish."""
    steps = []
    for path in paths:
        quoted = shlex.quote(path)
        steps.append(
            f"{{ [ -e {quoted} ] || [ -L {quoted} ] || "
            f"{{ mkdir -p -- \"$(dirname -- {quoted})\" && : > {quoted} && printf 'probe created %s\\n' {quoted}; }}; }}"
        )
    # a YAML block scalar: the command starts with "{", which plain YAML would read as a mapping
    body = "".join(f"  {step}\n" for step in [*steps, "true"])
    return [f"<bash>\ncmd: |\n{body}timeout_secs: 60\n</bash>", FINISH_REPLY]


class TaskValidation(BaseModel):
    """Outcome of validating one task."""

    task_id: str
    ok: bool
    noop_score: float | None = None
    empty_score: float | None = None
    """Score of the empty-output probe (``None``: not scored)."""
    oracle_score: float | None = None
    problems: list[str] = Field(default_factory=list)
    """Why the task is not valid (empty when ``ok``)."""
    infrastructure_errors: list[str] = Field(default_factory=list)
    """Errors that kept an episode from being scored (the task's validity is then unknown)."""
    hashes: dict[str, str] = Field(default_factory=dict)
    failing_tests: list[str] = Field(default_factory=list)
    """Tests that failed in the oracle episode."""
    empty_paths: list[str] = Field(default_factory=list)
    """The candidate output paths of the empty-output probe (those that did not exist were created)."""
    negative_scores: dict[str, float] = Field(default_factory=dict)
    """Score of each negative solution that was scored (name -> score); each must stay within its max_score."""


def _scripted(replies: list[str], name: str) -> ModelClient:
    from terminal_agent.models.scripted import ScriptedModelClient

    return ScriptedModelClient(replies, name=name)


def _judge(
    task: Task,
    noop: TrialResult | None,
    empty: TrialResult | None,
    oracle: TrialResult | None,
    empty_paths: list[str],
    negatives: dict[str, TrialResult] | None = None,
) -> TaskValidation:
    problems: list[str] = []
    infra: list[str] = []
    failing: list[str] = []
    negatives = negatives or {}
    if not task.solution:
        problems.append("no reference solution")
    labelled = [("no-op", noop), ("empty-output", empty), ("oracle", oracle)]
    labelled += [(f"negative solution {name}", trial) for name, trial in negatives.items()]
    for label, trial in labelled:
        if trial is not None and not trial.scored:
            kind = trial.error.kind if trial.error else "unknown"
            infra.append(f"{label} episode not scored ({kind}): {trial.error.message if trial.error else ''}".strip())

    def score(trial: TrialResult | None) -> float | None:
        return (trial.reward or 0.0) if trial is not None and trial.scored else None

    noop_score, oracle_score = score(noop), score(oracle)
    # no output path: the probe is the no-op episode itself
    empty_score = score(empty) if empty_paths else noop_score
    if oracle is not None and oracle_score is not None and oracle_score < ORACLE_SCORE - SCORE_TOLERANCE:
        failing = [t.name for t in oracle.tests if not t.passed]
    problems += rule_problems(noop_score, empty_score, oracle_score, failing or ["?"])
    negative_scores = {name: value for name, trial in negatives.items() if (value := score(trial)) is not None}
    problems += negative_problems(task, negative_scores, require_all=False)
    return TaskValidation(
        task_id=task.task_id,
        ok=not problems and not infra,
        noop_score=noop_score,
        empty_score=empty_score,
        oracle_score=oracle_score,
        problems=problems,
        infrastructure_errors=infra,
        hashes=task.content_hashes(),
        failing_tests=failing,
        empty_paths=empty_paths,
        negative_scores=negative_scores,
    )


ScriptedEpisode = tuple[Task, int, list[str]]
"""One scripted episode: the task, an attempt number that tells episodes of one task apart, the model's replies."""


def run_scripted_episodes(
    kind: str,
    episodes: Sequence[ScriptedEpisode],
    *,
    max_steps: int,
    concurrency: int = 2,
    output_dir: Path | None = None,
    on_trial: Callable[[TrialResult], None] | None = None,
    runner_options: dict[str, Any] | None = None,
    sandbox: SandboxConfig | None = None,
    sweep_leaked: bool = False,
) -> dict[tuple[str, int], TrialResult]:
    """Run each episode through the real agent, environment and grader with the scripted model; the results by
    ``(task_id, attempt)``. ``output_dir / kind`` keeps their results and transcripts."""
    if not episodes:
        return {}
    replies = {(task.task_id, attempt): script for task, attempt, script in episodes}
    config = RolloutConfig(
        concurrency=concurrency,
        max_steps=max_steps,
        output_dir=output_dir / kind if output_dir else None,
        sweep_leaked=sweep_leaked,
        sandbox=sandbox if sandbox is not None else SandboxConfig(),
    )
    runner = RolloutRunner(
        _scripted([], f"{kind}-oracle"),
        config,
        on_progress=(lambda _done, _total, trial: on_trial(trial)) if on_trial else None,
        model_for_trial=lambda spec: _scripted(replies[(spec.task.task_id, spec.attempt)], f"{kind}-oracle"),
        **(runner_options or {}),
    )
    results = runner.run_trials([TrialSpec(task, attempt) for task, attempt, _ in episodes])
    return {(trial.task_id, trial.attempt): trial for trial in results.trials}


def validate_tasks(
    tasks: Sequence[Task],
    *,
    concurrency: int = 2,
    output_dir: Path | None = None,
    on_progress: ProgressCallback | None = None,
    runner_options: dict[str, Any] | None = None,
    sandbox: SandboxConfig | None = None,
) -> list[TaskValidation]:
    """Run the no-op, empty-output and oracle episodes of every task; return one :class:`TaskValidation` each.

    ``output_dir`` keeps the episodes' results and transcripts (``noop/``, ``empty/`` and ``oracle/``).
    ``sandbox`` picks the backend the episodes run in (default: Docker), e.g. bwrap on an image export, so a
    node without Docker checks the very images its training and evaluations use.
    """
    by_id = {task.task_id: task for task in tasks}
    outputs = {task.task_id: empty_output_paths(task) for task in tasks}
    negative_episodes = [(task, index, negative_replies(task, negative))
                         for task in tasks for index, negative in enumerate(task.negative_solutions)]
    total = (len(tasks) + sum(1 for t in tasks if t.solution) + sum(1 for paths in outputs.values() if paths)
             + len(negative_episodes))
    finished = 0

    def progress(trial: TrialResult) -> None:
        nonlocal finished
        finished += 1
        if on_progress is not None:
            on_progress(finished, total, trial)

    def run(kind: str, episodes: list[ScriptedEpisode], max_steps: int) -> dict[tuple[str, int], TrialResult]:
        return run_scripted_episodes(kind, episodes, max_steps=max_steps, concurrency=concurrency,
                                     output_dir=output_dir, on_trial=progress, runner_options=runner_options,
                                     sandbox=sandbox, sweep_leaked=kind == "noop")

    noop = run("noop", [(t, 0, noop_replies()) for t in tasks], max_steps=1)
    empty = run("empty", [(t, 0, empty_output_replies(outputs[t.task_id])) for t in tasks if outputs[t.task_id]],
                max_steps=2)
    oracle = run("oracle", [(t, 0, oracle_replies(t)) for t in tasks if t.solution], max_steps=2)
    negative = run("negative", negative_episodes, max_steps=2)
    return [
        _judge(by_id[task_id], noop.get((task_id, 0)), empty.get((task_id, 0)), oracle.get((task_id, 0)),
               outputs[task_id],
               {n.name: negative[(task_id, i)] for i, n in enumerate(by_id[task_id].negative_solutions)
                if (task_id, i) in negative})
        for task_id in by_id
    ]


def validation_manifest(validations: Sequence[TaskValidation], tasks_file: str | None = None) -> dict[str, Any]:
    """The JSON manifest: per task whether it is valid, the three scores and its content hashes."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "kind": "validation",
        "rule": {"noop_max": NO_WORK_MAX_SCORE, "empty_max": "noop_score", "oracle": 1.0,
                 "negative_max": "each negative solution's max_score"},
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "tasks_file": tasks_file,
        "n_tasks": len(validations),
        "n_ok": sum(1 for v in validations if v.ok),
        "tasks": {v.task_id: v.model_dump(exclude={"task_id"}) for v in validations},
    }


def write_manifest(manifest: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
    tmp.replace(path)
    return path
