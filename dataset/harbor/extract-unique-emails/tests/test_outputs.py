import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/mail.txt': '6522622ada4a8794cf212d6ab503466ed66489f9c188d07eee7b9df77e636082'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


EXPECTED = ['ana.silva@mail.example.com', 'ana.silva@uni.example.edu', 'bo@mail.example.com', 'bo@uni.example.edu', 'chen_wei@example.org', 'chen_wei@mail.example.com', 'chen_wei@uni.example.edu', 'dara-k@example.org', 'dara-k@mail.example.com', 'dara-k@uni.example.edu', 'emil@mail.example.com', 'emil@uni.example.edu', 'fatima.z@example.org', 'fatima.z@mail.example.com', 'fatima.z@uni.example.edu', 'gio@example.org', 'gio@mail.example.com', 'gio@uni.example.edu', 'hugo99@example.org', 'hugo99@mail.example.com', 'hugo99@uni.example.edu']


def _got():
    return Path("/app/emails.txt").read_text().splitlines()


def test_every_address_found():
    assert set(EXPECTED) <= set(_got())


def test_no_junk_or_duplicates():
    got = _got()
    assert got and len(got) == len(set(got)) and set(got) <= set(EXPECTED)


def test_sorted():
    assert _got() == EXPECTED
