import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/data/.hidden-config': '98752ee28d5484bdc2814fb70adb6a0b2fb31f6a9b8ee7ae81fd2fc9cf300b3b', '/app/data/keep.txt': '19732980d68fbd00358a0a4d98246c960400b87e4fa2a2e155db98be2b42ed6c', '/app/data/sub/also keep.csv': '5be08c9684a1d25efcee09318204824278b08bbfb4aef973ffefd0b9d7478313', '/app/data/sub/deeper/x.log': '73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac', '/app/data/sub/just a newline.txt': '01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


KEPT = ['/app/data/keep.txt', '/app/data/sub/also keep.csv', '/app/data/sub/deeper/x.log', '/app/data/sub/just a newline.txt', '/app/data/.hidden-config']
DIRS = ['/app/data', '/app/data/sub', '/app/data/sub/deeper', '/app/data/empty dir', '/app/data/sub/deeper/void']


def _gone(paths):
    return [p for p in paths if os.path.lexists(p)] == []


def test_top_level_empty_files_gone():
    assert _gone(['/app/data/empty.txt', '/app/data/.empty-hidden'])


def test_nested_empty_files_gone():
    assert _gone(['/app/data/sub/nothing here.txt', '/app/data/sub/deeper/zero.bin'])


def test_odd_names_gone():
    assert _gone(['/app/data/sub/-dash.txt', '/app/data/sub/deeper/ leading space'])


def test_other_files_kept():
    assert all(unchanged(p) for p in KEPT)


def test_directories_kept():
    assert all(Path(d).is_dir() for d in DIRS)
