"""Opt-in: the host's extra CA certificates and proxy variables, installed into every image as a derived base.

Behind a TLS-intercepting proxy (or a private index with its own CA), ``pip install`` works on the host, which
trusts the proxy's CA, and fails in a build or a sandbox: "certificate verify failed: self-signed certificate
in certificate chain". With the setting ``ca`` (``SandboxConfig.ca``, ``terminal-agent --ca-bundle``, or
``$TERMINAL_AGENT_CA_BUNDLE``) set to ``auto`` or a PEM file / directory, each image a task builds ``FROM`` (and a
task's prebuilt ``docker_image``) gets one derived layer first that

* copies the CA certificates to ``/usr/local/share/ca-certificates/terminal-agent/`` and runs the
  distribution's ``update-ca-certificates`` / ``update-ca-trust``; whatever those do, the certificates end up
  in ``/etc/ssl/certs/ca-certificates.crt`` (appended when missing; created when the image has no store);
* points apt (``Acquire::https::CAInfo``) at that bundle;
* sets ``SSL_CERT_FILE``, ``PIP_CERT``, ``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``, ``NODE_EXTRA_CA_CERTS`` to
  it, and the host's proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``, either case).

So the task's own ``RUN`` steps, the sandbox and the episode's commands see them, in the Docker backend and in
the bwrap backend (which runs exports of these images with their environment). The setting enters each task
image's content hash, so images with and without it (or with another CA) never share a tag. A proxy value
holding credentials (``user:password@``) is not written into images: builds get it as a build arg (Docker keeps
those out of the history) and sandboxes do not (give it to a task through its env, ``${HTTPS_PROXY}``).

``auto`` finds the CAs this host trusts beyond its distribution's stock roots: the local anchor directories
(``/usr/local/share/ca-certificates``, ``/etc/pki/ca-trust/source/anchors``, ...), and the certificates of the
bundles it names (``PIP_CERT``, ``REQUESTS_CA_BUNDLE``, ``SSL_CERT_FILE``, ``CURL_CA_BUNDLE``,
``NODE_EXTRA_CA_CERTS``, pip's ``cert`` setting, the system bundle) that are not among the stock roots
(``/usr/share/ca-certificates``, certifi's bundle).
"""

from __future__ import annotations

import base64
import binascii
import configparser
import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import ConfigError
from terminal_agent.sandbox.images.host_build_settings import DEFAULT_CA_BUNDLES, PROXY_VARIABLES

logger = logging.getLogger(__name__)

CA_SETTING_ENV = "TERMINAL_AGENT_CA_BUNDLE"
"""The environment variable read when no ``ca`` setting is given (``auto``, ``none`` or a path)."""
ANCHOR_DIRS = (
    "/usr/local/share/ca-certificates",  # Debian, Ubuntu, Alpine
    "/etc/pki/ca-trust/source/anchors",  # Fedora, RHEL
    "/etc/ca-certificates/trust-source/anchors",  # Arch
    "/usr/share/pki/trust/anchors",  # SUSE
)
"""Where an administrator puts the CAs a host trusts beyond its distribution's: each certificate there is extra."""
STOCK_DIRS = ("/usr/share/ca-certificates",)
"""The distribution's own roots (Debian's ``ca-certificates``): a certificate found here is not extra."""
BUNDLE_VARIABLES = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
"""Host variables naming a CA bundle; in images they all name :data:`IMAGE_BUNDLE`."""
IMAGE_CA_DIR = "/usr/local/share/ca-certificates/terminal-agent"
IMAGE_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
IMAGE_APT_CONF = "/etc/apt/apt.conf.d/99terminal-agent-ca"
CONTEXT_DIR = "terminal-agent-ca"
"""The folder of the derived layer's build context that holds the certificates."""
HOST_TRUST_REPOSITORY = "terminal-agent/host-ca"
"""Repository of the derived bases (tag: a hash of the base image, the certificates and the proxies)."""
HOST_TRUST_LABEL = "terminal-agent.host-ca"
"""Label of a derived base: the first 16 hex digits of :meth:`HostTrust.fingerprint`."""
_RECIPE_VERSION = "host-ca-v1"  # bump when the layer's recipe changes: every derived base is rebuilt
_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----\s*(.+?)\s*-----END CERTIFICATE-----", re.DOTALL)
_CERT_SUFFIXES = (".crt", ".pem", ".cer")


class HostTrust(BaseModel):
    """The extra CAs and proxy variables given to images (and through them to sandboxes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    certificates: tuple[str, ...] = ()
    """The extra CA certificates, one PEM block each, in the order of their sha256 fingerprints."""
    sources: tuple[str, ...] = ()
    """Where they were found (files), for messages."""
    proxies: dict[str, str] = Field(default_factory=dict, repr=False)
    """The host's proxy variables (names of :data:`PROXY_VARIABLES`, either case), as set on the host."""

    @classmethod
    def of(cls, certificates: Iterable[tuple[bytes, str]], proxies: Mapping[str, str] | None = None) -> HostTrust:
        """From (DER, source) pairs (duplicates dropped) and proxy variables (other names dropped)."""
        by_fingerprint: dict[str, tuple[bytes, str]] = {}
        for der, source in certificates:
            by_fingerprint.setdefault(hashlib.sha256(der).hexdigest(), (der, source))
        ordered = [by_fingerprint[key] for key in sorted(by_fingerprint)]
        allowed = {name for base in PROXY_VARIABLES for name in (base, base.lower())}
        return cls(
            certificates=tuple(_to_pem(der) for der, _ in ordered),
            sources=tuple(dict.fromkeys(source for _, source in ordered)),
            proxies={name: value for name, value in (proxies or {}).items() if name in allowed and value},
        )

    @property
    def empty(self) -> bool:
        return not self.certificates and not self.proxies

    def baked_proxies(self) -> dict[str, str]:
        """The proxy variables written into images: those without credentials."""
        return {name: value for name, value in self.proxies.items() if not _has_credentials(value)}

    def image_env(self) -> dict[str, str]:
        """The environment the derived layer sets."""
        env = {name: IMAGE_BUNDLE for name in BUNDLE_VARIABLES} if self.certificates else {}
        return {**env, **self.baked_proxies()}

    def fingerprint(self) -> str:
        """sha256 of what the derived layer holds (certificates and baked proxies): part of every task image's hash."""
        payload = {
            "recipe": _RECIPE_VERSION,
            "certificates": [hashlib.sha256(_der(pem)).hexdigest() for pem in self.certificates],
            "proxies": sorted(self.baked_proxies().items()),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def describe(self) -> str:
        """One line for logs and the CLI: how many CAs from where, which proxy variables (names only)."""
        cas = f"{len(self.certificates)} CA certificate(s) from {', '.join(self.sources)}" if self.certificates else "no CA"
        held_back = sorted(set(self.proxies) - set(self.baked_proxies()))
        proxies = ", ".join(sorted(self.baked_proxies())) or "none"
        if held_back:
            proxies += f" (with credentials, builds only: {', '.join(held_back)})"
        return f"{cas}; proxy variables: {proxies}"

    def layer(self, base: str) -> tuple[str, dict[str, str | bytes]]:
        """(Dockerfile, build context files) of the derived layer over the image ``base``."""
        lines = [f"FROM {base}"]
        files: dict[str, str | bytes] = {}
        if self.certificates:
            for number, pem in enumerate(self.certificates, 1):
                files[f"{CONTEXT_DIR}/extra-ca-{number}.crt"] = pem
            lines.append(f"COPY {CONTEXT_DIR}/ {IMAGE_CA_DIR}/")
            lines.append("RUN " + " ; \\\n    ".join(_INSTALL_SCRIPT))
        env = self.image_env()
        if env:
            lines.append("ENV " + " \\\n    ".join(f"{name}={_env_value(value)}" for name, value in env.items()))
        return "\n".join(lines) + "\n", files


_INSTALL_SCRIPT = (
    "set -e",
    f"bundle={IMAGE_BUNDLE}",
    # the distribution's own tool, when the image has one (it also keeps the store right after a later
    # `apt-get install ca-certificates`, which regenerates the bundle from /usr/local/share/ca-certificates)
    "if command -v update-ca-certificates >/dev/null 2>&1; then update-ca-certificates >/dev/null 2>&1 || true; fi",
    "if command -v update-ca-trust >/dev/null 2>&1; then mkdir -p /etc/pki/ca-trust/source/anchors"
    f" && cp {IMAGE_CA_DIR}/*.crt /etc/pki/ca-trust/source/anchors/ && update-ca-trust extract || true; fi",
    # whatever those did (or when there is no tool, or no store at all), the bundle every variable names has them
    "mkdir -p /etc/ssl/certs",
    'if [ ! -s "$bundle" ] && [ -s /etc/pki/tls/certs/ca-bundle.crt ]; then cat /etc/pki/tls/certs/ca-bundle.crt > "$bundle"; fi',
    f'for cert in {IMAGE_CA_DIR}/*.crt; do line=$(sed -n 2p "$cert"); '
    'grep -qF "$line" "$bundle" 2>/dev/null || cat "$cert" >> "$bundle"; done',
    f"if [ -d /etc/apt/apt.conf.d ]; then echo 'Acquire::https::CAInfo \"{IMAGE_BUNDLE}\";' > {IMAGE_APT_CONF}; fi",
)
"""The derived layer's RUN step, one statement per entry (POSIX sh; no network)."""


def _env_value(value: str) -> str:
    """A Dockerfile ``ENV`` value in double quotes (``ENV`` expands ``$``, so it is escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def _has_credentials(url: str) -> bool:
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        return parts.password is not None or bool(parts.username)
    except ValueError:  # not a URL (a NO_PROXY list): no credentials
        return False


def _to_pem(der: bytes) -> str:
    body = base64.b64encode(der).decode()
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) + \
        "\n-----END CERTIFICATE-----\n"


def _der(pem: str) -> bytes:
    return parse_certificates(pem.encode())[0]


def parse_certificates(data: bytes) -> list[bytes]:
    """The DER bytes of each ``BEGIN CERTIFICATE`` block of PEM ``data`` (blocks that do not decode are skipped)."""
    found = []
    for match in _PEM.finditer(data):
        try:
            found.append(base64.b64decode(b"".join(match.group(1).split()), validate=True))
        except (binascii.Error, ValueError):
            continue
    return found


def _read_certificates(path: Path) -> list[tuple[bytes, str]]:
    """(DER, path) of every certificate in a PEM file, or in the certificate files under a directory; unreadable
    files count as none (``auto`` looks; an explicit path is checked by :func:`read_ca_path`)."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in _CERT_SUFFIXES and p.is_file())
    else:
        files = [path]
    found: list[tuple[bytes, str]] = []
    for file in files:
        try:
            data = file.read_bytes()
        except OSError:
            continue
        found.extend((der, str(file)) for der in parse_certificates(data))
    return found


def read_ca_path(path: str | os.PathLike[str]) -> list[tuple[bytes, str]]:
    """The certificates of an explicit ``ca`` path (a PEM file or a directory of them). Raises
    :class:`ConfigError` naming the setting when it is missing or holds no certificate."""
    where = Path(path).expanduser()
    if not where.exists():
        raise ConfigError(f"ca: {str(where)!r} does not exist (give auto, none, or a PEM file or directory of CA certificates)")
    found = _read_certificates(where)
    if not found:
        raise ConfigError(f"ca: {str(where)!r} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    return found


SITE_PIP_CONFIGS = ("/etc/pip.conf", str(Path(sys.prefix) / "pip.conf"))
"""pip's site-wide config files besides ``$XDG_CONFIG_DIRS/pip/pip.conf``."""


def _pip_config_certs(env: Mapping[str, str], site_files: Iterable[str] = SITE_PIP_CONFIGS) -> list[str]:
    """pip's ``cert`` settings from its config files (site, user, ``PIP_CONFIG_FILE``), as ``pip config list`` shows."""
    home = Path(env.get("HOME") or Path.home())
    config_dirs = (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":")
    files = [Path(d) / "pip" / "pip.conf" for d in config_dirs if d] + [Path(f) for f in site_files]
    files += [home / ".pip" / "pip.conf", Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf"]
    if env.get("PIP_CONFIG_FILE"):
        files.append(Path(env["PIP_CONFIG_FILE"]))
    certs = []
    for file in files:
        parser = configparser.RawConfigParser()
        try:
            parser.read(file)
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "install"):
            if parser.has_option(section, "cert"):
                certs.append(parser.get(section, "cert").strip().strip("'\""))
    return certs


def _stock_roots(stock_dirs: Iterable[str]) -> set[str]:
    """Fingerprints of the distribution's roots and of certifi's bundle (pip's own, if importable)."""
    fingerprints: set[str] = set()
    for directory in stock_dirs:
        fingerprints.update(hashlib.sha256(der).hexdigest() for der, _ in _read_certificates(Path(directory)))
    try:
        import certifi

        fingerprints.update(hashlib.sha256(der).hexdigest() for der, _ in _read_certificates(Path(certifi.where())))
    except (ImportError, OSError):
        pass
    return fingerprints


def detect_host_cas(
    environ: Mapping[str, str] | None = None,
    *,
    anchor_dirs: Iterable[str] = ANCHOR_DIRS,
    stock_dirs: Iterable[str] = STOCK_DIRS,
    system_bundles: Iterable[str] = DEFAULT_CA_BUNDLES,
    site_pip_configs: Iterable[str] = SITE_PIP_CONFIGS,
) -> list[tuple[bytes, str]]:
    """(DER, source) of each CA this host trusts beyond its distribution's stock roots (see the module doc).

    The bundles a host names are searched only when the stock roots are known (a host without
    ``/usr/share/ca-certificates`` and certifi gives its anchor directories only)."""
    env = os.environ if environ is None else environ
    found: list[tuple[bytes, str]] = []
    for directory in anchor_dirs:
        if Path(directory).is_dir():
            found.extend(_read_certificates(Path(directory)))
    stock = _stock_roots(stock_dirs)
    if stock:
        bundles = [env[name] for name in BUNDLE_VARIABLES if env.get(name)] + _pip_config_certs(env, site_pip_configs) + list(system_bundles)
        for bundle in dict.fromkeys(bundles):
            path = Path(bundle)
            if path.is_file():
                found.extend((der, str(path)) for der, _ in _read_certificates(path)
                             if hashlib.sha256(der).hexdigest() not in stock)
    return found


def host_proxies(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The proxy variables set on this host (both cases of :data:`PROXY_VARIABLES`)."""
    env = os.environ if environ is None else environ
    return {name: env[name] for base in PROXY_VARIABLES for name in (base, base.lower()) if env.get(name)}


def ca_setting(setting: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The ``ca`` setting in force: ``setting`` when given, else ``$TERMINAL_AGENT_CA_BUNDLE``, else ``none``."""
    env = os.environ if environ is None else environ
    value = (setting if setting is not None else env.get(CA_SETTING_ENV) or "none").strip()
    return value.lower() if value.lower() in ("auto", "none", "off", "") else value


def resolve_host_trust(setting: str | None = None, environ: Mapping[str, str] | None = None) -> HostTrust | None:
    """The :class:`HostTrust` of the ``ca`` setting (``auto``, ``none``/``off``, or a PEM file or directory; None:
    ``$TERMINAL_AGENT_CA_BUNDLE``, else none); None when it gives nothing to install. Raises
    :class:`ConfigError` for a path that is missing or holds no certificate."""
    env = os.environ if environ is None else environ
    value = ca_setting(setting, env)
    if value in ("none", "off", ""):
        return None
    certificates = detect_host_cas(env) if value == "auto" else read_ca_path(value)
    trust = HostTrust.of(certificates, host_proxies(env))
    if trust.empty:
        logger.info("ca=auto: this host trusts no extra CA and sets no proxy variable; images are left as they are")
        return None
    return trust


def derived_base_tag(base_id: str, trust: HostTrust) -> str:
    """The tag of ``trust``'s layer over the image ``base_id``."""
    digest = hashlib.sha256(f"{base_id}\n{trust.fingerprint()}".encode()).hexdigest()
    return f"{HOST_TRUST_REPOSITORY}:{digest[:16]}"
