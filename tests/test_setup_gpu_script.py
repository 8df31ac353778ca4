"""``bash scripts/setup.sh --gpu`` (scripts/setup_gpu.sh) refuses what cannot take the GPU lock with one line and
exit 2 before installing anything: an interpreter that is not CPython 3.12, one that does not run, a machine that
is not x86-64 Linux. Fast: no network, no venv is made. (The whole install is measured by hand: docs/setup.md.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def setup_gpu(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "scripts/setup.sh", "--gpu", *args], cwd=REPO, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("[setup] error: "), done.stderr
    assert "pip install" not in done.stdout + done.stderr
    return lines[0]


@pytest.mark.skipif(sys.version_info[:2] == (3, 12), reason="this interpreter is the lock's own Python")
def test_a_wrong_python_is_refused_in_one_line_before_anything_is_installed(tmp_path):
    venv = tmp_path / "venv"
    line = one_error_line(setup_gpu({"PYTHON": sys.executable, "GPU_VENV": str(venv)}))
    found = f"CPython {sys.version.split()[0]}"
    assert f"{sys.executable} is {found}; the GPU lock is for CPython 3.12" in line
    assert "PYTHON=python3.12 bash scripts/setup.sh --gpu" in line and "uv python install 3.12" in line
    assert not venv.exists()


def test_a_python_that_does_not_run_is_named(tmp_path):
    broken = tmp_path / "python3.12"
    broken.write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
    broken.chmod(0o755)
    line = one_error_line(setup_gpu({"PYTHON": str(broken), "GPU_VENV": str(tmp_path / "venv")}))
    assert f"{broken} does not run (pyenv: python3.12: command not found)" in line
    assert "PYTHON=python3.12 bash scripts/setup.sh --gpu" in line


def test_a_machine_that_is_not_x86_64_is_refused(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    uname = bin_dir / "uname"  # the machine as an aarch64 one reports itself
    uname.write_text('#!/bin/sh\ncase "$1" in -m) echo aarch64 ;; *) echo Linux ;; esac\n')
    uname.chmod(0o755)
    line = one_error_line(setup_gpu({"PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHON": sys.executable}))
    assert "this machine is aarch64" in line and "x86-64 Linux" in line


def test_an_existing_venv_of_another_python_is_refused(tmp_path):
    if sys.version_info[:2] == (3, 12):
        pytest.skip("this interpreter is the lock's own Python")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    fake_312 = tmp_path / "python3.12"  # the base interpreter passes; the venv found there does not
    fake_312.write_text("#!/bin/sh\necho 'CPython 3.12.1'\n")
    fake_312.chmod(0o755)
    line = one_error_line(setup_gpu({"PYTHON": str(fake_312), "GPU_VENV": str(venv)}))
    assert f"{venv} holds CPython {sys.version.split()[0]}, not CPython 3.12: rm -rf {venv}" in line


def test_a_lock_pip_cannot_satisfy_ends_with_one_line_naming_the_package(tmp_path):
    """pip finds no distribution of a locked package (here: an index-less pip and a package nobody publishes):
    the set-up stops with one line naming it, exit 2. The interpreter passes for CPython 3.12 (a wrapper that
    answers the version question and hands everything else to this Python), and GPU_VENV=none makes no venv."""
    wrapper = tmp_path / "python3.12"
    wrapper.write_text('#!/bin/sh\ncase "$2" in *python_implementation*) echo "CPython 3.12.1"; exit 0 ;; esac\n'
                       f'exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    lock = tmp_path / "gpu.lock"
    lock.write_text("no-such-package-for-tests==1.0 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    (tmp_path / "links").mkdir()
    env = {"PYTHON": str(wrapper), "GPU_VENV": "none", "GPU_LOCK": str(lock), "TMPDIR": str(tmp_path),
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "links")}
    done = setup_gpu(env)
    assert done.returncode == 2, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"[setup] error: the install of {lock} failed: no distribution of "
                           "no-such-package-for-tests==1.0 for this Python and platform"), done.stderr
    assert f"pip's log: {tmp_path}" in last
