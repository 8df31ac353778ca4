"""How a task image is built: its content hash, its build context, and the two ways to run the build (the Engine
API's classic build under a wall-clock watchdog, or BuildKit through ``docker buildx`` when build secrets are needed).

:class:`~terminal_agent.sandbox.images.manager.ImageManager` decides what to build and caches it; this module builds.
"""

from __future__ import annotations

import collections
import hashlib
import json
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import docker
import requests
import urllib3

from terminal_agent.errors import ConfigError, ImageBuildError
from terminal_agent.sandbox.images.base_image import MANAGED_LABEL
from terminal_agent.sandbox.images.build_watchdog import (
    BuildWatchdog,
    build_timeout_message,
    expect_build_response,
    install_response_capture,
)
from terminal_agent.sandbox.images.host_build_settings import (
    HostBuildSettings,
    buildx_available,
    buildx_command,
    mount_secrets,
    with_enable_hint,
)
from terminal_agent.sandbox.images.host_trust import HostTrust
from terminal_agent.tasks.model import FileContent, encode_file_map, file_bytes

HASH_SCHEME = "terminal-agent-image-v1"  # bump to invalidate every cached task image

Progress = Callable[[str], None]

BUILD_NETWORK_MODE = "default"
"""The network of the build phase: the one the host gives ``docker build`` (its default bridge), whatever the
task's ``limits.network`` says - as Harbor builds. A task's network policy governs its agent and verifier
phases (``Sandbox.set_network``), never the steps that install its environment."""


def build_with_engine_api(
    api: docker.APIClient,
    tag: str,
    dockerfile: str,
    files: dict[str, FileContent],
    labels: dict[str, str],
    progress: Progress | None,
    what: str,
    tail: collections.deque[str],
    deadline_s: float,
    build_args: dict[str, str],
    enable_hint: bool,
) -> None:
    """The classic build through the Engine API (the proxy build args, if any, go in as predefined args).

    A watchdog shuts the build's connection at the deadline: the daemon then cancels the build
    (measured on 20.10: its RUN container is gone within a second) and the stream ends."""
    install_response_capture(api)
    watchdog = BuildWatchdog(deadline_s)
    with tempfile.TemporaryDirectory(prefix="ta-build-") as context:
        dockerfile_name = write_context(Path(context), dockerfile, files)
        expect_build_response(watchdog)
        try:
            for event in api.build(
                path=context,
                dockerfile=dockerfile_name,
                tag=tag,
                labels={MANAGED_LABEL: "true", **labels},
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
                timeout=int(deadline_s) + 30,  # socket reads; the watchdog holds the wall-clock deadline
                network_mode=BUILD_NETWORK_MODE,
                buildargs=build_args or None,
            ):
                expect_build_response(None)
                if watchdog.fired:
                    break
                text = event.get("stream") or event.get("status") or ""
                for line in text.splitlines():
                    if line.strip():
                        tail.append(line)
                        if progress:
                            progress(line)
                if "error" in event:
                    detail = event.get("errorDetail", {}).get("message") or event["error"]
                    tail.append(detail.strip())
                    message = f"building the image of {what} failed: {detail.strip()}"
                    if enable_hint:
                        message = with_enable_hint(message, "\n".join(tail))
                    raise ImageBuildError(message, "\n".join(tail))
        except (docker.errors.DockerException, OSError, requests.exceptions.RequestException,
                urllib3.exceptions.HTTPError) as exc:  # API errors, resets, timeouts, a shut stream
            if watchdog.fired:
                raise ImageBuildError(build_timeout_message(what, deadline_s), "\n".join(tail)) from None
            reason = getattr(exc, "explanation", None) or exc
            raise ImageBuildError(f"building the image of {what} failed: {reason}", "\n".join(tail)) from exc
        finally:
            expect_build_response(None)
            watchdog.cancel()
    if watchdog.fired:
        raise ImageBuildError(build_timeout_message(what, deadline_s), "\n".join(tail))


def build_with_secrets(settings: HostBuildSettings, tag: str, dockerfile: str, files: dict[str, FileContent],
                        labels: dict[str, str], what: str, deadline_s: float) -> None:
    """BuildKit build through ``docker buildx``: the CA bundle and pip settings are secrets mounted per RUN."""
    if not buildx_available():
        raise ConfigError(
            "host build settings: passing the CA bundle or pip index settings into builds needs BuildKit secrets, "
            "and this docker CLI has no buildx (install the docker buildx plugin), or pass only the proxy "
            "variables (HostBuildSettings(proxies=...), which need no BuildKit)"
        )
    with tempfile.TemporaryDirectory(prefix="ta-build-") as context, tempfile.TemporaryDirectory(
        prefix="ta-secrets-"
    ) as secrets:
        rewritten = mount_secrets(dockerfile, with_ca=settings.ca_bundle is not None)
        dockerfile_name = write_context(Path(context), rewritten, files)
        command = buildx_command(settings, Path(context), dockerfile_name, tag, {MANAGED_LABEL: "true", **labels},
                                 Path(secrets))
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=deadline_s)
        except subprocess.TimeoutExpired as exc:  # the CLI was killed, which cancels its BuildKit build
            output = (exc.stdout or b"") + (exc.stderr or b"")
            text = output.decode("utf-8", "replace") if isinstance(output, bytes) else str(output)
            raise ImageBuildError(build_timeout_message(what, deadline_s), "\n".join(text.splitlines()[-40:])) from None
        except (OSError, subprocess.SubprocessError) as exc:  # the CLI could not run
            raise ImageBuildError(f"building the image of {what} with buildx failed: {exc}") from exc
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-40:])
        raise ImageBuildError(f"building the image of {what} with buildx failed (exit {result.returncode})", tail)


def content_hash(dockerfile: str, files: dict[str, FileContent], base_ids: list[str],
                  host_trust: HostTrust | None = None) -> str:
    """sha256 of what an image is built from. A text file enters as its string, a binary one as
    ``{"base64": ...}`` (``encode_file_map``), so a text-only task hashes exactly as before binary files
    existed and its cached image stays valid. The host CA layer (``host_trust``) enters only when set, so
    images without it keep their tags."""
    digest = hashlib.sha256()
    payload = {
        "scheme": HASH_SCHEME,
        "dockerfile": dockerfile,
        "files": sorted(encode_file_map(files).items()),
        "bases": base_ids,
    }
    if host_trust is not None:
        payload["host_trust"] = host_trust.fingerprint()
    digest.update(json.dumps(payload, sort_keys=True).encode())
    return digest.hexdigest()


def write_context(context: Path, dockerfile: str, files: dict[str, FileContent]) -> str:
    """Write the build context (text as UTF-8, bytes as they are); returns the Dockerfile's name in it
    (``Dockerfile`` unless a file takes it)."""
    for relative, content in files.items():
        path = context / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = file_bytes(content)
        path.write_bytes(data)
        # Scripts keep the executable bit they would have had in a task directory.
        path.chmod(0o755 if relative.endswith(".sh") or data.startswith(b"#!") else 0o644)
    name = "Dockerfile"
    while name in files:
        name = "_" + name
    (context / name).write_text(dockerfile, encoding="utf-8")
    return name
