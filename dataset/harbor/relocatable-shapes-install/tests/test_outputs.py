import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/shapes/Makefile': '1b3aaeed1d3273805cd1ee5d06a89f4e8726c6935b69015896cea931220acaa6', '/app/shapes/app/shapes.c': 'cb94d83aea3bd5f0a442dc93a2c6aefda6847f61ea57ad04dcbd4bdacc24a071', '/app/shapes/lib/area.c': 'c7ad9ec86680a04ee76d823f65297aa2085a263eedfd2d2d4c0c8190e2537402', '/app/shapes/lib/geom.h': '002be8c447e2227a66d0fcdb921773abb504aabc6a2ee87dbf2018f8347f1912', '/app/shapes/lib/perimeter.c': 'ea944fc12c70565023b44660f82adca2f9baa966790745034a266002c18053a8'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import glob
import math
import shutil

DIST = "/app/dist"


def _env():
    return {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}


def _shapes(root, *args):
    return subprocess.run([f"{root}/bin/shapes", *map(str, args)], capture_output=True, text=True, timeout=30,
                          cwd="/", env=_env())


def _check_outputs(root):
    result = _shapes(root, "circle", 2)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"area {math.pi * 4:.3f} perimeter {math.pi * 4:.3f}\n"
    result = _shapes(root, "rect", 3, 4.5)
    assert result.stdout == "area 13.500 perimeter 15.000\n", result.stderr
    result = _shapes(root, "triangle", 3, 4, 5)
    assert result.stdout == "area 6.000 perimeter 12.000\n", result.stderr


def test_installed_program_runs():
    _check_outputs(DIST)
    bad = _shapes(DIST, "triangle", 1, 1, 5)
    assert bad.returncode == 1 and "invalid triangle" in bad.stderr


def test_library_soname_and_links():
    real = Path(DIST, "lib", "libgeom.so.1.2.0")
    assert real.is_file() and not real.is_symlink()
    assert os.readlink(f"{DIST}/lib/libgeom.so.1") == "libgeom.so.1.2.0"
    assert os.readlink(f"{DIST}/lib/libgeom.so") == "libgeom.so.1"
    lib = run("readelf", "-d", str(real)).stdout
    assert "(SONAME)" in lib and "[libgeom.so.1]" in lib
    program = run("readelf", "-d", f"{DIST}/bin/shapes").stdout
    assert "Shared library: [libgeom.so.1]" in program
    symbols = run("nm", "-D", "--defined-only", str(real)).stdout
    assert "rect_perimeter" in symbols and "circle_area" in symbols


def test_tree_is_relocatable(tmp_path):
    moved = tmp_path / "elsewhere" / "shapes-1.2"
    shutil.copytree(DIST, moved, symlinks=True)
    os.rename(DIST, DIST + ".away")
    try:
        _check_outputs(str(moved))
        ldd = subprocess.run(["ldd", f"{moved}/bin/shapes"], capture_output=True, text=True, env=_env()).stdout
    finally:
        os.rename(DIST + ".away", DIST)
    assert "libgeom.so.1 => " + str(moved) in ldd, ldd


def test_nothing_installed_system_wide():
    found = [p for d in ("/usr/lib", "/usr/local/lib", "/lib")
             for p in glob.glob(f"{d}/**/libgeom.so*", recursive=True)]
    assert found == []
    conf = " ".join(Path(p).read_text() for p in glob.glob("/etc/ld.so.conf.d/*"))
    assert "/app" not in conf and "/app" not in Path("/etc/ld.so.conf").read_text()
