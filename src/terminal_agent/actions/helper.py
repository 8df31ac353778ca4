"""Run the in-sandbox helper script (search, metadata) without building a shell string from model text.

The script (``actions/assets/tool_helper.py``) is uploaded once per episode with ``write_file``;
each request is a JSON file written with ``write_file``; the command line is a constant; the
response is one JSON object on the helper's stdout (results are capped, so it stays far below
the sandbox's capture cap).
"""

from __future__ import annotations

import json
import logging
import posixpath
from importlib import resources
from typing import Any

from terminal_agent.actions.base import ToolContext
from terminal_agent.errors import ToolError

logger = logging.getLogger(__name__)

HELPER_NAME = "tool_helper.py"
NO_PYTHON = (
    "this tool needs python3 inside the container and none was found; use <bash> "
    "(grep -rn, find, ls) instead."
)


def helper_source() -> bytes:
    return resources.files("terminal_agent.actions").joinpath("assets", HELPER_NAME).read_bytes()


def run_helper(ctx: ToolContext, request: dict[str, Any]) -> dict[str, Any]:
    """Send ``request`` to the helper and return its JSON response (``ok`` true or ``error`` set)."""
    directory = ctx.config.helper_dir
    script = posixpath.join(directory, HELPER_NAME)
    request_path = posixpath.join(directory, "request.json")
    command = f"python3 {script} {request_path}"  # constant: no model text in it
    payload = dict(request, max_results=ctx.config.search_max_results)
    payload.setdefault("time_budget", max(1.0, ctx.config.helper_timeout_secs - 5))
    for attempt in range(2):
        if not ctx.helper_uploaded:
            ctx.sandbox.write_file(script, helper_source(), 0o755)
            ctx.helper_uploaded = True
        ctx.sandbox.write_file(request_path, json.dumps(payload).encode("utf-8"), 0o600)
        result = ctx.sandbox.exec(command, timeout=ctx.config.helper_timeout_secs, stateless=True, merge_stderr=False)
        if result.exit_code == 127:
            raise ToolError(NO_PYTHON)
        if result.exit_code == 2 and "can't open file" in result.stderr and attempt == 0:
            ctx.helper_uploaded = False  # removed by the agent: upload again once
            continue
        if result.timed_out:
            raise ToolError(f"the search took longer than {ctx.config.helper_timeout_secs:g} s; narrow the path or pattern.")
        if result.exit_code != 0 or result.truncated:
            logger.debug("helper failed: exit %s: %s", result.exit_code, result.stderr[-500:])
            detail = "its output was too large" if result.truncated else result.stderr.strip()[-300:]
            raise ToolError(f"the helper failed (exit {result.exit_code}): {detail}")
        try:
            reply: dict[str, Any] = json.loads(result.output)
            return reply
        except ValueError:
            raise ToolError(f"the helper printed no result: {result.output.strip()[-300:]}") from None
    raise ToolError("the helper script could not be run")
