import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/_build/plan.json': '8e09d582a8f2b901cf2a482bf45f7140450b5bb342f64eb925645052b615c658'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


RECORDED = {'main': '742dde933f57d9590b1819236389c5a08729fce3\n'}

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

GOOD = 'currency,rate,updated\nUSD,1.0797,2024-02-29\nGBP,0.8554,2024-02-29\nJPY,162.48,2024-02-29\nCHF,0.9336,2024-02-29\nCAD,1.4560,2024-02-29\nAUD,1.6470,2024-02-29\nCNY,7.7700,2024-02-29\nPLN,4.3430,2024-02-29\nCZK,24.930,2024-02-29\nHUF,388.40,2024-02-29\nSEK,11.210,2024-02-29\nNOK,11.373,2024-02-29\n'
VERSIONS = ['currency,rate,updated\nUSD,1.0842,2024-01-31\nGBP,0.8571,2024-01-31\nJPY,160.91,2024-01-31\nCHF,0.9336,2024-01-31\nCAD,1.4560,2024-01-31\nAUD,1.6470,2024-01-31\nCNY,7.7700,2024-01-31\nPLN,4.3430,2024-01-31\nCZK,24.930,2024-01-31\nHUF,388.40,2024-01-31\n', 'currency,rate,updated\nUSD,1.0842,2024-01-31\nGBP,0.8571,2024-01-31\nJPY,160.91,2024-01-31\nCHF,0.9336,2024-01-31\nCAD,1.4560,2024-01-31\nAUD,1.6470,2024-01-31\nCNY,7.7700,2024-01-31\nPLN,4.3430,2024-01-31\nCZK,24.930,2024-01-31\nHUF,388.40,2024-01-31\nSEK,11.275,2024-01-31\nNOK,11.373,2024-01-31\n', 'currency,rate,updated\nUSD,1.0797,2024-02-29\nGBP,0.8554,2024-02-29\nJPY,162.48,2024-02-29\nCHF,0.9336,2024-02-29\nCAD,1.4560,2024-02-29\nAUD,1.6470,2024-02-29\nCNY,7.7700,2024-02-29\nPLN,4.3430,2024-02-29\nCZK,24.930,2024-02-29\nHUF,388.40,2024-02-29\nSEK,11.210,2024-02-29\nNOK,11.373,2024-02-29\n', 'currency,rate,updated\nUSD,1.0797,29/02/2024\nGBP,0.8554,29/02/2024\nJPY,162.48,29/02/2024\nCHF,0.9336,29/02/2024\nCAD,1.4560,29/02/2024\nAUD,1.6470,29/02/2024\nCNY,7.7700,29/02/2024\nPLN,4.3430,29/02/2024\nCZK,24.930,29/02/2024\nHUF,388.40,29/02/2024\nSEK,11.210,29/02/2024\nNOK,11.373,29/02/2024\n', 'currency,rate,updated\nUSD,1.0797,29/02/2024\nGBP,0.8554,29/02/2024\nJPY,162.48,29/02/2024\nCHF,0.9336,29/02/2024\nCAD,1.4560,29/02/2024\nAUD,1.6470,29/02/2024\nCNY,7.7700,29/02/2024\nPLN,4.3430,29/02/2024\nCZK,24.930,29/02/2024\nHUF,388.40,29/02/2024\nSEK,11.210,29/02/2024\nNOK,11.373,29/02/2024\nISK,148.70,29/02/2024\n']


def test_restored_content_is_last_good():
    assert git("show", "HEAD:data/rates.csv") == GOOD
    assert Path(REPO, "data/rates.csv").read_bytes() == GOOD.encode()


def test_new_commit_on_top():
    assert git("rev-parse", "HEAD^").strip() == recorded("main")
    assert git("log", "-1", "--format=%s").strip() == "Restore data/rates.csv"
    assert git("show", "HEAD:data/rates.csv") in VERSIONS
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"


def test_commit_touches_only_rates():
    assert git("diff", "--name-status", "HEAD^", "HEAD").splitlines() == ["A\tdata/rates.csv"]
    assert len(git("show", "HEAD:data/rates.csv").splitlines()) >= 11


def test_restored_file_validates():
    result = run("python3", "-B", "tools/validate_rates.py", "data/rates.csv", cwd=REPO)
    assert result.returncode == 0, result.stdout


def test_guard_clean_tree_and_history():
    assert git("status", "--porcelain") == ""
    assert git("rev-parse", "HEAD~1").strip() == recorded("main")
