"""The judge's hot switch: a small JSON control file that running reward workers re-read.

``terminal-agent judge switch BACKEND`` (or ``training_scripts/switch_judge_backend.py``) writes::

    {"backend": "litellm", "model": "openai/gpt-4o-mini", "weight": 0.35,
     "written_at": "2026-12-01T08:00:00+00:00", "written_by": "host:pid"}

at an **absolute** path: ``JudgeConfig.control_file``, else ``TERMINAL_AGENT_JUDGE_CONTROL``. On
a filesystem that all nodes share, every reward worker of every process sees the change at its
next episode; nobody restarts and no environment variable is changed.

* Writes are atomic (a temporary file in the same directory, fsync, ``os.replace``): a reader
  sees the old file or the new one, never half of one.
* Readers stat the file per episode and parse it only when its (mtime, size, inode) changed.
* A malformed file (bad JSON, unknown key or backend, a weight out of range, a half-written
  file from an editor) keeps the last good setting and is logged once per version of the file.
* No file means no override: the job's own config applies.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from terminal_agent.errors import ConfigError
from terminal_agent.user_files import read_user_text

logger = logging.getLogger(__name__)

CONTROL_ENV = "TERMINAL_AGENT_JUDGE_CONTROL"
"""Environment variable naming the control file when the config does not."""


class JudgeSetting(BaseModel):
    """The content of the control file: which judge the running job uses from now on."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    backend: str
    """Backend name in ``JUDGE_BACKENDS`` (``none`` turns the judge off)."""
    model: str | None = None
    """The backend's model; ``None`` keeps the job's configured one."""
    weight: float | None = Field(default=None, ge=0.0)
    """Judge weight from now on; ``None`` keeps the job's configured ``judge_weight``."""
    written_at: str | None = None
    """When the switch was made (ISO 8601, UTC)."""
    written_by: str | None = None
    """``host:pid`` of the switch command."""

    @field_validator("model", "written_at", "written_by")
    @classmethod
    def _valid_unicode(cls, value: str | None) -> str | None:
        # a JSON escape such as "\ud800" decodes to a lone surrogate, which no log line or terminal can print
        if value is not None and any(0xD800 <= ord(char) <= 0xDFFF for char in value):
            raise ValueError("holds a lone surrogate (a \\ud800-style escape), which is not valid Unicode text")
        return value

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        from terminal_agent.rewards.judge_factory import judge_backend_names

        names = judge_backend_names()
        if value not in names:
            raise ValueError(f"unknown judge backend {value!r}; valid: {', '.join(names)}")
        return value


def control_path(configured: Path | str | None = None) -> Path | None:
    """The control file's path: ``configured``, else ``$TERMINAL_AGENT_JUDGE_CONTROL``, else None (no switch)."""
    raw = configured if configured not in (None, "") else os.environ.get(CONTROL_ENV)
    if raw in (None, ""):
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute():
        source = "the judge control file" if configured not in (None, "") else f"{CONTROL_ENV}: the judge control file"
        raise ConfigError(f"{source} must be an absolute path (every worker must open the same file), got {str(raw)!r}")
    return path


MAX_CONTROL_BYTES = 64 * 1024
"""Largest control file read; :func:`write_control` writes about 200 bytes."""


def read_control(path: Path) -> JudgeSetting:
    """Parse the control file strictly; :class:`ConfigError` names the file and what is wrong (the key, for a bad
    value). A file that is not a regular file, larger than :data:`MAX_CONTROL_BYTES`, not UTF-8, not JSON (or nested
    deep enough to recurse) or not a JSON object is refused the same way."""
    path = Path(path)
    text = read_user_text(path, kind="judge control file", max_bytes=MAX_CONTROL_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: the judge control file is not valid JSON: {exc}") from None
    except RecursionError:  # json recurses per level of nesting
        raise ConfigError(f"{path}: the judge control file is not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the judge control file must hold a JSON object, not {type(data).__name__}")
    try:
        return JudgeSetting.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{path}: bad judge control file: {problems}") from None


def write_control(path: Path, setting: JudgeSetting) -> JudgeSetting:
    """Write ``setting`` atomically at ``path`` (stamped with time and writer); returns what was written."""
    path = Path(path)
    if not path.is_absolute():
        raise ConfigError(f"the judge control file must be an absolute path, got {str(path)!r}")
    stamped = setting.model_copy(
        update={
            "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "written_by": f"{socket.gethostname()}:{os.getpid()}",
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(stamped.model_dump_json(indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable (matters on shared filesystems after a crash)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError:
        pass  # some filesystems cannot fsync a directory; the rename already happened
    return stamped


class ControlWatcher:
    """Re-reads one control file when it changes; keeps the last good setting through bad versions.

    Thread-safe. :meth:`current` costs one ``stat`` when nothing changed.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._signature: tuple[int, int, int] | None = None
        self._setting: JudgeSetting | None = None
        self._logged_bad: tuple[int, int, int] | None = None
        self.reads = 0
        """How many times the file was parsed (for tests and diagnostics)."""
        self.last_error: str | None = None
        """Why the newest version of the file was rejected (None when it was good)."""

    def current(self) -> JudgeSetting | None:
        """The setting in force: the file's, the last good one when the file is bad, None without a file."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            with self._lock:
                self._signature, self._setting, self.last_error = None, None, None
            return None
        except OSError as exc:  # a shared filesystem hiccup: keep what we had
            return self._keep_last_good(None, f"cannot stat the judge control file: {exc}")
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        with self._lock:
            if signature == self._signature:
                return self._setting
        try:
            setting = read_control(self.path)
        except ConfigError as exc:
            return self._keep_last_good(signature, str(exc))
        with self._lock:
            self.reads += 1
            changed = setting != self._setting
            self._signature, self._setting, self.last_error = signature, setting, None
        if changed:
            logger.info("judge control %s: backend %s, model %s, weight %s", self.path, setting.backend, setting.model, setting.weight)
        return setting

    def _keep_last_good(self, signature: tuple[int, int, int] | None, error: str) -> JudgeSetting | None:
        with self._lock:
            self.reads += 1
            self.last_error = error
            if signature is not None:
                # remember the bad version so it is not parsed again until the file changes
                self._signature = signature
            if signature is None or signature != self._logged_bad:
                self._logged_bad = signature
                kept = (
                    f"keeping backend {self._setting.backend}" if self._setting else "keeping the job's configured judge"
                )
                logger.warning("%s; %s", error, kept)
            return self._setting


_WATCHERS: dict[Path, ControlWatcher] = {}
_WATCHERS_LOCK = threading.Lock()


def watcher_for(path: Path) -> ControlWatcher:
    """The process-wide watcher of ``path`` (one per file, shared by every env of the process)."""
    with _WATCHERS_LOCK:
        watcher = _WATCHERS.get(Path(path))
        if watcher is None:
            watcher = _WATCHERS[Path(path)] = ControlWatcher(Path(path))
        return watcher


__all__ = ["CONTROL_ENV", "ControlWatcher", "JudgeSetting", "control_path", "read_control", "watcher_for", "write_control"]
