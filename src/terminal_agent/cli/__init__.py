"""The ``terminal-agent`` command line: one app, one module per command group.

The library stays quiet; this is the only place that prints, draws progress bars and turns
:class:`~terminal_agent.errors.TerminalAgentError` into a one-line message and an exit code: 2 for bad user
input (:data:`~terminal_agent.errors.USER_INPUT_ERRORS`), 1 otherwise.
"""

from __future__ import annotations

import logging
import os
import sys

import typer

from terminal_agent.cli import (
    cleanup_commands,
    eval_commands,
    image_commands,
    judge_commands,
    sandbox_commands,
    task_audit_command,  # noqa: F401 - registers `tasks audit`
    task_commands,
    task_generate_commands,  # noqa: F401 - registers `tasks generate`
    task_quality_commands,  # noqa: F401 - registers `tasks validate` and `tasks screen`
    train_commands,
    verifier_tool_commands,  # noqa: F401 - registers `tasks prefetch-tools`
    view_commands,
)
from terminal_agent.errors import TerminalAgentError, exit_code_for

app = typer.Typer(
    name="terminal-agent",
    help="Train and evaluate LLM agents on terminal tasks in Docker sandboxes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(task_commands.app, name="tasks", help="Convert, validate and screen tasks.")
app.add_typer(image_commands.app, name="images", help="Build the offline base image and task images.")
app.add_typer(sandbox_commands.app, name="sandbox", help="Open a shell in a task's sandbox.")
app.add_typer(eval_commands.app, name="eval", help="Run the agent on tasks and report pass rates.")
app.add_typer(judge_commands.app, name="judge", help="Switch the judge of a running job; benchmark judges.")
app.add_typer(train_commands.app, name="train", help="Export a local training checkpoint as a plain model directory.")
app.command("cleanup", help="Remove our leaked containers, networks and volumes.")(cleanup_commands.cleanup)
app.command("view", help="Browse eval runs and training rollouts in Harbor's viewer.")(view_commands.view)
eval_commands.app.command("harbor-export")(view_commands.harbor_export)


@app.callback()
def _configure(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log library debug messages."),
    ca_bundle: str = typer.Option(
        None, "--ca-bundle", envvar="TERMINAL_AGENT_CA_BUNDLE", metavar="auto|none|PATH",
        help="Behind a TLS-intercepting proxy: install extra CA certificates (auto: those this host trusts beyond its "
        "distribution's; or a PEM file or directory) and the host's proxy variables as a first layer under every "
        "task image, so builds, sandboxes and episode commands trust them (docs/images.md). Default: none.",
    ),
) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if ca_bundle is not None:
        from terminal_agent.sandbox.images.host_trust import CA_SETTING_ENV, resolve_host_trust

        trust = resolve_host_trust(ca_bundle)  # a bad path is a ConfigError: exit 2 before any work
        os.environ[CA_SETTING_ENV] = ca_bundle  # read by every image manager of this process and its workers
        if trust is not None:
            logging.getLogger(__name__).info("--ca-bundle %s: %s", ca_bundle, trust.describe())


def main() -> None:
    """The console entry point: bad user input (a task source, a preset, a replies or control file) exits 2,
    any other error of ours 1, each as one message without a traceback."""
    try:
        app()
    except TerminalAgentError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(exit_code_for(exc))
