import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/other/ok.txt': 'a12b7cb43c9d9134b5bb1b35e9096b66775d9e92e7611d1cc92b02edd6782a87', '/app/store/a.txt': '06f961b802bc46ee168555f066d28f4f0e9afdf3f88174c1ee6f9de004fc30a0', '/app/store/c d.txt': '622bcd2e827544f4d26749b33ef93060d5c5c12812fe9f83ba8382bd1df7ebdf', '/app/store/sub/b.txt': 'c0cde77fa8fef97d476c10aad3d2d54fcc2f336140d073651c2dcccf1e379fd6'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


LINKS = {"a": "/app/store/a.txt", "b": "/app/store/sub/b.txt", "c d": "/app/store/c d.txt", "relative-b": "/app/store/sub/b.txt"}


def test_links_resolve():
    for name in ("a", "b", "c d"):
        assert Path("/app/links", name).resolve() == Path(LINKS[name]), name


def test_relative_link_repaired():
    assert Path("/app/links/relative-b").resolve() == Path(LINKS["relative-b"])


def test_still_symlinks_with_absolute_targets():
    for name, target in LINKS.items():
        link = Path("/app/links", name)
        assert link.is_symlink() and os.readlink(link) == target, name


def test_working_link_untouched():
    assert os.readlink("/app/links/ok") == "/app/other/ok.txt"
    assert sorted(os.listdir("/app/links")) == sorted(list(LINKS) + ["ok"])


def test_store_unchanged():
    assert all(unchanged(p) for p in ORIGINAL_SHA256)
