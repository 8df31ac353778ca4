"""What writing the Harbor job layout costs an eval run: the same scripted run with and without it.

Real containers and the real grader: the scripted model runs the task's reference solution (long replies, real
output) after a few looking-around commands, so each trial has a realistic transcript to write. Runs with and
without the job layout alternate (A B B A ...), each writing results.json and transcripts as ``eval run`` does;
printed are the median wall times, their ratio, and, inside the runs that write it, the seconds spent writing
Harbor files (trial folders and the job's result) as a share of the run's wall time.

    python benchmarks/bench_harbor_jobs.py [--attempts 6] [--concurrency 2] [--rounds 3]
    python benchmarks/bench_harbor_jobs.py --sandbox bwrap --images-dir EXPORT   # a machine without Docker
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from terminal_agent.cli.sandbox_options import sandbox_config_from_options
from terminal_agent.harbor_jobs.eval_jobs import EvalHarborJob
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner
from terminal_agent.task_quality.validation import oracle_replies
from terminal_agent.tasks.loading import load_tasks

ROOT = Path(__file__).resolve().parents[1]
LOOK_AROUND = ["<bash>\ncmd: ls -la / /app && cat /etc/os-release\n</bash>", "<bash>\ncmd: head -c 3000 /app/*.py\n</bash>",
               "<bash>\ncmd: env | sort | head -50\n</bash>"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=str(ROOT / "dataset" / "latest_verified.csv"))
    parser.add_argument("--task", default="fix-stats-script")
    parser.add_argument("--attempts", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="Pairs of runs (with and without), alternating.")
    parser.add_argument("--sandbox", default="docker", help="Sandbox backend: docker, or bwrap (with --images-dir).")
    parser.add_argument("--images-dir", type=Path, default=None, help="The bwrap backend's export "
                        "(default: $TERMINAL_AGENT_IMAGES_DIR).")
    args = parser.parse_args()
    sandbox = sandbox_config_from_options(args.sandbox, args.images_dir)
    task = next(t for t in load_tasks(args.tasks) if t.task_id == args.task)
    replies = LOOK_AROUND + oracle_replies(task)

    def run_once(output: Path, harbor: bool) -> tuple[float, float]:
        config = RolloutConfig(attempts=args.attempts, max_steps=len(replies) + 1, concurrency=args.concurrency,
                               output_dir=output, sweep_leaked=False, sandbox=sandbox)
        job = None
        spent = [0.0]
        if harbor:
            job = EvalHarborJob.for_run(output, run_id=config.run_id, model="scripted", tasks_file=args.tasks,
                                        attempts=args.attempts, max_steps=config.max_steps, concurrency=args.concurrency,
                                        sampling={}, sandbox_backend=sandbox.backend, n_total_trials=args.attempts)

        def on_transcript(spec, trial, transcript):  # noqa: ANN001, ANN202 - the runner's TranscriptCallback
            mark = time.monotonic()
            job.on_transcript(spec, trial, transcript)
            spent[0] += time.monotonic() - mark

        runner = RolloutRunner(ScriptedModelClient([], name="scripted"), config,
                               model_for_trial=lambda spec: ScriptedModelClient(replies, name="scripted"),
                               on_transcript=on_transcript if harbor else None)
        started = time.monotonic()
        results = runner.run([task])
        if job is not None:
            mark = time.monotonic()
            job.finish(results)
            spent[0] += time.monotonic() - mark
        wall = time.monotonic() - started
        if results.summary["n_errors"]:
            raise SystemExit(f"episodes failed: {results.summary['errors_by_kind']}")
        return wall, spent[0]

    with tempfile.TemporaryDirectory() as tmp:
        run_once(Path(tmp) / "warm", False)  # the image and the page cache; not timed
        plain, layout, writing = [], [], []
        for round_ in range(args.rounds):
            order = (False, True) if round_ % 2 == 0 else (True, False)
            for harbor in order:
                wall, spent = run_once(Path(tmp) / f"r{round_}-{'harbor' if harbor else 'plain'}", harbor)
                (layout if harbor else plain).append(wall)
                if harbor:
                    writing.append(spent / wall)
        trials = sum(1 for _ in (Path(tmp) / "r0-harbor").glob("*__attempt-*"))
    print(f"{args.rounds} rounds x {args.attempts} episodes of {args.task} ({len(replies)} replies each), "
          f"concurrency {args.concurrency}, sandbox {sandbox.backend}")
    print(f"  without the job layout: median wall {statistics.median(plain):.2f} s  {[round(w, 2) for w in plain]}")
    print(f"  with the job layout:    median wall {statistics.median(layout):.2f} s  {[round(w, 2) for w in layout]} ({trials} trial folders)")
    print(f"  ratio with / without: {statistics.median(layout) / statistics.median(plain):.3f} (target <= 1.05)")
    print(f"  Harbor writing inside the run: {100 * statistics.median(writing):.2f}% of its wall time (median)")


if __name__ == "__main__":
    main()
