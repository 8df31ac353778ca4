"""Ray sandbox benchmark: the same work on local DockerSandboxes and through the ray backend, in one run.

    python benchmarks/bench_ray_sandbox.py [--commands 300] [--episodes 8] [--workers 4] [--json out.json]

Starts a two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``, one CPU a node, both
advertising the sandbox host resource) unless ``--address`` joins an existing one. Measures, local
against Ray, on containers of the same image and daemon:

* per-command overhead (``true``, p50/p90): the added milliseconds are what one actor round trip
  costs (target: at most 2 ms added);
* a 4 KiB ``write_file`` and ``read_file`` (over the shell server's channel when it serves files),
  against ``put_archive`` of the same file (the Engine API archive call they replace; target <= 3 ms);
* episode throughput: ``--episodes`` scripted episodes of a real task (reference solution, then
  ``finish``; start, agent turns, grading, close) over ``--workers`` threads, episodes/s.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
IMAGE = "terminal-agent/base:bookworm"
RUN_ID = "bench-ray-sandbox"
TASK_ID = "fix-stats-script"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(function: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return samples


def bash(command: str) -> str:
    return "<bash>\n" + yaml.safe_dump({"cmd": command}, default_style="|", width=10_000) + "</bash>"


def episodes_per_second(make_env: Callable[[], Any], task, episodes: int, workers: int) -> tuple[float, list[float]]:
    """Run ``episodes`` scripted episodes of ``task`` over ``workers`` threads, through the episode engine;
    (episodes/s, rewards)."""
    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.engine import EpisodeEngine, EpisodeSettings

    engine = EpisodeEngine(EpisodeSettings(max_steps=5, keep_calls=False))

    lock = threading.Lock()
    remaining = [episodes]
    rewards: list[float] = []

    def worker() -> None:
        while True:
            with lock:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            model = ScriptedModelClient([bash("cd /app && ls >/dev/null"), bash(task.solution), "<finish>\nmessage: done\n</finish>"])
            result = engine.run(make_env, TerminalBenchAgent, model, task_id=task.task_id)
            with lock:
                rewards.append(result.reward if result.scored else float("nan"))

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return episodes / (time.perf_counter() - started), rewards


def one_file_tar(name: str, data: bytes) -> bytes:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", default=None, help="join this Ray cluster instead of starting one here")
    parser.add_argument("--commands", type=int, default=300, help="commands timed per backend for the overhead")
    parser.add_argument("--files", type=int, default=40, help="4 KiB writes and reads timed per backend")
    parser.add_argument("--episodes", type=int, default=8, help="episodes per backend for the throughput")
    parser.add_argument("--workers", type=int, default=4, help="concurrent episodes")
    parser.add_argument("--json", dest="json_path", default=None, help="also write the results here")
    args = parser.parse_args()

    import ray
    from ray.cluster_utils import Cluster

    from terminal_agent.env import DockerIsolatedEnv, EnvConfig
    from terminal_agent.sandbox.backends import start_sandbox
    from terminal_agent.sandbox.config import DEFAULT_HOST_RESOURCE, RaySandboxConfig, SandboxConfig
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox
    from terminal_agent.sandbox.images.manager import ensure_task_image
    from terminal_agent.sandbox.ray.backend import shutdown_fleets
    from terminal_agent.tasks.csv.format import read_tasks_csv

    task = {t.task_id: t for t in read_tasks_csv(REPO / "dataset" / "latest_verified.csv").tasks}[TASK_ID]
    ensure_task_image(task)
    cluster = None
    if args.address:
        ray.init(address=args.address, logging_level="ERROR", log_to_driver=False)
    else:
        print("starting a two-node Ray cluster on this machine ...", file=sys.stderr)
        cluster = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "resources": {DEFAULT_HOST_RESOURCE: 1}, "include_dashboard": False},
        )
        cluster.add_node(num_cpus=1, resources={DEFAULT_HOST_RESOURCE: 1})
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    ray_config = SandboxConfig(backend="ray", ray=RaySandboxConfig(max_sandboxes_per_node=max(8, args.workers)))
    results: dict[str, dict[str, float]] = {}

    def record(name: str, samples: list[float]) -> None:
        results[name] = {"p50_ms": percentile(samples, 0.5) * 1000, "p90_ms": percentile(samples, 0.9) * 1000, "n": len(samples)}

    try:
        local = DockerSandbox.start(IMAGE, run_id=RUN_ID)
        remote = start_sandbox(ray_config, IMAGE, run_id=RUN_ID)
        try:
            for box in (local, remote):
                for _ in range(30):  # warm both paths
                    box.exec("true")
            # interleaved rounds so that load from other processes hits both alike
            samples: dict[str, list[float]] = {"local": [], "ray": []}
            for _ in range(max(1, args.commands // 50)):
                samples["local"] += timed(lambda: local.exec("true"), 50)
                samples["ray"] += timed(lambda: remote.exec("true"), 50)
            record("exec true: local DockerSandbox", samples["local"])
            record("exec true: ray proxy", samples["ray"])
            blob = bytes(range(256)) * 16
            tar = one_file_tar("bench.bin", blob)
            record("put_archive 4 KiB: local DockerSandbox", timed(lambda: local.put_archive("/tmp", tar), args.files))
            for name, box in (("local DockerSandbox", local), ("ray proxy", remote)):
                record(f"write_file 4 KiB: {name}", timed(lambda b=box: b.write_file("/tmp/bench.bin", blob), args.files))
                record(f"read_file 4 KiB: {name}", timed(lambda b=box: b.read_file("/tmp/bench.bin"), args.files))
        finally:
            local.close()
            remote.close()

        for name, sandbox_config in (("local", SandboxConfig()), ("ray", ray_config)):
            env_config = EnvConfig(sandbox=sandbox_config, run_id=RUN_ID, max_steps=5)
            rate, rewards = episodes_per_second(lambda c=env_config: DockerIsolatedEnv(task, c), task, args.episodes, args.workers)
            results[f"episodes: {name}"] = {"episodes_s": rate, "mean_reward": sum(rewards) / max(1, len(rewards))}
    finally:
        shutdown_fleets()
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()

    report(results)
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


def report(results: dict[str, dict[str, float]]) -> None:
    print(f"\n{'measure':<40} {'p50 ms':>9} {'p90 ms':>9}")
    for name, row in results.items():
        if "p50_ms" in row:
            print(f"{name:<40} {row['p50_ms']:>9.2f} {row['p90_ms']:>9.2f}")
    local = results["exec true: local DockerSandbox"]["p50_ms"]
    remote = results["exec true: ray proxy"]["p50_ms"]
    print(f"\nper-command: ray {remote:.2f} ms vs local {local:.2f} ms -> {remote / local:.2f}x, "
          f"{remote - local:+.2f} ms added (target <= 2 ms added)")
    for op in ("write_file", "read_file"):
        lo = results[f"{op} 4 KiB: local DockerSandbox"]["p50_ms"]
        re = results[f"{op} 4 KiB: ray proxy"]["p50_ms"]
        print(f"{op} 4 KiB: ray {re:.2f} ms vs local {lo:.2f} ms -> {re / lo:.2f}x, {re - lo:+.2f} ms added")
    archive = results["put_archive 4 KiB: local DockerSandbox"]["p50_ms"]
    for op in ("write_file", "read_file"):
        lo = results[f"{op} 4 KiB: local DockerSandbox"]["p50_ms"]
        print(f"{op} 4 KiB local {lo:.2f} ms vs put_archive {archive:.2f} ms -> {archive / lo:.1f}x faster (target <= 3 ms)")
    lo_rate = results["episodes: local"]["episodes_s"]
    re_rate = results["episodes: ray"]["episodes_s"]
    print(f"episode throughput: ray {re_rate:.2f}/s vs local {lo_rate:.2f}/s -> {re_rate / lo_rate:.2f}x "
          f"(mean reward ray {results['episodes: ray']['mean_reward']:.2f}, local {results['episodes: local']['mean_reward']:.2f})")


if __name__ == "__main__":
    sys.exit(main())
