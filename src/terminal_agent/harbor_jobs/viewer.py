"""Stock Harbor's viewer on our runs: find (or make) the Harbor venv and start ``harbor view`` on 127.0.0.1.

Harbor needs Python >= 3.12 and is no dependency of this package: it lives in its own venv, the one
``scripts/setup_harbor_venv.sh`` builds (``$TERMINAL_AGENT_HARBOR_VENV``, default
``~/.cache/terminal-agent/harbor-venv``; the tests use the same one).

:func:`jobs_folder_for` turns what the user names into the folder Harbor serves: an eval run (converted first
when it predates the job layout) is served from its parent with the URL of its own job, a training run from its
``rollouts/`` folder, a folder of runs as it is (older runs in it converted).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from terminal_agent.errors import ConfigError, ViewerSetupError
from terminal_agent.harbor_jobs.training_trials import ROLLOUTS_DIR

logger = logging.getLogger(__name__)

HARBOR_VERSION = "0.25.0"
SETUP_SCRIPT = "scripts/setup_harbor_venv.sh"


def harbor_venv_dir() -> Path:
    explicit = os.environ.get("TERMINAL_AGENT_HARBOR_VENV")
    if explicit:
        return Path(explicit)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "terminal-agent" / "harbor-venv"


def find_harbor_python() -> Path | None:
    """The Harbor venv's python when the venv is built for :data:`HARBOR_VERSION`, else None."""
    venv = harbor_venv_dir()
    python, stamp = venv / "bin" / "python", venv / ".terminal-agent-stamp"
    if python.exists() and stamp.is_file() and stamp.read_text().strip() == f"harbor=={HARBOR_VERSION}":
        return python
    return None


def setup_script() -> Path | None:
    """The venv script of a source checkout (an installed wheel has none)."""
    candidate = Path(__file__).resolve().parents[3] / SETUP_SCRIPT
    return candidate if candidate.is_file() else None


def setup_command() -> str:
    return f"bash {SETUP_SCRIPT}" if setup_script() else (
        f"python3.12 -m venv {harbor_venv_dir()} && {harbor_venv_dir()}/bin/pip install harbor=={HARBOR_VERSION} "
        f"&& echo harbor=={HARBOR_VERSION} > {harbor_venv_dir()}/.terminal-agent-stamp"
    )


def make_harbor_venv(timeout_s: float = 900.0) -> Path:
    """Build the venv with the checkout's script; ViewerSetupError (naming the command) when it cannot."""
    script = setup_script()
    if script is None or shutil.which("bash") is None:
        raise ViewerSetupError(f"no Harbor venv at {harbor_venv_dir()}; make it with: {setup_command()}")
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise ViewerSetupError(f"{SETUP_SCRIPT} failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")
    python = Path(proc.stdout.strip().splitlines()[-1])
    if not python.exists():
        raise ViewerSetupError(f"{SETUP_SCRIPT} printed {python}, which does not exist")
    return python


@dataclass
class ViewTarget:
    """What ``harbor view`` serves and where the user should look."""

    jobs_dir: Path
    """The folder Harbor lists jobs of."""
    job_name: str | None = None
    """The job to open, when one run was named."""
    converted: tuple[Path, ...] = ()
    """Eval runs given the job layout on the way."""

    def path(self) -> str:
        return f"/jobs/{quote(self.job_name, safe='')}" if self.job_name else "/"


def _is_job(path: Path) -> bool:
    return (path / "config.json").is_file() and (path / "result.json").is_file()


def jobs_folder_for(path: Path, *, convert: bool = True) -> ViewTarget:
    """See the module docstring; ConfigError when ``path`` holds no run."""
    from terminal_agent.harbor_jobs.eval_jobs import convert_run, is_eval_run

    path = Path(path).resolve()
    if not path.is_dir():
        raise ConfigError(f"{path} is not a directory")
    converted: list[Path] = []
    if (path / ROLLOUTS_DIR).is_dir():
        return ViewTarget(path / ROLLOUTS_DIR)
    if is_eval_run(path) or _is_job(path):
        if not _is_job(path):
            if not convert:
                raise ConfigError(f"{path} predates the Harbor job layout; convert it: terminal-agent eval harbor-export {path}")
            convert_run(path)
            converted.append(path)
        return ViewTarget(path.parent, path.name, tuple(converted))
    children = sorted(child for child in path.iterdir() if child.is_dir())
    for child in children:
        if is_eval_run(child) and not _is_job(child) and convert:
            convert_run(child)
            converted.append(child)
    if not any(_is_job(child) for child in children):
        raise ConfigError(f"{path} holds no eval run, Harbor job or training rollouts")
    return ViewTarget(path, None, tuple(converted))


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningViewer:
    """A ``harbor view`` process serving on 127.0.0.1."""

    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path | None = None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_viewer(jobs_dir: Path, *, harbor_python: Path, port: int | None = None, ready_timeout_s: float = 60.0,
                 log_path: Path | None = None) -> RunningViewer:
    """Start ``harbor view JOBS_DIR --jobs`` bound to 127.0.0.1 and wait until its API answers."""
    harbor = Path(harbor_python).parent / "harbor"
    port = port or free_port()
    command = [str(harbor), "view", str(jobs_dir), "--jobs", "--host", "127.0.0.1", "--port", str(port)]
    output = open(log_path, "wb") if log_path else subprocess.DEVNULL  # noqa: SIM115 - the child keeps it open
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    viewer = RunningViewer(process, f"http://127.0.0.1:{port}", log_path)
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-1500:] if log_path else ""
            raise ViewerSetupError(f"harbor view exited with {process.returncode} before serving. {tail}".strip())
        try:
            with urllib.request.urlopen(viewer.base_url + "/api/health", timeout=2) as response:
                if response.status == 200:
                    return viewer
        except (urllib.error.URLError, ConnectionError, TimeoutError):  # not listening yet: poll again
            pass
        time.sleep(0.3)
    viewer.stop()
    raise ViewerSetupError(f"harbor view did not answer on {viewer.base_url} within {ready_timeout_s:.0f} s")


__all__ = [
    "HARBOR_VERSION", "ROLLOUTS_DIR", "RunningViewer", "ViewTarget", "find_harbor_python", "free_port", "harbor_venv_dir",
    "jobs_folder_for", "make_harbor_venv", "setup_command", "start_viewer",
]
