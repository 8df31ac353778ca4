"""What becomes of the agent's processes before its tests run: killed, or kept for tests that talk to them.

A service task's reference solution starts a daemon (a mail server, an HTTP server, Jupyter) and its tests talk
to it; Harbor runs the verifier in the same environment with the agent's daemons still up, and terminal-bench
v1 runs its tests beside the agent's processes. Killing them before grading turns such an oracle's 1 into 0.

* ``kill``: every agent process is killed before anything else (``sandbox.kill_agent_processes()``).
* ``keep``: every agent process is *frozen* (SIGSTOP, by the sandbox's shell server, whose code never touched
  the disk) before the grader inspects and stages; the verifier runner thaws them when the tests start, freezes
  them again when the tests are over (the end of the outermost pytest session, and the exit of test.sh), and
  kills them before it reads anything (``assets/agent_gate.py``). A reward file whose last change happened
  while they ran does not count (tamper signal), nor do tests whose staged files changed then.

:func:`agent_process_policy` picks one per task (docs/grading.md, "The agent's processes, per mode").
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from terminal_agent.errors import InfrastructureError
from terminal_agent.interfaces import FreezableSandbox, GradingSandbox
from terminal_agent.tasks.model import GradingMode, Task

logger = logging.getLogger(__name__)

KEEP = "keep"
KILL = "kill"
TASK_OVERRIDE_KEY = "agent_processes"
"""``Task.metadata`` key (``keep`` or ``kill``) that overrides the mode's default for one task."""
TERMINAL_BENCH_KEYS = ("parser_name", "tb_run_tests_sh")
"""Metadata keys only the terminal-bench v1 reader records (from a task.yaml terminal-bench wrote)."""


@dataclass(frozen=True)
class ProcessPolicy:
    """What the grader does with the agent's processes, and why."""

    action: str
    """``keep`` or ``kill``."""
    reason: str


@dataclass
class HeldProcesses:
    """The agent's processes after the grader's first step."""

    action: str
    """``keep`` (frozen, to be thawed for the tests) or ``kill`` (dead)."""
    frozen: list[int] = field(default_factory=list)
    """Pids the grader stopped (the runner continues them for the tests)."""
    already_stopped: list[int] = field(default_factory=list)
    """Pids the agent had stopped itself (left stopped)."""
    killed: int = 0
    note: str = ""

    def job(self) -> dict[str, Any] | None:
        """The runner's ``gate`` entry: None when the processes were killed."""
        if self.action != KEEP:
            return None
        return {"frozen": list(self.frozen), "already_stopped": list(self.already_stopped)}


def is_terminal_bench_v1(task: Task) -> bool:
    """Whether ``task`` was read from a task.yaml that terminal-bench (v1) wrote."""
    return any(key in task.metadata for key in TERMINAL_BENCH_KEYS)


def scripts_run_pytest(task: Task) -> bool:
    """Whether the task's test scripts run pytest: the end of its outermost session is where the keep mode knows
    the tests are over (without one, a reward could not be told apart from one the agent's process wrote)."""
    for path, content in task.test_support_files.items():
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        if path.endswith(".sh") and "pytest" in text:
            return True
    return False


def agent_process_policy(task: Task, setting: str = "auto") -> ProcessPolicy:
    """``keep`` or ``kill`` for ``task`` (``setting`` is ``GradingConfig.agent_processes``)."""
    if setting == KILL:
        return ProcessPolicy(KILL, "GradingConfig.agent_processes is 'kill'")
    override = task.metadata.get(TASK_OVERRIDE_KEY)
    harbor = task.verifier.mode == GradingMode.HARBOR
    if harbor and task.verifier.separate_environment:
        return ProcessPolicy(KILL, "the verifier runs in a separate environment: nothing of the agent's runs there")
    if harbor and not scripts_run_pytest(task):
        return ProcessPolicy(KILL, "the test scripts run no pytest: no point is known where the tests are over")
    if override in (KEEP, KILL):
        return ProcessPolicy(override, f"the task's metadata sets {TASK_OVERRIDE_KEY}={override}")
    if harbor:
        return ProcessPolicy(KEEP, "Harbor runs the verifier beside the agent's processes")
    if is_terminal_bench_v1(task):
        return ProcessPolicy(KEEP, "terminal-bench v1 runs its tests beside the agent's processes")
    return ProcessPolicy(KILL, "the project's own tests never need a process of the agent's")


def hold_agent_processes(sandbox: GradingSandbox, policy: ProcessPolicy) -> HeldProcesses:
    """The grader's first step: freeze (keep) or kill every agent process. A sandbox that cannot freeze (not a
    :class:`~terminal_agent.interfaces.FreezableSandbox`), or a process that would not stop, falls back to
    killing them all."""
    if policy.action == KEEP:
        if not isinstance(sandbox, FreezableSandbox):
            note = "this sandbox cannot freeze processes: the agent's processes were killed before the tests"
        else:
            held = sandbox.freeze_agent_processes()
            if not held.get("running"):
                return HeldProcesses(KEEP, list(held.get("stopped", [])), list(held.get("already_stopped", [])))
            note = (f"{len(held['running'])} agent process(es) would not stop: the agent's processes were killed "
                    "before the tests")
        logger.info("%s", note)
        return HeldProcesses(KILL, killed=sandbox.kill_agent_processes(), note=note)
    return HeldProcesses(KILL, killed=sandbox.kill_agent_processes())


def gate_signals(status: dict[str, Any]) -> list[str]:
    """Tamper signals of a runner's report on the agent's processes (``gate_signals`` and ``gate``)."""
    signals = list(status.get("gate_signals") or [])
    verdict = status.get("gate") or {}
    for path in verdict.get("untrusted", []):
        signals.append(f"{path} was last written while the agent's processes were running (not by the verifier "
                       "after its tests were over)")
    changed = verdict.get("changed", [])
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        signals.append(f"the verifier's staged files changed while the agent's processes were running: {shown}")
    return signals



@contextmanager
def agent_processes_held(sandbox: GradingSandbox, policy: ProcessPolicy) -> Iterator[HeldProcesses]:
    """:func:`hold_agent_processes` for the length of a grading: kept processes are killed when it ends, so that
    after a failure nothing of the agent's stays frozen (the runner kills them itself when it finishes)."""
    held = hold_agent_processes(sandbox, policy)
    try:
        yield held
    finally:
        if held.action == KEEP:
            try:
                sandbox.kill_agent_processes()
            except InfrastructureError:  # a dead sandbox holds nothing frozen; the grading's own result stands
                pass

__all__ = ["agent_processes_held", "HeldProcesses", "KEEP", "KILL", "ProcessPolicy", "agent_process_policy", "gate_signals",
           "hold_agent_processes", "is_terminal_bench_v1", "scripts_run_pytest"]
