"""Public images that task Dockerfiles name, mapped onto images we can build without a registry.

Only the decision lives here (which local image stands in for which public one, and how the
``FROM`` lines of a Dockerfile are found and rewritten); :mod:`terminal_agent.sandbox.images.manager`
decides *when* to substitute (the image is absent and a pull failed) and builds the substitutes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from terminal_agent.sandbox.images.base_image import BASE_IMAGE, BASE_IMAGE_CHANGES

PYTHON_311_IMAGE = "terminal-agent/python:3.11-bookworm"
"""Stand-in for the official ``python:3.11*`` images: the base (bookworm's CPython 3.11) plus headers, pip, venv and
a ``python`` command."""
PYTHON_313_IMAGE = "terminal-agent/python:3.13-trixie"
"""Stand-in for the official ``python:3.13*`` images: Debian trixie's CPython 3.13 with headers, pip, venv and
``python``."""

# The official python images keep pip outside the distribution's Python, so `pip install` works there without
# --break-system-packages; PIP_BREAK_SYSTEM_PACKAGES gives the same here. python3-dev: their headers (Python.h), so
# a setuptools build of a C extension works once a compiler is installed, as on the official images.
PYTHON_PACKAGES = ("python3", "python3-dev", "python3-pip", "python3-venv", "python-is-python3")
"""Debian packages that make a stand-in of an official python image."""
PYTHON_ENV = "ENV PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore"

SUBSTITUTE_DOCKERFILES: dict[str, str] = {
    PYTHON_311_IMAGE: (
        "FROM {base}\n"
        "RUN apt-get update \\\n"
        " && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends"
        f" {' '.join(PYTHON_PACKAGES[1:])} \\\n"
        " && rm -rf /var/lib/apt/lists/*\n"
        f"{PYTHON_ENV}\n"
    ),
}
"""Substitutes built by a Dockerfile from ``{base}`` (the manager's base image, itself made by debootstrap)."""


@dataclass(frozen=True)
class DebootstrapRecipe:
    """A substitute made by debootstrap from Debian's own packages (a release other than the base's)."""

    suite: str
    """Debian release (``trixie``)."""
    packages: tuple[str, ...]
    """Packages added to ``minbase``."""
    changes: tuple[str, ...]
    """Dockerfile instructions applied on import."""


SUBSTITUTE_DEBOOTSTRAPS: dict[str, DebootstrapRecipe] = {
    PYTHON_313_IMAGE: DebootstrapRecipe(
        suite="trixie",
        packages=PYTHON_PACKAGES + ("bash", "coreutils", "procps", "ca-certificates"),
        changes=BASE_IMAGE_CHANGES + (PYTHON_ENV,),
    ),
}
"""Substitutes made by debootstrap, each from its own Debian release."""

PYTHON_STAND_INS: dict[str, tuple[str, str]] = {
    "3.11": (PYTHON_311_IMAGE, "bookworm"),
    "3.13": (PYTHON_313_IMAGE, "trixie"),
}
"""Python minor version -> (stand-in, the Debian release whose CPython it is): one per version Debian packages."""

_PYTHON_BY_VERSION = "<python stand-in of the version asked for>"

IMAGE_ALIASES: tuple[tuple[str, str], ...] = (
    (r"ubuntu:(24\.04|22\.04|noble|jammy|latest)(-.*)?", BASE_IMAGE),
    (r"debian:(bookworm|12)([.-].*)?", BASE_IMAGE),
    (r"python:(?P<version>3\.1\d)(\.\d+)?(-slim)?(-(?P<release>bookworm|trixie))?", _PYTHON_BY_VERSION),
    (r"ghcr\.io/laude-institute/t-bench/ubuntu-24-04:.*", BASE_IMAGE),
    (r"ghcr\.io/laude-institute/t-bench/python-(?P<version>3-13):.*", _PYTHON_BY_VERSION),
)
"""(full-match pattern over the normalized ``name:tag``, local substitute), first match wins; a python image maps
onto the stand-in of its version (:func:`python_stand_in`)."""
ALIASED_IMAGES_HELP = (
    "ubuntu:24.04, ubuntu:22.04, debian:bookworm*, python:3.1x[-slim][-bookworm|-trixie], "
    "ghcr.io/laude-institute/t-bench/ubuntu-24-04, ghcr.io/laude-institute/t-bench/python-3-13"
)
"""The table above in words, for error messages and docs."""


@dataclass(frozen=True)
class ImageAlias:
    """Which local image stands in for a public one, and in words what differs."""

    image: str
    """The public image as asked for."""
    substitute: str
    """The local stand-in."""
    note: str
    """For a python image: which CPython stands in for which (``python 3.12 -> CPython 3.13 of Debian trixie:
    Debian packages no 3.12``); empty otherwise."""


def python_stand_in(version: str, release: str | None = None) -> tuple[str, str]:
    """(stand-in, note) for the official python image of ``version`` (``3.12``): that version's stand-in when Debian
    packages it, else the nearest (a tie goes to the newer: code written for 3.12 uses syntax 3.11 lacks). The Debian
    release follows the version: ``release`` (as the tag names it) only enters the note when it differs."""
    wanted = int(version.split(".")[1])
    minor = min(PYTHON_STAND_INS, key=lambda known: (abs(int(known.split(".")[1]) - wanted), -int(known.split(".")[1])))
    tag, suite = PYTHON_STAND_INS[minor]
    note = f"python {version} -> CPython {minor} of Debian {suite}"
    if minor != version:
        note += f" (Debian packages no {version}; the nearest stands in: {', '.join(PYTHON_STAND_INS)} are built here)"
    if release and release != suite:
        note += f"; the image asked for {release}, the release follows the python version"
    return tag, note


def find_alias(reference: str) -> ImageAlias | None:
    """The local stand-in for a public image with its note, or ``None`` when the table has none."""
    name = normalize_image_name(reference)
    for pattern, substitute in IMAGE_ALIASES:
        match = re.fullmatch(pattern, name)
        if match:
            if substitute == _PYTHON_BY_VERSION:
                tag, note = python_stand_in(match.group("version").replace("-", "."), match.groupdict().get("release"))
                return ImageAlias(reference, tag, note)
            return ImageAlias(reference, substitute, "")
    return None


def alias_for(reference: str) -> str | None:
    """The local substitute for a public image, or ``None`` when the table has none."""
    found = find_alias(reference)
    return found.substitute if found else None


_FROM_LINE = re.compile(
    r"^(?P<head>\s*FROM\s+)(?P<flags>(?:--\S+\s+)*)(?P<image>\S+)(?P<stage>\s+AS\s+(?P<name>\S+))?(?P<tail>\s*)$",
    re.IGNORECASE,
)
_GLOBAL_ARG = re.compile(r"^\s*ARG\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=(?P<value>\S*))?\s*$", re.IGNORECASE)


def normalize_image_name(reference: str) -> str:
    """``docker.io/library/ubuntu`` -> ``ubuntu:latest``; digests are dropped (a substitute has none)."""
    name = reference.split("@", 1)[0]
    for prefix in ("docker.io/library/", "index.docker.io/library/", "registry-1.docker.io/library/", "library/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    else:
        if name.startswith("docker.io/"):
            name = name[len("docker.io/") :]
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        name += ":latest"
    return name


def split_image_reference(reference: str) -> tuple[str, str]:
    """``host:5000/name:tag`` -> (``host:5000/name``, ``tag``); no tag means ``latest``; a digest is the tag."""
    name, _, digest = reference.partition("@")
    if digest:
        return name, digest
    if ":" in name.rsplit("/", 1)[-1]:
        repository, _, tag = name.rpartition(":")
        return repository, tag
    return name, "latest"


@dataclass(frozen=True)
class FromLine:
    """One ``FROM`` instruction that names an image (not an earlier stage, not ``scratch``)."""

    line_number: int
    """0-based index in the Dockerfile's lines."""
    image: str
    """The image as written (global ``ARG`` defaults substituted)."""


def find_from_images(dockerfile: str) -> list[FromLine]:
    """The image references of a Dockerfile's ``FROM`` lines, skipping stage names and ``scratch``.

    Global ``ARG NAME=default`` lines before the first ``FROM`` are substituted; a reference
    that still contains ``$`` is skipped (left for Docker to resolve).
    """
    args: dict[str, str] = {}
    stages: set[str] = set()
    seen_from = False
    found: list[FromLine] = []
    for number, line in enumerate(dockerfile.splitlines()):
        if not seen_from:
            arg = _GLOBAL_ARG.match(line)
            if arg and arg.group("value") is not None:
                args[arg.group("name")] = arg.group("value").strip("\"'")
        match = _FROM_LINE.match(line)
        if not match:
            continue
        seen_from = True
        image = re.sub(
            r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: args.get(m.group(1), m.group(0)), match.group("image")
        )
        if image.lower() not in stages and image.lower() != "scratch" and "$" not in image:
            found.append(FromLine(number, image))
        if match.group("name"):
            stages.add(match.group("name").lower())
    return found


def rewrite_from_lines(dockerfile: str, resolve: Callable[[str], str]) -> str:
    """``dockerfile`` with every ``FROM`` image replaced by ``resolve(image)`` (flags and ``AS`` kept)."""
    lines = dockerfile.splitlines(keepends=True)
    for entry in find_from_images(dockerfile):
        replacement = resolve(entry.image)
        if replacement == entry.image:
            continue
        line = lines[entry.line_number]
        ending = line[len(line.rstrip("\r\n")) :]
        match = _FROM_LINE.match(line.rstrip("\r\n"))
        assert match is not None
        lines[entry.line_number] = (
            match.group("head") + match.group("flags") + replacement + (match.group("stage") or "") + ending
        )
    return "".join(lines)
