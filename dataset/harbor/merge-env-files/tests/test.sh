#!/bin/bash
# Written by terminal-agent: runs the task's pytest tests and writes the weighted score
# (sum of the weights of the passed tests / sum of all weights) to /logs/verifier/reward.txt.
mkdir -p /logs/verifier
python3 -m pytest -p no:cacheprovider -rA --junitxml=/logs/verifier/junit.xml /tests/test_outputs.py
python3 - <<'SCORE'
import json
import xml.etree.ElementTree as ET

weights = json.loads('{"test_only_key_value_lines": 1.0, "test_order": 1.0, "test_values": 2.0}')
passed = set()
try:
    for case in ET.parse("/logs/verifier/junit.xml").getroot().iter("testcase"):
        if not any(child.tag in ("failure", "error", "skipped") for child in case):
            passed.add(case.get("name", "").split("[")[0])
except (OSError, ET.ParseError):
    pass
score = sum(w for name, w in weights.items() if name in passed) / sum(weights.values())
with open("/logs/verifier/reward.txt", "w") as handle:
    handle.write(f"{score:.6f}\n")
SCORE
