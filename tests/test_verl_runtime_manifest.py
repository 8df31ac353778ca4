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


def test_the_shipped_manifest_follows_from_the_lock(manifest):
    assert verl_runtime.check_manifest(manifest) == []
    lock = verl_runtime.parse_lock()
    pins = {wheel["name"]: wheel["version"] for wheel in manifest["wheels"]}
    assert pins["vllm"] == "0.24.0" and pins["verl"] == "0.9.1" and pins["ray"] == "2.60.0"
    # what a pip user of the lock gets is what runs: the lock's transformers and peft travel (the node image has
    # 5.17 and 0.21); torch and triton are the node's own, at the lock's version
    assert pins["transformers"] == lock["transformers"]["version"] == "5.9.0"
    assert pins["peft"] == lock["peft"]["version"]
    assert "torch" not in pins and "triton" not in pins
    node = verl_runtime.node_packages()
    assert node["torch"].split("+")[0] == lock["torch"]["version"]
    assert manifest["rllm_wheel"]["file"].startswith("rllm-0.3.0")
    for wheel in manifest["wheels"]:
        assert wheel["sha256"] in lock[wheel["name"]]["hashes"], wheel["name"]


def test_every_lock_package_has_one_place_and_every_exception_a_reason(manifest):
    lock, node = verl_runtime.parse_lock(), verl_runtime.node_packages()
    places = verl_runtime.classify(manifest, lock, node)
    assert sorted(name for place in places.values() for name in place) == sorted(lock)
    for name, why in {**places["node_keeps"], **places["not_carried"]}.items():
        assert len(why) > 20, name
    for name in places["node_keeps"]:  # kept from the node only where the node really has another version
        assert name in node and node[name].split("+")[0] != lock[name]["version"]


def test_the_lock_parser_reads_pins_and_every_hash(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text("# a comment\nfoo-bar==1.2.3 \\\n    --hash=sha256:" + "a" * 64 + " \\\n    --hash=sha256:"
                    + "b" * 64 + "\nBaz_Q[extra]==0.1 \\\n    --hash=sha256:" + "c" * 64 + "\n")
    parsed = verl_runtime.parse_lock(lock)
    assert parsed == {"foo-bar": {"version": "1.2.3", "hashes": {"a" * 64, "b" * 64}},
                      "baz-q": {"version": "0.1", "hashes": {"c" * 64}}}


def test_the_check_names_each_kind_of_problem(manifest):
    lock = verl_runtime.parse_lock()
    bad = copy.deepcopy(manifest)
    bad["wheels"].append(dict(bad["wheels"][0]))  # a second copy of one distribution
    next(w for w in bad["wheels"] if w["name"] == "vllm")["version"] = "0.25.0"
    bad["wheels"].append({"name": "torch", "version": "2.11.0", "file": "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                          "sha256": "0" * 64})
    bad["wheels"].append({"name": "numpy-mac", "version": "1.0", "file": "numpy_mac-1.0-cp312-cp312-macosx_11_0_arm64.whl",
                          "sha256": "0" * 64})
    bad["wheels"] = [w for w in bad["wheels"] if w["name"] != "transformers"]  # the lock's transformers left behind
    next(w for w in bad["wheels"] if w["name"] == "peft")["sha256"] = "1" * 64  # bytes the lock does not vouch for
    bad["node_keeps"]["transformers-stale"] = "a name no lock package has"
    bad["not_carried"]["some-extra"] = ""
    bad["prune"].append({"path": "vllm/some_kernel.so", "why": ""})
    bad["prune"].append({"path": "not_a_package/x.so", "why": "because"})
    problems = "\n".join(verl_runtime.check_manifest(bad))
    assert "pinned twice" in problems
    assert "vllm must be pinned at 0.24.0" in problems
    assert "torch 2.11.0 is carried but the node has it at the lock's version" in problems
    assert "not for x86-64 Linux" in problems
    assert f"transformers: the lock has {lock['transformers']['version']} and the node does not" in problems
    assert "peft: " in problems and "sha256 is not one of the lock's hashes" in problems
    assert "node_keeps transformers-stale: stale" in problems
    assert "some-extra: no reason given" in problems
    assert "prune vllm/some_kernel.so: no reason given" in problems
    assert "prune not_a_package/x.so: not inside a carried package" in problems
    assert verl_runtime.check_manifest(manifest, lock_digest="f" * 64)[0].startswith("the lock changed")


def test_node_check_names_a_package_that_differs_from_the_lock(tmp_path):
    runtime = tmp_path / "rt"
    info = runtime / "transformers-5.17.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: transformers\nVersion: 5.17.0\n")
    result = subprocess.run([sys.executable, str(SCRIPT), "node-check", str(runtime)], capture_output=True, text=True)
    assert result.returncode == 1
    assert "DIFFERS: transformers: lock 5.9.0, here 5.17.0" in result.stdout


def test_pruning_keeps_what_an_entry_keeps(tmp_path):
    (tmp_path / "bin").mkdir()
    for name in ("py-spy", "ray", "vllm"):
        (tmp_path / "bin" / name).write_text("x" * 10)
    removed = verl_runtime.prune(tmp_path, [{"path": "bin/*", "keep": ["bin/py-spy"], "why": "scripts"}])
    assert removed == 20 and sorted(p.name for p in (tmp_path / "bin").iterdir()) == ["py-spy"]


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
