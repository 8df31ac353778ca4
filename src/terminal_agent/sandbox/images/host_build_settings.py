"""Opt-in: the host's proxy, CA bundle and pip index settings, passed into image builds only.

Behind a TLS-intercepting proxy or with a private package index, a Dockerfile's ``pip install``
fails: the build sees neither the host's CA bundle nor its pip settings. Nothing of the host is
passed unless asked for (``ImageManager(host_settings=HostBuildSettings.from_host())``, or
``terminal-agent images build TASKS --host-build-settings``); then

* proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``, ``FTP_PROXY`` and their lower-case
  forms) go in as build args. These are Docker's predefined args: RUN steps see them, and Docker
  keeps them out of ``docker history`` and the image's environment.
* the CA bundle and pip's index settings go in as BuildKit secrets (``docker buildx build
  --secret``): every ``RUN`` mounts them (``/etc/pip.conf`` and the bundle it names) for its own
  duration, so no layer, environment variable or history entry holds them. This needs the docker
  CLI with buildx; without it the build stops with an error that says so.

Task images are cached by content hash, so images built once this way are cache hits for every
later evaluation, validation or training run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "FTP_PROXY")
"""Docker's predefined build args (each also in lower case)."""
CA_SECRET_ID = "terminal_agent_host_ca"
PIP_CONF_SECRET_ID = "terminal_agent_pip_conf"
CA_TARGET = f"/run/secrets/{CA_SECRET_ID}"
PIP_CONF_TARGET = "/etc/pip.conf"
DEFAULT_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
ENABLE_HINT = (
    "behind a TLS-intercepting proxy or a private CA? Install the host's extra CAs and proxy variables into "
    "images and sandboxes: `terminal-agent --ca-bundle auto ...` (or a PEM path; sandbox.ca, "
    "$TERMINAL_AGENT_CA_BUNDLE; no BuildKit needed). With a private package index, pass the host's proxy, CA bundle "
    "and pip index settings into builds only (never into the image): `terminal-agent images build TASKS "
    "--host-build-settings` (images are then cached for every later run), or "
    "ImageManager(host_settings=HostBuildSettings.from_host()); the CA bundle and pip settings need docker buildx"
)
"""Appended to a build error whose log looks like a certificate or package-index failure."""

_NETWORK_FAILURE = re.compile(
    r"CERTIFICATE_VERIFY_FAILED|SSLError|certificate verify failed|self[- ]signed certificate|"
    r"Could not fetch URL|No matching distribution found|ProxyError|Temporary failure in name resolution",
    re.IGNORECASE,
)
_RUN_LINE = re.compile(r"^(?P<indent>\s*)RUN(?P<space>\s+)", re.IGNORECASE | re.MULTILINE)


class HostBuildSettings(BaseModel):
    """Host network settings given to image builds (and to nothing else)."""

    model_config = ConfigDict(extra="forbid")

    proxies: dict[str, str] = Field(default_factory=dict, repr=False)
    """Proxy build args by name (only the names of :data:`PROXY_VARIABLES`, either case)."""
    ca_bundle: Path | None = None
    """The host's CA bundle (PEM), mounted for pip during RUN steps."""
    pip_index_url: str | None = Field(default=None, repr=False)
    """pip ``index-url`` (may hold credentials; it never reaches the image)."""
    pip_extra_index_url: str | None = Field(default=None, repr=False)
    """pip ``extra-index-url``."""
    pip_trusted_host: str | None = None
    """pip ``trusted-host``."""

    @classmethod
    def from_host(cls, environ: Mapping[str, str] | None = None) -> HostBuildSettings:
        """The settings of this machine: proxy and ``PIP_*`` variables, and its CA bundle."""
        env = os.environ if environ is None else environ
        proxies = {name: env[name] for base in PROXY_VARIABLES for name in (base, base.lower()) if env.get(name)}
        bundle = next((env[name] for name in ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE") if env.get(name)), None)
        if bundle is None:
            bundle = next((path for path in DEFAULT_CA_BUNDLES if Path(path).is_file()), None)
        return cls(
            proxies=proxies,
            ca_bundle=Path(bundle) if bundle else None,
            pip_index_url=env.get("PIP_INDEX_URL") or None,
            pip_extra_index_url=env.get("PIP_EXTRA_INDEX_URL") or None,
            pip_trusted_host=env.get("PIP_TRUSTED_HOST") or None,
        )

    def build_args(self) -> dict[str, str]:
        """The proxy build args (Docker keeps predefined args out of the image's history)."""
        allowed = {name for base in PROXY_VARIABLES for name in (base, base.lower())}
        return {name: value for name, value in self.proxies.items() if name in allowed}

    @property
    def needs_secrets(self) -> bool:
        """True when a CA bundle or pip setting must be mounted (BuildKit secrets)."""
        return bool(self.ca_bundle or self.pip_index_url or self.pip_extra_index_url or self.pip_trusted_host)

    def pip_conf(self) -> str:
        """The ``/etc/pip.conf`` mounted during RUN steps."""
        lines = ["[global]"]
        if self.ca_bundle:
            lines.append(f"cert = {CA_TARGET}")
        for key, value in (("index-url", self.pip_index_url), ("extra-index-url", self.pip_extra_index_url),
                           ("trusted-host", self.pip_trusted_host)):
            if value:
                lines.append(f"{key} = {value}")
        return "\n".join(lines) + "\n"


def mount_secrets(dockerfile: str, with_ca: bool) -> str:
    """Every ``RUN`` of ``dockerfile`` with the secret mounts of pip's config (and the CA bundle)."""
    mounts = f"--mount=type=secret,id={PIP_CONF_SECRET_ID},target={PIP_CONF_TARGET}"
    if with_ca:
        mounts += f" --mount=type=secret,id={CA_SECRET_ID},target={CA_TARGET}"
    return _RUN_LINE.sub(lambda m: f"{m.group('indent')}RUN {mounts}{m.group('space')}", dockerfile)


def buildx_available(docker: str = "docker") -> bool:
    """Whether the docker CLI here has buildx (BuildKit secrets need it)."""
    if shutil.which(docker) is None:
        return False
    try:
        return subprocess.run([docker, "buildx", "version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):  # a broken CLI is "no buildx"
        return False


def buildx_command(settings: HostBuildSettings, context: Path, dockerfile_name: str, tag: str,
                   labels: Mapping[str, str], secrets_dir: Path) -> list[str]:
    """``docker buildx build --load`` of ``context`` with the settings as secrets (written into ``secrets_dir``)."""
    pip_conf = secrets_dir / "pip.conf"
    pip_conf.write_text(settings.pip_conf())
    pip_conf.chmod(0o600)
    command = ["docker", "buildx", "build", "--load", "--pull=false", "-t", tag, "-f", str(context / dockerfile_name),
               "--secret", f"id={PIP_CONF_SECRET_ID},src={pip_conf}"]
    if settings.ca_bundle:
        command += ["--secret", f"id={CA_SECRET_ID},src={settings.ca_bundle}"]
    for name, value in settings.build_args().items():
        command += ["--build-arg", f"{name}={value}"]
    for name, value in labels.items():
        command += ["--label", f"{name}={value}"]
    return [*command, str(context)]


def with_enable_hint(message: str, log_tail: str) -> str:
    """``message`` plus :data:`ENABLE_HINT` when the build log looks like a certificate / index failure."""
    if _NETWORK_FAILURE.search(log_tail) or _NETWORK_FAILURE.search(message):
        return f"{message} ({ENABLE_HINT})"
    return message
