import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/chronokit/README.md': '20a8fd04a1870805e5128a3903b5a99074ff98a7f999f03147eb9d31e5d8b8ec', '/app/chronokit/pyproject.toml': 'd10bc291354f773251b49e4145ae0078241ed344898bd82c6864080a414117d5', '/app/chronokit/src/chronokit/__init__.py': 'ec74b147703b2cc95cabc7f4428996b3947090c31c3922fe57d1796c5c34ed12', '/app/chronokit/src/chronokit/cli.py': 'b7a031f2e462d664a2f5312101accdb0584c89105771b706c050086e254a9caf', '/app/chronokit/src/chronokit/data/units.json': '87cccc4ee6601271ca8dd5f5d2923398f5f33acc310661b1ce6e0c1992884ec9', '/app/chronokit/src/chronokit/units.py': 'eaebe795343aa06f592f449648800fe183d11cdf0e61299c5add0d5274348555'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import shutil
import sys

import pytest


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    # A fresh copy of the project, installed (no build isolation: nothing can be downloaded) into a fresh venv.
    root = tmp_path_factory.mktemp("ck")
    shutil.copytree("/app/chronokit", root / "src", ignore=shutil.ignore_patterns("build", "*.egg-info", "dist"))
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)], check=True, timeout=120)
    install = run(str(env / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation", str(root / "src"),
                  timeout=300)
    return env, install


def _chrono(venv, *args):
    return subprocess.run([str(venv[0] / "bin" / "chrono"), *args], capture_output=True, text=True, cwd="/", timeout=30)


def test_project_installs(venv):
    env, install = venv
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    result = run(str(env / "bin" / "python"), "-c", "import chronokit, sys; print(chronokit.__file__)", cwd="/")
    assert result.returncode == 0 and result.stdout.startswith(str(env)), result.stdout + result.stderr
    assert (env / "bin" / "chrono").is_file(), "no chrono command in the venv"


def test_metadata(venv):
    code = "import importlib.metadata as m; d = m.metadata('chronokit'); print(d['Version']); print(d['Requires-Python'])"
    result = run(str(venv[0] / "bin" / "python"), "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["2.0.1", ">=3.9"]


def test_chrono_command(venv):
    assert _chrono(venv, "90061").stdout == "1d 1h 1m 1s\n"
    assert _chrono(venv, "1209659").stdout == "2w 59s\n"
    assert _chrono(venv, "0").stdout == "0s\n"
    assert _chrono(venv, "soon").returncode == 2


def test_packaged_units_data(venv):
    result = _chrono(venv, "--units")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "w 604800\nd 86400\nh 3600\nm 60\ns 1\n"
