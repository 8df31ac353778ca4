import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/requests.log': '81e539707e9c351eb773c7d342ca3622693adab8c5488e07a8a883ec5f8b2cca'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['req id=0004 path=/api/a took=2844ms status=200', 'req id=0005 path=/api/a took=2820ms status=200', 'req id=0006 path=/api/b took=1288ms status=200', 'req id=0007 path=/api/b took=2465ms status=200', 'req id=0008 path=/api/a took=1781ms status=200', 'req id=0011 path=/api/c took=1477ms status=200', 'req id=0016 path=/api/b took=1249ms status=200', 'req id=0018 path=/api/a took=2230ms status=200', 'req id=0019 path=/api/b took=2087ms status=200', 'req id=0020 path=/api/b took=1433ms status=200', 'req id=0024 path=/api/c took=1648ms status=200', 'req id=0027 path=/api/c took=2262ms status=200', 'req id=0028 path=/api/a took=1382ms status=200', 'req id=0030 path=/api/a took=1131ms status=200', 'req id=0031 path=/api/a took=2055ms status=200', 'req id=0032 path=/api/c took=1342ms status=200', 'req id=0033 path=/api/c took=1368ms status=200', 'req id=0034 path=/api/c took=2750ms status=200', 'req id=0035 path=/api/b took=1035ms status=200', 'req id=0036 path=/api/a took=1369ms status=200', 'req id=0038 path=/api/b took=2776ms status=200', 'req id=0039 path=/api/b took=1176ms status=200', 'req id=0041 path=/api/a took=1236ms status=200', 'req id=0043 path=/api/b took=987ms status=200', 'req id=0044 path=/api/a took=982ms status=200', 'req id=0048 path=/api/b took=2744ms status=200', 'req id=0051 path=/api/a took=1557ms status=200', 'req id=0054 path=/api/b took=840ms status=200', 'req id=0055 path=/api/b took=954ms status=200', 'req id=0057 path=/api/b took=1344ms status=200', 'req id=0059 path=/api/c took=2088ms status=200', 'req id=0060 path=/api/c took=2931ms status=200', 'req id=0061 path=/api/c took=1966ms status=200', 'req id=0063 path=/api/a took=1347ms status=200', 'req id=0065 path=/api/c took=652ms status=200', 'req id=0067 path=/api/c took=868ms status=200', 'req id=0068 path=/api/c took=2642ms status=200', 'req id=0071 path=/api/c took=2099ms status=200', 'req id=0072 path=/api/b took=2993ms status=200', 'req id=0074 path=/api/c took=2162ms status=200', 'req id=0075 path=/api/c took=2420ms status=200', 'req id=0078 path=/api/c took=761ms status=200', 'req id=0082 path=/api/a took=2843ms status=200', 'req id=0083 path=/api/a took=2891ms status=200', 'req id=0085 path=/api/a took=719ms status=200', 'req id=0089 path=/api/a took=675ms status=200', 'req id=0090 path=/api/b took=1275ms status=200', 'req id=0091 path=/api/a took=1112ms status=200', 'req id=0092 path=/api/a took=2215ms status=200', 'req id=0094 path=/api/c took=1809ms status=200', 'req id=0097 path=/api/a took=1434ms status=200', 'req id=0099 path=/api/a took=1243ms status=200', 'req id=0100 path=/api/c took=1977ms status=200', 'req id=0103 path=/api/c took=832ms status=200', 'req id=0104 path=/api/b took=2406ms status=200', 'req id=0105 path=/api/a took=644ms status=200', 'req id=0106 path=/api/a took=2060ms status=200', 'req id=0108 path=/api/b took=2108ms status=200', 'req id=0112 path=/api/a took=1250ms status=200', 'req id=0113 path=/api/a took=977ms status=200', 'req id=0115 path=/api/a took=1889ms status=200', 'req id=0116 path=/api/b took=1391ms status=200', 'req id=0117 path=/api/b took=1658ms status=200', 'req id=0119 path=/api/b took=2313ms status=200']


def _got():
    return Path("/app/slow.log").read_text().splitlines()


def test_all_slow_lines_found():
    got = _got()
    assert set(EXPECTED) <= set(got)
    # something was filtered: a copy of the log (every slow line, and every fast one) earns nothing
    lines = Path("/app/requests.log").read_text().splitlines()
    assert len(set(got) - set(EXPECTED)) <= (len(lines) - len(EXPECTED)) // 2


def test_no_fast_line():
    got = _got()
    assert got and set(got) <= set(EXPECTED)


def test_order_and_exact_500_excluded():
    assert _got() == EXPECTED
