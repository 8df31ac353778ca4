#!/bin/bash
# Written by terminal-agent: runs the task's pytest tests and writes the weighted score
# (sum of the weights of the passed tests / sum of all weights) to /logs/verifier/reward.txt.
# pytest is the image's when it has one; else it is installed here, pinned, into a venv that also sees the image's
# packages (task.toml gives the verifier phase the network for it; the agent's phase keeps the task's setting).
mkdir -p /logs/verifier
PYTHON=python3
if ! python3 -c 'import pytest' >/dev/null 2>&1; then
    VENV="$(mktemp -d)/venv"
    python3 -m venv --system-site-packages "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check pytest==8.4.1
    PYTHON="$VENV/bin/python"
fi
"$PYTHON" -m pytest -p no:cacheprovider -rA --junitxml=/logs/verifier/junit.xml /tests/test_outputs.py
python3 - <<'SCORE'
import json
import xml.etree.ElementTree as ET

weights = json.loads('{"test_directory_argument_fails": 1.0, "test_missing_file_fails": 1.5, "test_stops_at_the_first_failure": 1.5}')
passed = set()
try:
    for case in ET.parse("/logs/verifier/junit.xml").getroot().iter("testcase"):
        if not any(child.tag in ("failure", "error", "skipped") for child in case):
            passed.add(case.get("name", "").split("[")[0])
except (OSError, ET.ParseError):
    pass
score = sum(w for name, w in weights.items() if name in passed) / sum(weights.values())
guards = json.loads('{"cap": 0.0, "on_failure": "zero", "tests": ["test_good_files_unchanged_output", "test_guard_still_a_bash_script"]}')
ok = {}
try:
    for case in ET.parse("/logs/verifier/junit.xml").getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        ok[name] = ok.get(name, True) and not any(child.tag in ("failure", "error", "skipped") for child in case)
except (OSError, ET.ParseError):
    pass
if any(not ok.get(name, False) for name in guards["tests"]):
    score = 0.0 if guards["on_failure"] == "zero" else min(score, guards["cap"])
with open("/logs/verifier/reward.txt", "w") as handle:
    handle.write(f"{score:.6f}\n")
SCORE
