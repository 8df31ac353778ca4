"""``<bash>``: run a command in the sandbox's persistent shell (cwd and variables carry over)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terminal_agent.actions.base import BackgroundJob, Tool, ToolContext, ToolOutput, cap_text


class BashArgs(BaseModel):
    """Fields of a ``<bash>`` action."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    cmd: str = Field(min_length=1)
    """The command line, passed to the shell as is."""
    block: bool = True
    """False starts the command in the background and returns at once."""
    timeout_secs: float | None = Field(None, gt=0)
    """Deadline in seconds (default and maximum come from ActionConfig); then its processes are killed."""
    end_after_cmd_success: bool = False
    """End the episode when the command exits 0."""

    @field_validator("cmd")
    @classmethod
    def _strip(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("cmd is empty")
        return value.strip()


class BashTool(Tool):
    name = "bash"
    description = (
        "run a shell command (the current directory and exported variables persist between "
        "commands). Fields: cmd; block (false runs it in the background); timeout_secs (at most "
        "${max_timeout_secs}); end_after_cmd_success (true ends the task if the command exits 0)."
    )
    prompt_order = 10
    Args = BashArgs
    primary_field = "cmd"
    examples = {"": "cmd: ls -la"}

    def run(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        config = ctx.config
        notes: list[str] = []
        timeout = args.timeout_secs or config.default_timeout_secs
        if timeout > config.max_timeout_secs:
            notes.append(f"[timeout_secs lowered to the maximum, {config.max_timeout_secs:g}]")
            timeout = config.max_timeout_secs
        if not args.block:
            result = ctx.sandbox.exec(args.cmd, timeout=timeout, block=False)
            ctx.background_jobs.append(BackgroundJob(cmd=args.cmd, started_turn=ctx.turn_index))
            # the sandbox applies no deadline to a background command: it runs until it exits or the
            # episode ends (its processes are killed before grading), and its output is discarded
            text = f"[started in the background (job {len(ctx.background_jobs)}); its output is discarded]"
            started = result.output.strip()
            if started:
                text = f"{cap_text(started, config.max_output_chars)}\n{text}"
            return ToolOutput("\n".join(notes + [text]), ok=result.exit_code == 0)
        result = ctx.sandbox.exec(args.cmd, timeout=timeout)
        parts = notes
        output = result.output
        if result.stderr:
            output = f"{output}\n[stderr]\n{result.stderr}" if output else f"[stderr]\n{result.stderr}"
        if output.strip():
            parts.append(cap_text(output.rstrip("\n"), config.max_output_chars))
        if result.truncated:
            parts.append(f"[output truncated by the sandbox: {result.bytes_cut} bytes cut]")
        if result.timed_out:
            parts.append(f"[timed out after {timeout:g} s; the command's processes were killed]")
        parts.append(f"[exit code: {result.exit_code}]")
        finished = args.end_after_cmd_success and result.ok
        return ToolOutput(
            "\n".join(parts),
            ok=result.ok,
            finished=finished,
            finish_message=f"command succeeded: {args.cmd}" if finished else None,
            exit_code=result.exit_code,
        )
