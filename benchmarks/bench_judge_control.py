"""Cost of checking the judge hot switch per episode, against re-reading the file every time, in one run.

    python benchmarks/bench_judge_control.py [--calls 20000]

Ours: ``ControlWatcher.current()`` on an unchanged control file (one ``stat``; parsed only when
mtime/size/inode change). Baseline: ``read_control()`` every call (open, read, JSON, validation),
what a naive reward worker would do. Also timed: picking up a switch (write + first ``current()``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from terminal_agent.rewards.judge_control import ControlWatcher, JudgeSetting, read_control, write_control


def per_call_us(function, calls: int) -> float:  # noqa: ANN001
    started = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "judge.json"
        write_control(path, JudgeSetting(backend="litellm", model="openai/judge", weight=0.35))
        watcher = ControlWatcher(path)
        watcher.current()
        ours = per_call_us(watcher.current, args.calls)
        baseline = per_call_us(lambda: read_control(path), max(1, args.calls // 10))
        switches = []
        for number in range(50):
            started = time.perf_counter()
            write_control(path, JudgeSetting(backend="local" if number % 2 else "none"))
            watcher.current()
            switches.append((time.perf_counter() - started) * 1e3)
        assert watcher.current().backend == "local"
    switches.sort()
    print(f"unchanged file: watcher {ours:.1f} us/call, re-read every call {baseline:.1f} us/call: {baseline / ours:.1f}x cheaper")
    print(f"a switch (atomic write + pick-up): p50 {switches[len(switches) // 2]:.2f} ms, max {switches[-1]:.2f} ms")


if __name__ == "__main__":
    main()
