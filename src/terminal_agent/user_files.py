"""Reading a small text file the user named (a replies file, a preset, the judge's control file).

One reader so every such file is refused the same way, with a :class:`~terminal_agent.errors.ConfigError` that
names it: missing, not a regular file (a FIFO is never waited on), over its size bound, unreadable, not UTF-8.
What the text must then hold (JSON, YAML) is the caller's business.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from terminal_agent.errors import ConfigError


def read_user_text(path: Path | str, *, kind: str, max_bytes: int, prefix: str = "") -> str:
    """The UTF-8 text of ``path``; a ConfigError ``{prefix}{kind} {path} ...`` saying why not.

    ``kind`` names the file in messages (``replies file``, ``preset file``); ``prefix`` goes before them
    (``scripted model: ``). Nothing is written.
    """
    path = Path(path)
    named = f"{kind} {path}"
    try:
        # O_NONBLOCK: a FIFO at the path must not block the reader until someone writes to it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ConfigError(f"{prefix}{named} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{prefix}{named} is not a regular file (a directory)") from None
    except OSError as exc:
        raise ConfigError(f"{prefix}cannot read {named}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{prefix}{named} is not a regular file")
        if info.st_size > max_bytes:
            raise ConfigError(f"{prefix}{named} is {info.st_size} bytes, more than the {max_bytes} it may hold")
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise ConfigError(f"{prefix}cannot read {named}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise ConfigError(f"{prefix}{named} grew past {max_bytes} bytes while read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{prefix}cannot read {named}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


__all__ = ["read_user_text"]
