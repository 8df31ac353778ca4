import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/tinyfmt/LICENSE': 'f7bcf79d603a9c33be905a96a23f9959d2b1a2255d1a8c71d633f750763bda5e', '/app/tinyfmt/README.md': '5b3c649b5d545a7ef336acc3413427e964dd5ac9210b5a7d8b2421ea399ad75b', '/app/tinyfmt/RELEASE.md': '5c40914c41c47e1b793700404d0266505e3c8d3256de27e638af907937b4b56a', '/app/tinyfmt/setup.py': '05cdec1d06a0eaeddbd3f13b720986a506da7bb058b96f292219fd2ead1f62b0', '/app/tinyfmt/tests/__init__.py': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '/app/tinyfmt/tests/test_table.py': 'dd078ba2df2f468dd07fe2a660046759c91ed860a6aad71408e88fb907300a1f', '/app/tinyfmt/tinyfmt/__init__.py': 'f7fd584d9f7d676d5064a5e650adeaadc64c557a1c12065a4ed2502febe95697', '/app/tinyfmt/tinyfmt/cli.py': 'd930f1cf9670592057b39535076a7fd98861992df76e582b0655b9c954b0e07c', '/app/tinyfmt/tinyfmt/table.py': '888bcfe7398c3b380a3a4e306a82de5a161e90a8d4b2961ee62536c5cff16626', '/app/tinyfmt/tinyfmt/templates/grid.tmpl': '4e6fbec3932cb70095ba48818480c623356c59b53dad9b2cbfe8012707875d58', '/app/tinyfmt/tinyfmt/templates/plain.tmpl': '289a6cc847d7a5d0458fd8413ae105d491f432e1e14e4ecc53aa977d77063e9a'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import email
import sys
import tarfile
import zipfile

WHEEL = "/app/dist/tinyfmt-1.4.2-py3-none-any.whl"
SDIST = "/app/dist/tinyfmt-1.4.2.tar.gz"


def _metadata():
    with zipfile.ZipFile(WHEEL) as wheel:
        return email.message_from_bytes(wheel.read("tinyfmt-1.4.2.dist-info/METADATA"))


def test_wheel_metadata():
    meta = _metadata()
    assert meta["Name"] == "tinyfmt" and meta["Version"] == "1.4.2"
    assert meta["Summary"] == "Fixed-width text tables"
    assert meta["Author"] == "Ada Example" or "Ada Example" in (meta["Author-email"] or "")
    assert "ada@example.com" in (meta["Author-email"] or "")
    assert meta["Requires-Python"] == ">=3.9"
    assert "License :: OSI Approved :: MIT License" in meta.get_all("Classifier", [])
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "tinyfmt --template grid" in meta.get_payload()
    assert sorted(os.listdir("/app/dist")) == ["tinyfmt-1.4.2-py3-none-any.whl", "tinyfmt-1.4.2.tar.gz"]
    assert "1.4.2" in Path("/app/tinyfmt/tinyfmt/__init__.py").read_text()


def test_wheel_contents():
    with zipfile.ZipFile(WHEEL) as wheel:
        names = set(wheel.namelist())
        points = wheel.read("tinyfmt-1.4.2.dist-info/entry_points.txt").decode()
    assert {"tinyfmt/templates/plain.tmpl", "tinyfmt/templates/grid.tmpl", "tinyfmt/cli.py"} <= names
    assert not any(name.startswith("tests/") for name in names), sorted(names)
    assert "[console_scripts]" in points and "tinyfmt = tinyfmt.cli:main" in points.replace("=", " = ").replace("  ", " ")


def test_sdist_contents():
    with tarfile.open(SDIST) as tar:
        names = set(tar.getnames())
        pkg_info = tar.extractfile("tinyfmt-1.4.2/PKG-INFO").read().decode()
    for name in ("README.md", "LICENSE", "tests/test_table.py", "tinyfmt/templates/grid.tmpl", "tinyfmt/table.py"):
        assert f"tinyfmt-1.4.2/{name}" in names, name
    assert "Version: 1.4.2" in pkg_info and "Requires-Python: >=3.9" in pkg_info


def test_wheel_installs_and_runs(tmp_path):
    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)).returncode == 0
    install = run(str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-deps", WHEEL, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    result = subprocess.run([str(venv / "bin" / "tinyfmt"), "--template", "grid"], input="id,name\n7,Ada\n1234,Bo\n",
                            capture_output=True, text=True, cwd="/", timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "id   | name\n---- | ----\n7    | Ada\n1234 | Bo\n"
