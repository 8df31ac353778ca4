import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/_build/plan.json': '069d8504cef0098e79f903bcb7710fb49cc7c36f4eda3b86b51f55bf317f4b2d'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


RECORDED = {'docs_trees': 'b29ae4808348ce46cfb7cc5d0f09a9f9ac72b0e1\nc6c5b098e06508bd225da920e83b254d808885b4\nd815b83f9d5d34e65eccbd7f904a1b270b94dd9d\n2436dc26f1734373badf43ad6f36cdec38b2a2b3\n38ef853eba672e27580f1f89e7fad9e948cb92a9\n8a7de88ca9725b47b025d534afdbdac1618e1c4f\n3bda959b0e6eaf8a8806b72c6cb85a5f01c63eb7\n03afeef91129ce12127ac6e6af1c992a3d01ba89\n', 'main_trees': 'd047bc98ce1735c1ea1381c4b99f8f74432d1843\n1709747cd47b79936230e155b42a2f4d3a8e4b15\n06bc48151137a7577576cd84aaede218801863df\nae92a9dd7df760673ae555895c9caf6df160022c\nd815b83f9d5d34e65eccbd7f904a1b270b94dd9d\n2436dc26f1734373badf43ad6f36cdec38b2a2b3\n38ef853eba672e27580f1f89e7fad9e948cb92a9\n8a7de88ca9725b47b025d534afdbdac1618e1c4f\n3bda959b0e6eaf8a8806b72c6cb85a5f01c63eb7\n03afeef91129ce12127ac6e6af1c992a3d01ba89\n'}

REPO = "/app/repo"


def git(*args, check=True):
    result = run("git", "-C", REPO, *args)
    if check:
        assert result.returncode == 0, result.stderr
    return result.stdout


def recorded(name):
    return RECORDED[name].strip()


def export(ref, target):
    """The tree of ``ref`` unpacked into ``target`` (a fresh directory), without touching the repository."""
    archive = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", ref], capture_output=True, timeout=60)
    assert archive.returncode == 0, archive.stderr
    Path(target).mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True, timeout=60)
    return Path(target)

EXPECTED = json.loads('{"main": [["Change 1: docs", "Ana Souza <ana@example.com>", "Ana Souza <ana@example.com>", 1709289420], ["Change 2: tests", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709295240], ["Change 3: cli", "Lee Park <lee@example.com>", "Lee Park <lee@example.com>", 1709301060], ["Change 4: build", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709306880], ["Change 5: parser", "Ana Souza <ana@example.com>", "John Doe <john.doe@example.com>", 1709312700], ["Change 6: docs", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709324340], ["Change 7: tests", "Lee Park <lee@example.com>", "John Doe <john.doe@example.com>", 1709335980], ["Change 8: cli", "John Doe <john.doe@example.com>", "Ana Souza <ana@example.com>", 1709341800], ["Change 9: build", "Ana Souza <ana@example.com>", "Ana Souza <ana@example.com>", 1709347620], ["Change 10: parser", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709353440]], "docs": [["Change 1: docs", "Ana Souza <ana@example.com>", "Ana Souza <ana@example.com>", 1709289420], ["Change 2: tests", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709295240], ["Change 3: cli", "Lee Park <lee@example.com>", "Lee Park <lee@example.com>", 1709301060], ["Change 4: build", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709306880], ["Change 5: parser", "Ana Souza <ana@example.com>", "John Doe <john.doe@example.com>", 1709312700], ["Change 6: docs", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709324340], ["Docs: install guide", "John Doe <john.doe@example.com>", "John Doe <john.doe@example.com>", 1709365080], ["Docs: faq", "Lee Park <lee@example.com>", "John Doe <john.doe@example.com>", 1709370900]]}')
OLD = ["jdoe@laptop.local", "john@oldcorp.example"]


def _rows(ref):
    lines = git("log", "--reverse", "--format=%s|%an <%ae>|%cn <%ce>|%at", ref).splitlines()
    return [[*line.rsplit("|", 3)[:3], int(line.rsplit("|", 1)[1])] for line in lines]


def test_no_old_identity_left():
    idents = git("log", "--all", "--format=%ae%n%ce")
    assert "john.doe@example.com" in idents
    assert all(old not in idents for old in OLD)
    assert git("for-each-ref", "refs/original") == ""


def test_main_identities_rewritten():
    assert _rows("main") == EXPECTED["main"]


def test_docs_branch_and_tag_rewritten():
    assert _rows("docs") == EXPECTED["docs"]
    assert _rows("v0.9") == EXPECTED["main"][:5]
    assert run("git", "-C", REPO, "merge-base", "--is-ancestor", "v0.9", "main").returncode == 0


def test_trees_unchanged():
    assert "john.doe@example.com" in git("log", "--format=%ae", "main")
    assert git("log", "--format=%T", "main").split() == recorded("main_trees").split()
    assert git("log", "--format=%T", "docs").split() == recorded("docs_trees").split()


def test_guard_clean_tree():
    assert git("status", "--porcelain") == ""
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"
