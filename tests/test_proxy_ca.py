"""The host's extra CA and proxy variables, end to end, with no outside network.

A CA made here signs the certificate of a TLS-intercepting proxy listening on the host's Docker bridge: it
answers ``CONNECT`` (a client with ``HTTPS_PROXY`` set) and direct TLS (like a transparent proxy) with a
certificate the CA signed, and serves a tiny PEP 503 index holding a wheel built here. pip in a ``docker
build``, in a Docker sandbox and in a bwrap sandbox fails without the CA and works with it.
"""

from __future__ import annotations

import base64
import datetime
import fcntl
import hashlib
import http.server
import importlib.util
import io
import ipaddress
import os
import socket
import socketserver
import ssl
import struct
import threading
import uuid
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from terminal_agent.errors import ConfigError, ImageBuildError
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.images.host_trust import (
    BUNDLE_VARIABLES,
    CA_SETTING_ENV,
    HOST_TRUST_LABEL,
    IMAGE_APT_CONF,
    IMAGE_BUNDLE,
    HostTrust,
    ca_setting,
    detect_host_cas,
    parse_certificates,
    read_ca_path,
    resolve_host_trust,
)
from terminal_agent.sandbox.images.image_build import content_hash as _content_hash
from terminal_agent.sandbox.images.manager import HASH_LABEL, TASK_LABEL, ImageManager
from terminal_agent.tasks.model import Task, TaskLimits

RUN_ID = uuid.uuid4().hex[:8]
INDEX_HOST = "pypi.proxy-ca.test"  # reserved TLD: only the proxy can resolve it
PACKAGE = "tinyca-pkg"
WHEEL = "tinyca_pkg-1.0-py3-none-any.whl"


# --- a CA, a proxy that intercepts TLS with it, a package index behind it ---------------------------------
def _name(common_name: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name: str = "terminal-agent test intercepting CA"):
    """(key, certificate) of a self-signed CA valid for a day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(_name(common_name))
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_server_cert(ca_key, ca_cert, dns_name: str, ip: str):
    """(key PEM, certificate PEM) for ``dns_name`` and ``ip``, signed by the CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(_name(dns_name)).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name), x509.IPAddress(ipaddress.ip_address(ip))]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return key_pem, cert.public_bytes(serialization.Encoding.PEM)


def cert_pem(cert) -> str:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM).decode()


def build_wheel() -> bytes:
    """A pure-Python wheel of ``tinyca_pkg`` (``VALUE = 42``) with a correct RECORD."""
    files = {
        "tinyca_pkg.py": b"VALUE = 42\n",
        "tinyca_pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinyca-pkg\nVersion: 1.0\n",
        "tinyca_pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: terminal-agent-tests\nRoot-Is-Purelib: true\n"
                                          b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append("tinyca_pkg-1.0.dist-info/RECORD,,")
    files["tinyca_pkg-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return buffer.getvalue()


class _IndexHandler(http.server.BaseHTTPRequestHandler):
    """GET of the index's pages over a socket already wrapped in TLS."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - the http.server name
        page = self.server.pages.get(self.path.split("?")[0])
        body = page[1] if page else b"not found\n"
        self.send_response(200 if page else 404)
        self.send_header("Content-Type", page[0] if page else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


class _InterceptHandler(socketserver.BaseRequestHandler):
    def handle(self):
        conn = self.request
        conn.settimeout(30)
        first = conn.recv(1, socket.MSG_PEEK)
        if not first:
            return
        if first[0] != 0x16:  # not a TLS ClientHello: a proxy request, which must be CONNECT
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            method, target = head.split(b"\r\n", 1)[0].decode("latin-1").split()[:2]
            if method != "CONNECT":
                conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            self.server.connects.append(target)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        try:
            tls = self.server.tls.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):  # the client refused our certificate: what happens without the CA
            self.server.refused += 1
            return
        try:
            _IndexHandler(tls, self.client_address, self.server)
        except OSError:
            pass
        finally:
            tls.close()


class InterceptingProxy(socketserver.ThreadingTCPServer):
    """A TLS-intercepting proxy and the index it serves, on ``address``: ``CONNECT host:port`` then TLS, or TLS
    directly, both answered with a certificate signed by the test CA."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: str, key_pem: bytes, cert_pem_bytes: bytes, tmp_path):
        super().__init__((address, 0), _InterceptHandler)
        (tmp_path / "server.key").write_bytes(key_pem)
        (tmp_path / "server.crt").write_bytes(cert_pem_bytes)
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
        wheel = build_wheel()
        digest = hashlib.sha256(wheel).hexdigest()
        html = "text/html"
        package_page = f'<html><body><a href="/files/{WHEEL}#sha256={digest}">{WHEEL}</a></body></html>\n'.encode()
        self.pages = {
            "/simple/": (html, f'<html><body><a href="{PACKAGE}/">{PACKAGE}</a></body></html>\n'.encode()),
            f"/simple/{PACKAGE}/": (html, package_page),
            f"/simple/{PACKAGE}": (html, package_page),
            f"/files/{WHEEL}": ("application/octet-stream", wheel),
        }
        self.connects: list[str] = []
        self.refused = 0
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.server_address[0]}:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


def bridge_address(client) -> str:
    """The host's address on Docker's default bridge: build containers and sandboxes reach the host there."""
    network = client.networks.get("bridge")
    for config in (network.attrs.get("IPAM") or {}).get("Config") or []:
        if config.get("Gateway"):
            return config["Gateway"].split("/")[0]
    name = (network.attrs.get("Options") or {}).get("com.docker.network.bridge.name", "docker0")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        packed = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
    return socket.inet_ntoa(packed[20:24])


@pytest.fixture(scope="module")
def ca():
    pytest.importorskip("cryptography", reason="the test CA is made with the cryptography package")
    return make_ca()


@pytest.fixture(scope="module")
def proxy(docker_client, ca, tmp_path_factory):
    address = bridge_address(docker_client)
    key_pem, server_pem = make_server_cert(*ca, INDEX_HOST, address)
    server = InterceptingProxy(address, key_pem, server_pem, tmp_path_factory.mktemp("proxy"))
    yield server
    server.close()


@pytest.fixture(scope="module")
def ca_file(ca, tmp_path_factory):
    path = tmp_path_factory.mktemp("ca") / "intercepting-ca.pem"
    path.write_text(cert_pem(ca[1]))
    return path


TEST_LABEL = "terminal-agent.test-run"


@pytest.fixture(scope="module")
def cleanup_images(docker_client):
    """Removes, children first: this run's task images, the CA layers of this module's CA, the CA-less base."""
    yield
    images = docker_client.images.list(filters={"label": TASK_LABEL})
    doomed = [image for image in images if RUN_ID in image.labels.get(TASK_LABEL, "")]
    for image in docker_client.images.list(filters={"label": HOST_TRUST_LABEL}):
        if image.labels.get(HOST_TRUST_LABEL) in _LAYER_FINGERPRINTS:
            doomed.append(image)
    doomed += docker_client.images.list(filters={"label": f"{TEST_LABEL}={RUN_ID}"})
    for image in doomed:
        try:
            docker_client.images.remove(image.id, force=True)
        except Exception:  # noqa: BLE001 - already gone with its parent's removal
            pass


_LAYER_FINGERPRINTS: set[str] = set()


def _trusted(trust: HostTrust) -> HostTrust:
    """``trust``, its CA layers marked for removal at the end of the module."""
    _LAYER_FINGERPRINTS.add(trust.fingerprint()[:16])
    return trust


def _task(name: str, dockerfile: str, **fields) -> Task:
    return Task(task_id=f"proxyca-{name}-{RUN_ID}", instruction="unused", dockerfile=dockerfile,
                test_source="def test_x():\n    pass\n", test_weights={"test_x": 1.0}, **fields)


def _pip_install(index_url: str) -> str:
    return (f"pip install --no-cache-dir --retries 0 --timeout 20 --index-url {index_url} {PACKAGE} && "
            "python3 -c 'import tinyca_pkg; assert tinyca_pkg.VALUE == 42'")


# --- detection and the setting (no Docker) ------------------------------------------------------------------
def _pem_of(common_name: str) -> str:
    return cert_pem(make_ca(common_name)[1])


def test_auto_finds_local_anchors_and_bundle_certificates_beyond_the_stock_roots(tmp_path):
    pytest.importorskip("cryptography")
    stock, extra_anchor, extra_in_bundle, extra_in_pip = (_pem_of(n) for n in ("stock", "anchor", "bundle", "pip"))
    (tmp_path / "stock" / "mozilla").mkdir(parents=True)
    (tmp_path / "stock" / "mozilla" / "Root.crt").write_text(stock)
    (tmp_path / "anchors" / "sub").mkdir(parents=True)
    (tmp_path / "anchors" / "sub" / "corp.crt").write_text(extra_anchor)
    (tmp_path / "anchors" / "README").write_text("not a certificate\n")
    system_bundle = tmp_path / "ca-certificates.crt"
    system_bundle.write_text(stock + extra_anchor)  # update-ca-certificates' output: stock + the anchors
    env_bundle = tmp_path / "env-bundle.pem"
    env_bundle.write_text(stock + extra_in_bundle)
    pip_bundle = tmp_path / "pip-bundle.pem"
    pip_bundle.write_text(extra_in_pip + stock)
    (tmp_path / "home" / ".config" / "pip").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "pip" / "pip.conf").write_text(f"[global]\ncert = {pip_bundle}\n")
    environ = {"REQUESTS_CA_BUNDLE": str(env_bundle), "HOME": str(tmp_path / "home"),
               "XDG_CONFIG_DIRS": str(tmp_path / "none")}
    found = detect_host_cas(environ, anchor_dirs=[str(tmp_path / "anchors")], stock_dirs=[str(tmp_path / "stock")],
                            system_bundles=[str(system_bundle)], site_pip_configs=[])
    trust = HostTrust.of(found)
    expected = {parse_certificates(p.encode())[0] for p in (extra_anchor, extra_in_bundle, extra_in_pip)}
    assert {parse_certificates(p.encode())[0] for p in trust.certificates} == expected  # stock left out, deduplicated
    assert str(tmp_path / "anchors" / "sub" / "corp.crt") in trust.sources
    # without known stock roots, bundles cannot be told apart from the distribution's: anchors only
    # (certifi, when importable, counts as stock, so this runs only where it is not)
    if importlib.util.find_spec("certifi") is None:
        only = detect_host_cas(environ, anchor_dirs=[str(tmp_path / "anchors")], stock_dirs=[],
                               system_bundles=[str(system_bundle)], site_pip_configs=[])
        assert [der for der, _ in only] == [parse_certificates(extra_anchor.encode())[0]]


def test_auto_on_this_host_finds_every_locally_added_ca():
    local = Path("/usr/local/share/ca-certificates")
    added = [der for path in sorted(local.rglob("*.crt")) for der in parse_certificates(path.read_bytes())] \
        if local.is_dir() else []
    if not added:
        pytest.skip("this host trusts no locally added CA")
    trust = resolve_host_trust("auto")
    assert trust is not None
    assert set(added) <= {parse_certificates(p.encode())[0] for p in trust.certificates}


def test_the_setting_none_path_and_errors(tmp_path, monkeypatch):
    pytest.importorskip("cryptography")
    monkeypatch.delenv(CA_SETTING_ENV, raising=False)
    assert ca_setting() == "none" and resolve_host_trust() is None and resolve_host_trust("off") is None
    monkeypatch.setenv(CA_SETTING_ENV, "NONE")
    assert ca_setting() == "none" and ca_setting("Auto") == "auto"
    with pytest.raises(ConfigError, match="ca: .*does not exist"):
        resolve_host_trust(str(tmp_path / "missing.pem"), environ={})
    (tmp_path / "empty.pem").write_text("no certificate here\n")
    with pytest.raises(ConfigError, match="holds no PEM certificate"):
        read_ca_path(tmp_path / "empty.pem")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.crt").write_text(_pem_of("a"))
    (tmp_path / "dir" / "b.pem").write_text(_pem_of("b"))
    trust = resolve_host_trust(str(tmp_path / "dir"), environ={"HTTPS_PROXY": "http://proxy.invalid:3128", "HOME": "/x"})
    assert len(trust.certificates) == 2 and trust.proxies == {"HTTPS_PROXY": "http://proxy.invalid:3128"}
    monkeypatch.setenv(CA_SETTING_ENV, str(tmp_path / "dir"))
    assert len(resolve_host_trust().certificates) == 2  # the environment variable, when no setting is given
    assert SandboxConfig(ca="auto").ca == "auto" and SandboxConfig().ca is None


def test_the_cli_option_is_checked_before_any_work(tmp_path):
    from terminal_agent.cli import app

    result = CliRunner().invoke(app, ["--ca-bundle", str(tmp_path / "missing.pem"), "images", "list"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError) and "does not exist" in str(result.exception)


def test_the_layer_sets_the_variables_and_keeps_credentials_out_of_images():
    pytest.importorskip("cryptography")
    pem = _pem_of("layer")
    trust = HostTrust.of([(parse_certificates(pem.encode())[0], "x")],
                         {"HTTPS_PROXY": "http://proxy.internal:3128", "https_proxy": "http://u:s3cret@proxy.internal:3128",
                          "NO_PROXY": "localhost,.corp", "PATH": "/ignored"})
    dockerfile, files = trust.layer("terminal-agent/base:bookworm")
    assert dockerfile.startswith("FROM terminal-agent/base:bookworm\nCOPY ")
    assert list(files.values()) == [pem] and "update-ca-certificates" in dockerfile
    env = trust.image_env()
    assert all(env[name] == IMAGE_BUNDLE for name in BUNDLE_VARIABLES)
    assert env["HTTPS_PROXY"] == "http://proxy.internal:3128" and env["NO_PROXY"] == "localhost,.corp"
    assert "https_proxy" not in env and "s3cret" not in dockerfile and "PATH" not in trust.proxies
    assert "s3cret" not in trust.describe() and "s3cret" not in repr(trust)
    # the build still gets the credentialed value, as a predefined build arg (kept out of the history)
    manager = ImageManager(client=object(), ca=trust)
    assert manager._build_args()["https_proxy"] == "http://u:s3cret@proxy.internal:3128"
    proxies_only = HostTrust.of([], {"HTTP_PROXY": "http://p:1/$x"})
    dockerfile, files = proxies_only.layer("b")
    assert files == {} and "COPY" not in dockerfile and 'HTTP_PROXY="http://p:1/\\$x"' in dockerfile


def test_the_layer_enters_the_content_hash_and_images_without_it_keep_theirs():
    pytest.importorskip("cryptography")
    one, two = (HostTrust.of([(parse_certificates(_pem_of(n).encode())[0], n)]) for n in ("one", "two"))
    plain = _content_hash("FROM x\n", {}, ["sha256:1"])
    assert _content_hash("FROM x\n", {}, ["sha256:1"], None) == plain  # unchanged formula without the setting
    hashes = {plain, _content_hash("FROM x\n", {}, ["sha256:1"], one), _content_hash("FROM x\n", {}, ["sha256:1"], two)}
    assert len(hashes) == 3
    assert one.fingerprint() == HostTrust.of([(parse_certificates(one.certificates[0].encode())[0], "elsewhere")]).fingerprint()
    with_proxy = HostTrust(certificates=one.certificates, proxies={"HTTPS_PROXY": "http://p:1"})
    with_secret_proxy = HostTrust(certificates=one.certificates, proxies={"HTTPS_PROXY": "http://u:p@p:1"})
    assert with_proxy.fingerprint() != one.fingerprint() == with_secret_proxy.fingerprint()  # only what is baked


# --- builds and sandboxes against the intercepting proxy ------------------------------------------------------
@pytest.mark.docker
@pytest.mark.slow
# The tasks here ask for python:3.11-slim: bookworm's stand-in, built on the base image, so that the bwrap test can
# export it. python:3.12+ runs on trixie's own root (docs/images.md), which the export (one base) does not hold yet,
# and trixie's pip refuses an HTTPS index addressed by IP (truststore needs a host name), as the direct case uses.
def test_a_dockerfile_pip_install_fails_without_the_ca_and_works_with_it(docker_client, proxy, ca_file, cleanup_images, tmp_path):
    dockerfile = f"FROM python:3.11-slim\nRUN {_pip_install(f'https://{proxy.url}/simple')}\n"
    task = _task("direct", dockerfile)
    without = ImageManager(client=docker_client, cache_dir=tmp_path / "a", ca="none")
    with pytest.raises(ImageBuildError) as raised:
        without.ensure_task_image(task)
    assert "certificate verify failed" in raised.value.log_tail.lower() and proxy.refused
    assert "--ca-bundle auto" in str(raised.value)  # the error says how to turn it on
    trust = HostTrust.of(read_ca_path(ca_file))  # the host's proxy variables left out: this proxy is transparent
    manager = ImageManager(client=docker_client, cache_dir=tmp_path / "b", ca=_trusted(trust))
    tag = manager.ensure_task_image(task)
    assert tag != without.task_image_tag(task)[0]  # the CA is in the content hash
    config = docker_client.images.get(tag).attrs["Config"]
    assert {f"{name}={IMAGE_BUNDLE}" for name in BUNDLE_VARIABLES} <= set(config["Env"])
    check = f"grep -c BEGIN {IMAGE_BUNDLE}; cat {IMAGE_APT_CONF}; ls /usr/local/share/ca-certificates/terminal-agent"
    output = docker_client.containers.run(tag, ["bash", "-c", check], remove=True).decode()
    assert "Acquire::https::CAInfo" in output and "extra-ca-1.crt" in output
    assert manager.ensure_task_image(task) == tag and manager.stats.cache_hits == 1  # built once, then cached


@pytest.fixture(scope="module")
def through_proxy(docker_client, proxy, ca_file, cleanup_images, tmp_path_factory):
    """(manager, task, tag, proxy URL): a task whose Dockerfile pip-installs through the proxy, built with the CA and
    the proxy variables."""
    proxy_url = f"http://{proxy.url}"
    trust = HostTrust.of(read_ca_path(ca_file), {"HTTPS_PROXY": proxy_url, "https_proxy": proxy_url,
                                                  "NO_PROXY": "localhost,127.0.0.1", "no_proxy": "localhost,127.0.0.1"})
    import docker

    # its own client: the session's has a 10 s timeout, and the bwrap test's `docker save` of the base image ran
    # past it on 2 loaded cores (a ReadTimeout in CI)
    client = docker.from_env(timeout=600)
    manager = ImageManager(client=client, cache_dir=tmp_path_factory.mktemp("m"), ca=_trusted(trust))
    task = _task("proxy", f"FROM python:3.11-slim\nRUN {_pip_install(f'https://{INDEX_HOST}/simple')}\n")
    before = len(proxy.connects)
    tag = manager.ensure_task_image(task)
    assert f"{INDEX_HOST}:443" in proxy.connects[before:]  # the build went through the proxy, which intercepted TLS
    return manager, task, tag, proxy_url


EPISODE = (f"pip download --no-deps --retries 0 --timeout 20 -d /tmp/dl --index-url https://{INDEX_HOST}/simple {PACKAGE}"
           f" && ls /tmp/dl && python3 -c \"import urllib.request; "
           f"print(urllib.request.urlopen('https://{INDEX_HOST}/simple/{PACKAGE}/').status)\"")
"""An episode's commands that fetch through the proxy: pip and urllib."""


@pytest.mark.docker
@pytest.mark.slow
def test_through_the_proxy_an_episode_installs_in_a_docker_sandbox(proxy, through_proxy):
    from terminal_agent.sandbox.backends import start_sandbox

    manager, _, tag, proxy_url = through_proxy
    before = len(proxy.connects)
    with start_sandbox(SandboxConfig(), tag, TaskLimits(network=True), run_id=f"proxyca-{RUN_ID}") as sandbox:
        result = sandbox.exec(EPISODE, timeout=120)
    assert result.exit_code == 0, result.output
    assert WHEEL in result.output and result.output.rstrip().endswith("200") and len(proxy.connects) > before
    # the same commands in a sandbox of an image without the CA fail on the certificate
    with start_sandbox(SandboxConfig(), manager.resolve_image("python:3.11-slim")[0], TaskLimits(network=True),
                       run_id=f"proxyca-{RUN_ID}", env={"HTTPS_PROXY": proxy_url}) as sandbox:
        result = sandbox.exec(EPISODE, timeout=120)
    assert result.exit_code != 0 and "certificate verify failed" in result.output.lower()


@pytest.mark.docker
@pytest.mark.slow
def test_through_the_proxy_an_episode_installs_in_a_bwrap_sandbox_of_the_export(through_proxy):
    from bwrap_support import require_bwrap

    from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
    from terminal_agent.sandbox.bwrap.settings import BwrapConfig
    from terminal_agent.sandbox.images.export import export_images

    require_bwrap()
    manager, task, _, _ = through_proxy
    # one export and unpack cache for every run: the base is written and unpacked once, each run adds its small layers
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "terminal-agent" / "proxy-ca-tests"
    export_images([task], root / "export", manager=manager)
    config = SandboxConfig(backend="bwrap", bwrap=BwrapConfig(images_dir=str(root / "export"), state_dir=str(root / "state")))
    with start_sandbox(config, resolve_task_image(config, task), TaskLimits(network=True),
                       run_id=f"proxyca-{RUN_ID}") as sandbox:
        result = sandbox.exec(EPISODE + " && echo $SSL_CERT_FILE", timeout=120)
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith(IMAGE_BUNDLE)


@pytest.mark.docker
@pytest.mark.slow
def test_credentialed_proxies_reach_builds_only_and_prebuilt_images_and_bare_images_get_the_layer(
        docker_client, proxy, ca_file, cleanup_images, tmp_path):
    secret_proxy = f"http://user:s3cret@{proxy.url}"
    trust = HostTrust.of(read_ca_path(ca_file), {"HTTPS_PROXY": secret_proxy})
    manager = ImageManager(client=docker_client, cache_dir=tmp_path, ca=_trusted(trust))
    tag = manager.ensure_task_image(_task("secret", f"FROM python:3.11-slim\nRUN {_pip_install(f'https://{INDEX_HOST}/simple')}\n"))
    history = " ".join(str(layer.get("CreatedBy", "")) for layer in docker_client.api.history(tag))
    assert "s3cret" not in history and "s3cret" not in str(docker_client.images.get(tag).attrs["Config"]["Env"])

    # a task's prebuilt docker_image (present here) gets the layer too
    base = manager.base_image
    prebuilt = manager.ensure_task_image(_task("prebuilt", f"FROM {base}\n", docker_image=base))
    assert prebuilt.startswith("terminal-agent/host-ca:")
    assert f"SSL_CERT_FILE={IMAGE_BUNDLE}" in docker_client.images.get(prebuilt).attrs["Config"]["Env"]

    # an image without any CA store (like the stock ubuntu:24.04, which lacks ca-certificates) gets a bundle
    bare = f"terminal-agent/test-no-ca-store:{RUN_ID}"
    docker_client.images.build(fileobj=io.BytesIO(
        f"FROM {base}\nRUN rm -rf /etc/ssl/certs /usr/sbin/update-ca-certificates /usr/share/ca-certificates\n".encode()),
        tag=bare, rm=True, labels={TEST_LABEL: RUN_ID})
    derived = manager.ensure_task_image(_task("bare", f"FROM {bare}\n"))
    fetch = f"import urllib.request; print(urllib.request.urlopen('https://{proxy.url}/simple/').status)"
    output = docker_client.containers.run(derived, ["python3", "-c", fetch], remove=True, network_mode="bridge").decode()
    assert output.strip() == "200"
    labels = docker_client.images.get(manager._with_host_trust(bare, docker_client.images.get(bare).id)[0]).labels
    assert labels.get(HASH_LABEL)
