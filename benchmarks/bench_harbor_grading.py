"""Grading time in the Harbor verifier mode against the weighted-pytest grader, on the same task, in one run.

    python benchmarks/bench_harbor_grading.py [--repeat 10] [--json out.json]

The task: three pytest tests of ``/app/answer.txt``. Weighted pytest grades ``test_outputs.py`` with the
hardened runner (``Grader``). Harbor mode grades the same tests through a TB2-style ``tests/test.sh``
(``apt-get update``, ``apt-get install curl``, the uv installer piped to sh, ``source $HOME/.local/bin/env``,
``uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf ...``, ``echo 1 > reward.txt``)
offline, on the verifier runtime (``HarborGrader``). Each round grades a fresh container in which the
"agent" solved the task, alternating the order of the two; the first round warms the caches (image, pytest
bundle, the CTRF wheel) and is dropped. Printed: p50 of each, the ratio Harbor/weighted and Harbor's phases.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import textwrap
import time

from terminal_agent.rewards.harbor.verifier import HarborGrader
from terminal_agent.rewards.weighted_pytest.grader import Grader
from terminal_agent.sandbox.docker.sandbox import DockerSandbox
from terminal_agent.sandbox.images.manager import ensure_task_image
from terminal_agent.tasks.model import GradingMode, Task, TaskLimits, VerifierSpec

TESTS = (
    "import os\n\n"
    "def test_exists():\n    assert os.path.isfile('/app/answer.txt')\n\n"
    "def test_value():\n    assert open('/app/answer.txt').read().strip() == '42'\n\n"
    "def test_not_empty():\n    assert os.path.getsize('/app/answer.txt') > 0\n"
)
TEST_SH = textwrap.dedent(
    """\
    #!/bin/bash
    apt-get update
    apt-get install -y curl
    curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
    source $HOME/.local/bin/env
    uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
    if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
    """
)
COMMON = dict(instruction="Write 42 to /app/answer.txt", dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
              test_source=TESTS, limits=TaskLimits(network=False))
WEIGHTED = Task(task_id="bench-harbor-grading", test_weights={"test_exists": 1.0, "test_value": 2.0, "test_not_empty": 1.0}, **COMMON)
HARBOR = Task(task_id="bench-harbor-grading", test_support_files={"test.sh": TEST_SH},
              verifier=VerifierSpec(mode=GradingMode.HARBOR), **COMMON)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    image = ensure_task_image(WEIGHTED)
    graders = {"weighted": (Grader(), WEIGHTED), "harbor": (HarborGrader(), HARBOR)}
    samples: dict[str, list[float]] = {"weighted": [], "harbor": []}
    phases: dict[str, list[float]] = {}
    for round_index in range(args.repeat + 1):
        for method in ("weighted", "harbor") if round_index % 2 == 0 else ("harbor", "weighted"):
            grader, task = graders[method]
            sandbox = DockerSandbox.start(image, limits=task.limits, run_id="bench-harbor-grading")
            try:
                sandbox.exec("echo 42 > /app/answer.txt")
                started = time.perf_counter()
                result = grader.grade(sandbox, task)
                elapsed = time.perf_counter() - started
            finally:
                sandbox.close()
            if result.score != 1.0:
                print(f"unexpected result from {method}: score {result.score}, error {result.error}", file=sys.stderr)
                return 1
            if round_index:
                samples[method].append(elapsed)
                if method == "harbor":
                    for key, value in result.timings.items():
                        phases.setdefault(key, []).append(value)

    p50 = {method: statistics.median(values) for method, values in samples.items()}
    print(f"grading a solved 3-test task, fresh container per round, {args.repeat} rounds")
    print(f"  weighted pytest (Grader):              p50 {p50['weighted']:.3f} s   max {max(samples['weighted']):.3f} s")
    print(f"  harbor, TB2 test.sh offline (runtime): p50 {p50['harbor']:.3f} s   max {max(samples['harbor']):.3f} s")
    print(f"  ratio harbor/weighted: {p50['harbor'] / p50['weighted']:.2f}x   (extra {p50['harbor'] - p50['weighted']:+.3f} s)")
    print("  phases of harbor (p50): " + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in phases.items()))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"samples": samples, "phases": phases}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
