"""Exported layer archives unpacked once into read-only overlay lower dirs, shared by every bwrap sandbox.

Each archive (``base-*.tar.gz``, ``layers/*.tar.gz`` of an export) is unpacked by the system's ``tar``
into ``STATE/layers/<key>`` under a file lock, then Docker's whiteouts are turned into overlayfs
ones: ``.wh.NAME`` becomes a 0/0 character device ``NAME``, ``.wh..wh..opq`` the
``trusted.overlay.opaque`` attribute of its directory.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import logging
import os
import shutil
import subprocess
import zlib
from pathlib import Path

from terminal_agent.errors import ImageExportError, SandboxUnavailableError

logger = logging.getLogger(__name__)

_WHITEOUT = ".wh."
_OPAQUE = ".wh..wh..opq"


def _key(archive: Path) -> str:
    st = archive.stat()
    digest = hashlib.sha256(f"{archive.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    return f"{archive.name.split('.')[0][:40]}-{digest[:16]}"


def _convert_whiteouts(root: Path) -> None:
    for directory, dirs, files in os.walk(root):
        for name in list(files) + list(dirs):
            if not name.startswith(_WHITEOUT):
                continue
            marker = os.path.join(directory, name)
            if name == _OPAQUE:
                os.setxattr(directory, "trusted.overlay.opaque", b"y")
            else:
                target = os.path.join(directory, name[len(_WHITEOUT):])
                if os.path.lexists(target):
                    if os.path.isdir(target) and not os.path.islink(target):
                        shutil.rmtree(target)
                    else:
                        os.unlink(target)
                os.mknod(target, 0o600 | 0o020000, os.makedev(0, 0))
            if os.path.isdir(marker) and not os.path.islink(marker):
                shutil.rmtree(marker)
            else:
                os.unlink(marker)


def archive_damage(archive: Path) -> str | None:
    """What is wrong with the gzip stream of ``archive`` (cut short, corrupt), or None when it reads to its end."""
    try:
        with gzip.open(archive, "rb") as stream:
            while stream.read(1 << 20):
                pass
    except EOFError:
        return f"is truncated ({archive.stat().st_size:,} bytes: the compressed stream ends early)"
    except (gzip.BadGzipFile, zlib.error) as exc:
        return f"is corrupt ({exc})"
    except OSError:
        return None  # unreadable here: a host problem, reported as such by the caller
    return None


def unpacked_layer(archive: Path, layers_root: Path) -> Path:
    """The directory holding ``archive`` unpacked (done now when it is not yet); raises
    :class:`ImageExportError` naming the archive when it is cut short or corrupt, :class:`SandboxUnavailableError`
    when it cannot be unpacked here for another reason."""
    layers_root.mkdir(parents=True, exist_ok=True)
    target = layers_root / _key(archive)
    if (target / ".ta-complete").is_file():
        return target / "root"
    with open(layers_root / ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".ta-complete").is_file():
            return target / "root"
        shutil.rmtree(target, ignore_errors=True)
        (target / "root").mkdir(parents=True)
        logger.info("unpacking %s into %s", archive.name, target)
        done = subprocess.run(
            ["tar", "-x", "-z", "-p", "--numeric-owner", "--xattrs", "-f", str(archive), "-C", str(target / "root")],
            capture_output=True,
        )
        if done.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            damage = archive_damage(archive)
            if damage is not None:  # the export's fault, not this host's (a full disk, a missing tar)
                raise ImageExportError(f"{damage}: the archive cannot be unpacked; export again "
                                       "(`terminal-agent images export`) and copy it whole", path=str(archive))
            raise SandboxUnavailableError(f"cannot unpack {archive}: {done.stderr.decode(errors='replace')[-500:]}")
        _convert_whiteouts(target / "root")
        (target / ".ta-complete").write_text(str(archive))
    return target / "root"
