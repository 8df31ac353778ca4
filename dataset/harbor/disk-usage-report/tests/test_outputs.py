import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/srv/cache/a': 'd1616b874a96df2515da372a90bddc00792cbff027f5e097cafa31d3aea8b310', '/app/srv/cache/b': '122cecfcf978e0f7b768046dfe4be548f1c01c7fbde5801de18035847efd2958', '/app/srv/db/dump.sql': 'bc9d580ae18748b2e1583eff72633a43d5564fb63b7e699b08380d1d4d385bcc', '/app/srv/logs/today.log': 'e278a7649fd163ebd17e5d088ea41e3cfafd39d8ed68462c4aa36a18937c1598', '/app/srv/web/index.html': '802df553d545f05a32ffd87575566a89f9c2b2071478d86e71af2e52ac476dbb', '/app/srv/web/static/app.js': '024c9d5c1b45947d2211841d875e995c65891259f4c29218396bd814baf8e5a5'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['db 5000', 'web 4200', 'logs 700', 'cache 100']


def _lines():
    return Path("/app/usage.txt").read_text().splitlines()


def test_all_directories():
    assert sorted(l.split()[0] for l in _lines()) == sorted(e.split()[0] for e in EXPECTED)


def test_sizes():
    assert sorted(_lines()) == sorted(EXPECTED)


def test_largest_first():
    assert _lines() == EXPECTED
