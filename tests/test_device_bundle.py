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
