"""The device bundle's unpack step: archives gzipped again on the node get their new sizes in the
export's manifest, so the export's stale-archive check (sizes as recorded) accepts them."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
from pathlib import Path

BUNDLE = Path(__file__).resolve().parents[1] / "training_scripts" / "device_run" / "bundle.py"


def _bundle_module():
    spec = importlib.util.spec_from_file_location("device_bundle", BUNDLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regzipped_archives_get_their_new_sizes_and_nothing_else_changes(tmp_path):
    export = tmp_path / "export"
    (export / "layers").mkdir(parents=True)
    payload = bytes(range(256)) * 4096
    original = gzip.compress(payload, compresslevel=9, mtime=0)  # as the export wrote it
    (export / "base-1.tar").write_bytes(payload)  # as pack stores it: decompressed
    (export / "layers" / "kept.tar.gz").write_bytes(b"not gzipped again")
    manifest = {"files": {"base-1.tar.gz": len(original), "layers/kept.tar.gz": 17}, "tasks": {"t": {"image": "i"}}}
    (export / "manifest.json").write_text(json.dumps(manifest))
    subprocess.run(["gzip", "-1", "-f", str(export / "base-1.tar")], check=True)  # what unpack runs
    new_size = (export / "base-1.tar.gz").stat().st_size
    assert new_size != len(original)  # the stale check would refuse the archive without the fix

    _bundle_module().record_regzipped_sizes(tmp_path, ["export/base-1.tar"])

    recorded = json.loads((export / "manifest.json").read_text())
    assert recorded["files"] == {"base-1.tar.gz": new_size, "layers/kept.tar.gz": 17}
    assert recorded["tasks"] == manifest["tasks"]
    assert gzip.decompress((export / "base-1.tar.gz").read_bytes()) == payload


def _packed(directory: Path, payload: bytes, part_bytes: int) -> dict:
    import hashlib

    directory.mkdir()
    parts = []
    for index, start in enumerate(range(0, len(payload), part_bytes), 1):
        chunk = payload[start:start + part_bytes]
        (directory / f"part{index}").write_bytes(chunk)
        parts.append({"name": f"part{index}", "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()})
    record = {"bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest(), "parts": parts, "tasks": 3}
    (directory / "bundle.json").write_text(json.dumps(record))
    return record


def test_split_cuts_the_same_stream_into_smaller_parts(tmp_path):
    payload = bytes(range(256)) * 10_000  # 2.56 MB in 2 parts
    record = _packed(tmp_path / "carry", payload, 1_500_000)

    assert _bundle_module().main(["split", str(tmp_path / "carry"), "--part-mib", "0.5"]) == 0

    after = json.loads((tmp_path / "carry" / "bundle.json").read_text())
    assert [p["name"] for p in after["parts"]] == ["part1", "part2", "part3", "part4", "part5"]
    assert all(p["bytes"] <= 1 << 19 for p in after["parts"])
    assert after["sha256"] == record["sha256"] and after["tasks"] == 3
    assert b"".join((tmp_path / "carry" / p["name"]).read_bytes() for p in after["parts"]) == payload
    assert sorted(p.name for p in (tmp_path / "carry").iterdir()) == ["bundle.json", *(f"part{i}" for i in range(1, 6))]


def test_split_refuses_a_part_that_is_not_the_recorded_one_and_changes_nothing(tmp_path, capsys):
    payload = bytes(range(256)) * 1000
    _packed(tmp_path / "carry", payload, 100_000)
    (tmp_path / "carry" / "part2").write_bytes(b"x" * 100_000)  # same size, other bytes
    before = {p.name: p.read_bytes() for p in (tmp_path / "carry").iterdir()}

    assert _bundle_module().main(["split", str(tmp_path / "carry"), "--part-mib", "0.05"]) == 2

    assert "part2 is not the part bundle.json records" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (tmp_path / "carry").iterdir()} == before


def test_split_keeps_the_old_parts_when_the_stream_is_not_the_recorded_one(tmp_path, capsys):
    payload = bytes(range(256)) * 1000
    record = _packed(tmp_path / "carry", payload, 100_000)
    record["sha256"] = "0" * 64  # every part as recorded, the whole not
    (tmp_path / "carry" / "bundle.json").write_text(json.dumps(record))
    before = {p.name: p.read_bytes() for p in (tmp_path / "carry").iterdir()}

    assert _bundle_module().main(["split", str(tmp_path / "carry"), "--part-mib", "0.05"]) == 2

    assert "do not add up" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (tmp_path / "carry").iterdir()} == before
