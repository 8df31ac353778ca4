import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/inbox/Makefile': 'dadd6bd529dc891f2252764150177c3d2ef3124745fcab282c4a12ed797f6e47', '/app/inbox/data.tar.gz': '5abe2ab7258e27c658f01a8d827f362ed902ae88467c96a0cd3d32a94933a7f4', '/app/inbox/notes.txt': '7c4c231187cd4b75677c312faa7787da874bdbb7d71e1c9dc0619f3e27a53940', '/app/inbox/photo.JPG': '8c922a24d56edc8b108ff3d62c86014e55962cb03ca76a712cc19e92edfdc5a9', '/app/inbox/report.pdf': 'c0d475902344dc07282e196c6a17d49906f2700de4281fbda2cd8b7e34b65569', '/app/inbox/song.mp3': 'ef196060eb508530c67794aa8c322137a8bacbccd45baeb2821b2c822ac8d126', '/app/inbox/todo.txt': '735c743005694cfcb6405a0d67d7f3e3cfcfa17f697062893b036ef2f79efe1b'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = {'/app/inbox/pdf/report.pdf': 'pdf\n', '/app/inbox/jpg/photo.JPG': 'jpg upper\n', '/app/inbox/txt/notes.txt': 'txt\n', '/app/inbox/gz/data.tar.gz': 'gz\n', '/app/inbox/txt/todo.txt': 'todo\n', '/app/inbox/other/Makefile': 'all:\n', '/app/inbox/mp3/song.mp3': 'mp3\n'}


def test_files_in_their_folders():
    wrong = [p for p, content in EXPECTED.items() if not Path(p).is_file() or Path(p).read_text() != content]
    assert not wrong, wrong


def test_upper_case_and_double_extensions():
    assert Path("/app/inbox/jpg/photo.JPG").read_text() == EXPECTED["/app/inbox/jpg/photo.JPG"]
    assert Path("/app/inbox/gz/data.tar.gz").read_text() == EXPECTED["/app/inbox/gz/data.tar.gz"]
    assert not Path("/app/inbox/JPG").exists() and not Path("/app/inbox/tar.gz").exists()


def test_moved_not_copied():
    assert [p.name for p in Path("/app/inbox").iterdir() if p.is_file()] == []
    files = sorted(str(p) for p in Path("/app/inbox").rglob("*") if p.is_file())
    assert files == sorted(EXPECTED)
