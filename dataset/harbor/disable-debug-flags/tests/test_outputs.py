import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/settings/app.yaml': 'bec129bb4341d793b7b5738256609b209deb4e1c92fffcf98eff15b09c6775bf', '/app/settings/jobs.yaml': '4b74bc39c2e356c4eea6a58ca53568aebffd824e9562ae7536cc579e7ce9fd26', '/app/settings/notes.md': '2e38b795cb91b93c314f88a1de16905113b7dcdcba7555f079cf6c72aeb56975', '/app/settings/web/site.yaml': '97d26be62866f795be977219017426f6f6bc3df68645415099430ad31899a93a'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = {'/app/settings/app.yaml': 'name: shop\ndebug: false\nworkers: 4\n', '/app/settings/jobs.yaml': 'queue: default\ndebug: false\nretries: 3\n', '/app/settings/web/site.yaml': 'theme: dark\nfeatures:\n  debug: true\n  beta: false\ndebug: false\n'}


def _exact(path):
    assert Path(path).read_text() == EXPECTED[path], path


def test_app_yaml():
    _exact("/app/settings/app.yaml")


def test_jobs_yaml_comment_dropped():
    _exact("/app/settings/jobs.yaml")


def test_site_yaml_nested_key_kept():
    _exact("/app/settings/web/site.yaml")


def test_notes_untouched():
    assert unchanged("/app/settings/notes.md")
