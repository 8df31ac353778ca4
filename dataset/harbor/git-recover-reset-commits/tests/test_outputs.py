import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/_build/plan.json': '18bc6e183570065de1a68cae4c4b55bc40ce837b6da6f777bca4b46496538e10'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


RECORDED = {'main': '94599d16175b43dc392d4e5a430d7c6b32930d41\n'}

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

REPORT = 'from inventory import load, shortfall\n\n\ndef low_stock(items):\n    """Items at or under their reorder level, the largest shortfall first."""\n    low = [item for item in items if item["quantity"] <= item["reorder_level"]]\n    return sorted(low, key=lambda item: (-shortfall(item), item["name"]))\n\n\nif __name__ == "__main__":\n    for item in low_stock(load()):\n        print(f"{item[\'name\']}: {item[\'quantity\']} (short by {shortfall(item)})")\n'
INVENTORY = '"""Tiny stock ledger: items.csv holds name,quantity,reorder_level."""\nimport csv\n\n\ndef load(path="items.csv"):\n    with open(path, newline="") as handle:\n        return [{"name": row["name"], "quantity": int(row["quantity"]), "reorder_level": int(row["reorder_level"])}\n                for row in csv.DictReader(handle)]\n\n\ndef shortfall(item):\n    """How many units are missing to reach the reorder level (0 or more)."""\n    return max(0, item["reorder_level"] - item["quantity"])\n'
C_DATE, D_DATE = 1709301060, 1709306880


def test_report_work_restored():
    assert git("show", "main:report.py") == REPORT
    assert git("show", "main:inventory.py") == INVENTORY


def test_lost_commits_replayed_on_top():
    top = git("log", "-3", "--format=%s|%an <%ae>|%at", "main").splitlines()
    assert top == [f"Report: sort by shortfall|Priya Natarajan <priya@example.com>|{D_DATE}", f"Add low-stock report|Priya Natarajan <priya@example.com>|{C_DATE}",
                   "Fix README typo, add washers|Corpus Author <author@example.com>|" + top[2].rsplit("|", 1)[1]]
    assert git("rev-parse", "main~2").strip() == recorded("main")


def test_history_is_linear():
    assert git("rev-list", "--count", "main").strip() == "5"
    assert git("rev-list", "--merges", "main").strip() == ""


def test_report_output():
    result = run("python3", "-B", "report.py", cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["brackets: 2 (short by 23)", "washers: 3 (short by 17)",
                                          "nuts: 30 (short by 10)", "hinges: 8 (short by 2)"]


def test_guard_clean_and_no_debug_commit():
    assert git("status", "--porcelain") == ""
    assert "tmp: debug print" not in git("log", "--format=%s", "main")
