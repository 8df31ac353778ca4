import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import unicodedata

EXPECTED = ["Beyoncé/déjà vu.mp3", "Sigur Rós/Ágætis/Svefn-g-englar.mp3", "café.txt", "plain.txt"]


def _files():
    root = Path("/app/music")
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_all_names_nfc():
    entries = [str(p.relative_to("/app/music")) for p in Path("/app/music").rglob("*")]
    assert len(entries) == 7 and len(_files()) == 4
    assert all(unicodedata.is_normalized("NFC", name) for name in entries)


def test_expected_paths():
    assert _files() == sorted(unicodedata.normalize("NFC", e) for e in EXPECTED)


def test_contents_kept():
    for name in EXPECTED:
        nfc = unicodedata.normalize("NFC", name)
        assert Path("/app/music", nfc).read_text() == nfc
