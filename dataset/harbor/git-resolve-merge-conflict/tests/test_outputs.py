import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/_build/plan.json': '15787901050ba3f05b5d731d110424ea91b3979c6b00672a9f60b58930e69e65'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


RECORDED = {'feature': '777e839a469d0288515263f5f157e310bec7c95e\n', 'main': '2d4aa724a7684a7738b7bb48d892f39506cc8f68\n'}

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

import configparser
import importlib
import sys


def _merged(tmp_path):
    """main's tree after the merge (the feature must be merged into main first)."""
    assert run("git", "-C", REPO, "merge-base", "--is-ancestor", recorded("feature"), "main").returncode == 0
    return export("main", tmp_path / "merged")


def _pricing(tree):
    sys.path.insert(0, str(tree))
    try:
        for name in ("pricing", "currency"):
            sys.modules.pop(name, None)
        module = importlib.import_module("pricing")
        return module, module.load_config(str(tree / "config.ini"))
    finally:
        sys.path.remove(str(tree))


def test_merge_commit_joins_both_branches():
    parents = git("log", "-1", "--format=%P", "main").split()
    assert parents == [recorded("main"), recorded("feature")]
    assert git("symbolic-ref", "--short", "HEAD").strip() == "main"
    text = "".join(git("show", f"main:{path}") for path in git("ls-tree", "-r", "--name-only", "main").split())
    assert "<<<<<<<" not in text and ">>>>>>>" not in text and "\n=======\n" not in text


def test_config_has_every_section(tmp_path):
    parser = configparser.ConfigParser()
    parser.read_string((_merged(tmp_path) / "config.ini").read_text())
    assert parser["tax"]["vat_rate"] == "0.20"
    assert (parser["discount"]["threshold"], parser["discount"]["rate"]) == ("100", "0.05")
    assert {key: parser["currency"][key] for key in parser["currency"]} == {"eur": "1.0", "usd": "1.08", "gbp": "0.86"}


def test_discount_still_applies(tmp_path):
    pricing, config = _pricing(_merged(tmp_path))
    assert pricing.order_total([(50.0, 2)], config) == 114.0
    assert pricing.order_total([(99.0, 1)], config) == 118.8
    assert pricing.order_total([(20.0, 5)], config, "EUR") == 114.0


def test_currency_still_applies(tmp_path):
    pricing, config = _pricing(_merged(tmp_path))
    assert pricing.order_total([(10.0, 2)], config, "USD") == 25.92
    assert pricing.order_total([(10.0, 2)], config, currency="GBP") == 20.64


def test_discount_and_currency_together(tmp_path):
    pricing, config = _pricing(_merged(tmp_path))
    assert pricing.order_total([(50.0, 2)], config, "GBP") == 98.04
    assert pricing.order_total([(40.0, 5)], config, "USD") == 246.24


def test_repository_unit_tests_pass(tmp_path):
    tree = _merged(tmp_path)
    source = (tree / "test_pricing.py").read_text()
    assert "def test_bulk_discount" in source and "def test_display_currency" in source
    result = run("python3", "-B", "-m", "unittest", "-v", "test_pricing", cwd=str(tree))
    assert result.returncode == 0, result.stderr
    assert "Ran 0 tests" not in result.stderr


def test_guard_feature_branch_and_tree():
    assert git("rev-parse", "feature/currency").strip() == recorded("feature")
    assert git("status", "--porcelain") == ""
