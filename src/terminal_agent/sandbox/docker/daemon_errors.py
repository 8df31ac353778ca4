"""What a call to the Docker daemon raises when the daemon fails, in one tuple for the docker backend's boundaries."""

from __future__ import annotations

import docker.errors
import requests

DAEMON_ERRORS: tuple[type[Exception], ...] = (docker.errors.DockerException, requests.RequestException)
"""docker-py's own errors, and the bare ``requests`` ones (``ConnectionError``) it lets through when the daemon's
socket goes away (a stopped or restarting dockerd). Each is a sandbox failure, never ``internal``."""
