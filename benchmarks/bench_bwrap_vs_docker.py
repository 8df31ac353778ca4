"""bwrap against Docker, in one run: per-command overhead, cold start, file read/write, grading.

    python benchmarks/bench_bwrap_vs_docker.py [--commands 300] [--cold 8] [--files 100] [--json out.json]

Both backends run the same shell server on the same image (the base image, exported once for
bwrap into a scratch dir, or ``--images-dir``). Prints p50/p90 of each measure for both and the
ratio bwrap / Docker (below 1: bwrap is faster). Needs Docker (for the export and the baseline),
bubblewrap and root.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable

from terminal_agent.rewards.weighted_pytest.grader import Grader
from terminal_agent.sandbox.backends import start_sandbox
from terminal_agent.sandbox.config import BwrapConfig, SandboxConfig
from terminal_agent.sandbox.images.export import export_images
from terminal_agent.tasks.model import Task, TaskLimits

IMAGE = "terminal-agent/base:bookworm"
RUN_ID = "bench-bwrap-vs-docker"
GRADED = Task(
    task_id="bench-bwrap-grading",
    instruction="x",
    dockerfile=f"FROM {IMAGE}\nWORKDIR /app\n",
    test_source="import os\n\ndef test_a():\n    assert os.path.exists('/app/a')\n\ndef test_b():\n    assert True\n",
    test_weights={"test_a": 1.0, "test_b": 1.0},
)


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


def measure(config: SandboxConfig, image: str, grading_image: str, args: argparse.Namespace) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    boxes = []

    def cold() -> None:
        boxes.append(start_sandbox(config, image, TaskLimits(), run_id=RUN_ID))

    start_sandbox(config, image, TaskLimits(), run_id=RUN_ID).close()  # warm caches (layers, server source)
    results["cold start (ready)"] = timed(cold, args.cold)
    close_samples = []
    for box in boxes[1:]:
        started = time.perf_counter()
        box.close()
        close_samples.append(time.perf_counter() - started)
    results["close"] = close_samples
    box = boxes[0]
    try:
        for _ in range(20):
            box.exec("true", 10)
        results["command (true)"] = timed(lambda: box.exec("true", 10), args.commands)
        payload = os.urandom(4096)
        results["write_file 4 KiB"] = timed(lambda: box.write_file("/tmp/bench.bin", payload), args.files)
        results["read_file 4 KiB"] = timed(lambda: box.read_file("/tmp/bench.bin"), args.files)
        big = os.urandom(1 << 20)
        results["write_file 1 MiB"] = timed(lambda: box.write_file("/tmp/bench-big.bin", big), max(5, args.files // 10))
        results["read_file 1 MiB"] = timed(lambda: box.read_file("/tmp/bench-big.bin"), max(5, args.files // 10))
    finally:
        box.close()
    grader = Grader()
    grading = []
    for _ in range(args.gradings):
        with start_sandbox(config, grading_image, GRADED.limits, run_id=RUN_ID) as graded:
            graded.exec("touch /app/a", 10)
            started = time.perf_counter()
            result = grader.grade(graded, GRADED)
            grading.append(time.perf_counter() - started)
            if result.score != 1.0:
                raise SystemExit(f"grading went wrong on {config.backend}: {result.error or result.tests}")
    results["grading (2 tests)"] = grading
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commands", type=int, default=300)
    parser.add_argument("--cold", type=int, default=8)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--gradings", type=int, default=3)
    parser.add_argument("--images-dir", default=None, help="an existing export to use (default: export into a scratch dir)")
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()

    scratch = tempfile.TemporaryDirectory(prefix="ta-bench-bwrap-")
    images_dir = args.images_dir or os.path.join(scratch.name, "export")
    started = time.perf_counter()
    report = export_images([GRADED], images_dir)
    print(f"export: {time.perf_counter() - started:.1f} s ({report.bytes_written / 1e6:.1f} MB written)", file=sys.stderr)
    docker = SandboxConfig()
    bwrap = SandboxConfig(backend="bwrap", bwrap=BwrapConfig(images_dir=images_dir, state_dir=os.path.join(scratch.name, "state")))
    grading_image = report.images[GRADED.task_id]
    measured = {"docker": measure(docker, IMAGE, grading_image, args), "bwrap": measure(bwrap, IMAGE, grading_image, args)}

    rows = {}
    print(f"{'measure':<22} {'docker p50':>11} {'p90':>9} {'bwrap p50':>11} {'p90':>9} {'bwrap/docker':>13}")
    for name in measured["docker"]:
        d, b = measured["docker"][name], measured["bwrap"][name]
        d50, b50 = percentile(d, 0.5), percentile(b, 0.5)
        rows[name] = {"docker_p50_ms": d50 * 1e3, "docker_p90_ms": percentile(d, 0.9) * 1e3,
                      "bwrap_p50_ms": b50 * 1e3, "bwrap_p90_ms": percentile(b, 0.9) * 1e3, "ratio_p50": b50 / d50}
        print(f"{name:<22} {d50 * 1e3:>9.2f}ms {percentile(d, 0.9) * 1e3:>7.2f}ms {b50 * 1e3:>9.2f}ms "
              f"{percentile(b, 0.9) * 1e3:>7.2f}ms {b50 / d50:>12.2f}x")
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(rows, handle, indent=1)
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
