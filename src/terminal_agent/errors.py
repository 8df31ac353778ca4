"""One error taxonomy for the whole project.

Every failure that can happen during a rollout falls in exactly one family, and the
family decides what happens to the sample:

* :class:`AgentFormatError` - the *model's* fault (bad action syntax). The episode goes on,
  the payload is the teaching message shown to the model.
* :class:`InfrastructureError` and its children (sandbox, image, provider, grading, judge) -
  *not* the model's fault. The sample is flagged in ``info`` and masked or retried; it is
  never scored as reward 0.
* :class:`TaskFormatError` / :class:`ConfigError` - the *user's* input is wrong; the message
  names the row, field or key.
"""

from __future__ import annotations


class TerminalAgentError(Exception):
    """Base class of every error raised on purpose by terminal-agent."""


# --- user input -----------------------------------------------------------------------------
class ConfigError(TerminalAgentError, ValueError):
    """A configuration or preset is invalid; the message names the exact key."""


class TrainingSetupError(TerminalAgentError):
    """This machine cannot validate or run the requested training (a package, a schema, GPUs, Ray missing).

    The message says what to install or change; nothing was launched.
    """


class MachineNotReadyError(TrainingSetupError):
    """A real GPU launch would be refused here: no driver or GPU, a CPU torch, the GPU packages missing or at the
    wrong version, no sandbox backend (:mod:`terminal_agent.training.gpu_readiness`).

    One line per refusal, each with the command that fixes it. The CLI exits 2 for it, as for bad input: like a
    wrong Python given to ``bash scripts/setup.sh --gpu``, it is refused before anything heavy starts, and
    retrying changes nothing until the named fix is made.
    """


class ViewerSetupError(TerminalAgentError):
    """The Harbor viewer cannot start here (no Harbor venv and none can be made, ``harbor view`` exits or never
    answers); the message says which command makes it work."""


class TaskFormatError(TerminalAgentError, ValueError):
    """A task (CSV row, task directory, parquet row) is malformed.

    ``location`` names where (``latest_verified.csv:14``, a directory), ``field`` what.
    """

    def __init__(self, message: str, *, location: str | None = None, field: str | None = None):
        self.location = location
        self.field = field
        prefix = ""
        if location:
            prefix += f"{location}: "
        if field:
            prefix += f"[{field}] "
        super().__init__(prefix + message)
        self.reason = message


# --- the model's fault ------------------------------------------------------------------------
class AgentFormatError(TerminalAgentError):
    """The model's reply could not be turned into actions.

    ``messages`` is what must be shown to the model (a teaching message with a correct example).
    """

    def __init__(self, *messages: str):
        self.messages = list(messages)
        super().__init__("\n".join(messages))


class ToolError(TerminalAgentError):
    """An action was well formed but could not be carried out (file missing, edit not unique).

    Shown to the model as the tool's output; it is a result of the agent's own choice.
    """


# --- infrastructure: never the model's fault ---------------------------------------------------
class InfrastructureError(TerminalAgentError):
    """Something outside the model failed. Samples hit by it are flagged, not scored 0."""

    kind: str = "infrastructure"


class SandboxError(InfrastructureError):
    """The sandbox is broken or unreachable (dead container, lost socket, daemon error)."""

    kind = "sandbox"


class SandboxUnavailableError(SandboxError):
    """No sandbox could be started (daemon down, image missing, resource exhaustion)."""


class StorageQuotaRefusedError(SandboxUnavailableError):
    """The host's policy (``sandbox.storage = "refuse"``) refuses a task whose disk quota (``limits.storage_mb``)
    this backend cannot enforce with a kernel quota; nothing was started. The message names the task and why.
    Not the model's fault: the episode is not scored, and the other tasks go on."""


class DockerNotAvailableError(SandboxUnavailableError):
    """No Docker daemon answers; the message says how to start one."""


class ImageError(InfrastructureError):
    """An image could be neither pulled, aliased nor built."""

    kind = "image"


class ImageBuildError(ImageError):
    """``docker build`` failed; ``log_tail`` holds the end of the build log."""

    def __init__(self, message: str, log_tail: str = ""):
        self.log_tail = log_tail
        super().__init__(message + (f"\n--- build log (tail) ---\n{log_tail}" if log_tail else ""))


class ImageNotAvailableError(ImageError):
    """A base image is not present, cannot be pulled and has no local alias."""


class ImageExportError(ImageNotAvailableError):
    """An image export on disk (``terminal-agent images export``) is truncated, stale or malformed.

    ``path`` names the file at fault (the manifest or an archive), ``field`` the manifest entry when one is
    (``tasks['t1'].source_hash``). The export is the user's input: the CLI exits 2; inside a run the episodes
    that need it are flagged image failures. The fix is always to export again.
    """

    def __init__(self, message: str, *, path: str, field: str | None = None):
        self.path = str(path)
        self.field = field
        self.reason = message
        super().__init__(f"{path}: " + (f"[{field}] " if field else "") + message)


class ModelProviderError(InfrastructureError):
    """The model endpoint failed (network, rate limit, server error) after retries."""

    kind = "provider"


class GradingError(InfrastructureError):
    """The grader crashed or timed out; the sample is not scored."""

    kind = "grading"


class JudgeError(InfrastructureError):
    """The LLM judge failed or replied with something unparsable; the judge part is not scored."""

    kind = "judge"


class JudgeUnavailableError(JudgeError):
    """The judge backend cannot run here at all (CLI not installed, no model named); retrying cannot help."""


def error_kind(exc: BaseException) -> str:
    """A short family name for ``exc`` used in results files (``sandbox``, ``grading`` ...)."""
    if isinstance(exc, InfrastructureError):
        return exc.kind
    if isinstance(exc, AgentFormatError):
        return "format"
    if isinstance(exc, TaskFormatError):
        return "task"
    if isinstance(exc, ConfigError):
        return "config"
    return "internal"


#: The built-in exceptions a parser (json, yaml, tomllib, pyarrow, pydantic) can raise on odd content of an
#: untrusted file past our own checks: a value of an unexpected type, nesting deep enough to recurse, a file that
#: vanished. Readers of user files catch exactly these at their boundary (one row or one task folder) and turn
#: them into a :class:`TaskFormatError` or :class:`ConfigError` naming the file.
UNTRUSTED_CONTENT_ERRORS: tuple[type[Exception], ...] = (
    OSError, RecursionError, TypeError, KeyError, AttributeError, ValueError,
)

#: The families of the *user's* fault: the CLI exits 2 (a usage error) with one line naming the file and field.
USER_INPUT_ERRORS: tuple[type[TerminalAgentError], ...] = (TaskFormatError, ConfigError, ImageExportError)


def exit_code_for(exc: BaseException) -> int:
    """The CLI's exit status for ``exc``: 2 for bad user input (:data:`USER_INPUT_ERRORS`) and for a machine a GPU
    launch refuses (:class:`MachineNotReadyError`), 1 for anything else."""
    return 2 if isinstance(exc, (*USER_INPUT_ERRORS, MachineNotReadyError)) else 1
