import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/app.ini': '78ef533aaea1e516e5916aa2da0f6d1c9fd96fbb9e692c7dfc5d9c0f0eb4dcfa'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import configparser


def _parser():
    parser = configparser.ConfigParser()
    assert parser.read("/app/app.ini") == ["/app/app.ini"]
    return parser


def test_cache_section_added():
    text = Path("/app/app.ini").read_text()
    assert text.count("[cache]") == 1
    assert _parser().has_section("cache")


def test_cache_backend():
    assert _parser().get("cache", "backend") == "redis"


def test_cache_ttl():
    parser = _parser()
    assert parser.getint("cache", "ttl") == 300
    assert sorted(parser["cache"]) == ["backend", "ttl"]


def test_existing_sections_and_comment_kept():
    parser = _parser()
    assert dict(parser["server"]) == {"host": "0.0.0.0", "port": "8000"}
    assert dict(parser["database"]) == {"url": "postgres://db/app", "pool": "5"}
    assert "; the database section" in Path("/app/app.ini").read_text()
