"""The grader's side of the Sandbox contract for a Docker container: changes, image lookups, privileged exec.

``list_changes`` reads the overlay2 upper dir when this host can (root beside the daemon), else
``docker diff``; ``image_has`` looks in the lower layers, or, without them, asks the container and
the diff; ``run_privileged`` is a ``docker exec`` as root with a host-side deadline.
"""

from __future__ import annotations

import logging
import posixpath
import threading
import time
from typing import Any

import docker
import docker.errors

from terminal_agent.errors import SandboxError
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.interfaces import ExecResult, FilesystemChanges, PathChange, WatchedPaths
from terminal_agent.sandbox.overlay_changes import in_layers, walk_upper_dir

logger = logging.getLogger(__name__)

_DIFF_KINDS = {0: "C", 1: "A", 2: "D"}


def _layers(info: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(upper dir, lower dirs top first) of an overlay2 container, or (None, []) when unreadable here."""
    import os

    graph = info.get("GraphDriver") or {}
    data = graph.get("Data") or {}
    upper = data.get("UpperDir")
    if graph.get("Name") != "overlay2" or not upper or not os.path.isdir(upper):
        return None, []
    return upper, [d for d in (data.get("LowerDir") or "").split(":") if d]


def list_container_changes(
    api: docker.APIClient, container_id: str, watched: WatchedPaths, prefer_host_read: bool
) -> FilesystemChanges:
    try:
        info = api.inspect_container(container_id)
        upper, lowers = _layers(info)
        if prefer_host_read and upper:
            return FilesystemChanges(walk_upper_dir(upper, lowers, watched), "upperdir")
        entries = api.diff(container_id) or []
    except DAEMON_ERRORS as exc:
        raise SandboxError(f"cannot list the changes of {container_id[:12]}: {exc}") from exc
    parents = {posixpath.dirname(e["Path"]) for e in entries}
    changes = [PathChange(e["Path"], _DIFF_KINDS.get(e["Kind"], "C"), e["Path"] in parents) for e in entries]
    return FilesystemChanges(changes, "diff")


def container_image_has(api: docker.APIClient, container_id: str, paths: list[str]) -> dict[str, bool]:
    """Lower layers when readable; else: changed or deleted by the agent, or present now and not added."""
    try:
        upper, lowers = _layers(api.inspect_container(container_id))
        if upper:
            return {path: in_layers(lowers, path) for path in paths}
        kinds = {e["Path"]: _DIFF_KINDS.get(e["Kind"], "C") for e in api.diff(container_id) or []}
    except DAEMON_ERRORS as exc:
        raise SandboxError(f"cannot inspect {container_id[:12]}: {exc}") from exc
    found: dict[str, bool] = {}
    for path in paths:
        kind = kinds.get(path)
        if kind in ("C", "D"):
            found[path] = True
        elif kind == "A":
            found[path] = False
        else:
            found[path] = _present_now(api, container_id, path)
    return found


def _present_now(api: docker.APIClient, container_id: str, path: str) -> bool:
    try:
        stream, _ = api.get_archive(container_id, path)
    except docker.errors.NotFound:
        return False
    except DAEMON_ERRORS as exc:
        raise SandboxError(f"cannot stat {path} in {container_id[:12]}: {exc}") from exc
    if hasattr(stream, "close"):
        stream.close()
    return True


def run_privileged_exec(api: docker.APIClient, container_id: str, argv: list[str], timeout: float) -> ExecResult:
    """``docker exec`` of ``argv`` as root; past ``timeout`` everything in the container is killed."""
    started = time.monotonic()
    box: dict[str, Any] = {}
    try:
        exec_id = api.exec_create(container_id, argv, user="0", workdir="/", environment={"LC_ALL": "C.UTF-8"})["Id"]
    except DAEMON_ERRORS as exc:
        raise SandboxError(f"cannot exec in {container_id[:12]}: {exc}") from exc

    def target() -> None:
        try:
            box["output"] = api.exec_start(exec_id)
        except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread below
            box["error"] = exc

    thread = threading.Thread(target=target, name="ta-privileged-exec", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        _kill_everything(api, container_id)
        return ExecResult(exit_code=124, output="", duration_s=time.monotonic() - started, timed_out=True)
    if "error" in box:
        raise SandboxError(f"exec in {container_id[:12]} failed: {box['error']}") from box["error"]
    try:
        exit_code = api.exec_inspect(exec_id).get("ExitCode")
    except DAEMON_ERRORS as exc:
        raise SandboxError(f"cannot inspect an exec in {container_id[:12]}: {exc}") from exc
    output = (box.get("output") or b"").decode("utf-8", errors="replace")
    return ExecResult(exit_code=int(exit_code if exit_code is not None else -1), output=output,
                      duration_s=time.monotonic() - started)


def _kill_everything(api: docker.APIClient, container_id: str) -> None:
    try:
        exec_id = api.exec_create(container_id, ["kill", "-9", "-1"], user="0")["Id"]
        api.exec_start(exec_id)
    except DAEMON_ERRORS:  # best effort: a lost daemon or container has nothing left to kill
        logger.debug("kill after a privileged exec's deadline failed", exc_info=True)


def put_container_archive(api: docker.APIClient, container_id: str, dest_dir: str, tar: bytes) -> None:
    try:
        api.put_archive(container_id, dest_dir, tar)
    except docker.errors.NotFound:
        raise FileNotFoundError(2, "No such file or directory", dest_dir) from None
    except docker.errors.APIError as exc:
        raise OSError(5, f"cannot write: {exc.explanation or exc}", dest_dir) from None
    except DAEMON_ERRORS as exc:
        raise SandboxError(f"put_archive into {container_id[:12]} failed: {exc}") from exc
