"""The offline verifier runtime fetches wheels for the python the verifier runs under, cached per python.

The wheels are built here (a compiled ``fakeext`` for two CPython versions, a pure ``fakepure`` it needs) and served
from a wheelhouse, so real ``pip download`` runs without a registry; the probe runs on the host's interpreter as it
runs in a sandbox.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.target_python import PROBE, TargetPython, host_target_python, parse_probe
from terminal_agent.rewards.verifier_runtime import (
    ToolUnavailable,
    fetch_key,
    fetch_tool,
    parse_requirement,
    plan_runtime,
    tool_cache_dir,
)

MACHINE = platform.machine()
HOST = (sys.version_info[0], sys.version_info[1])
OTHER = (3, 13) if HOST != (3, 13) else (3, 12)
"""A CPython version that is not the host's."""


def cpython(version: tuple[int, int], glibc: tuple[int, int] | None = (2, 41)) -> TargetPython:
    return TargetPython("cpython", version, MACHINE, glibc)


def write_wheel(folder: Path, name: str, tags: str, requires: tuple[str, ...] = ()) -> str:
    """A minimal wheel ``name-1.0-TAGS.whl`` holding the module ``name`` and its metadata."""
    filename = f"{name}-1.0-{tags}.whl"
    info = f"{name}-1.0.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}/__init__.py", f"BUILT_FOR = {tags!r}\n")
        archive.writestr(f"{info}/METADATA", metadata)
        archive.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tags}\n")
        archive.writestr(f"{info}/RECORD", "")
    (folder / filename).write_bytes(buffer.getvalue())
    return filename


@pytest.fixture()
def wheelhouse(tmp_path: Path) -> Path:
    """fakeext for the host's CPython and for OTHER (manylinux2014), needing the pure fakepure."""
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    for version in (HOST, OTHER):
        tag = f"cp{version[0]}{version[1]}"
        write_wheel(folder, "fakeext", f"{tag}-{tag}-manylinux_2_17_{MACHINE}.manylinux2014_{MACHINE}", ("fakepure",))
    write_wheel(folder, "fakepure", "py3-none-any")
    return folder


def offline(tmp_path: Path, wheelhouse: Path | None) -> HarborGradingConfig:
    return HarborGradingConfig(tool_cache_dir=str(tmp_path / "cache"),
                               wheelhouse=str(wheelhouse) if wheelhouse else None, use_registry=False)


def test_the_hosts_python_keeps_the_cache_key_of_the_requirement_alone():
    requirement = parse_requirement("numpy==2.3.3", "uvx -w")
    assert requirement is not None
    legacy = hashlib.sha256(b"numpy==2.3.3").hexdigest()[:24]
    assert fetch_key(requirement) == legacy == fetch_key(requirement, host_target_python())
    other = fetch_key(requirement, cpython(OTHER))
    assert other != legacy
    assert fetch_key(requirement, cpython(OTHER, (2, 36))) not in (legacy, other)  # another glibc, other wheels


def test_compiled_wheels_are_fetched_and_cached_per_python(tmp_path, wheelhouse):
    requirement = parse_requirement("fakeext==1.0", "uvx -w")
    assert requirement is not None
    config = offline(tmp_path, wheelhouse)
    host_tag, other_tag = (f"cp{v[0]}{v[1]}" for v in (HOST, OTHER))

    for_host = fetch_tool(requirement, config)
    for_other = fetch_tool(requirement, config, cpython(OTHER))
    names = {w.distribution: w.filename for w in for_host.wheels}
    assert names["fakeext"].startswith(f"fakeext-1.0-{host_tag}-{host_tag}-")
    assert names["fakepure"] == "fakepure-1.0-py3-none-any.whl"
    names = {w.distribution: w.filename for w in for_other.wheels}
    assert names["fakeext"].startswith(f"fakeext-1.0-{other_tag}-{other_tag}-") and "fakepure" in names
    assert all(w.compiled for w in for_other.wheels if w.distribution == "fakeext")

    cache = tool_cache_dir(config)
    keys = [fetch_key(requirement), fetch_key(requirement, cpython(OTHER))]
    assert sorted(p.name for p in cache.iterdir()) == sorted(keys)
    recorded = json.loads((cache / fetch_key(requirement, cpython(OTHER)) / "tool.json").read_text())
    assert recorded["target"] == f"{other_tag}-manylinux_2_41_{MACHINE}"
    assert "target" not in json.loads((cache / fetch_key(requirement) / "tool.json").read_text())  # as it always was

    # the disk cache serves each python its own wheels without any source
    no_source = offline(tmp_path, None)
    assert fetch_tool(requirement, no_source, cpython(OTHER)).wheels == for_other.wheels
    assert fetch_tool(requirement, no_source, host_target_python()).wheels == for_host.wheels


def test_a_python_the_package_has_no_wheel_for_is_unavailable_naming_both(tmp_path, wheelhouse):
    requirement = parse_requirement("fakeext==1.0", "uvx -w")
    assert requirement is not None
    missing = cpython((3, 9))
    with pytest.raises(ToolUnavailable, match=r"fakeext==1\.0 for CPython 3\.9 on .* with glibc 2\.41"):
        fetch_tool(requirement, offline(tmp_path, wheelhouse), missing)
    # the plan records it the way it records any tool it cannot provide (the image's own copy, else not scored)
    plan = plan_runtime([requirement], offline(tmp_path, wheelhouse), missing)
    assert "CPython 3.9" in plan.unavailable["fakeext"] and not plan.wheels
    assert any(s.startswith("fakeext==1.0 -> the image's own copy") for s in plan.substitutions)


def test_a_python_without_glibc_gets_pure_wheels_only(tmp_path, wheelhouse):
    config = offline(tmp_path, wheelhouse)
    musl = cpython(OTHER, glibc=None)
    assert not musl.compiled_ok
    pure = parse_requirement("fakepure", "uvx -w")
    assert pure is not None
    assert [w.filename for w in fetch_tool(pure, config, musl).wheels] == ["fakepure-1.0-py3-none-any.whl"]
    compiled = parse_requirement("fakeext", "uvx -w")
    assert compiled is not None
    with pytest.raises(ToolUnavailable, match="pure-Python wheels only"):
        fetch_tool(compiled, config, musl)


def test_compiled_tags_cover_every_manylinux_its_glibc_runs():
    options = cpython((3, 13), (2, 41)).compiled_tags()
    platforms = [options[i + 1] for i, word in enumerate(options) if word == "--platform"]
    abis = [options[i + 1] for i, word in enumerate(options) if word == "--abi"]
    assert platforms[0] == f"manylinux_2_41_{MACHINE}" and f"manylinux_2_17_{MACHINE}" in platforms
    assert f"manylinux2014_{MACHINE}" in platforms and f"manylinux1_{MACHINE}" in platforms
    assert f"manylinux_2_42_{MACHINE}" not in platforms and platforms[-1] == f"linux_{MACHINE}"
    assert abis == ["cp313", "abi3", "none"] and options[:4] == ["--python-version", "3.13", "--implementation", "cp"]
    old = cpython((3, 13), (2, 12)).compiled_tags()
    assert f"manylinux2014_{MACHINE}" not in old and f"manylinux2010_{MACHINE}" in old


def test_the_probe_says_what_the_interpreter_is():
    # run as the grader runs it in a sandbox: the interpreter isolated, no site
    run = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", PROBE], capture_output=True, text=True, check=True)
    found = parse_probe(run.stdout)
    assert found == host_target_python() and found.matches_host
    answer = '{"implementation": "cpython", "version": [3, 13], "machine": "x86_64", "libc": "%s"}\n'
    assert parse_probe(answer % "glibc 2.41") == TargetPython("cpython", (3, 13), "x86_64", (2, 41))
    assert parse_probe(answer % "musl").glibc is None
