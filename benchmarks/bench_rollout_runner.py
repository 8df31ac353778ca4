"""Rollout runner throughput: concurrent episodes vs one at a time, on real containers.

The model is scripted with a fixed think time per call (standing in for a remote endpoint), so
the measurement is the runner's overlap of model waits and environment work. The baseline is
concurrency 1, measured in the same run; the ratio is what concurrency buys.

    python benchmarks/bench_rollout_runner.py [--episodes 8] [--concurrency 4] [--think 0.3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from terminal_agent.interfaces import ModelResponse
from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner
from terminal_agent.tasks.loading import load_tasks

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=str(ROOT / "dataset" / "latest_verified.csv"))
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--think", type=float, default=0.3, help="Seconds the scripted model takes per call.")
    args = parser.parse_args()

    task = load_tasks(args.tasks)[0]

    class ThinkingModel:
        """A stand-in remote endpoint: answers after a fixed delay, many calls in flight at once."""

        name = "think"
        is_thread_safe = True

        def complete(self, messages, **sampling):  # noqa: ANN001, ANN003, ANN202
            started = time.monotonic()
            time.sleep(args.think)
            turns = sum(1 for m in messages if m["role"] == "assistant")
            text = "<bash>\ncmd: ls -la /\n</bash>" if turns < 2 else "<finish>\nmessage: done\n</finish>"
            return ModelResponse(text=text, latency_s=time.monotonic() - started)

    def measure(concurrency: int) -> tuple[float, float, float]:
        runner = RolloutRunner(
            ThinkingModel(),
            RolloutConfig(attempts=args.episodes, max_steps=3, concurrency=concurrency, sweep_leaked=False),
        )
        started = time.monotonic()
        results = runner.run([task])
        wall = time.monotonic() - started
        errors = results.summary["n_errors"]
        if errors:
            raise SystemExit(f"{errors} episode(s) failed: {results.summary['errors_by_kind']}")
        return wall, results.summary["env_time_s"], results.summary["model_time_s"]

    measure(1) if args.episodes > 1 else None  # warm the image cache; not timed
    base_wall, base_env, base_model = measure(1)
    wall, env, model = measure(args.concurrency)
    print(f"{args.episodes} episodes of {task.task_id}, 3 turns, {args.think:.2f} s model think time")
    print(f"concurrency 1: {base_wall:6.2f} s wall ({args.episodes / base_wall * 60:6.1f} episodes/min; env {base_env:.1f} s, model {base_model:.1f} s)")
    print(f"concurrency {args.concurrency}: {wall:6.2f} s wall ({args.episodes / wall * 60:6.1f} episodes/min; env {env:.1f} s, model {model:.1f} s)")
    print(f"speed-up: {base_wall / wall:.2f}x")


if __name__ == "__main__":
    main()
