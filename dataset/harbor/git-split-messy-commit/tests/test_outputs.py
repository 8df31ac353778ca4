import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/_build/plan.json': 'b24b2b511e5b744042c0359f8bed2ea784b63979f1fca936cd62b2b978d13cc9'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


RECORDED = {'base': '6a72141ad33f1438bd3f4fcc4848dde4b169bbee\n', 'top_date': '1709318520\n', 'top_tree': '862fe49bba35defa7aef9cebd2e592cf47b2c22e\n', 'wip_tree': 'de643396a987999c8f4f4b4e1677d85adb8bedc9\n'}

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

SUBJECTS = ['Fix blank-line handling in parser', 'Add JSON export', 'Document JSON export']


def test_three_commits_replace_wip():
    assert git("log", "--reverse", "--format=%s", "main~4..main~1").splitlines() == SUBJECTS
    assert git("rev-parse", "main~4").strip() == recorded("base")


def test_each_commit_touches_one_file():
    touched = [git("diff", "--name-only", f"main~{n + 1}", f"main~{n}").split() for n in (3, 2, 1)]
    assert touched == [["parser.py"], ["export.py"], ["README.md"]]


def test_split_adds_up_to_wip(tmp_path):
    assert git("log", "-1", "--format=%s", "main~1").strip() == SUBJECTS[2]
    assert git("rev-parse", "main~1^{tree}").strip() == recorded("wip_tree")
    tree = export("main~3", tmp_path / "fix")
    probe = "from parser import parse; print(parse('a: 1\\n\\nend: 2\\n'))"
    result = run("python3", "-B", "-c", probe, cwd=str(tree))
    assert result.returncode == 0 and result.stdout.strip() == "[{'a': '1', 'end': '2'}]", result.stderr


def test_top_commit_kept():
    assert git("log", "-1", "--format=%s", "main~1").strip() == SUBJECTS[2]
    assert git("rev-parse", "main^{tree}").strip() == recorded("top_tree")
    assert git("log", "-1", "--format=%s|%an <%ae>|%at", "main").strip() == (
        "Add a command-line entry point|Lee Park <lee@example.com>|" + recorded("top_date"))


def test_split_commits_keep_wip_author():
    assert git("log", "--format=%an <%ae>", "main~4..main~1").splitlines() == ["Ana Souza <ana@example.com>"] * 3


def test_guard_clean_tree():
    assert git("status", "--porcelain") == ""
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"
