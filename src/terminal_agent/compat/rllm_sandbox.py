"""Our sandboxes behind rLLM HEAD's ``rllm.sandbox.protocol.Sandbox``, and the task hooks that hand them out.

rLLM's own backends are a closed list (``create_sandbox`` knows docker, local, modal, daytona) and its
Docker one ignores command timeouts and labels nothing. Its engine, though, takes any object with the
protocol's methods from a ``TaskHooks.setup``; so an rLLM user plugs ours in without patching rLLM:

    from terminal_agent.compat.rllm_sandbox import TerminalAgentTaskHooks
    AgentTrainer(agent_flow=flow, hooks=TerminalAgentTaskHooks(SandboxConfig(backend="docker")), ...)

* :class:`RLLMSandbox` wraps any started sandbox of ours (the ``terminal_agent.interfaces.Sandbox``
  contract: Docker, bwrap, Ray). ``exec`` returns stdout and raises :class:`RLLMCommandFailed` (a
  ``RuntimeError``, what rLLM's callers catch) on a non-zero exit and when the deadline passed; the
  deadline kills the command's process group. A broken sandbox raises our ``SandboxError`` instead,
  which rLLM does not mistake for a failed command (its engine retries the rollout).
* :class:`TerminalAgentTaskHooks` is an rLLM ``TaskHooks``: per task it reads the task directory with
  our loaders, builds or finds its image, starts one labelled sandbox (TTL, dead-man switch), resolves
  rLLM's own verifier for the task against it, and closes it in the teardown.

rLLM is imported only inside the hooks (the adapter itself needs none of it).
"""

from __future__ import annotations

import logging
import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from terminal_agent.errors import TerminalAgentError

if TYPE_CHECKING:
    from terminal_agent.interfaces import ExecResult, Sandbox
    from terminal_agent.sandbox.config import SandboxConfig

logger = logging.getLogger(__name__)

RLLM_DEFAULT_TIMEOUT_S = 600.0
"""Deadline of an ``exec`` without ``timeout`` (rLLM's local backend waits 300 s, its harness installs 600 s)."""


class RLLMCommandFailed(TerminalAgentError, RuntimeError):
    """A command run through :meth:`RLLMSandbox.exec` exited non-zero or passed its deadline.

    A ``RuntimeError`` because that is what rLLM's callers catch for a failed command (its Docker
    backend raises one); the sandbox itself is fine. Carries the whole result.
    """

    def __init__(self, command: str, result: "ExecResult", sandbox_id: str) -> None:
        self.command = command
        self.exit_code = result.exit_code
        self.stdout = result.output
        self.stderr = result.stderr
        self.timed_out = result.timed_out
        why = "timed out" if result.timed_out else f"exit {result.exit_code}"
        tail = (result.stderr or result.output)[-600:]
        super().__init__(f"Command failed ({why}) in sandbox {sandbox_id}: {command}\nstderr (tail):\n{tail}")


class RLLMSandbox:
    """One of our sandboxes, seen through rLLM HEAD's ``Sandbox`` protocol (plus ``download_file``)."""

    def __init__(self, sandbox: "Sandbox", *, default_timeout_s: float = RLLM_DEFAULT_TIMEOUT_S) -> None:
        self.sandbox = sandbox
        """The wrapped sandbox (our contract: ``read_file``, ``write_file``, grading hooks ...)."""
        self.default_timeout_s = default_timeout_s
        self.name = sandbox.id
        self._shell_user: tuple[str, str] | None = None

    @classmethod
    def start(
        cls, image_ref: str, config: "SandboxConfig | None" = None, limits: Any = None, run_id: str | None = None,
        *, env: dict[str, str] | None = None, default_timeout_s: float = RLLM_DEFAULT_TIMEOUT_S,
    ) -> "RLLMSandbox":
        """Start a sandbox of ``image_ref`` with the backend ``config.backend`` (see ``sandbox.backends``)."""
        from terminal_agent.sandbox import SandboxConfig
        from terminal_agent.sandbox.backends import start_sandbox

        sandbox = start_sandbox(config or SandboxConfig(), image_ref, limits, run_id, env=env)
        return cls(sandbox, default_timeout_s=default_timeout_s)

    # --- rllm.sandbox.protocol.Sandbox ------------------------------------------------------------
    def exec(self, command: str, timeout: float | None = None, user: str | None = None) -> str:
        """Run ``command`` in a fresh bash (as rLLM's backends do: no state carries over) and return stdout.

        ``timeout`` (default :attr:`default_timeout_s`) is the command's deadline, capped at the sandbox
        config's ``max_command_timeout_s``; at the deadline its process group is killed and
        :class:`RLLMCommandFailed` raised with ``timed_out``. ``user`` (a name or uid) other than the
        shell's own runs it through ``runuser``; where the backend cannot switch users (bwrap) that
        fails as a command (:class:`RLLMCommandFailed`), never silently as the shell's user. Raises
        ``SandboxError`` when the sandbox is broken.
        """
        if user is not None and str(user) not in self._own_user():
            command = f"runuser -u {shlex.quote(str(user))} -- bash -c {shlex.quote(command)}"
        result = self.sandbox.exec(
            command, self.default_timeout_s if timeout is None else timeout, merge_stderr=False, stateless=True,
        )
        if not result.ok:
            raise RLLMCommandFailed(command, result, self.name)
        return result.output

    def _own_user(self) -> tuple[str, str]:
        """The shell's user name and uid, asked once."""
        if self._shell_user is None:
            result = self.sandbox.exec("id -un; id -u", 10.0, merge_stderr=False, stateless=True)
            if not result.ok:
                raise RLLMCommandFailed("id -un; id -u", result, self.name)
            name, uid = (result.output.split() + ["", ""])[:2]
            self._shell_user = (name, uid)
        return self._shell_user

    def upload_file(self, local_path: str, remote_path: str) -> None:
        """Copy a local file to ``remote_path`` (parents created), keeping its permission bits."""
        data = Path(local_path).read_bytes()
        self.sandbox.write_file(remote_path, data, stat.S_IMODE(os.stat(local_path).st_mode))

    def upload_dir(self, local_path: str, remote_path: str) -> None:
        """Copy the contents of a local directory into ``remote_path`` (created when missing)."""
        if not Path(local_path).is_dir():
            raise NotADirectoryError(f"upload_dir: {local_path} is not a directory")
        self.sandbox.upload_dir(local_path, remote_path)

    def download_file(self, remote_path: str, local_path: str) -> None:
        """Copy ``remote_path`` out to ``local_path`` (parents created). ``FileNotFoundError`` when absent."""
        data = self.sandbox.read_file(remote_path)
        target = Path(local_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def close(self) -> None:
        """Stop and remove the sandbox. Idempotent; never raises."""
        self.sandbox.close()

    def is_alive(self) -> bool:
        """Whether the sandbox still answers; any error in the check means False (the protocol's rule)."""
        try:
            return bool(self.sandbox.is_alive())
        except Exception:  # noqa: BLE001 - the protocol says is_alive never raises: a failed check is "dead"
            logger.debug("sandbox %s: is_alive check failed", self.name, exc_info=True)
            return False

    def __repr__(self) -> str:
        return f"RLLMSandbox({self.name!r})"


@dataclass
class SandboxTaskContext:
    """What ``TerminalAgentTaskHooks.setup`` returns: the fields and ``run_teardown`` of rLLM's ``TaskContext``.

    rLLM's engine reads exactly these. Its own class lives in ``rllm.engine.agentflow_engine``, which
    cannot be imported without rLLM's separate model-gateway package; the hooks must not need that
    (nor an engine) to hand out sandboxes. The conformance suite checks the field names against rLLM's.
    """

    evaluator: Any
    """rLLM ``Evaluator`` of the task."""
    env: "RLLMSandbox | None" = None
    """The task's sandbox; None when nothing needs one."""
    env_backend: str | None = None
    """Our backend that started it (``docker``, ``bwrap``, ``ray``)."""
    teardown: Callable[[], None] | None = None
    """Closes the sandbox."""

    def run_teardown(self) -> None:
        """Run the teardown; as rLLM's, a failing teardown is logged, never raised."""
        if self.teardown is None:
            return
        try:
            self.teardown()
        except Exception:  # noqa: BLE001 - rLLM's contract: teardown errors are logged, the rollout's result stands
            logger.exception("sandbox teardown failed")


class TerminalAgentTaskHooks:
    """rLLM ``TaskHooks``: each task's sandbox comes from our backends; rLLM's verifier scores it.

    ``config`` picks the backend and its settings (default: Docker with rLLM-sized command deadlines
    and output caps); ``run_id`` labels the sandboxes (cleanup scope); ``evaluation`` is an rLLM
    evaluation policy (default ``FromTaskEvaluation``: the task's ``[verifier]`` / ``tests/test.sh``).
    """

    def __init__(self, config: "SandboxConfig | None" = None, run_id: str | None = None, evaluation: Any = None) -> None:
        from rllm.hooks import FromTaskEvaluation

        from terminal_agent.sandbox import SandboxConfig

        self.config = config or SandboxConfig(max_command_timeout_s=7200.0, output_cap_bytes=1 << 20)
        # Deliberately no ``sandbox_backend`` attribute: rLLM's trainer reads it to start its own WarmQueue,
        # which would create sandboxes of rLLM's backend of that name that these hooks never use.
        self.run_id = run_id
        self.evaluation = evaluation if evaluation is not None else FromTaskEvaluation()

    def setup(self, task: Any, agent_flow: Any, uid: str) -> SandboxTaskContext:
        """Start the task's sandbox when the flow, the verifier or the task needs one; resolve the evaluator."""
        from rllm.hooks import resolve_rollout_plan

        plan = resolve_rollout_plan(task, agent_flow, self.evaluation)
        sandbox: RLLMSandbox | None = None
        try:
            if plan.needs_env:
                sandbox = self._start_for(task, agent_flow)
                install = getattr(agent_flow, "install_script", None)
                script = install() if callable(install) else ""
                if script:
                    sandbox.exec(script, timeout=getattr(agent_flow, "install_timeout", 600), user="root")
            evaluator = self.evaluation.resolve(task, sandbox, plan.verifier_kind, plan.verifier_config)
        except BaseException:
            if sandbox is not None:  # no teardown is registered yet: close it here or it outlives the task
                sandbox.close()
            raise
        return SandboxTaskContext(
            evaluator=evaluator, env=sandbox, env_backend=self.config.backend,
            teardown=sandbox.close if sandbox is not None else None,
        )

    def _start_for(self, task: Any, agent_flow: Any) -> RLLMSandbox:
        """A task directory with an ``environment/``: our loader, image builder and limits; otherwise the
        flow's image for the task, with default limits."""
        from terminal_agent.sandbox.backends import resolve_task_image
        from terminal_agent.tasks.loading import load_tasks

        task_dir = Path(task.task_dir)
        if (task_dir / "environment").is_dir():
            [ours] = load_tasks(task_dir)
            image = resolve_task_image(self.config, ours)
            return RLLMSandbox.start(image, self.config, ours.limits, self.run_id, env=ours.env)
        image = (task.metadata.get("environment") or {}).get("docker_image") or agent_flow.get_image(task.metadata)
        return RLLMSandbox.start(image, self.config, None, self.run_id)


__all__ = ["RLLMCommandFailed", "RLLMSandbox", "SandboxTaskContext", "TerminalAgentTaskHooks"]
