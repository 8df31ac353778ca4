import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/tags.py': '23b69ae75bc611b8e9a5316a2de1741accf57eb503986bd20ff84ec1f103dd2d'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


import importlib
import sys

sys.path.insert(0, "/app")


def _tags():
    import tags

    return importlib.reload(tags)


def test_same_article_twice():
    tags = _tags()
    assert tags.tags_for("hello #a world #b") == ["a", "b"]
    assert tags.tags_for("hello #a world #b") == ["a", "b"]


def test_articles_do_not_share_tags():
    tags = _tags()
    tags.tags_for("#x #y")
    assert tags.tags_for("#z") == ["z"]
    assert tags.tags_for("no tags here") == []


def test_add_tag():
    tags = _tags()
    mine = ["q"]
    assert tags.add_tag("r", mine) is mine and mine == ["q", "r"]
    assert tags.add_tag("s") == ["s"]
    assert tags.add_tag("t") == ["t"]
