"""The ``bwrap`` entry of the backend registry: its start, its leak sweep and its close.

Leaks: state dirs under ``sandbox.bwrap.state_dir`` whose owner record says the owner is gone or the
TTL passed (``state.find_leaked``); removing one kills what is left of it and removes its cgroups.
"""

from __future__ import annotations

from terminal_agent.interfaces import Sandbox
from terminal_agent.sandbox.backends import LeakedObject
from terminal_agent.sandbox.bwrap import state
from terminal_agent.sandbox.bwrap.settings import bwrap_settings
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.tasks.model import Task, TaskLimits

NAME = "bwrap"


class BwrapBackend:
    """bubblewrap sandboxes on an overlay of exported image layers; no daemon needed."""

    def resolve_task_image(self, config: SandboxConfig, task: Task) -> str:
        from terminal_agent.sandbox.images.export import ExportedImages

        return ExportedImages.open(bwrap_settings(config).images_dir).image_for_task(task)

    def start(
        self, config: SandboxConfig, image_ref: str, limits: TaskLimits, run_id: str | None, env: dict[str, str],
        *, verifier_network: bool | None = None,
    ) -> Sandbox:
        from terminal_agent.sandbox.bwrap.sandbox import BwrapSandbox

        return BwrapSandbox.start(image_ref, limits=limits, config=config, run_id=run_id, env=env,
                                  verifier_network=verifier_network)

    def list_leaked(self, config: SandboxConfig, now: float | None = None) -> list[LeakedObject]:
        return [
            LeakedObject("bwrap", item.id, str(item.directory), item.run_id, item.reason, backend=NAME)
            for item in state.find_leaked(state.state_root(bwrap_settings(config).state_dir), now)
        ]

    def sweep_leaked(
        self, config: SandboxConfig, leaked: list[LeakedObject] | None = None, now: float | None = None
    ) -> list[LeakedObject]:
        found = self.list_leaked(config, now) if leaked is None else leaked
        return [obj for obj in found if state.remove_sandbox_state(state.sandboxes_dir(
            state.state_root(bwrap_settings(config).state_dir)) / obj.id)]

    def capacity(self, config: SandboxConfig) -> None:
        return None  # this machine's own sandboxes: nothing to count

    def close(self) -> None:
        from terminal_agent.sandbox.bwrap.sandbox import close_live_sandboxes

        close_live_sandboxes()


BACKEND = BwrapBackend()
"""The object the registry's ``bwrap`` line names."""
