"""The parts of terminal-agent, in one short place.

    Task ──► image ──► Sandbox ◄── tools ◄── Action ◄── Agent ◄── ModelClient
                          │
                          └──► Grader (weighted pytest) ──► GradeResult ──► reward (+ Judge)

Implementations live in their packages (``sandbox.docker_sandbox``, ``models.*``,
``rewards.grading``); everything else codes against these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


# --- sandbox -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExecResult:
    """The outcome of one command. A failing command is a result, never an exception."""

    exit_code: int
    """Exit status; ``-9``-style negatives mean killed by that signal; ``124`` when timed out."""
    output: str
    """stdout (and stderr too when merged), decoded with replacement of invalid UTF-8."""
    stderr: str = ""
    """stderr when kept apart from stdout; empty when merged."""
    truncated: bool = False
    """True when the capture cap cut the middle of the output."""
    bytes_cut: int = 0
    """How many bytes were dropped between the kept head and tail."""
    duration_s: float = 0.0
    """Wall time of the command as seen by the caller."""
    timed_out: bool = False
    """True when the deadline passed and the command's process group was killed."""
    oom_killed: bool = False
    """True when the container's memory limit made the kernel kill a process during the command."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@runtime_checkable
class Sandbox(Protocol):
    """A running, isolated machine for one rollout.

    Every method raises :class:`terminal_agent.errors.SandboxError` when the sandbox itself is
    broken (dead container, lost shell); a command that fails returns an :class:`ExecResult`.
    """

    @property
    def id(self) -> str: ...

    def exec(
        self,
        command: str,
        timeout: float | None = None,
        *,
        workdir: str | None = None,
        env: dict[str, str] | None = None,
        merge_stderr: bool = True,
        stateless: bool = False,
        block: bool = True,
    ) -> ExecResult:
        """Run ``command`` in the persistent shell. ``block=False`` starts it in the background."""
        ...

    def read_file(self, path: str) -> bytes:
        """Whole file. Raises ``FileNotFoundError`` when absent, ``IsADirectoryError`` for a directory,
        another ``OSError`` when it cannot be read, ``SandboxError`` when broken."""
        ...

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace ``path`` (parents created) through the Engine API, never a shell.

        Raises an ``OSError`` (``FileNotFoundError``, ``IsADirectoryError``, ...) when that path cannot
        be written (a parent is a file, a read-only mount): the caller's mistake, not a broken sandbox.
        """
        ...

    def upload_dir(self, local_dir: Path | str, remote_dir: str) -> None:
        """Copy a local directory tree into the sandbox."""
        ...

    def is_alive(self) -> bool: ...

    def close(self) -> None:
        """Stop and remove. Idempotent; never raises."""
        ...


# --- model ---------------------------------------------------------------------------------
@dataclass
class ModelResponse:
    """One completion."""

    text: str
    finish_reason: str = "stop"
    """``stop`` or ``length`` (hit the output limit)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    prompt_ids: list[int] | None = None
    """Token ids of the rendered prompt exactly as the model saw them (None when the provider gives none)."""
    completion_ids: list[int] | None = None
    """Token ids the model sampled, before any text-level cut (None when the provider gives none).
    Trainers train on these ids; they never re-tokenize ``text``."""
    logprobs: list[float] | None = None
    """Per-token log-probability of ``completion_ids`` under the sampling policy (same length)."""


@runtime_checkable
class ModelClient(Protocol):
    """Anything that turns a chat into a reply. Provider failures raise ``ModelProviderError``."""

    name: str

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse: ...


# --- grading -------------------------------------------------------------------------------
@dataclass
class TestOutcome:
    name: str
    weight: float
    passed: bool
    reported: bool = True
    """False when pytest never reported this declared test (counts as failed)."""
    message: str = ""


@dataclass
class GradeResult:
    """Weighted test score of one episode. ``error`` set means *not scored*."""

    score: float | None
    tests: list[TestOutcome] = field(default_factory=list)
    duration_s: float = 0.0
    error: str | None = None
    tamper_signals: list[str] = field(default_factory=list)

    @property
    def scored(self) -> bool:
        return self.error is None and self.score is not None
