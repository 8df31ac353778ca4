import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/acme-core/README.md': '044b71a39781c336a212223369f6a985da2e2c8fe571f97917034e66d9b09434', '/app/acme-core/acme/__init__.py': 'f92ba5a877f009d0513833b234b53897ea9ce645c40d184a55a96081e9a5e56f', '/app/acme-core/acme/core/__init__.py': '6af3ebea1896c0c651202dc0cd6dcffe62f2866ecf5b7bd1f272bb1e77e17d34', '/app/acme-core/acme/core/cli.py': '940a66eb3c126321db3f4a7e4d1f5ac8a3b2d538eedd58ad60e27f6dbf40fb22', '/app/acme-core/setup.cfg': '9ea249b17c1fe75128079308e8a2164af7d7513775d05657c9837af399b72bfe', '/app/acme-core/setup.py': '843ac26c38a41abae578250bc0f9419194b320a0f67327d941037a4268f6cfe7', '/app/acme-extra/acme/extra/__init__.py': '6a8629d53f9d446ea95dc8ade2c692d564afb728586affaf48f4851462ee5cc6', '/app/acme-extra/acme/extra/plugins.py': '59f08545ad44048e4d48fe7af135063a38a60bb99504d5cac4fd1dec345976e6', '/app/acme-extra/setup.cfg': '5dc20bf189d0b1ec2992c304c9b125e7a8bd0d56188f9f8b598c59e0ec169adb', '/app/acme-extra/setup.py': '843ac26c38a41abae578250bc0f9419194b320a0f67327d941037a4268f6cfe7'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import shutil
import sys
import zipfile

import pytest


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("acme")
    for name in ("acme-core", "acme-extra"):
        shutil.copytree(f"/app/{name}", root / name, ignore=shutil.ignore_patterns("build", "*.egg-info", "dist"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    wheels = root / "wheels"
    results = [run(*pip, "wheel", "--no-index", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(root / name),
                   timeout=180) for name in ("acme-core", "acme-extra")]
    results.append(run(*pip, "install", "--no-index", "--no-build-isolation", str(root / "acme-core"), timeout=180))
    return root, venv, wheels, results


def _acme_run(built, *args, env=None):
    return subprocess.run([str(built[1] / "bin" / "acme-run"), *args], capture_output=True, text=True, cwd="/",
                          timeout=30, env=env)


def _wheel_names(built, prefix):
    [wheel] = list(built[2].glob(f"{prefix}-*.whl"))
    return set(zipfile.ZipFile(wheel).namelist())


def test_namespace_wheels(built):
    for result in built[3]:
        assert result.returncode == 0, result.stdout[-1500:] + result.stderr[-1500:]
    core, extra = _wheel_names(built, "acme_core"), _wheel_names(built, "acme_extra")
    assert "acme/core/cli.py" in core and "acme/extra/plugins.py" in extra
    assert "acme/__init__.py" not in core and "acme/__init__.py" not in extra


def test_plugins_in_the_same_environment(built):
    install = run(str(built[1] / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation",
                  str(built[0] / "acme-extra"), timeout=180)
    assert install.returncode == 0, install.stderr[-2000:]
    result = _acme_run(built, "--list")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "reverse\nupper\n"
    assert _acme_run(built, "upper", "Hello plugins").stdout == "HELLO PLUGINS\n"
    assert _acme_run(built, "reverse", "stressed").stdout == "desserts\n"


def test_plugins_from_another_directory(built, tmp_path):
    # acme-extra in its own directory on PYTHONPATH, acme-core in the venv: the namespace spans both.
    target = tmp_path / "plugins"
    [wheel] = list(built[2].glob("acme_extra-*.whl"))
    install = run(sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--target", str(target), str(wheel),
                  timeout=180)
    assert install.returncode == 0, install.stderr[-2000:]
    run(str(built[1] / "bin" / "python"), "-m", "pip", "uninstall", "-y", "acme-extra", timeout=120)
    env = dict(os.environ, PYTHONPATH=str(target))
    assert _acme_run(built, "--list", env=env).stdout == "reverse\nupper\n"
    result = _acme_run(built, "upper", "split", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "SPLIT\n"
