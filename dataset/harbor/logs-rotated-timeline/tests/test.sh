#!/bin/bash
# Verifier of a terminal-agent corpus task, in the Terminal-Bench 2 shape: pytest with a CTRF report, then the
# reward is the weighted share of passed tests, zeroed or capped when a guard test failed.
mkdir -p /logs/verifier
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.11 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
python3 - <<'SCORE' > /logs/verifier/reward.txt
import json
WEIGHTS = {"test_errors_per_hour": 1.5, "test_gzipped_rotations_included": 1.0, "test_scheduler_epoch_times_converted": 1.0, "test_timeline_has_every_warning_and_error": 1.5, "test_timeline_in_time_order": 1.5}
GUARDS = {"cap": 0.0, "on_failure": "zero", "tests": ["test_logs_unchanged"]}
tests = json.load(open("/logs/verifier/ctrf.json"))["results"]["tests"]
status = {}
for test in tests:
    name = test["name"].split("[", 1)[0].split("::")[-1]
    status[name] = status.get(name, True) and test["status"] == "passed"
score = sum(w for name, w in WEIGHTS.items() if status.get(name)) / sum(WEIGHTS.values())
if any(not status.get(name, False) for name in GUARDS["tests"]):
    score = 0.0 if GUARDS["on_failure"] == "zero" else min(score, GUARDS["cap"])
print(f"{score:.6f}")
SCORE
