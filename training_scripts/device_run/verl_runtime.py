#!/usr/bin/env python3
"""The rLLM + verl + vLLM runtime the GPU node lacks, taken from the GPU lock: wheels, pruned, packed into parts.

    python training_scripts/device_run/verl_runtime.py plan                        # here: the carried set from the lock
    python training_scripts/device_run/verl_runtime.py download -d WHL             # here: those wheels (pip, hashes checked)
    python training_scripts/device_run/verl_runtime.py build -d WHL --rllm-wheel RLLM_WHL -o .device_carry/runtime
    python training_scripts/device_run/verl_runtime.py check                       # the manifest against the lock (CI)
    python training_scripts/device_run/verl_runtime.py unpack STAGE_DIR RUNTIME_DIR  # there: sha256, then xz -d | tar
    python training_scripts/device_run/verl_runtime.py node-check RUNTIME_DIR      # there: what runs = the lock?

What a user installs (``bash scripts/setup.sh --gpu``) is ``requirements/gpu-py312.lock``; the node runs the same
versions. Each package of the lock is one of:

- **carried**: in the runtime at the lock's version and file hash (``wheels``);
- **on the node at the lock's version** (``node_packages.json``, a reading of the node's image): not carried;
- **kept from the node** (``node_keeps``: the node has another version and the reason why it may stay is named);
- **not carried** (``not_carried``: this path never imports it; the reason is named).

``plan`` derives the carried set from the lock, the node reading and those two lists, and writes it into
``verl_runtime.json`` beside this script with the lock's sha256; ``check`` fails when the manifest no longer
follows from the lock. ``build`` installs the wheels ``--no-deps --target`` a scratch folder, deletes the pruned
paths (kernels for other GPUs, MoE/MLA kernels, Java jars, static libraries, console scripts), writes a tar with
sorted names, zero mtimes and root owners (the same wheels give the same bytes), compresses it with ``xz -9``,
cuts the stream in parts and records their sha256. ``unpack`` refuses parts whose stream does not match that
record. Put the unpacked folder first on ``PYTHONPATH``: the dist-info folders stay, so ``importlib.metadata``
sees the pinned versions, and ``node-check`` compares every lock package's visible version with the lock.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

MIB = 1 << 20
HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "verl_runtime.json"
LOCK = HERE.parents[1] / "requirements" / "gpu-py312.lock"
NODE_READING = HERE / "node_packages.json"


class RuntimeManifestError(Exception):
    """A runtime manifest, wheel or part that is not what it should be (the message names it)."""


def load_manifest(path: Path = MANIFEST) -> dict:
    return json.loads(path.read_text())


def normalize(name: str) -> str:
    """A distribution name as the registry compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_lock(path: Path = LOCK) -> dict[str, dict]:
    """``{name: {"version": V, "hashes": {sha256, ...}}}`` of a ``pip --require-hashes`` lock."""
    packages: dict[str, dict] = {}
    current: dict | None = None
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^]]*\])?==([^ ;\\]+)", line)
        if pin:
            current = {"version": pin.group(3), "hashes": set()}
            packages[normalize(pin.group(1))] = current
        for digest in re.findall(r"--hash=sha256:([0-9a-f]{64})", line):
            if current is None:
                raise RuntimeManifestError(f"{path.name}: a hash before any pin")
            current["hashes"].add(digest)
    return packages


def lock_sha256(path: Path = LOCK) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def node_packages(path: Path = NODE_READING) -> dict[str, str]:
    return {normalize(name): version for name, version in json.loads(path.read_text())["packages"].items()}


def _base_version(version: str) -> str:
    return version.split("+", 1)[0]


def _named(table: dict[str, str]) -> dict[str, str]:
    """``not_carried``/``node_keeps`` keys are comma-separated names or globs; one reason each."""
    return {normalize(name.strip()) if "*" not in name else name.strip().lower(): why
            for key, why in table.items() for name in key.split(",")}


def _matches(name: str, patterns: dict[str, str]) -> str | None:
    for pattern in patterns:
        if fnmatch.fnmatchcase(name, pattern):
            return pattern
    return None


def classify(manifest: dict, lock: dict[str, dict], node: dict[str, str]) -> dict[str, dict[str, str]]:
    """Each lock package's place: ``carried``, ``on_node`` (same version there), ``node_keeps`` or ``not_carried``
    (name -> the lock's version, or the reason)."""
    not_carried, keeps = _named(manifest["not_carried"]), _named(manifest["node_keeps"])
    places: dict[str, dict[str, str]] = {"carried": {}, "on_node": {}, "node_keeps": {}, "not_carried": {}}
    for name, entry in sorted(lock.items()):
        pattern = _matches(name, not_carried)
        if pattern is not None:
            places["not_carried"][name] = not_carried[pattern]
        elif name in node and _base_version(node[name]) == entry["version"]:
            places["on_node"][name] = entry["version"]
        elif name in keeps:
            places["node_keeps"][name] = keeps[name]
        else:
            places["carried"][name] = entry["version"]
    return places


def check_manifest(manifest: dict, lock: dict[str, dict] | None = None, node: dict[str, str] | None = None,
                   lock_digest: str | None = None) -> list[str]:
    """Problems of the manifest against the lock and the node reading (empty: sound). Read by ``check`` and CI."""
    lock = parse_lock() if lock is None else lock
    node = node_packages() if node is None else node
    problems: list[str] = []
    if manifest.get("lock_sha256") != (lock_digest or lock_sha256()):
        problems.append("the lock changed since the manifest was planned (run plan, download and build again)")
    pins = {wheel["name"]: wheel["version"] for wheel in manifest["wheels"]}
    if len(pins) != len(manifest["wheels"]):
        problems.append("a distribution is pinned twice (two versions stop the install)")
    for name, version in manifest["required_pins"].items():
        if lock.get(name, {}).get("version") != version:
            problems.append(f"{name} {version} is a required pin but the lock has {lock.get(name, {}).get('version')}")
        if pins.get(name) != version:
            problems.append(f"{name} must be pinned at {version} (found {pins.get(name)})")
    places = classify(manifest, lock, node)
    for name, version in places["carried"].items():
        if pins.get(name) != version:
            problems.append(f"{name}: the lock has {version} and the node does not; the runtime carries "
                            f"{pins.get(name) or 'nothing'} (carry it, or name why not in node_keeps/not_carried)")
    for name, version in pins.items():
        if name not in places["carried"]:
            where = "the node has it at the lock's version" if name in places["on_node"] else \
                "not in the lock" if name not in lock else "listed as not carried or kept from the node"
            problems.append(f"{name} {version} is carried but {where}: carrying it shadows the node's own")
    for name in _named(manifest["node_keeps"]):
        if name not in places["node_keeps"]:
            problems.append(f"node_keeps {name}: stale (not in the lock, or the node has the lock's version)")
    for pattern in _named(manifest["not_carried"]):
        if not any(fnmatch.fnmatchcase(name, pattern) for name in lock):
            problems.append(f"not_carried {pattern}: matches nothing in the lock")
    for key, why in {**manifest["not_carried"], **manifest["node_keeps"]}.items():
        if not why:
            problems.append(f"{key}: no reason given")
    for wheel in manifest["wheels"]:
        if not wheel.get("file"):
            continue  # planned, not downloaded yet
        if not wheel["file"].endswith(".whl") and not wheel.get("build_from_sdist"):
            problems.append(f"{wheel['name']}: {wheel['file']} is no wheel (mark build_from_sdist)")
        if wheel.get("sha256") not in lock.get(wheel["name"], {}).get("hashes", ()):
            problems.append(f"{wheel['name']}: {wheel['file']}'s sha256 is not one of the lock's hashes")
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


def plan(_: argparse.Namespace) -> int:
    """Rewrite the manifest's wheel list from the lock: the carried set at the lock's versions (files and hashes
    of wheels already downloaded are kept where the version is unchanged); the parts are dropped."""
    manifest, lock, node = load_manifest(), parse_lock(), node_packages()
    places = classify(manifest, lock, node)
    known = {wheel["name"]: wheel for wheel in manifest["wheels"]}
    wheels = []
    for name, version in places["carried"].items():
        old = known.get(name, {})
        wheels.append(old if old.get("version") == version else {"name": name, "version": version})
    manifest["wheels"] = wheels
    manifest["required_pins"] = {name: lock[name]["version"] for name in manifest["required_pins"]}
    manifest["lock_sha256"] = lock_sha256()
    for key in ("parts", "stream_bytes", "stream_sha256", "installed_bytes", "pruned_bytes"):
        manifest.pop(key, None)
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(lock)} lock packages: {len(places['carried'])} carried, {len(places['on_node'])} on the node at the "
          f"lock's version, {len(places['node_keeps'])} kept from the node, {len(places['not_carried'])} not carried")
    return 0


def node_check(args: argparse.Namespace) -> int:
    """There, with RUNTIME_DIR first on the path: every lock package's visible version against the lock. A
    difference is fine only where the manifest names it (kept from the node, or never imported)."""
    manifest, lock = load_manifest(), parse_lock()
    sys.path.insert(0, str(Path(args.runtime)))
    import importlib.metadata as metadata

    importlib.invalidate_caches()
    keeps, not_carried = _named(manifest["node_keeps"]), _named(manifest["not_carried"])
    unexplained, kept = [], []
    for name, entry in sorted(lock.items()):
        try:
            seen = metadata.version(name)
        except metadata.PackageNotFoundError:
            seen = None
        if seen is not None and _base_version(seen) == entry["version"]:
            continue
        if _matches(name, not_carried) is not None:
            continue
        line = f"{name}: lock {entry['version']}, here {seen or 'absent'}"
        (kept if name in keeps else unexplained).append(line)
    print(f"{len(lock)} lock packages; {len(kept)} differ as node_keeps names them, {len(unexplained)} unexplained")
    for line in kept:
        print(f"  kept: {line} ({keeps[line.split(':')[0]]})")
    for line in unexplained:
        print(f"  DIFFERS: {line}")
    return 1 if unexplained else 0


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
    platforms = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
                 "manylinux2014_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64",
                 "manylinux1_x86_64", "linux_x86_64"]
    binaries = [w for w in manifest["wheels"] if not w.get("build_from_sdist")
                and not (w.get("file") and (target / w["file"]).is_file())]
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
                if _sha256(sdist) not in parse_lock()[wheel["name"]]["hashes"]:
                    raise RuntimeManifestError(f"{sdist.name}: its sha256 is not one of the lock's hashes")
                subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-w", str(target), str(sdist)], check=True)
    lock = parse_lock()
    downloaded = {_sha256(path): path for path in target.iterdir() if path.is_file()}  # each file hashed once
    for wheel in manifest["wheels"]:  # which file pip chose: the one whose bytes the lock vouches for
        if wheel.get("build_from_sdist"):
            continue
        digest = next((digest for digest in lock[wheel["name"]]["hashes"] if digest in downloaded), None)
        if digest is None:
            raise RuntimeManifestError(f"{wheel['name']}=={wheel['version']}: no downloaded file whose sha256 the lock has")
        wheel["file"], wheel["sha256"] = downloaded[digest].name, digest
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest['wheels'])} wheels in {target}, each a file the lock hashes")
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
    """Delete the pruned paths (globs relative to the runtime root, less an entry's ``keep`` list); the bytes
    removed."""
    removed = 0
    for entry in entries:
        keep = {root / kept for kept in entry.get("keep", [])}
        for path in sorted(root.glob(entry["path"])):
            if path in keep:
                continue
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
    p = sub.add_parser("plan", help="derive the carried wheels from the lock and the node reading")
    p.set_defaults(func=plan)
    p = sub.add_parser("node-check", help="on the node: every lock package's visible version against the lock")
    p.add_argument("runtime")
    p.set_defaults(func=node_check)
    p = sub.add_parser("check", help="check the manifest against the lock (pins, carried set, prune list, parts)")
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
