"""Opt-in host build settings: proxies reach RUN steps but not the image; CA bundle and pip settings
are BuildKit secrets mounted per RUN; a certificate failure's error says how to turn the opt-in on."""

from __future__ import annotations

import uuid

import pytest

from terminal_agent.errors import ConfigError, ImageBuildError
from terminal_agent.sandbox.images.host_build_settings import (
    CA_TARGET,
    PIP_CONF_TARGET,
    HostBuildSettings,
    buildx_available,
    buildx_command,
    mount_secrets,
)
from terminal_agent.sandbox.images.manager import TASK_LABEL, ImageManager
from terminal_agent.tasks.model import Task

RUN_ID = uuid.uuid4().hex[:8]
PROXY = "http://user:s3cret@proxy.invalid:3128"


def _task(name: str, dockerfile: str) -> Task:
    return Task(task_id=f"hostset-{name}-{RUN_ID}", instruction="unused", dockerfile=dockerfile,
                test_source="def test_x():\n    pass\n", test_weights={"test_x": 1.0})


@pytest.fixture
def cleanup_images(docker_client):
    yield
    for image in docker_client.images.list(filters={"label": TASK_LABEL}):
        if RUN_ID in image.labels.get(TASK_LABEL, ""):
            docker_client.images.remove(image.id, force=True)


def test_from_host_reads_proxies_pip_variables_and_the_ca_bundle(tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    settings = HostBuildSettings.from_host({"HTTPS_PROXY": PROXY, "no_proxy": "localhost", "PIP_CERT": str(bundle),
                                            "PIP_INDEX_URL": "https://u:p@pypi.internal/simple", "HOME": "/x"})
    assert settings.build_args() == {"HTTPS_PROXY": PROXY, "no_proxy": "localhost"}
    assert settings.ca_bundle == bundle and settings.needs_secrets
    assert settings.pip_conf() == f"[global]\ncert = {CA_TARGET}\nindex-url = https://u:p@pypi.internal/simple\n"
    assert PROXY not in repr(settings) and "u:p@" not in repr(settings)
    assert not HostBuildSettings(proxies={"HTTPS_PROXY": PROXY}).needs_secrets


def test_every_run_mounts_the_secrets_and_the_command_passes_them(tmp_path):
    dockerfile = "FROM debian:bookworm\nRUN pip install x\n  run --network=none echo y\nCOPY a /a\n"
    rewritten = mount_secrets(dockerfile, with_ca=True)
    runs = [line for line in rewritten.splitlines() if line.strip().upper().startswith("RUN")]
    assert len(runs) == 2
    assert all(f"target={PIP_CONF_TARGET}" in line and f"target={CA_TARGET}" in line for line in runs)
    assert runs[1].endswith("--network=none echo y") and "COPY a /a" in rewritten
    settings = HostBuildSettings(proxies={"HTTP_PROXY": PROXY}, ca_bundle=tmp_path / "ca.pem", pip_index_url="https://i/simple")
    command = buildx_command(settings, tmp_path, "Dockerfile", "t:1", {"k": "v"}, tmp_path)
    assert command[:4] == ["docker", "buildx", "build", "--load"]
    assert f"HTTP_PROXY={PROXY}" in command and "k=v" in command
    assert (tmp_path / "pip.conf").read_text().startswith("[global]\ncert = ")
    assert oct((tmp_path / "pip.conf").stat().st_mode & 0o777) == "0o600"


@pytest.mark.docker
def test_proxies_reach_the_build_but_not_the_image(docker_client, cleanup_images, tmp_path):
    # the Dockerfile names only the proxy's host, so "s3cret" can only come from the build arg
    check = 'FROM ubuntu:24.04\nRUN case "$HTTPS_PROXY" in *@proxy.invalid:3128) echo seen > /proxy-was-seen ;; *) exit 1 ;; esac\n'
    without = ImageManager(client=docker_client, cache_dir=tmp_path / "a")
    with pytest.raises(ImageBuildError):  # opt-in: nothing of the host is passed by default
        without.ensure_task_image(_task("none", check))
    manager = ImageManager(client=docker_client, cache_dir=tmp_path / "b",
                           host_settings=HostBuildSettings(proxies={"HTTPS_PROXY": PROXY}))
    tag = manager.ensure_task_image(_task("proxy", check))
    history = " ".join(str(layer.get("CreatedBy", "")) for layer in docker_client.api.history(tag))
    config = docker_client.images.get(tag).attrs["Config"]
    assert "proxy-was-seen" in history  # the RUN step ran ...
    assert "s3cret" not in history and "s3cret" not in str(config.get("Env"))  # ... and left no trace of the value
    output = docker_client.containers.run(tag, ["bash", "-c", "cat /proxy-was-seen; env"], remove=True).decode()
    assert output.startswith("seen") and "s3cret" not in output


@pytest.mark.docker
def test_a_certificate_failure_says_how_to_turn_the_opt_in_on(docker_client, cleanup_images, tmp_path):
    failing = ("FROM ubuntu:24.04\nRUN echo 'Could not fetch URL https://pypi.org/simple/x/: "
               "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed' && exit 1\n")
    manager = ImageManager(client=docker_client, cache_dir=tmp_path)
    with pytest.raises(ImageBuildError, match="--host-build-settings"):
        manager.ensure_task_image(_task("cert", failing))
    plain = "FROM ubuntu:24.04\nRUN echo nothing to see && exit 1\n"
    with pytest.raises(ImageBuildError) as raised:
        manager.ensure_task_image(_task("plain", plain))
    assert "--host-build-settings" not in str(raised.value)


@pytest.mark.docker
def test_secrets_without_buildx_are_refused_with_a_clear_error(docker_client, tmp_path):
    if buildx_available():
        pytest.skip("this docker CLI has buildx; the refusal only happens without it")
    manager = ImageManager(client=docker_client, cache_dir=tmp_path,
                           host_settings=HostBuildSettings(pip_index_url="https://pypi.internal/simple"))
    with pytest.raises(ConfigError, match="buildx"):
        manager.ensure_task_image(_task("secret", "FROM ubuntu:24.04\nRUN true\n"))
