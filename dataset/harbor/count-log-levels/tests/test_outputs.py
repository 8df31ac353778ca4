import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/server.log': 'f21b0e497d9274e4e4ab4530e423dfe10a904056d823045a1bca1bc6a83dfaeb'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


REPORT = Path("/app/report.txt")
ERRORS = Path("/app/errors.txt")
EXPECTED_REPORT = ["INFO 8", "ERROR 6", "WARN 4", "DEBUG 2"]
EXPECTED_CODES = ["E0007", "E1042", "E2001", "E3100"]


def report_lines():
    return [line.strip() for line in REPORT.read_text().splitlines() if line.strip()]


def test_report_format():
    lines = report_lines()
    assert lines, "report.txt is empty"
    for line in lines:
        level, count = line.split(" ")
        assert level in ("DEBUG", "INFO", "WARN", "ERROR") and count.isdigit(), line


def test_report_counts():
    assert sorted(report_lines()) == sorted(EXPECTED_REPORT)


def test_report_order():
    assert report_lines() == EXPECTED_REPORT


def test_error_codes():
    lines = [line.strip() for line in ERRORS.read_text().splitlines() if line.strip()]
    assert lines == EXPECTED_CODES


def test_log_unchanged():
    assert unchanged("/app/logs/server.log")
