"""Soak: many scripted episodes through the pool, then zero leaks.

    python benchmarks/soak_sandbox.py [--episodes 500] [--parallel 8]

Each episode acquires a fresh sandbox from a SandboxPool, runs a short script (commands, state,
files, a background process, sometimes a timed-out command), kills the agent's processes like the
grader does and releases the sandbox. At the end the pool is closed and the script asserts that no
container, network or volume labelled with this run's id remains (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from terminal_agent.sandbox import labels
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.sandbox import docker_client
from terminal_agent.sandbox.pool import SandboxPool
from terminal_agent.tasks.model import TaskLimits


def episode(pool: SandboxPool, image: str, index: int) -> dict[str, float]:
    started = time.monotonic()
    sandbox = pool.acquire(image, TaskLimits(memory_mb=256, pids=128))
    acquired = time.monotonic() - started
    try:
        assert sandbox.exec(f"mkdir -p /work/{index} && cd /work/{index} && export EPISODE={index}", 10).ok
        assert sandbox.exec('echo "$EPISODE $(pwd)"', 10).output == f"{index} /work/{index}\n"
        payload = os.urandom(2048 + index)
        sandbox.write_file(f"/work/{index}/data.bin", payload)
        assert sandbox.read_file(f"/work/{index}/data.bin") == payload
        assert sandbox.exec("sha256sum data.bin | cut -c1-8", 10).exit_code == 0
        assert sandbox.exec("sleep 600", block=False).exit_code == 0
        assert sandbox.exec("for i in 1 2 3; do echo $i; done | wc -l", 10).output == "3\n"
        assert sandbox.exec("ls /nonexistent", 10).exit_code == 2
        if index % 10 == 0:
            result = sandbox.exec("setsid sleep 500 & sleep 500", timeout=0.3)
            assert result.timed_out
        assert sandbox.kill_agent_processes() >= 1
        assert sandbox.exec("pgrep -f '[s]leep [56]00' || echo none", 10).output == "none\n"
    finally:
        pool.release(sandbox)
    return {"acquire_s": acquired, "episode_s": time.monotonic() - started}


def labelled(run_id: str) -> dict[str, int]:
    api = docker_client().api
    selector = {"label": [f"{labels.MANAGED}=true", f"{labels.RUN_ID}={run_id}"]}
    return {
        "containers": len(api.containers(all=True, filters=selector)),
        "networks": len(api.networks(filters=selector)),
        "volumes": len((api.volumes(filters=selector) or {}).get("Volumes") or []),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="terminal-agent/base:bookworm")
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--parallel", type=int, default=8)
    args = parser.parse_args()

    run_id = f"soak-{os.getpid()}-{int(time.time())}"
    config = SandboxConfig(pool_size=args.parallel, max_concurrent_starts=4)
    pool = SandboxPool(config, run_id=run_id)
    started = time.monotonic()
    failures: list[str] = []
    timings: list[dict[str, float]] = []
    try:
        pool.prewarm(args.image, TaskLimits(memory_mb=256, pids=128), wait=True)
        with ThreadPoolExecutor(max_workers=args.parallel) as executor:
            futures = {executor.submit(episode, pool, args.image, i): i for i in range(args.episodes)}
            for done, future in enumerate(as_completed(futures), 1):
                try:
                    timings.append(future.result())
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    failures.append(f"episode {futures[future]}: {type(exc).__name__}: {exc}")
                if done % 50 == 0:
                    print(f"{done}/{args.episodes} episodes, {len(failures)} failed, {time.monotonic() - started:.0f} s", file=sys.stderr)
    finally:
        pool.close()
    elapsed = time.monotonic() - started

    deadline = time.monotonic() + 10  # auto-remove may still be finishing
    remaining = labelled(run_id)
    while any(remaining.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
        remaining = labelled(run_id)

    acquires = sorted(t["acquire_s"] for t in timings)
    episodes = sorted(t["episode_s"] for t in timings)
    print(f"episodes: {len(timings)} ok, {len(failures)} failed, {elapsed:.1f} s wall ({len(timings) / elapsed:.1f} episodes/s)")
    if timings:
        print(f"acquire p50 {acquires[len(acquires) // 2] * 1000:.1f} ms, episode p50 {episodes[len(episodes) // 2] * 1000:.0f} ms")
    print(f"pool: {pool.stats}")
    print(f"left behind (run {run_id}): {remaining}")
    for failure in failures[:10]:
        print("  " + failure)
    assert not any(remaining.values()), f"leaked: {remaining}"
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
