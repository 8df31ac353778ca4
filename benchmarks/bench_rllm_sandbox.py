"""rLLM's Sandbox protocol: our sandbox through the adapter against rLLM's own Docker backend, in one run.

    <rLLM HEAD venv>/bin/python benchmarks/bench_rllm_sandbox.py [--commands 200]

Needs rLLM HEAD installed (scripts/setup_rllm_venvs.sh builds a venv) and Docker. Both sides run the
same image and the same ``exec(command)`` calls of the protocol; prints p50/p90 per ``exec("true")``
and the ratio, then what a 1 s ``timeout`` does to ``sleep 5`` on each (rLLM's backend ignores it).
rLLM's container carries no labels, so this script removes it itself, whatever happens.
"""

from __future__ import annotations

import argparse
import time
import uuid

IMAGE = "terminal-agent/base:bookworm"
RUN_ID = "bench-rllm-sandbox"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def per_exec(sandbox, commands: int) -> list[float]:
    for _ in range(5):  # warm up
        sandbox.exec("true")
    samples = []
    for _ in range(commands):
        started = time.perf_counter()
        sandbox.exec("true")
        samples.append(time.perf_counter() - started)
    return samples


def timeout_wall(sandbox) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        sandbox.exec("sleep 5", timeout=1)
        what = "returned"
    except RuntimeError as exc:  # a failed command, the protocol's way (ours: timed out)
        what = type(exc).__name__
    return time.perf_counter() - started, what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=200)
    args = parser.parse_args()

    from rllm.sandbox.backends.docker import DockerSandbox as RLLMDockerSandbox
    from rllm.sandbox.protocol import Sandbox

    from terminal_agent.compat.rllm_sandbox import RLLMSandbox

    ours = RLLMSandbox.start(IMAGE, run_id=RUN_ID)
    theirs = None
    try:
        theirs = RLLMDockerSandbox(name=f"bench-{uuid.uuid4().hex[:8]}", image=IMAGE)
        assert isinstance(ours, Sandbox) and isinstance(theirs, Sandbox)
        results = {"ours": per_exec(ours, args.commands), "rllm docker": per_exec(theirs, args.commands)}
        for name, samples in results.items():
            print(f"{name:12s} exec('true'): p50 {percentile(samples, 0.5) * 1e3:7.2f} ms   "
                  f"p90 {percentile(samples, 0.9) * 1e3:7.2f} ms   ({len(samples)} calls)")
        ratio = percentile(results["rllm docker"], 0.5) / percentile(results["ours"], 0.5)
        print(f"ratio (rllm docker p50 / ours p50): {ratio:.1f}x")
        for name, sandbox in (("ours", ours), ("rllm docker", theirs)):
            wall, what = timeout_wall(sandbox)
            print(f"{name:12s} exec('sleep 5', timeout=1): {wall:.2f} s, {what}")
    finally:
        ours.close()
        if theirs is not None:
            theirs.close()


if __name__ == "__main__":
    main()
