"""Public images that task Dockerfiles name, mapped onto images we can build without a registry.

Only the decision lives here (which local image stands in for which public one, and how the
``FROM`` lines of a Dockerfile are found and rewritten); :mod:`terminal_agent.sandbox.images.manager`
decides *when* to substitute (the image is absent and a pull failed) and builds the substitutes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from terminal_agent.sandbox.images.base_image import BASE_IMAGE

PYTHON_IMAGE = "terminal-agent/python:bookworm"
"""Stand-in for the official ``python`` images: the base plus pip, venv and a ``python`` command."""

SUBSTITUTE_DOCKERFILES: dict[str, str] = {
    # The official python images keep pip outside the distribution's Python, so `pip install`
    # works there without --break-system-packages; PIP_BREAK_SYSTEM_PACKAGES gives the same here.
    PYTHON_IMAGE: (
        "FROM {base}\n"
        "RUN apt-get update \\\n"
        " && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends"
        " python3-pip python3-venv python-is-python3 \\\n"
        " && rm -rf /var/lib/apt/lists/*\n"
        "ENV PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore\n"
    ),
}
"""Substitutes built by a Dockerfile from ``{base}`` (the manager's base image, itself made by debootstrap)."""

IMAGE_ALIASES: tuple[tuple[str, str], ...] = (
    (r"ubuntu:(24\.04|22\.04|noble|jammy|latest)(-.*)?", BASE_IMAGE),
    (r"debian:(bookworm|12)([.-].*)?", BASE_IMAGE),
    (r"python:3\.1\d(\.\d+)?(-slim)?(-bookworm)?", PYTHON_IMAGE),
    (r"ghcr\.io/laude-institute/t-bench/ubuntu-24-04:.*", BASE_IMAGE),
    (r"ghcr\.io/laude-institute/t-bench/python-3-13:.*", PYTHON_IMAGE),
)
"""(full-match pattern over the normalized ``name:tag``, local substitute), first match wins."""
ALIASED_IMAGES_HELP = (
    "ubuntu:24.04, ubuntu:22.04, debian:bookworm*, python:3.1x[-slim][-bookworm], "
    "ghcr.io/laude-institute/t-bench/ubuntu-24-04, ghcr.io/laude-institute/t-bench/python-3-13"
)
"""The table above in words, for error messages and docs."""

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


def alias_for(reference: str) -> str | None:
    """The local substitute for a public image, or ``None`` when the table has none."""
    name = normalize_image_name(reference)
    for pattern, substitute in IMAGE_ALIASES:
        if re.fullmatch(pattern, name):
            return substitute
    return None


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
