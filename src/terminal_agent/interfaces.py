"""The parts of terminal-agent, in one short place.

    Task ──► image ──► Sandbox ◄── tools ◄── Action ◄── Agent ◄── ModelClient
                          ▲                            ▲
                          └──────── EpisodeEnv ◄── the episode engine (rollout.engine)
                          │
                          └──► Grader ──► Grade ──► reward (+ Judge)
                               (by task.verifier.mode: weighted pytest, or Harbor's tests/test.sh -> reward file)

The agent side holds a :class:`Sandbox`; a grader holds a :class:`GradingSandbox` (the same object, seen
through the wider contract that only grading uses). The records an episode ends with (the grade with one verdict
per test, the episode's outcome) are in :mod:`terminal_agent.outcome`.

Implementations live in their packages (``sandbox.docker``, ``sandbox.bwrap``, ``sandbox.ray``, ``models.*``,
``rewards.weighted_pytest``, ``rewards.harbor``; task formats in ``tasks.csv``, ``tasks.parquet``,
``tasks.terminal_bench``, ``tasks.harbor``, registered in ``tasks.formats``); everything else codes against these
types.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # the records an episode ends with (outcome.py imports nothing of ours)
    from terminal_agent.outcome import EpisodeOutcome, Termination, TurnTokens


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


@dataclass(frozen=True)
class PathChange:
    """One path the agent added, changed or deleted in a sandbox's filesystem, relative to its image."""

    path: str
    kind: str
    """``A`` added, ``C`` changed, ``D`` deleted."""
    is_dir: bool = False


@dataclass(frozen=True)
class WatchedPaths:
    """The parts of the filesystem a caller of :meth:`Sandbox.list_changes` cares about.

    A backend that walks its layers itself descends only where :meth:`descends` says so (an agent
    that wrote 100k files into ``/app`` then costs nothing); one that lists everything anyway
    (``docker diff``) may return more.
    """

    trees: tuple[str, ...]
    """Glob patterns of directories walked recursively (``/usr/lib/python3.*``)."""
    files_in: tuple[str, ...] = ()
    """Directories whose direct entries are listed, not their subtrees (``/etc``)."""
    skip_dir_names: tuple[str, ...] = ()
    """Directory names never descended into below a tree (``site-packages``)."""

    def descends(self, path: str) -> bool:
        """Whether the directory ``path`` is, leads to, or lies inside a watched place."""
        import fnmatch

        parts = path.strip("/").split("/") if path.strip("/") else []
        for pattern in self.trees + self.files_in:
            pattern_parts = pattern.strip("/").split("/")
            shared = min(len(parts), len(pattern_parts))
            if not all(fnmatch.fnmatch(parts[i], pattern_parts[i]) for i in range(shared)):
                continue
            if len(parts) <= len(pattern_parts):
                return True  # an ancestor of a watched place, or the place itself
            if pattern in self.trees and not any(p in self.skip_dir_names for p in parts[len(pattern_parts):]):
                return True
        return False


@dataclass(frozen=True)
class FilesystemChanges:
    """What :meth:`Sandbox.list_changes` found, and where it read it from."""

    changes: list[PathChange]
    source: str
    """How the backend listed them (``upperdir``: its overlay upper dir read directly; ``diff``: an API)."""


@runtime_checkable
class Sandbox(Protocol):
    """A running, isolated machine for one rollout: what the agent's tools, the env and the pool may use.

    Seven members: ``id``, ``exec``, ``read_file``, ``write_file``, ``upload_dir``, ``is_alive``, ``close``.
    A backend whose sandboxes have only these runs episodes; grading them needs :class:`GradingSandbox`
    (an episode in a sandbox without it ends not scored, error kind ``sandbox``).

    Every method raises :class:`terminal_agent.errors.SandboxError` when the sandbox itself is
    broken (dead container, lost shell); a command that fails returns an :class:`ExecResult`.
    Backends are registered in ``sandbox.registry``.
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



@runtime_checkable
class GradingSandbox(Sandbox, Protocol):
    """A :class:`Sandbox` as a grader uses it (``rewards``): the agent's seven members and nine of the grader's.

    ``image_workdir``, ``service_pids``, ``kill_agent_processes``, ``list_changes``, ``image_has``,
    ``put_archive``, ``run_privileged``, ``network_enabled``, ``set_network``: none of them goes through the
    agent's shell, so an agent cannot fake what the grader sees. The Docker, bwrap and Ray backends serve them.
    """

    @property
    def image_workdir(self) -> str:
        """The image's working directory (where the persistent shell started)."""
        ...

    @property
    def service_pids(self) -> tuple[int, ...]:
        """Pids inside the sandbox that belong to the backend, never to the agent (its shell server);
        a process sweep must spare them. Empty when the backend has none in the sandbox."""
        ...

    def kill_agent_processes(self) -> int:
        """SIGKILL every process the agent started (background ones included); how many there were.

        Raises ``SandboxError`` when broken."""
        ...

    def list_changes(self, watched: WatchedPaths, *, prefer_host_read: bool = True) -> FilesystemChanges:
        """Paths added, changed or deleted since the sandbox started from its image: at least every
        change inside ``watched``. ``prefer_host_read=False`` asks for the backend's API listing
        even where it could read its layers directly (Docker: ``docker diff``).

        Raises ``SandboxError`` when broken or when the backend cannot list changes."""
        ...

    def image_has(self, paths: list[str]) -> dict[str, bool]:
        """For each absolute path, whether the image the sandbox started from has it (the agent's
        changes not counted; a symlink counts as present). Raises ``SandboxError`` when broken."""
        ...

    def put_archive(self, dest_dir: str, tar: bytes) -> None:
        """Unpack an uncompressed tar stream into ``dest_dir`` (which must exist) as root, never
        through the agent's shell; modes and owners as in the archive.

        Raises ``OSError`` when ``dest_dir`` cannot be written, ``SandboxError`` when broken."""
        ...

    def run_privileged(self, argv: list[str], timeout: float) -> ExecResult:
        """Run ``argv`` directly (no shell), as root, with cwd ``/`` and ``LC_ALL=C.UTF-8`` only,
        outside the agent's persistent shell; output and stderr merged.

        At the deadline every process in the sandbox is killed (the sandbox may then be unusable)
        and the result has ``timed_out=True``. Raises ``SandboxError`` when broken."""
        ...

    @property
    def network_enabled(self) -> bool:
        """Whether the sandbox has a network now: ``limits.network`` at start, then what
        :meth:`set_network` last set."""
        ...

    def set_network(self, enabled: bool) -> None:
        """Give the running sandbox a network (``True``) or take it away (``False``): the grader calls
        it between the agent phase and the verifier phase, whose policies may differ
        (``task.verifier.verifier_network``). Asking for the current state is a no-op on every backend.

        Raises ``SandboxError`` when broken, when the change failed (a sandbox whose network could
        not be taken away is broken from then on), or when this sandbox cannot get the asked network:
        bwrap fixes its network namespace when it starts; Docker can connect a sandbox started without
        network only when ``start_sandbox(..., verifier_network=True)`` said a later phase needs one."""
        ...


@runtime_checkable
class FreezableSandbox(GradingSandbox, Protocol):
    """A :class:`GradingSandbox` that can also stop the agent's processes instead of killing them (Docker and
    bwrap; a grader falls back to killing them on a sandbox without it, e.g. Ray's)."""

    def freeze_agent_processes(self) -> dict[str, list[int]]:
        """SIGSTOP every process the agent started (its idle shell closed first), until none runs.

        ``{"stopped": pids stopped now, "already_stopped": pids the agent had stopped itself, "running": pids
        that could not be stopped}``. Raises ``SandboxError`` when broken."""
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
    """Token ids the model sampled, cut on a token boundary where ``text`` was cut (a closed action tag,
    a stop string), so that they decode to ``text``; a sampled EOS is kept. None when the provider gives
    none. Trainers train on these ids; they never re-tokenize ``text``."""
    logprobs: list[float] | None = None
    """Per-token log-probability of ``completion_ids`` under the sampling policy (same length)."""


@runtime_checkable
class ModelClient(Protocol):
    """Anything that turns a chat into a reply. Provider failures raise ``ModelProviderError``."""

    name: str

    def complete(self, messages: list[dict[str, str]], **sampling: Any) -> ModelResponse: ...


# --- an episode ----------------------------------------------------------------------------
class EpisodeAction(Protocol):
    """What the agent makes of a reply: the action the env executes."""

    @property
    def action(self) -> Any: ...


@runtime_checkable
class EpisodeAgent(Protocol):
    """The agent side of an episode, in rLLM's shape: it keeps the chat, turns replies into actions."""

    def reset(self) -> None: ...

    @property
    def chat_completions(self) -> list[dict[str, str]]:
        """The chat the model answers next."""
        ...

    @property
    def trajectory(self) -> Any:
        """rLLM's ``Trajectory`` of the episode so far."""
        ...

    def update_from_env(self, observation: Any, reward: float, done: bool, info: dict[str, Any], **kwargs: Any) -> None: ...

    def update_from_model(self, response: str, **kwargs: Any) -> EpisodeAction: ...

    def record_tokens(self, tokens: TurnTokens) -> None:
        """Keep one model call's exact token ids on the current step."""
        ...


@runtime_checkable
class EpisodeEnv(Protocol):
    """The env side of an episode: a sandbox per episode, graded at its end into one :class:`EpisodeOutcome`."""

    outcome: EpisodeOutcome | None
    """The episode's verdict, set when it ended (graded, unscored or never started)."""
    task: Any
    """The task the env plays (None until it is given one: rLLM builds envs before their task)."""

    def reset(self, task: Any = None, **kwargs: Any) -> tuple[Any, dict[str, Any]]: ...

    def step(self, action: Any) -> tuple[Any, float, bool, dict[str, Any]]: ...

    def compute_final_reward(self, termination: Termination | str = ...) -> float:
        """Grade an episode the engine cut (``termination`` says who cut it)."""
        ...

    def close(self) -> None: ...
