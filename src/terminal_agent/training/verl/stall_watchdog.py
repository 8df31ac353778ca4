"""Stop a verl run that has stopped making progress, with the error that stopped it.

A failure inside a Ray worker does not always reach the driver: on the H200, a LoRA weight sync that raised
``StopIteration`` inside vLLM left verl's driver waiting for ever. :class:`StallWatchdog` watches the run's
metrics file (verl's ``file`` logger: one line per finished step) from a daemon thread. When no new step has
been logged for ``stall_timeout_s`` (counted from the launch for the first step: startup, vLLM's compile and
the first rollouts are inside it), it reads the newest error in Ray's worker logs, writes both into
``<run dir>/stalled.txt`` and calls ``on_stall(reason)``; the verl launch's ``on_stall`` logs the reason, shuts Ray
down and ends the process with :data:`EXIT_STALLED`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

EXIT_STALLED = 4
"""Exit status of a launch stopped by the watchdog."""
STALL_FILE = "stalled.txt"
"""Beside the run: why the watchdog stopped it."""
RAY_LOG_DIR = Path("/tmp/ray/session_latest/logs")
"""Where a local Ray cluster keeps its workers' logs (``ray.init``'s default temp dir)."""
_ERROR_LINE = re.compile(r"^(?:\([^)]*\)\s*)?[\w.]*(?:Error|Exception|StopIteration|SystemExit)\b")
"""An exception line of a traceback (after Ray's ``(Actor pid=N)`` prefix): ``RuntimeError: ...``, ``StopIteration``."""
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def logged_steps(metrics_path: Path) -> int:
    """How many step lines verl's file logger has written (torn lines of a running writer are not counted)."""
    try:
        text = metrics_path.read_text(errors="replace")
    except FileNotFoundError:
        return 0
    return sum(1 for line in text.splitlines() if line.startswith('{"step"') and line.rstrip().endswith("}"))


def newest_worker_error(log_dir: Path, *, since: float = 0.0) -> str | None:
    """The last exception line of the newest Ray worker log (``*.err``, then ``*.out``) changed after ``since``."""
    if not log_dir.is_dir():
        return None
    logs = [p for p in log_dir.glob("*.err") if p.stat().st_mtime >= since]
    logs += [p for p in log_dir.glob("*.out") if p.stat().st_mtime >= since]
    found: tuple[float, str] | None = None
    for path in logs:
        try:
            lines = path.read_text(errors="replace").splitlines()[-400:]
        except OSError:
            continue
        for line in reversed(lines):
            clean = _ANSI.sub("", line).strip()
            if _ERROR_LINE.match(clean) and "Warning" not in clean:
                mtime = path.stat().st_mtime
                if found is None or mtime > found[0]:
                    found = (mtime, f"{path.name}: {clean[:400]}")
                break
    return found[1] if found else None


class StallWatchdog:
    """Calls ``on_stall`` once when ``metrics_path`` gains no step line for ``stall_timeout_s`` seconds."""

    def __init__(
        self,
        metrics_path: Path,
        run_dir: Path,
        stall_timeout_s: float,
        on_stall: Callable[[str], None],
        *,
        ray_log_dir: Path = RAY_LOG_DIR,
        poll_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.metrics_path = Path(metrics_path)
        self.run_dir = Path(run_dir)
        self.stall_timeout_s = float(stall_timeout_s)
        self.on_stall = on_stall
        self.ray_log_dir = Path(ray_log_dir)
        self.poll_s = poll_s
        self.clock = clock
        self._started_wall = time.time()
        self._steps = logged_steps(self.metrics_path)
        self._last_progress = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.fired: str | None = None
        """The reason it stopped the run, once it has."""

    def check(self) -> str | None:
        """One look: the stall's reason when the run has stalled (and ``on_stall`` was called), else None."""
        if self.fired is not None:
            return self.fired
        steps = logged_steps(self.metrics_path)
        now = self.clock()
        if steps > self._steps:
            self._steps, self._last_progress = steps, now
            return None
        idle = now - self._last_progress
        if idle < self.stall_timeout_s:
            return None
        what = f"step {self._steps + 1}" if self._steps else "the first step"
        error = newest_worker_error(self.ray_log_dir, since=self._started_wall)
        reason = (f"no progress for {idle:.0f} s (trainer.stall_timeout_s={self.stall_timeout_s:g}) while waiting for "
                  f"{what}; " + (f"the newest error in Ray's worker logs: {error}" if error else
                                 f"no error in Ray's worker logs ({self.ray_log_dir})"))
        self.fired = reason
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            (self.run_dir / STALL_FILE).write_text(reason + "\n")
        except OSError as exc:  # the reason still goes to on_stall and the log
            logger.warning("could not write %s: %s", self.run_dir / STALL_FILE, exc)
        self.on_stall(reason)
        return reason

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            if self.check() is not None:
                return

    def start(self) -> "StallWatchdog":
        self._thread = threading.Thread(target=self._loop, name="stall-watchdog", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()


__all__ = ["EXIT_STALLED", "STALL_FILE", "StallWatchdog", "logged_steps", "newest_worker_error"]
