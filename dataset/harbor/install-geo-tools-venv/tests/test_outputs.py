import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/projects/geo-cli/geo_cli/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/projects/geo-cli/geo_cli/cli.py': '5f1428620c497b0436ccfd64a796959526bacb1f725b03d284b3d5d1038c5d85', '/app/projects/geo-cli/setup.py': '4ed55b12fa434a4707248088a786a1148dc9a8cd779d087597576c251983751d', '/app/projects/geo-core/setup.py': '9550136fa3ab795ca979dcd527b9b095aecac18343b5dda2d9343c9d07b225e3', '/app/projects/geo-core/src/geo_core/__init__.py': 'edf7a553e465e4ca3fba0dbd50fbbb960e05e2b795c2ffcbf6061c4462d68988', '/app/projects/geo-core/src/geo_core/units.py': 'b75a7a43fc2aec5330493aee6e8d7cb19b27b2f9fa76daf2848b8fbf628563c2'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import math
import random

VENV = "/app/venv"


def _km(a, b, c, d):
    p1, p2 = math.radians(a), math.radians(c)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(d - b) / 2) ** 2
    return 2 * 6371.0088 * math.asin(math.sqrt(h))


def _geodist(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([f"{VENV}/bin/geodist", *map(str, args)], capture_output=True, text=True, timeout=30,
                          cwd="/", env=env)


def test_both_projects_in_the_venv():
    result = run(f"{VENV}/bin/python", "-c",
                 "import importlib.metadata as m, geo_core, geo_cli; print(m.version('geo-core'), m.version('geo-cli'))",
                 cwd="/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1.0.0", "0.4.0"]
    system = run("/usr/bin/python3", "-c", "import geo_core", cwd="/")
    assert system.returncode != 0, "geo_core must be installed in the venv, not system-wide"


def test_geodist_km():
    rng = random.Random(4)
    for _ in range(5):
        a, b, c, d = (round(rng.uniform(-80, 80), 4), round(rng.uniform(-170, 170), 4),
                      round(rng.uniform(-80, 80), 4), round(rng.uniform(-170, 170), 4))
        result = _geodist(a, b, c, d)
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"{_km(a, b, c, d):.1f} km\n"


def test_geodist_miles():
    result = _geodist(52.52, 13.405, 48.8566, 2.3522, "--miles")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{_km(52.52, 13.405, 48.8566, 2.3522) / 1.609344:.1f} mi\n"


def test_installed_not_linked_to_sources():
    # A regular install: the packages' code lives in the venv, not in /app/projects (no editable link).
    code = "import geo_core, geo_cli.cli; print(geo_core.__file__); print(geo_cli.cli.__file__)"
    result = run(f"{VENV}/bin/python", "-c", code, cwd="/")
    assert result.returncode == 0, result.stderr
    files = result.stdout.split()
    assert len(files) == 2 and all(f.startswith(f"{VENV}/lib/") for f in files), files
    links = run("sh", "-c", f"grep -rl /app/projects {VENV}/lib/python3*/site-packages --include=*.pth --include=*.egg-link")
    assert links.stdout.strip() == "", links.stdout
