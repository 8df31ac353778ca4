"""The offline base image: a Debian root file system made by ``debootstrap`` and imported into Docker.

No registry is needed: the packages come from the Debian mirror that this machine's apt already
uses (read from its sources files, never hard-coded), and the root file system is streamed into
the Engine API's image import (the equivalent of ``tar -C ROOTFS -c . | docker import - NAME``).
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker

from terminal_agent.errors import ImageError

logger = logging.getLogger(__name__)

BASE_IMAGE = "terminal-agent/base:bookworm"
"""Tag of the offline base image every aliased public image maps onto."""
BASE_SUITE = "bookworm"
"""Debian release of the base image."""
BASE_PACKAGES = ("python3", "bash", "coreutils", "procps", "ca-certificates")
"""Packages added to debootstrap's ``minbase``: python3 runs the sandbox's shell server and the grader."""
DEBIAN_SUITES = ("bookworm", "trixie", "bullseye", "sid", "stable", "testing", "unstable")
"""Debian release names: an apt source serving one of them is a Debian archive (which serves them all)."""
MANAGED_LABEL = "terminal-agent.managed"
"""Label (value ``true``) on every image terminal-agent makes; cleanup and ``images list`` go by it."""
BASE_IMAGE_CHANGES = (
    'CMD ["/bin/bash"]',
    f"LABEL {MANAGED_LABEL}=true",
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
)
"""Dockerfile instructions applied on import (``docker import --change``)."""
# Things debootstrap leaves behind that only make the image bigger (tasks run apt-get update anyway)
# or that Docker supplies at run time.
_ROOTFS_LEFTOVERS = ("var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*", "etc/hostname", "etc/resolv.conf")


@dataclass(frozen=True)
class AptSource:
    """One ``deb`` entry of the machine's apt configuration."""

    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    origin: str
    """The file it came from (for messages)."""


def _parse_one_line_sources(text: str, origin: str) -> list[AptSource]:
    sources = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("deb ") and not line.startswith("deb\t"):
            continue  # deb-src and blank lines
        words = line.split()[1:]
        if words and words[0].startswith("["):  # options: [arch=amd64 signed-by=...]
            while words and not words[0].endswith("]"):
                words.pop(0)
            words = words[1:]
        if len(words) >= 2:
            sources.append(AptSource(words[0], (words[1],), tuple(words[2:]), origin))
    return sources


def _parse_deb822_sources(text: str, origin: str) -> list[AptSource]:
    sources = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for raw in stanza.splitlines():
            if raw.startswith("#"):
                continue
            if raw[:1] in (" ", "\t") and key:  # continuation line
                fields[key] += " " + raw.strip()
                continue
            if ":" in raw:
                key, value = raw.split(":", 1)
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() in ("no", "false", "0"):
            continue
        suites = tuple(fields.get("suites", "").split())
        for uri in fields.get("uris", "").split():
            sources.append(AptSource(uri, suites, tuple(fields.get("components", "").split()), origin))
    return sources


def read_apt_sources(root: Path | str = "/") -> list[AptSource]:
    """Every ``deb`` source in ``ROOT/etc/apt/sources.list`` and ``sources.list.d/*.list|*.sources``."""
    apt_dir = Path(root) / "etc" / "apt"
    sources: list[AptSource] = []
    main_list = apt_dir / "sources.list"
    if main_list.is_file():
        sources += _parse_one_line_sources(main_list.read_text(errors="replace"), str(main_list))
    parts = apt_dir / "sources.list.d"
    if parts.is_dir():
        for path in sorted(parts.iterdir()):
            if path.suffix == ".list":
                sources += _parse_one_line_sources(path.read_text(errors="replace"), str(path))
            elif path.suffix == ".sources":
                sources += _parse_deb822_sources(path.read_text(errors="replace"), str(path))
    return sources


def find_debian_mirror(suite: str = BASE_SUITE, root: Path | str = "/") -> str:
    """The URI of an apt source that serves ``suite`` itself (not ``-updates``/``-security``) with ``main``.

    A machine's sources name its own release only: for another release (``trixie`` on a bookworm host) the
    source of the machine's own Debian release is taken, since one Debian archive serves every release
    (debootstrap then says so if this one does not). Raises :class:`ImageError` naming the files read when
    there is none.
    """
    sources = read_apt_sources(root)
    for wanted in dict.fromkeys((suite, *DEBIAN_SUITES)):
        for source in sources:
            if wanted in source.suites and (not source.components or "main" in source.components):
                if source.uri.startswith(("http://", "https://", "file:/")):
                    return source.uri.rstrip("/")
    read = sorted({source.origin for source in sources}) or ["no sources files found"]
    raise ImageError(
        f"no Debian '{suite}' mirror in this machine's apt sources ({', '.join(read)}); "
        f"pass one explicitly (terminal-agent images base --rebuild --mirror URL)"
    )


_MISSING_DEB_PATTERNS = (
    re.compile(r"Couldn't find these debs: (?P<names>.+)"),  # debootstrap
    re.compile(r"Unable to locate package (?P<names>\S+)"),  # apt-get
    re.compile(r"Package '?(?P<names>[^' ]+)'? has no installation candidate"),  # apt-get
    re.compile(r"Couldn't find package (?P<names>\S+)"),  # debootstrap's dependency resolver
)


def missing_debian_packages(log: str) -> list[str]:
    """The Debian packages a debootstrap or ``apt-get install`` log says it could not find, in order."""
    found: list[str] = []
    for line in log.splitlines():
        for pattern in _MISSING_DEB_PATTERNS:
            match = pattern.search(line)
            if match:
                found += [name for name in match.group("names").split() if name not in found]
    return found


def _tar_stream(rootfs: Path, chunk_size: int = 1 << 20) -> Iterator[bytes]:
    """The root file system as an uncompressed tar, in chunks (numeric owners, as ``docker import`` wants)."""
    process = subprocess.Popen(
        ["tar", "--numeric-owner", "--xattrs", "-C", str(rootfs), "-c", "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    finished = False
    try:
        while chunk := process.stdout.read(chunk_size):
            yield chunk
        finished = True
    finally:
        process.stdout.close()
        if not finished:  # the reader gave up: stop tar, let the reader's own error speak
            process.kill()
        stderr = process.stderr.read().decode(errors="replace")
        process.stderr.close()
        code = process.wait()
    if code != 0:
        raise ImageError(f"tar of {rootfs} failed with exit code {code}: {stderr.strip()[-2000:]}")


def build_base_image(client: docker.DockerClient, tag: str = BASE_IMAGE, mirror: str | None = None, work_dir: Path | None = None) -> str:
    """Run debootstrap into a temporary directory and import it as ``tag``; returns the image id.

    Needs root and the ``debootstrap`` program (``apt-get install debootstrap``); raises
    :class:`ImageError` with the end of debootstrap's output when it fails.
    """
    return build_debootstrap_image(client, tag, BASE_SUITE, BASE_PACKAGES, BASE_IMAGE_CHANGES, mirror, work_dir)


def build_debootstrap_image(
    client: docker.DockerClient,
    tag: str,
    suite: str,
    packages: tuple[str, ...],
    changes: tuple[str, ...],
    mirror: str | None = None,
    work_dir: Path | None = None,
) -> str:
    """``debootstrap --variant=minbase --include=PACKAGES SUITE`` imported as ``tag`` with the Dockerfile
    instructions ``changes``; returns the image id.

    Raises :class:`ImageError` with the end of debootstrap's output when it fails, naming the Debian
    packages it could not find (a package the release does not have).
    """
    debootstrap = shutil.which("debootstrap") or next(
        (p for p in ("/usr/sbin/debootstrap", "/sbin/debootstrap") if Path(p).exists()), None
    )
    if debootstrap is None:
        raise ImageError("debootstrap is not installed; run scripts/setup.sh as root (or apt-get install debootstrap)")
    mirror = mirror or find_debian_mirror(suite)
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="base-rootfs-", dir=work_dir) as temp:
        rootfs = Path(temp) / "rootfs"
        command = [debootstrap, "--variant=minbase", f"--include={','.join(packages)}", suite, str(rootfs), mirror]
        logger.info("building %s: %s", tag, " ".join(command))
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        if result.returncode != 0:
            tail = "\n".join(result.stdout.splitlines()[-40:])
            missing = missing_debian_packages(result.stdout)
            what = (f"Debian {suite} has no package {', '.join(missing)} (asked for: {', '.join(packages)}); "
                    if missing else "")
            raise ImageError(f"building {tag}: {what}debootstrap of {suite} failed with exit code "
                             f"{result.returncode} (mirror {mirror}):\n{tail}")
        for pattern in _ROOTFS_LEFTOVERS:
            for path in rootfs.glob(pattern):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        repository, _, image_tag = tag.rpartition(":")
        if not repository or "/" in image_tag:
            repository, image_tag = tag, "latest"
        try:
            reply = client.api.import_image(
                src=_tar_stream(rootfs),
                repository=repository,
                tag=image_tag,
                changes=list(changes),
                stream_src=True,
            )
            image = client.images.get(tag)
        except docker.errors.DockerException as exc:
            raise ImageError(f"importing the root file system as {tag} failed: {exc}") from exc
    logger.info("built %s (%s) in %.0f s; import said: %s", tag, image.short_id, time.monotonic() - started, str(reply)[:200])
    return str(image.id)
