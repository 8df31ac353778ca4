"""Grading overhead after the episode ends, for a 3-test task, against a naive baseline, in one run.

    python benchmarks/bench_grading.py [--repeat 15] [--json out.json]

Ours: ``Grader.grade`` (kill agent processes, scan the container's changes for tampering, copy the
verifier in as one archive, ``docker exec`` the isolated runner, read the JUnit report back).
Baseline: a naive ``docker exec python3 -m pytest`` of the same tests with the same pytest bundle
ALREADY inside the container (no copy, no kill, no checks), the report read back the same way.
Each round grades a fresh container that ran a small "agent" command first, alternating the two
methods. Target: <= 1.5 s p50 for ours.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tarfile
import time

from terminal_agent.rewards.verifier_bundle import get_bundle
from terminal_agent.rewards.weighted_pytest.grader import Grader
from terminal_agent.rewards.weighted_pytest.junit_scoring import parse_junit, score_tests
from terminal_agent.sandbox.docker.sandbox import DockerSandbox, docker_client
from terminal_agent.sandbox.images.manager import ensure_task_image
from terminal_agent.tasks.model import Task

TASK = Task(
    task_id="bench-grading",
    instruction="Write 42 to /app/answer.txt",
    dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
    test_source=(
        "import os\n\n"
        "def test_exists():\n    assert os.path.isfile('/app/answer.txt')\n\n"
        "def test_value():\n    assert open('/app/answer.txt').read().strip() == '42'\n\n"
        "def test_not_empty():\n    assert os.path.getsize('/app/answer.txt') > 0\n"
    ),
    test_weights={"test_exists": 1.0, "test_value": 2.0, "test_not_empty": 1.0},
)


def naive_grade(sandbox: DockerSandbox) -> float:
    api = docker_client().api
    exec_id = api.exec_create(
        sandbox.id,
        ["sh", "-c", "cd /app && PYTHONPATH=/opt/naive/bundle.zip python3 -m pytest -q -p no:cacheprovider "
         "/tests/test_outputs.py --junitxml=/tmp/naive.xml >/dev/null 2>&1"],
    )["Id"]
    api.exec_start(exec_id)
    stream, _ = api.get_archive(sandbox.id, "/tmp/naive.xml")
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        report = tar.extractfile(tar.getmembers()[0]).read()
    return score_tests(TASK, parse_junit(report))[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    image = ensure_task_image(TASK)
    bundle = get_bundle()
    grader = Grader()
    ours: list[float] = []
    naive: list[float] = []
    phases: dict[str, list[float]] = {}
    for round_index in range(args.repeat + 1):  # the first round warms caches and is dropped
        for method in ("ours", "naive") if round_index % 2 == 0 else ("naive", "ours"):
            sandbox = DockerSandbox.start(image, limits=TASK.limits, run_id="bench-grading")
            try:
                sandbox.exec("echo 42 > /app/answer.txt && ls -la /app > /dev/null")
                if method == "naive":
                    sandbox.write_file("/opt/naive/bundle.zip", bundle.data)
                    sandbox.write_file("/tests/test_outputs.py", TASK.test_source.encode())
                    started = time.perf_counter()
                    score = naive_grade(sandbox)
                    elapsed = time.perf_counter() - started
                    samples = naive
                else:
                    started = time.perf_counter()
                    result = grader.grade(sandbox, TASK)
                    elapsed = time.perf_counter() - started
                    score = result.score
                    samples = ours
                    if round_index:
                        for key, value in result.timings.items():
                            phases.setdefault(key, []).append(value)
                if score != 1.0:
                    print(f"unexpected score {score} from {method}", file=sys.stderr)
                    return 1
                if round_index:
                    samples.append(elapsed)
            finally:
                sandbox.close()

    p50_ours, p50_naive = statistics.median(ours), statistics.median(naive)
    print(f"grading a 3-test task after the episode, {args.repeat} rounds (fresh container each)")
    print(f"  ours  (hardened grader):            p50 {p50_ours:.3f} s   max {max(ours):.3f} s   target <= 1.5 s")
    print(f"  naive (docker exec pytest, bundle in): p50 {p50_naive:.3f} s   max {max(naive):.3f} s")
    print(f"  ratio ours/naive: {p50_ours / p50_naive:.2f}x   (extra {p50_ours - p50_naive:+.3f} s)")
    print("  phases of ours (p50): " + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in phases.items()))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"ours": ours, "naive": naive, "phases": phases}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
