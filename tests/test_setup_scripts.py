"""The set-up and test scripts, run for real: warm set-up is quick and idempotent, no-daemon paths
fail with a message, and "no tests collected" is a failure of scripts/test.sh."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_script(args: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=REPO, env={"PYTHON": sys.executable, **os.environ, **(env or {})}, capture_output=True, text=True, **kwargs
    )


@pytest.mark.docker
def test_warm_setup_is_quick_and_changes_nothing():
    result = run_script(["bash", "scripts/setup.sh"], timeout=600)
    assert result.returncode == 0, result.stderr
    started = time.monotonic()  # the first run may have had work to do; the second must not
    result = run_script(["bash", "scripts/setup.sh"], timeout=120)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert "pip install" not in result.stderr and "apt-get" not in result.stderr and "dockerd" not in result.stderr
    assert result.stderr.strip().endswith("[setup] ready")
    assert elapsed < 10


@pytest.mark.skipif(os.geteuid() != 0, reason="drops root to show the non-root message")
def test_no_daemon_and_not_root_says_what_to_do(tmp_path):
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    result = run_script(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "scripts/ensure_docker.sh"],
        env={"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock", "DOCKER_CONFIG": str(tmp_path)},
        timeout=60,
    )
    assert result.returncode == 1
    assert "no Docker daemon answers" in result.stderr and "as root" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the root path waits for a daemon")
def test_daemon_that_never_answers_fails_with_the_log_tail(tmp_path):
    log = tmp_path / "dockerd.log"
    log.write_text("line one of the daemon log\nlast words of the daemon\n")
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock", "DOCKERD_LOG": str(log), "DOCKERD_WAIT_S": "1"}
    try:
        pid = Path("/var/run/docker.pid").read_text().strip()
        live = Path(f"/proc/{pid}/comm").read_text().strip() == "dockerd"
    except OSError:
        live = False
    if not live:
        pytest.skip("no running dockerd: the script would start one")
    result = run_script(["bash", "scripts/ensure_docker.sh"], env=env, timeout=60)
    assert result.returncode == 1
    assert "last words of the daemon" in result.stderr and "did not answer within 1s" in result.stderr


@pytest.mark.docker
def test_test_script_fails_when_no_test_is_collected():
    result = run_script(["bash", "scripts/test.sh", "-q", "-p", "no:cacheprovider", "-k", "no_test_has_this_name_xyz"], timeout=600)
    assert result.returncode == 1
    assert "collected no tests" in result.stderr
