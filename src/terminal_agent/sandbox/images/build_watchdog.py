"""The wall-clock deadline of a classic Engine API build: a watchdog that shuts the build's socket.

docker-py's ``timeout`` bounds each socket read, not the build. :class:`BuildWatchdog` holds the
deadline: a response hook (:func:`install_response_capture`) hands it the streaming response of the
build request its thread sent (:func:`expect_build_response`), and at the deadline it shuts that
socket, so the daemon cancels the build and the stream ends.
"""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

import docker

logger = logging.getLogger(__name__)


def build_timeout_message(what: str, deadline_s: float) -> str:
    return (
        f"building the image of {what} timed out after {deadline_s:.0f} s (limits.build_timeout_s; the build was "
        "cancelled): raise the task's build timeout, or make its environment quicker to build"
    )


class BuildWatchdog:
    """Shuts the socket of the build request it is handed at the deadline (``fired`` tells it did)."""

    def __init__(self, deadline_s: float) -> None:
        self.fired = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(deadline_s, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def attach(self, response: Any) -> None:
        """Remember the socket of the streaming build ``response`` (shut at once when the deadline passed)."""
        raw = getattr(getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None), "raw", None)
        sock = getattr(raw, "_sock", raw)
        if not isinstance(sock, socket.socket):
            logger.debug("build watchdog: no socket in the response (%r); the deadline falls back to socket reads", raw)
            return
        with self._lock:
            self._socket = sock
            late = self.fired
        if late:
            self._shut()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
        self._shut()

    def _shut(self) -> None:
        with self._lock:
            sock = self._socket
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # closed already: the build ended meanwhile
                pass

    def cancel(self) -> None:
        self._timer.cancel()


class _ResponseCapture(threading.local):
    watchdog: BuildWatchdog | None = None


_CAPTURE = _ResponseCapture()
"""The watchdog waiting for the response of this thread's build request (None when none is)."""


def install_response_capture(api: docker.APIClient) -> None:
    """Hook ``api``'s responses once: the one a thread's pending build request gets goes to its watchdog."""
    hooks = api.hooks.setdefault("response", [])
    if _capture_response not in hooks:
        hooks.append(_capture_response)


def expect_build_response(watchdog: BuildWatchdog | None) -> None:
    """Hand this thread's next build response to ``watchdog`` (``None``: the request was answered or is over)."""
    _CAPTURE.watchdog = watchdog


def _capture_response(response: Any, *args: Any, **kwargs: Any) -> Any:
    watchdog = _CAPTURE.watchdog
    if watchdog is not None and "/build" in str(getattr(response, "url", "")):
        _CAPTURE.watchdog = None
        watchdog.attach(response)
    return response


__all__ = ["BuildWatchdog", "build_timeout_message", "expect_build_response", "install_response_capture"]
