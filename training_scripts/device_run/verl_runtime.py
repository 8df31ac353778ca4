#!/usr/bin/env python3
"""The rLLM + verl + vLLM runtime the GPU node lacks: pinned wheels, pruned, packed into carried parts.

    python training_scripts/device_run/verl_runtime.py download -d WHL             # here: the pinned wheels (pip)
    python training_scripts/device_run/verl_runtime.py build -d WHL --rllm-wheel RLLM_WHL -o .device_carry/runtime
    python training_scripts/device_run/verl_runtime.py check                       # the manifest alone (CI)
    python training_scripts/device_run/verl_runtime.py unpack STAGE_DIR RUNTIME_DIR  # there: sha256, then xz -d | tar

Everything is read from ``verl_runtime.json`` beside this script: the Python the node runs (3.12), each
wheel's exact file and sha256 (the resolution of ``verl[vllm]==0.9.1``, ``ray==2.60.0``,
``tensordict==0.10.0`` for Python 3.12, less every distribution the node's image already has: torch 2.11,
transformers, numpy ...), the rLLM HEAD wheel (not on the package registry: passed by path), the prune list
with a reason per entry, and, once built, the parts with their sizes and sha256.

``build`` installs the wheels ``--no-deps --target`` a scratch folder, deletes the pruned paths (kernels for
other GPUs, MoE/MLA kernels, Java jars, static libraries, console scripts), writes a tar with sorted names,
zero mtimes and root owners (the same wheels give the same bytes), compresses it with ``xz -9``, cuts
the stream in parts and records their sha256 in ``verl_runtime.json``. ``unpack`` refuses parts whose
stream does not match that record. Put the unpacked folder first on ``PYTHONPATH``: the dist-info folders
stay, so ``importlib.metadata`` sees the pinned versions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

MIB = 1 << 20
HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "verl_runtime.json"


class RuntimeManifestError(Exception):
    """A runtime manifest, wheel or part that is not what it should be (the message names it)."""


def load_manifest(path: Path = MANIFEST) -> dict:
    return json.loads(path.read_text())


def check_manifest(manifest: dict) -> list[str]:
    """Problems of the manifest itself (empty: sound). Read by ``check`` and by the CI test."""
    problems: list[str] = []
    pins = {wheel["name"]: wheel["version"] for wheel in manifest["wheels"]}
    if len(pins) != len(manifest["wheels"]):
        problems.append("a distribution is pinned twice (two versions stop the install)")
    for name, version in manifest["required_pins"].items():
        if pins.get(name) != version:
            problems.append(f"{name} must be pinned at {version} (found {pins.get(name)})")
    on_node = set(manifest["node_has"])
    for wheel in manifest["wheels"]:
        if wheel["name"] in on_node:
            problems.append(f"{wheel['name']} is on the node already: carrying it shadows the node's own")
        if not wheel["file"].endswith(".whl") and not wheel.get("build_from_sdist"):
            problems.append(f"{wheel['name']}: {wheel['file']} is no wheel (mark build_from_sdist)")
        if len(wheel.get("sha256", "")) != 64:
            problems.append(f"{wheel['name']}: no sha256")
        version_in_file = wheel["file"].replace("_", "-").lower()
        if f"-{wheel['version'].lower()}" not in version_in_file:
            problems.append(f"{wheel['name']}: file {wheel['file']} is not version {wheel['version']}")
        tags = wheel["file"].removesuffix(".whl").split("-")[-3:] if wheel["file"].endswith(".whl") else []
        if tags and not (tags[0].startswith(("cp312", "py3", "py2.py3", "cp38", "cp39", "cp310", "cp311", "py312",
                                            "py37"))):
            problems.append(f"{wheel['name']}: {wheel['file']} is not for CPython 3.12")
        if tags and tags[2] != "any" and "x86_64" not in tags[2]:
            problems.append(f"{wheel['name']}: {wheel['file']} is not for x86-64 Linux")
    tops = {top for wheel in manifest["wheels"] for top in wheel.get("top_level", [wheel["name"].replace("-", "_")])}
    tops.add("rllm")
    for entry in manifest["prune"]:
        if not entry.get("why"):
            problems.append(f"prune {entry['path']}: no reason given")
        first = entry["path"].split("/", 1)[0]
        if first not in tops and first != "bin":
            problems.append(f"prune {entry['path']}: not inside a carried package")
    parts = manifest.get("parts") or []
    if parts:
        if sum(part["bytes"] for part in parts) != manifest["stream_bytes"]:
            problems.append("the parts do not add up to the recorded stream")
        limit = manifest["part_mib"] * MIB
        problems += [f"part {p['name']} is over {manifest['part_mib']} MiB" for p in parts if p["bytes"] > limit]
    return problems


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(4 * MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def download(args: argparse.Namespace) -> int:
    manifest = load_manifest()
    target = Path(args.dir)
    target.mkdir(parents=True, exist_ok=True)
    python = args.python or shutil.which(f"python{manifest['python']}") or sys.executable
    platforms = sorted({tag for wheel in manifest["wheels"] if wheel["file"].endswith(".whl")
                        for tag in wheel["file"].removesuffix(".whl").split("-")[-1].split(".") if "linux" in tag})
    binaries = [w for w in manifest["wheels"] if not w.get("build_from_sdist") and not (target / w["file"]).is_file()]
    if binaries:
        cmd = [python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(target),
               "--python-version", manifest["python"], "--implementation", "cp"]
        for platform in platforms:
            cmd += ["--platform", platform]
        cmd += [f"{w['name']}=={w['version']}" for w in binaries]
        subprocess.run(cmd, check=True)
    for wheel in manifest["wheels"]:
        if wheel.get("build_from_sdist") and not any(target.glob(wheel["wheel_glob"])):
            with tempfile.TemporaryDirectory() as scratch:  # a pure-Python sdist: build its wheel once here
                subprocess.run([python, "-m", "pip", "download", "--no-deps", "--no-binary=:all:", "-d", scratch,
                                f"{wheel['name']}=={wheel['version']}"], check=True)
                sdist = next(Path(scratch).iterdir())
                if _sha256(sdist) != wheel["sdist_sha256"]:
                    raise RuntimeManifestError(f"{sdist.name}: sha256 differs from the manifest")
                subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-w", str(target), str(sdist)], check=True)
    bad = [w["file"] for w in manifest["wheels"] if not w.get("build_from_sdist")
           and (not (target / w["file"]).is_file() or _sha256(target / w["file"]) != w["sha256"])]
    if bad:
        raise RuntimeManifestError(f"not downloaded as pinned (pip chose another file, or its sha256 differs): {', '.join(bad)}")
    print(f"{len(manifest['wheels'])} wheels in {target}")
    return 0


def _deterministic(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def write_tar(root: Path, out: Path) -> None:
    """A tar of ``root``'s contents with sorted names, zero mtimes and root owners: same tree, same bytes."""
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(dirnames) + sorted(filenames):
                path = Path(dirpath) / name
                tar.add(path, arcname=str(path.relative_to(root)), recursive=False, filter=_deterministic)


def prune(root: Path, entries: list[dict]) -> int:
    """Delete the pruned paths (globs relative to the runtime root); the bytes removed."""
    removed = 0
    for entry in entries:
        for path in sorted(root.glob(entry["path"])):
            if path.is_dir() and not path.is_symlink():
                removed += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
                shutil.rmtree(path)
            elif path.exists():
                removed += path.stat().st_size
                path.unlink()
    return removed


def _tree_bytes(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.is_symlink())


def cut_parts(stream: Path, out: Path, part_mib: float) -> list[dict]:
    size = int(part_mib * MIB)
    parts = []
    with open(stream, "rb") as src:
        index = 1
        while block := src.read(size):
            part = out / f"rt-part{index:02d}"
            part.write_bytes(block)
            parts.append({"name": part.name, "bytes": len(block), "sha256": hashlib.sha256(block).hexdigest()})
            index += 1
    return parts


def build(args: argparse.Namespace) -> int:
    manifest = load_manifest()
    wheels = Path(args.dir)
    files = [wheels / w["file"] if not w.get("build_from_sdist") else next(wheels.glob(w["wheel_glob"]))
             for w in manifest["wheels"]]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise RuntimeManifestError(f"missing wheels (run download first): {', '.join(missing)}")
    rllm = Path(args.rllm_wheel)
    if _sha256(rllm) != manifest["rllm_wheel"]["sha256"]:
        raise RuntimeManifestError(f"{rllm}: not the rLLM wheel the manifest pins ({manifest['rllm_wheel']['file']})")
    python = args.python or shutil.which(f"python{manifest['python']}") or sys.executable
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("rt-part*"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="ta-runtime-", dir=args.scratch) as scratch:
        root = Path(scratch) / "rt"
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--no-cache-dir", "--target", str(root), *map(str, files), str(rllm)], check=True)
        installed = _tree_bytes(root)
        removed = prune(root, manifest["prune"])
        tar_path, xz_path = Path(scratch) / "rt.tar", Path(scratch) / "rt.tar.xz"
        write_tar(root, tar_path)
        with open(xz_path, "wb") as sink:
            subprocess.run(["xz", "-9", "-T0", "-c", str(tar_path)], stdout=sink, check=True)
        manifest["installed_bytes"], manifest["pruned_bytes"] = installed, removed
        manifest["stream_bytes"], manifest["stream_sha256"] = xz_path.stat().st_size, _sha256(xz_path)
        manifest["part_mib"] = args.part_mib
        manifest["parts"] = cut_parts(xz_path, out, args.part_mib)
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    shutil.copy2(MANIFEST, out / MANIFEST.name)
    print(f"runtime: {installed / 1e6:.0f} MB installed, {removed / 1e6:.0f} MB pruned, "
          f"{manifest['stream_bytes'] / MIB:.1f} MiB xz in {len(manifest['parts'])} parts -> {out}")
    return 0


def unpack(args: argparse.Namespace) -> int:
    """Check the staged parts against the manifest, then stream them through xz into the runtime folder."""
    stage, target = Path(args.stage), Path(args.runtime)
    manifest = load_manifest(stage / MANIFEST.name if (stage / MANIFEST.name).is_file() else MANIFEST)
    if (target / ".unpacked").is_file() and (target / ".unpacked").read_text().strip() == manifest["stream_sha256"]:
        print(f"runtime already unpacked in {target}")
        return 0
    digest = hashlib.sha256()
    for part in manifest["parts"]:
        path = stage / part["name"]
        if not path.is_file():
            raise RuntimeManifestError(f"{part['name']} is not staged in {stage}")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != part["sha256"]:
            raise RuntimeManifestError(f"{part['name']}: sha256 differs from the manifest (a broken transfer: stage it again)")
        digest.update(data)
    if digest.hexdigest() != manifest["stream_sha256"]:
        raise RuntimeManifestError("the staged parts do not make the recorded stream")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    xz = subprocess.Popen(["xz", "-dc", "-T0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    untar = subprocess.Popen(["tar", "-x", "-C", str(target)], stdin=xz.stdout)
    xz.stdout.close()
    for part in manifest["parts"]:
        with open(stage / part["name"], "rb") as handle:
            shutil.copyfileobj(handle, xz.stdin, 4 * MIB)
    xz.stdin.close()
    if xz.wait() != 0 or untar.wait() != 0:
        raise RuntimeManifestError("xz or tar failed while unpacking the runtime")
    (target / ".unpacked").write_text(manifest["stream_sha256"] + "\n")
    print(f"runtime unpacked: {_tree_bytes(target) / 1e6:.0f} MB in {target}")
    return 0


def check(_: argparse.Namespace) -> int:
    problems = check_manifest(load_manifest())
    for problem in problems:
        print(f"verl_runtime.json: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("download", help="pip download the pinned wheels (here, where pip reaches the registry)")
    p.add_argument("-d", "--dir", required=True)
    p.add_argument("--python", default=None, help="interpreter of the node's Python version (default python3.12)")
    p.set_defaults(func=download)
    p = sub.add_parser("build", help="install, prune, pack and cut the runtime; record the parts' sha256")
    p.add_argument("-d", "--dir", required=True, help="the downloaded wheels")
    p.add_argument("--rllm-wheel", required=True, help="the rLLM HEAD wheel (rllm-0.3.0rc0-py3-none-any.whl)")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--part-mib", type=float, default=38.0)
    p.add_argument("--python", default=None)
    p.add_argument("--scratch", default=None)
    p.set_defaults(func=build)
    p = sub.add_parser("check", help="check the manifest (pins, prune list, parts)")
    p.set_defaults(func=check)
    p = sub.add_parser("unpack", help="on the node: check the staged parts and unpack them")
    p.add_argument("stage")
    p.add_argument("runtime")
    p.set_defaults(func=unpack)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (RuntimeManifestError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
