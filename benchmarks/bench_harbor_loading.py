"""Loading and converting thousands of Harbor task directories, against a naive read of the same files, in one run.

    python benchmarks/bench_harbor_loading.py [--tasks 5000] [--workers 4]

Generates ``--tasks`` Harbor directories in the Terminal-Bench 2 style (schema 1.0 task.toml with ``memory = "2G"``,
instruction, Dockerfile plus a binary fixture, a TB2-style ``tests/test.sh`` and ``test_outputs.py``, ``solve.sh``),
then times, each in a fresh child process so that its peak memory is its own:

- ``naive``: the baseline, what a loader with no checks costs - walk each directory, ``tomllib`` the task.toml and read
  every file's bytes (no validation, no symlink checks, no Task);
- ``load``: ``load_tasks`` (safe reads, the full Harbor mapping, validated ``Task`` objects);
- ``convert``: ``convert_tasks`` to parquet and to Harbor directories (read + write, published atomically).

Prints wall time, tasks/s and peak RSS of each, and the ratio of ``load`` to ``naive``. Target (issue 17): loading and
converting 5,000 directories in at most 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOML = """version = "1.0"

[metadata]
author_name = "bench"
difficulty = "{difficulty}"
category = "data-processing"
tags = ["bench", "generated"]

[verifier]
timeout_sec = 900.0

[agent]
timeout_sec = 900.0

[environment]
build_timeout_sec = 600.0
cpus = 1
memory = "2G"
storage = "10G"
"""

TEST_SH = """#!/bin/bash
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def generate(root: Path, count: int) -> None:
    """``count`` Harbor task directories under ``root``."""
    rng = random.Random(0)
    for number in range(count):
        task = root / f"gen-task-{number:05d}"
        (task / "environment").mkdir(parents=True)
        (task / "tests").mkdir()
        (task / "solution").mkdir()
        (task / "task.toml").write_text(TOML.format(difficulty=rng.choice(["easy", "medium", "hard"])))
        (task / "instruction.md").write_text(f"Write the number {number} to /app/answer.txt.\n")
        (task / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\nCOPY data.bin /app/\n")
        (task / "environment" / "data.bin").write_bytes(rng.randbytes(2048))
        (task / "tests" / "test.sh").write_text(TEST_SH)
        (task / "tests" / "test_outputs.py").write_text(
            "from pathlib import Path\n\n\n"
            f"def test_answer():\n    assert Path('/app/answer.txt').read_text().strip() == '{number}'\n\n\n"
            "def test_data_kept():\n    assert Path('/app/data.bin').stat().st_size == 2048\n"
        )
        (task / "solution" / "solve.sh").write_text(f"#!/bin/bash\necho {number} > /app/answer.txt\n")


CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
phase, source, out, workers = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
started = time.perf_counter()
if phase == "naive":
    import tomllib
    count = 0
    for task in sorted(p for p in source.iterdir() if p.is_dir()):
        tomllib.loads((task / "task.toml").read_text())
        for current, _, names in os.walk(task):
            for name in names:
                (Path(current) / name).read_bytes()
        count += 1
elif phase == "load":
    from terminal_agent.tasks import load_tasks
    count = len(load_tasks(source, workers=workers))
else:
    from terminal_agent.tasks.conversion import convert_tasks
    to = phase.split(":", 1)[1]
    report = convert_tasks(source, out, to, workers=workers, strict=True)
    assert report.ok, report.errors[:3]
    count = len(report.tasks)
seconds = time.perf_counter() - started
print(json.dumps({"count": count, "seconds": seconds,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_phase(phase: str, source: Path, out: Path, workers: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, phase, str(source), str(out), str(workers)],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{phase} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        source = root / "tasks"
        source.mkdir()
        started = time.perf_counter()
        generate(source, args.tasks)
        print(f"generated {args.tasks} Harbor directories in {time.perf_counter() - started:.1f} s "
              f"({os.cpu_count()} cores, {args.workers} workers)")
        results = {}
        for phase in ("naive", "load", "convert:parquet", "convert:harbor"):
            out = root / ("out.parquet" if phase.endswith("parquet") else "out-dirs")
            results[phase] = result = run_phase(phase, source, out, args.workers)
            assert result["count"] == args.tasks, (phase, result)
            print(f"{phase:16s} {result['seconds']:7.2f} s  {args.tasks / result['seconds']:8.0f} tasks/s  "
                  f"peak RSS {result['peak_mib']:6.0f} MiB")
    load, naive = results["load"]["seconds"], results["naive"]["seconds"]
    print(f"load vs naive read of the same files: {load / naive:.2f}x the time "
          f"({load - naive:+.2f} s for parsing, checks and validation)")
    worst = max(r["seconds"] for p, r in results.items() if p.startswith("convert"))
    print(f"slowest conversion: {worst:.1f} s (target: <= 30 s for 5,000 directories)")


if __name__ == "__main__":
    main()
