import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/app.log': 'f8e784369771771274eeee0c5e035abf1e9dc8c1ae280872d071020d75899695', '/app/logs/app.log.1': '17349abd693ee521bbe1c87e53b2c8f0149dd3a01af1a0e36fc1cb6d05c545a2', '/app/logs/app.log.2': '9b6ee6c0e2105814fd683a44bfaff3dd38e76fd65fc089f07208eb43e22b48a6', '/app/logs/db.log': 'b0460bf99aee65cc5738648e5f6cbaa96be3a4be53cc8dd5cac4eb763541e7de', '/app/logs/db.log.1': '073a5b0e69863ea9c851200e7e2c27d10d70def20984074c2883b91ce0816890'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import gzip

ROTATED = {"app.log.1": "app one\n" * 50, "app.log.2": "app two\n" * 50, "db.log.1": "db one\n" * 50}


def _compressed(name):
    assert gzip.decompress(Path("/app/logs", name + ".gz").read_bytes()).decode() == ROTATED[name], name
    assert not Path("/app/logs", name).exists(), f"{name} is still there uncompressed"


def test_app_log_1():
    _compressed("app.log.1")


def test_app_log_2():
    _compressed("app.log.2")


def test_db_log_1():
    _compressed("db.log.1")


def test_live_logs_untouched():
    assert unchanged("/app/logs/app.log") and unchanged("/app/logs/db.log")
    assert not Path("/app/logs/app.log.gz").exists() and not Path("/app/logs/db.log.gz").exists()
