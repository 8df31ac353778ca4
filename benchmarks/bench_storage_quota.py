"""What a measured disk quota costs per turn, against one ``exec`` of the same sandbox (measured in the same run).

A Docker sandbox with ``limits.storage_mb`` on a daemon without a kernel quota (overlay2 on ext4) measures its
writable layer at each turn's end: the overlay2 upper dir walked on this host, or the daemon's ``SizeRw``. The cost
of a walk grows with the number of files the agent wrote; ``sandbox.storage_measure_share`` (default 0.1) caps the
share of the wall clock it may take. Printed per layer size: the walk, the ``SizeRw`` API call, one ``exec("true")``
and their ratio (median of ``--rounds``).

    python benchmarks/bench_storage_quota.py
"""

from __future__ import annotations

import argparse
import statistics
import time

from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker import storage_quota as docker_storage
from terminal_agent.sandbox.docker.sandbox import DockerSandbox, docker_client
from terminal_agent.sandbox.images.base_image import BASE_IMAGE
from terminal_agent.sandbox.storage_quota import directory_disk_bytes
from terminal_agent.tasks.model import TaskLimits

LAYERS = (("fresh", "true"), ("one 30 MiB file", "head -c 31457280 /dev/zero > /tmp/big"),
          ("+ 1,000 files", "mkdir -p /tmp/a && cd /tmp/a && for i in $(seq 1000); do echo $i > f$i; done"),
          ("+ 10,000 files", "mkdir -p /tmp/b && cd /tmp/b && for i in $(seq 10000); do echo $i > f$i; done"))


def _median_ms(work, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    api = docker_client().api
    with DockerSandbox.start(BASE_IMAGE, limits=TaskLimits(storage_mb=10240), config=SandboxConfig(),
                             run_id="bench-storage-quota") as sandbox:
        print(f"quota held by: {sandbox.storage_enforcement}")
        upper = api.inspect_container(sandbox.id)["GraphDriver"]["Data"]["UpperDir"]
        size_rw = docker_storage.writable_layer_measure(api, sandbox.id)
        api_rows = lambda: api.containers(all=True, filters={"id": sandbox.id}, size=True)  # noqa: E731
        print(f"{'layer':<18}{'files':>8}{'MiB':>8}{'walk ms':>10}{'SizeRw ms':>11}{'exec ms':>9}{'walk/exec':>11}")
        for label, command in LAYERS:
            sandbox.exec(command, 300)
            walk = _median_ms(lambda: directory_disk_bytes(upper), args.rounds)
            rows = _median_ms(api_rows, max(3, args.rounds // 3))
            exec_ms = _median_ms(lambda: sandbox.exec("true", 10), args.rounds)
            files = int(sandbox.exec("find / -xdev -newer /proc/1/cmdline 2>/dev/null | wc -l", 60).output or 0)
            used, _ = size_rw()
            print(f"{label:<18}{files:>8}{used / 2**20:>8.1f}{walk:>10.2f}{rows:>11.2f}{exec_ms:>9.2f}"
                  f"{walk / exec_ms:>10.2f}x")


if __name__ == "__main__":
    main()
