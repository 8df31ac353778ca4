"""Does a 2,000-episode run open in Harbor's viewer? Time it against the same run at its own size.

Takes any eval run (``terminal-agent eval run ... -o RUN``), makes a copy whose trials are its trials repeated
as further attempts until ``--episodes`` (transcripts copied, ``results.json`` rewritten), converts both to the
Harbor job layout (``terminal-agent eval harbor-export``'s code), starts stock ``harbor view`` on each
(``scripts/setup_harbor_venv.sh``'s venv) and times what a person's first clicks ask of its API: the job list,
the job's trials, one trajectory. Prints each time and the ratio of the large run to the small one (the
baseline, measured in the same run).

    python benchmarks/bench_viewer_scale.py --run RUN_DIR [--episodes 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from terminal_agent.harbor_jobs.eval_jobs import convert_run
from terminal_agent.harbor_jobs.viewer import find_harbor_python, make_harbor_venv, start_viewer


def scaled_copy(run: Path, out: Path, episodes: int) -> int:
    """``run`` copied to ``out`` with its trials repeated as attempts until ``episodes``; the trial count."""
    results = json.loads((run / "results.json").read_text())
    trials = results["trials"]
    rounds = max(1, -(-episodes // len(trials)))
    out.mkdir(parents=True)
    scaled = []
    for attempt in range(rounds):
        for trial in trials:
            if len(scaled) == episodes:
                break
            source = run / trial["transcript"]
            target = Path("transcripts") / trial["task_id"] / f"attempt-{attempt}.json"
            (out / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, out / target)
            scaled.append({**trial, "attempt": attempt, "transcript": str(target)})
    results["trials"] = scaled
    results["run"] = {**results["run"], "attempts": rounds}
    (out / "results.json").write_text(json.dumps(results))
    return len(scaled)


def _get(url: str) -> tuple[float, object]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=300) as response:
        data = json.loads(response.read())
    return time.perf_counter() - start, data


def clicks(base: str) -> dict[str, float]:
    """Seconds for the job list, the job's trials (first page) and one trajectory."""
    times: dict[str, float] = {}
    times["jobs"], jobs = _get(base + "/api/jobs")
    job = urllib.parse.quote(jobs["items"][0]["name"])
    times["trials"], trials = _get(f"{base}/api/jobs/{job}/trials")
    trial = urllib.parse.quote(trials["items"][0]["name"])
    times["trajectory"], _ = _get(f"{base}/api/jobs/{job}/trials/{trial}/trajectory")
    times["total"] = times["jobs"] + times["trials"] + times["trajectory"]
    return times


def measure(run: Path, harbor_python: Path, rounds: int) -> dict[str, float]:
    viewer = start_viewer(run.parent, harbor_python=harbor_python, ready_timeout_s=120)
    try:
        samples = [clicks(viewer.base_url) for _ in range(rounds)]
    finally:
        viewer.stop()
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="an eval run directory (results.json, transcripts/)")
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    harbor_python = find_harbor_python() or make_harbor_venv()
    with tempfile.TemporaryDirectory(prefix="viewer-scale-") as scratch:
        small_dir, large_dir = Path(scratch) / "small" / "run", Path(scratch) / "large" / "run"
        small = scaled_copy(args.run, small_dir, len(json.loads((args.run / "results.json").read_text())["trials"]))
        large = scaled_copy(args.run, large_dir, args.episodes)
        for directory in (small_dir, large_dir):
            start = time.perf_counter()
            convert_run(directory)
            print(f"{directory.parent.name}: {len(list(directory.glob('*__attempt-*')))} trial folders written in "
                  f"{time.perf_counter() - start:.1f} s")
        baseline = measure(small_dir, harbor_python, args.rounds)
        scaled = measure(large_dir, harbor_python, args.rounds)
    print(f"{'API call (median of ' + str(args.rounds) + ')':<28}{small:>8} trials{large:>10} trials{'ratio':>9}")
    for key in ("jobs", "trials", "trajectory", "total"):
        print(f"{key:<28}{baseline[key]:>13.3f} s{scaled[key]:>15.3f} s{scaled[key] / baseline[key]:>8.2f}x")


if __name__ == "__main__":
    main()
