"""Atomic output: files and directories that appear whole or not at all (temp beside, fsync, rename).

Shared by every task writer (CSV, parquet, task directories); a crash or error leaves the old
output in place and no partial file behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temp file beside ``path``, fsync it and rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output_file(path) as temp_path:
        with open(temp_path, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))


@contextlib.contextmanager
def atomic_output_file(path: str | Path) -> Iterator[Path]:
    """Yield a temp path beside ``path``; on success it replaces ``path``, on error it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    temp_path = Path(temp_name)
    try:
        yield temp_path
        if path.exists():
            # keep the permissions of the file being replaced
            shutil.copymode(path, temp_path)
        else:
            os.chmod(temp_path, 0o666 & ~_umask())
        os.replace(temp_path, path)
    except BaseException:
        temp_path.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_output_dir(path: str | Path) -> Iterator[Path]:
    """Yield an empty temp directory beside ``path``; on success it takes ``path``'s place.

    An existing ``path`` is moved aside, the new one renamed in, then the old one deleted; if the
    rename fails the old one is put back. On error the temp directory is removed and ``path`` is
    untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp_dir = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield temp_dir
        os.chmod(temp_dir, 0o777 & ~_umask())
        if path.exists() or path.is_symlink():
            backup = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            backup.rmdir()
            os.rename(path, backup)
            try:
                os.rename(temp_dir, path)
            except BaseException:
                os.rename(backup, path)
                raise
            _remove(backup)
        else:
            os.rename(temp_dir, path)
    except BaseException:
        _remove(temp_dir)
        raise


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)


def _umask() -> int:
    """The process umask, read without changing it where Linux reports it.

    ``os.umask`` can only be read by setting it: for a moment every thread of the process would
    create world-writable files, and conversions run in thread pools.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o077)  # fallback: the brief window is at least never more permissive
    os.umask(current)
    return current


__all__ = ["atomic_output_dir", "atomic_output_file", "atomic_write_bytes", "atomic_write_text"]
