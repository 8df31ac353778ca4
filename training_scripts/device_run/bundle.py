#!/usr/bin/env python3
"""Pack what a device run needs into parts that fit the device link, and unpack them there.

    python training_scripts/device_run/bundle.py pack --export EXPORT_DIR --gguf GGUF --model-manifest MANIFEST \
        --wheels WHEEL_DIR --deb BUBBLEWRAP_DEB -o .device_carry [--part-mib 40] [--max-layer-mb 60]
    python training_scripts/device_run/bundle.py split .device_carry --part-mib 38   # re-slice, no repacking
    python training_scripts/device_run/bundle.py unpack STAGE_DIR     # on the device, after the parts are staged

``pack`` writes one xz-compressed tar split into ``part1``, ``part2`` ... of at most ``--part-mib`` MiB, and
``bundle.json`` (part names, sizes, sha256 of the whole stream). Inside: ``export/`` (the bwrap export,
its ``.tar.gz`` archives stored decompressed so that xz compresses them: the base goes from 71.5 MB gzip to
about 42 MB), ``model/`` (the GGUF, the bf16 tensor manifest, the reference's config and tokenizer files),
``whl/`` and ``deb/``. Tasks whose image needs a layer over ``--max-layer-mb`` (gzip size) are left out of
the export's manifest (listed in ``bundle.json``): the dev-tools layer (gcc, git, perl: 219 MB gzip)
would need two more parts on its own.

A call carries the working tree and one part: as the tree grows, a part must shrink. ``split`` cuts the
packed parts again into slices of at most ``--part-mib`` (the whole stream's sha256 is checked first and
stays what ``bundle.json`` records), without the export or the slow ``xz -9`` again.

``unpack`` (standard library and the system's ``gzip`` only) checks the staged parts against
``bundle.json``, streams them through xz into ``STAGE_DIR``, and gzips the archives back (the bwrap
backend reads ``.tar.gz``). It is idempotent: a finished unpack leaves ``STAGE_DIR/.unpacked``.
"""

from __future__ import annotations

import argparse
import gzip
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


def _drop_big_layer_tasks(manifest: dict, export: Path, max_layer_bytes: int) -> tuple[dict, list[str], set[str]]:
    """The manifest without tasks whose image has a layer over the limit; the dropped tasks; the files kept."""
    big = {f for image in manifest["images"].values() for f in image["layers"]
           if (export / f).stat().st_size > max_layer_bytes}
    tasks, dropped = {}, []
    for task_id, entry in manifest["tasks"].items():
        if set(manifest["images"][entry["image"]]["layers"]) & big:
            dropped.append(task_id)
        else:
            tasks[task_id] = entry
    kept_images = {entry["image"] for entry in tasks.values()}
    images = {tag: image for tag, image in manifest["images"].items() if tag in kept_images or not image["layers"]}
    files = {f for image in images.values() for f in image["layers"]} | {b["file"] for b in manifest["bases"].values()}
    return {**manifest, "tasks": tasks, "images": images}, sorted(dropped), files


def pack(args: argparse.Namespace) -> int:
    export = Path(args.export)
    manifest = json.loads((export / "manifest.json").read_text())
    manifest, dropped, files = _drop_big_layer_tasks(manifest, export, int(args.max_layer_mb * 1e6))
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part*"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="ta-bundle-", dir=args.scratch) as scratch:
        root = Path(scratch) / "bundle"
        (root / "export" / "layers").mkdir(parents=True)
        (root / "export" / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
        regzip = []
        for name in sorted(files):  # stored decompressed: xz then compresses the tar itself
            with gzip.open(export / name, "rb") as src, open(root / "export" / name.removesuffix(".gz"), "wb") as dst:
                shutil.copyfileobj(src, dst, 4 * MIB)
            regzip.append("export/" + name.removesuffix(".gz"))
        (root / "model").mkdir()
        shutil.copy2(args.gguf, root / "model" / Path(args.gguf).name)
        shutil.copy2(args.model_manifest, root / "model" / "model_manifest.json")
        shutil.copytree(Path(args.model_manifest).parent / "model_files", root / "model" / "model_files")
        shutil.copytree(args.wheels, root / "whl")
        (root / "deb").mkdir()
        shutil.copy2(args.deb, root / "deb" / Path(args.deb).name)
        (root / "regzip.json").write_text(json.dumps(regzip))
        stream = Path(scratch) / "bundle.tar.xz"
        with open(stream, "wb") as handle:  # the system's xz: threads, and faster than the lzma module
            tar = subprocess.Popen(["tar", "-C", str(root), "-cf", "-", "."], stdout=subprocess.PIPE)
            subprocess.run(["xz", "-9", f"-T{args.threads}", "-c"], stdin=tar.stdout, stdout=handle, check=True)
            if tar.wait() != 0:
                raise SystemExit("tar failed")
        size = stream.stat().st_size
        with open(stream, "rb") as handle:
            digest, parts = _write_parts(handle.read, out, args.part_mib)
    record = {"bytes": size, "sha256": digest, "parts": parts, "tasks": len(manifest["tasks"]),
              "dropped_tasks_big_layer": dropped, "max_layer_mb": args.max_layer_mb}
    (out / "bundle.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"{size / MIB:.1f} MiB in {len(parts)} part(s) of at most {args.part_mib} MiB under {out}; "
          f"{len(manifest['tasks'])} task(s) in the export, {len(dropped)} left out (a layer over {args.max_layer_mb} MB)")
    return 0


def _write_parts(read, out: Path, part_mib: float) -> tuple[str, list[dict]]:
    """Cut a stream (``read(n)``) into ``out/part1`` ... of at most ``part_mib`` MiB: the whole stream's
    sha256 and each part's record (name, bytes, sha256)."""
    digest, parts = hashlib.sha256(), []
    while chunk := read(int(part_mib * MIB)):
        digest.update(chunk)
        part = out / f"part{len(parts) + 1}"
        part.write_bytes(chunk)
        parts.append({"name": part.name, "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()})
    return digest.hexdigest(), parts


class _ChainedParts:
    """``read(n)`` over the parts in order, as if they were one file."""

    def __init__(self, paths: list[Path]) -> None:
        self._paths, self._handle = list(paths), None

    def read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n and (self._handle is not None or self._paths):
            if self._handle is None:
                self._handle = open(self._paths.pop(0), "rb")
            chunk = self._handle.read(n - len(out))
            if chunk:
                out += chunk
            else:
                self._handle.close()
                self._handle = None
        return bytes(out)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


def split(args: argparse.Namespace) -> int:
    out = Path(args.directory)
    record = json.loads((out / "bundle.json").read_text())
    if args.part_mib * MIB < 1:
        print(f"error: --part-mib {args.part_mib} is under one byte", file=sys.stderr)
        return 2
    old = [out / part["name"] for part in record["parts"]]
    for path, part in zip(old, record["parts"]):
        if not path.is_file() or path.stat().st_size != part["bytes"] or _sha256_of(path) != part["sha256"]:
            print(f"error: {path} is not the part bundle.json records", file=sys.stderr)
            return 2
    # the new parts are cut beside the old ones and moved in only when they add up to the same stream
    with tempfile.TemporaryDirectory(prefix="ta-bundle-split-", dir=out) as scratch:
        total, parts = _write_parts(_ChainedParts(old).read, Path(scratch), args.part_mib)
        if total != record["sha256"]:
            print("error: the parts do not add up to the packed bundle (sha256 differs)", file=sys.stderr)
            return 2
        for path in old:
            path.unlink()
        for part in parts:
            os.replace(Path(scratch) / part["name"], out / part["name"])
    record["parts"] = parts
    (out / "bundle.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record['bytes'] / MIB:.1f} MiB in {len(parts)} part(s) of at most {args.part_mib} MiB under {out}")
    return 0


def unpack(args: argparse.Namespace) -> int:
    stage = Path(args.stage)
    if (stage / ".unpacked").is_file():
        print(f"{stage} already unpacked")
        return 0
    record = json.loads((stage / "bundle.json").read_text())
    digest = hashlib.sha256()
    for part in record["parts"]:
        path = stage / part["name"]
        if not path.is_file() or path.stat().st_size != part["bytes"]:
            print(f"error: {path} missing or of the wrong size (stage every part first)", file=sys.stderr)
            return 2
    reader = subprocess.Popen(["cat", *(str(stage / p["name"]) for p in record["parts"])], stdout=subprocess.PIPE)

    class _Hashing:
        def read(self, n: int = -1) -> bytes:
            chunk = reader.stdout.read(n)  # type: ignore[union-attr]
            digest.update(chunk)
            return chunk

    with tarfile.open(fileobj=_Hashing(), mode="r|xz") as tar:
        tar.extractall(stage, filter="data")
    reader.wait()
    if digest.hexdigest() != record["sha256"]:
        print("error: the staged parts do not add up to the packed bundle (sha256 differs)", file=sys.stderr)
        return 2
    regzipped = json.loads((stage / "regzip.json").read_text())
    for name in regzipped:
        subprocess.run(["gzip", "-1", "-f", str(stage / name)], check=True)  # -> NAME.gz, as the export had it
    record_regzipped_sizes(stage, regzipped)
    for part in record["parts"]:
        (stage / part["name"]).unlink()
    (stage / ".unpacked").write_text(record["sha256"])
    print(f"unpacked {record['bytes'] / MIB:.1f} MiB into {stage}: {record['tasks']} exported task(s)")
    return 0


def record_regzipped_sizes(stage: Path, regzipped: list[str]) -> None:
    """Record in the export's manifest the sizes of the archives gzipped again here.

    The export checks each archive against the size its manifest records (a replaced archive is stale).
    The archives gzipped here hold the same bytes as the export's (the bundle's sha256 was checked), but
    this gzip compresses them to another size, so the manifest takes the sizes written here."""
    path = stage / "export" / "manifest.json"
    manifest = json.loads(path.read_text())
    files = manifest.get("files")
    if not isinstance(files, dict):
        return  # an export of an older version records no sizes
    for name in regzipped:
        archive = name.removeprefix("export/") + ".gz"
        if archive in files:
            files[archive] = (stage / "export" / archive).stat().st_size
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--export", required=True)
    p.add_argument("--gguf", required=True)
    p.add_argument("--model-manifest", required=True, help="model_from_gguf.py manifest's output (model_files/ beside it)")
    p.add_argument("--wheels", required=True)
    p.add_argument("--deb", required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--part-mib", type=float, default=40.0,
                   help="a call carries the working tree (about 9 MiB) and one part: keep the sum well under 64 MiB")
    p.add_argument("--max-layer-mb", type=float, default=60.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--scratch", default=None, help="where the uncompressed bundle is assembled (default: the temp dir)")
    c = sub.add_parser("split")
    c.add_argument("directory", help="the folder pack wrote (bundle.json and its parts)")
    c.add_argument("--part-mib", type=float, required=True)
    u = sub.add_parser("unpack")
    u.add_argument("stage")
    args = parser.parse_args(argv)
    return {"pack": pack, "split": split, "unpack": unpack}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
