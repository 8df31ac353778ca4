"""Sandbox benchmark: the persistent shell against `docker exec`, on the same containers, in one run.

    python benchmarks/bench_sandbox.py [--commands 300] [--seconds 3] [--json out.json]

Baselines: the docker SDK's ``exec_run`` (Engine API exec create/start/inspect, the honest
baseline) and the ``docker exec`` CLI when it is installed. Prints p50/p90 and ratios for:
per-command overhead (``true``), commands/s over 8 concurrent containers, cold container ready
time, warm pool acquire time and teardown time. Targets are printed beside the numbers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.sandbox import DockerSandbox, docker_client
from terminal_agent.sandbox.pool import SandboxPool

IMAGE = "terminal-agent/base:bookworm"
RUN_ID = "bench-sandbox"


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


def throughput(workers: list[Callable[[], object]], seconds: float) -> float:
    """Commands per second with one thread per worker for ``seconds``."""
    counts = [0] * len(workers)
    stop = threading.Event()

    def loop(index: int) -> None:
        while not stop.is_set():
            workers[index]()
            counts[index] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(workers))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--commands", type=int, default=300, help="commands timed per method for the overhead")
    parser.add_argument("--baseline-commands", type=int, default=40, help="commands timed for the docker exec baselines")
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each throughput run")
    parser.add_argument("--containers", type=int, default=8)
    parser.add_argument("--cold", type=int, default=10, help="cold starts timed")
    parser.add_argument("--json", dest="json_path", default=None, help="also write the results here")
    args = parser.parse_args()

    client = docker_client()
    api = client.api
    results: dict[str, dict[str, float]] = {}

    def record(name: str, samples: list[float]) -> None:
        results[name] = {"p50_ms": percentile(samples, 0.5) * 1000, "p90_ms": percentile(samples, 0.9) * 1000, "n": len(samples)}

    print(f"starting {args.containers} containers of {args.image} ...", file=sys.stderr)
    boxes = [DockerSandbox.start(args.image, run_id=RUN_ID) for _ in range(args.containers)]
    try:
        box = boxes[0]
        for _ in range(20):  # warm up both paths
            box.exec("true")
        api.exec_start(api.exec_create(box.id, ["true"])["Id"])

        # --- per-command overhead ----------------------------------------------------------------
        record("exec: persistent shell", timed(lambda: box.exec("true"), args.commands))

        def sdk_exec(container_id: str = box.id) -> None:
            client.containers.get(container_id)  # what exec_run users pay: a lookup, then exec create/start/inspect
            exec_id = api.exec_create(container_id, ["true"])["Id"]
            api.exec_start(exec_id)
            api.exec_inspect(exec_id)

        record("exec: docker SDK exec_run", timed(sdk_exec, args.baseline_commands))
        if shutil.which("docker"):
            record(
                "exec: docker exec CLI",
                timed(lambda: subprocess.run(["docker", "exec", box.id, "true"], check=True), max(10, args.baseline_commands // 2)),
            )

        # --- files (Engine API archive calls) -------------------------------------------------------
        blob = bytes(4096)
        record("files: write_file 4 KiB (shell channel)", timed(lambda: box.write_file("/tmp/bench.bin", blob), 20))
        record("files: read_file 4 KiB (shell channel)", timed(lambda: box.read_file("/tmp/bench.bin"), 20))

        # --- throughput over N containers --------------------------------------------------------
        ours = throughput([lambda b=b: b.exec("true") for b in boxes], args.seconds)
        theirs = throughput([lambda b=b: sdk_exec(b.id) for b in boxes], args.seconds)
        results["throughput"] = {"persistent_shell_cmd_s": ours, "sdk_exec_cmd_s": theirs}
    finally:
        closing = timed_close(boxes)
        record("teardown: close() (sync)", closing)

    # --- cold ready --------------------------------------------------------------------------------
    colds: list[float] = []
    for _ in range(args.cold):
        started = time.perf_counter()
        sandbox = DockerSandbox.start(args.image, run_id=RUN_ID)
        sandbox.exec("true")
        colds.append(time.perf_counter() - started)
        sandbox.close()
    record("cold ready: DockerSandbox.start + first command", colds)

    plain: list[float] = []
    for _ in range(max(3, args.cold // 2)):
        started = time.perf_counter()
        container = client.containers.run(args.image, ["sleep", "600"], detach=True, network_mode="none", labels={"terminal-agent.managed": "true", "terminal-agent.run-id": RUN_ID})
        container.exec_run(["true"])
        plain.append(time.perf_counter() - started)
        container.remove(force=True)
    record("cold ready: SDK containers.run + exec_run", plain)

    # --- pool ----------------------------------------------------------------------------------------
    pool = SandboxPool(SandboxConfig(pool_size=2), run_id=RUN_ID)
    acquires: list[float] = []
    releases: list[float] = []
    try:
        for _ in range(args.cold):
            pool.prewarm(args.image, wait=True)
            started = time.perf_counter()
            sandbox = pool.acquire(args.image)
            acquires.append(time.perf_counter() - started)
            started = time.perf_counter()
            pool.release(sandbox)
            releases.append(time.perf_counter() - started)
    finally:
        pool.close()
    record("pool: acquire (warm)", acquires)
    record("teardown: pool.release() (background)", releases)

    report(results)
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


def timed_close(boxes: list[DockerSandbox]) -> list[float]:
    samples = []
    for box in boxes:
        started = time.perf_counter()
        box.close()
        samples.append(time.perf_counter() - started)
    return samples


def report(results: dict[str, dict[str, float]]) -> None:
    print(f"\n{'measure':<48} {'p50 ms':>9} {'p90 ms':>9}")
    for name, row in results.items():
        if "p50_ms" in row:
            print(f"{name:<48} {row['p50_ms']:>9.2f} {row['p90_ms']:>9.2f}")
    ours = results["exec: persistent shell"]["p50_ms"]
    sdk = results["exec: docker SDK exec_run"]["p50_ms"]
    print(f"\nper-command overhead: {ours:.2f} ms vs exec_run {sdk:.1f} ms -> {sdk / ours:.0f}x lower (target >= 30x, <= 2 ms)")
    if "exec: docker exec CLI" in results:
        cli = results["exec: docker exec CLI"]["p50_ms"]
        print(f"                      vs docker exec CLI {cli:.1f} ms -> {cli / ours:.0f}x lower")
    tp = results["throughput"]
    print(
        f"throughput: {tp['persistent_shell_cmd_s']:.0f} commands/s vs exec_run {tp['sdk_exec_cmd_s']:.0f} -> "
        f"{tp['persistent_shell_cmd_s'] / tp['sdk_exec_cmd_s']:.1f}x (target >= 500/s)"
    )
    cold = results["cold ready: DockerSandbox.start + first command"]["p50_ms"]
    plain = results["cold ready: SDK containers.run + exec_run"]["p50_ms"]
    print(f"cold ready: {cold:.0f} ms vs plain SDK run+exec {plain:.0f} ms -> {plain / cold:.2f}x (target <= 400 ms)")
    acquire = results["pool: acquire (warm)"]["p50_ms"]
    print(f"pool acquire: {acquire:.2f} ms -> {cold / acquire:.0f}x faster than a cold start (target <= 5 ms)")
    close = results["teardown: close() (sync)"]["p50_ms"]
    release = results["teardown: pool.release() (background)"]["p50_ms"]
    print(f"teardown on the caller's path: release {release:.3f} ms vs close {close:.0f} ms -> {close / max(release, 1e-6):.0f}x")


if __name__ == "__main__":
    sys.exit(main())
