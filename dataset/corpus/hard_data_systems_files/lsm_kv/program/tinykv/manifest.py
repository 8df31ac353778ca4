"""The manifest: which segment files make up the store, oldest first, and how far the log has been flushed.

It is a small JSON file (MANIFEST) replaced atomically (write to a temporary file, fsync, rename).
"""

import json
import os
from dataclasses import dataclass, field

from .errors import ManifestError

MANIFEST_NAME = "MANIFEST"
FORMAT_VERSION = 1


@dataclass
class Manifest:
    segments: list = field(default_factory=list)
    """Segment file names, oldest first; a newer segment's entries win over an older one's."""
    next_segment_id: int = 1
    flushed_seq: int = 0
    """Every write with a sequence number up to this one is in a segment (the log may be replayed past it)."""

    def new_segment_name(self):
        name = f"seg-{self.next_segment_id:06d}.sst"
        self.next_segment_id += 1
        return name

    def to_json(self):
        return {"version": FORMAT_VERSION, "segments": list(self.segments), "next_segment_id": self.next_segment_id,
                "flushed_seq": self.flushed_seq}

    @classmethod
    def from_json(cls, data, path):
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise ManifestError(f"{path}: unknown manifest version {data.get('version') if isinstance(data, dict) else data!r}")
        try:
            segments = [str(name) for name in data["segments"]]
            return cls(segments, int(data["next_segment_id"]), int(data["flushed_seq"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ManifestError(f"{path}: malformed manifest ({error})") from error


def load_manifest(directory):
    """The manifest of the store in ``directory``; a fresh one when the store is new."""
    path = os.path.join(directory, MANIFEST_NAME)
    if not os.path.exists(path):
        return Manifest()
    with open(path, encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as error:
            raise ManifestError(f"{path}: not JSON ({error})") from error
    manifest = Manifest.from_json(data, path)
    for name in manifest.segments:
        if not os.path.exists(os.path.join(directory, name)):
            raise ManifestError(f"{path}: segment {name} is missing")
    return manifest


def save_manifest(directory, manifest):
    path = os.path.join(directory, MANIFEST_NAME)
    tmp_path = path + ".tmp"
    with open(tmp_path, "w", encoding="utf-8") as handle:
        json.dump(manifest.to_json(), handle, indent=2, sort_keys=True)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp_path, path)
