import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/_build/plan.json': 'b759f1a9999c06f95d1104b94322d0c362cdf539c5498e6c1a7698f0a914d14c'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


RECORDED = {'main': '10bab7ef551739cb02573b1d49daba6223727aba\n'}

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

BAD_SUBJECT = 'Tidy duration parsing'


def _bad():
    found = git("log", "main", "--format=%H %s").splitlines()
    return [line.split(" ", 1)[0] for line in found if line.split(" ", 1)[1] == BAD_SUBJECT][0]


def _changed_lines(diff):
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_first_bad_commit_named():
    text = Path("/app/first_bad.txt").read_text().strip()
    assert text == _bad()


def test_hotfix_branch_passes_the_check(tmp_path):
    assert git("rev-parse", "hotfix^").strip() == recorded("main")
    tree = export("hotfix", tmp_path / "hotfix")
    result = run("python3", "-B", "check.py", cwd=str(tree))
    assert result.returncode == 0, result.stdout


def test_hotfix_only_reverts_the_bad_change():
    bad = _bad()
    assert git("diff", "--name-only", "main", "hotfix").split() == ["units.py"]
    assert _changed_lines(git("diff", "main", "hotfix")) == _changed_lines(git("diff", bad, bad + "^"))


def test_guard_main_unchanged():
    assert git("rev-parse", "main").strip() == recorded("main")
