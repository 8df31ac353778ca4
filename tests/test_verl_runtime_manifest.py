"""The GPU node's rLLM + verl + vLLM runtime: its manifest (pins, prune list, parts) and the pack/unpack path."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "training_scripts" / "device_run" / "verl_runtime.py"
spec = importlib.util.spec_from_file_location("verl_runtime", SCRIPT)
verl_runtime = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verl_runtime)


@pytest.fixture()
def manifest() -> dict:
    return verl_runtime.load_manifest()


def test_the_shipped_manifest_is_sound(manifest):
    assert verl_runtime.check_manifest(manifest) == []
    pins = {wheel["name"]: wheel["version"] for wheel in manifest["wheels"]}
    assert pins["vllm"] == "0.24.0" and pins["verl"] == "0.9.1" and pins["ray"] == "2.60.0"
    assert "torch" not in pins and "transformers" not in pins  # the node's own builds are used
    assert manifest["rllm_wheel"]["file"].startswith("rllm-0.3.0")


def test_the_manifest_matches_the_rllm_wheel_when_present(manifest):
    wheel = Path(os.environ.get("TERMINAL_AGENT_RLLM_WHEELS", SCRIPT.parents[3] / "shared" / "wheels"))
    wheel = wheel / manifest["rllm_wheel"]["file"]
    if not wheel.is_file():
        pytest.skip(f"no rLLM wheel at {wheel}")
    assert verl_runtime._sha256(wheel) == manifest["rllm_wheel"]["sha256"]


def test_the_check_names_each_kind_of_problem(manifest):
    bad = copy.deepcopy(manifest)
    bad["wheels"].append(dict(bad["wheels"][0]))  # a second copy of one distribution
    next(w for w in bad["wheels"] if w["name"] == "vllm")["version"] = "0.25.0"
    bad["wheels"].append({"name": "torch", "version": "2.11.0", "file": "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                          "sha256": "0" * 64})
    bad["wheels"].append({"name": "numpy-mac", "version": "1.0", "file": "numpy_mac-1.0-cp312-cp312-macosx_11_0_arm64.whl",
                          "sha256": "0" * 64})
    bad["prune"].append({"path": "vllm/some_kernel.so", "why": ""})
    bad["prune"].append({"path": "not_a_package/x.so", "why": "because"})
    problems = "\n".join(verl_runtime.check_manifest(bad))
    assert "pinned twice" in problems
    assert "vllm must be pinned at 0.24.0" in problems
    assert "torch is on the node already" in problems
    assert "not for x86-64 Linux" in problems
    assert "prune vllm/some_kernel.so: no reason given" in problems
    assert "prune not_a_package/x.so: not inside a carried package" in problems


def test_tar_is_the_same_bytes_for_the_same_tree(tmp_path):
    trees = []
    for index in range(2):
        root = tmp_path / f"tree{index}"
        (root / "pkg" / "sub").mkdir(parents=True)
        (root / "pkg" / "b.py").write_text("b = 2\n")
        (root / "pkg" / "sub" / "a.py").write_text("a = 1\n")
        os.utime(root / "pkg" / "b.py", (1000 + index * 500, 1000 + index * 500))
        out = tmp_path / f"tree{index}.tar"
        verl_runtime.write_tar(root, out)
        trees.append(out.read_bytes())
    assert trees[0] == trees[1]


def _packed_runtime(tmp_path: Path, part_bytes: int) -> tuple[Path, dict]:
    root = tmp_path / "rt"
    (root / "fakepkg").mkdir(parents=True)
    (root / "fakepkg" / "__init__.py").write_text("VALUE = 42\n")
    (root / "fakepkg" / "blob.bin").write_bytes(os.urandom(300_000))
    verl_runtime.write_tar(root, tmp_path / "rt.tar")
    with open(tmp_path / "rt.tar.xz", "wb") as sink:
        subprocess.run(["xz", "-1", "-c", str(tmp_path / "rt.tar")], stdout=sink, check=True)
    stage = tmp_path / "stage"
    stage.mkdir()
    parts = verl_runtime.cut_parts(tmp_path / "rt.tar.xz", stage, part_bytes / verl_runtime.MIB)
    manifest = {"parts": parts, "stream_bytes": (tmp_path / "rt.tar.xz").stat().st_size,
                "stream_sha256": verl_runtime._sha256(tmp_path / "rt.tar.xz")}
    (stage / "verl_runtime.json").write_text(json.dumps(manifest))
    return stage, manifest


def test_unpack_checks_every_part_and_rebuilds_the_tree(tmp_path):
    stage, manifest = _packed_runtime(tmp_path, part_bytes=100_000)
    assert len(manifest["parts"]) >= 3
    target = tmp_path / "unpacked"
    assert verl_runtime.main(["unpack", str(stage), str(target)]) == 0
    result = subprocess.run([sys.executable, "-c", "import fakepkg; print(fakepkg.VALUE)"], env={**os.environ,
                            "PYTHONPATH": str(target)}, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "42"
    assert verl_runtime.main(["unpack", str(stage), str(target)]) == 0  # idempotent: already unpacked


def test_unpack_refuses_a_corrupted_or_missing_part(tmp_path, capsys):
    stage, manifest = _packed_runtime(tmp_path, part_bytes=100_000)
    second = stage / manifest["parts"][1]["name"]
    data = bytearray(second.read_bytes())
    data[10] ^= 0xFF
    second.write_bytes(bytes(data))
    assert verl_runtime.main(["unpack", str(stage), str(tmp_path / "u1")]) == 2
    assert f"{second.name}: sha256 differs" in capsys.readouterr().err
    second.unlink()
    assert verl_runtime.main(["unpack", str(stage), str(tmp_path / "u2")]) == 2
    assert f"{second.name} is not staged" in capsys.readouterr().err
    assert not (tmp_path / "u2").exists()
