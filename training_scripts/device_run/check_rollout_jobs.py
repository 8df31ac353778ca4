#!/usr/bin/env python3
"""Check a verl run's training rollouts (``RUN/rollouts/``, the Workflow's Harbor jobs) against stock Harbor and
against verl's own metrics.

    python training_scripts/device_run/check_rollout_jobs.py ROLLOUTS_DIR VERL_METRICS_JSONL [--json OUT.json]

Run here, after ``device.sh verl`` brought ``rollouts.tgz`` back (extract it; ``ROLLOUTS_DIR`` is the ``rollouts``
folder). Three checks, each printed per step:

1. **Harbor reads every file**: each job's ``config.json`` / ``result.json`` and each trial's ``result.json`` and
   ATIF ``agent/trajectory.json`` through stock Harbor 0.25's own models (the venv ``scripts/setup_harbor_venv.sh``
   builds), in that venv's Python.
2. **The groups are GRPO groups**: every trial's advantage is ``(reward - mean) / (sample std + 1e-6)`` of its group's
   rewards (a group whose rewards agree: 0), the group is the row's ``rollout.n`` episodes, and they share one
   trajectory uid. Before the fix of issue 38 every episode was a group of one (advantage ``reward / (1 + 1e-6)``,
   never negative).
3. **The trials say what verl trained on**: per step, the lowest and highest advantage among the trials equal verl's
   ``critic/advantages/min`` and ``/max`` of that step (token-level over the response mask, so the row extremes).

Exit status 0 when all three hold for every step present in both, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EPSILON = 1e-6
"""verl's ``compute_grpo_outcome_advantage`` epsilon."""
TOLERANCE = 1e-4
"""verl logs float32 advantages; the trials hold float64."""

READ_WITH_HARBOR = r"""
import json, sys
from pathlib import Path
from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult
from harbor.models.trial.result import TrialResult
from harbor.models.trajectories import Trajectory
out = {}
for job in sorted(p for p in Path(sys.argv[1]).iterdir() if p.is_dir()):
    JobConfig.model_validate_json((job / "config.json").read_text())
    JobResult.model_validate_json((job / "result.json").read_text())
    for trial in sorted(p for p in job.iterdir() if p.is_dir()):
        result = TrialResult.model_validate_json((trial / "result.json").read_text())
        Trajectory.model_validate_json((trial / "agent" / "trajectory.json").read_text())
        rewards = result.verifier_result.rewards if result.verifier_result else None
        out[f"{job.name}/{trial.name}"] = {"metadata": result.agent_result.metadata, "task": result.task_name,
                                           "reward": (rewards or {}).get("reward")}
print(json.dumps(out))
"""


def harbor_python() -> str:
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup_harbor_venv.sh")], capture_output=True, text=True,
                         timeout=900)
    if run.returncode != 0:
        sys.exit(f"scripts/setup_harbor_venv.sh failed ({run.returncode}): {run.stderr[-2000:]}")
    return run.stdout.strip().splitlines()[-1]


def read_trials(rollouts: Path) -> dict[str, dict]:
    run = subprocess.run([harbor_python(), "-W", "ignore", "-c", READ_WITH_HARBOR, str(rollouts)],
                         capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        sys.exit(f"stock Harbor refused a file:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout)


def read_verl_steps(path: Path) -> dict[int, dict]:
    steps: dict[int, dict] = {}
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line of a run still writing
        steps[int(record["step"])] = record.get("data", record)  # a resumed step keeps its later line
    return steps


def group_problems(trials: list[dict]) -> list[str]:
    """What is wrong with one group's advantages, trajectory uid and size (empty: nothing)."""
    problems = []
    metas = [t["metadata"] for t in trials]
    rewards = metas[0]["group_rewards"]
    if len(rewards) != len(trials):
        problems.append(f"{len(trials)} trials but {len(rewards)} group rewards")
    if len({m["trajectory_uid"] for m in metas}) != 1:
        problems.append(f"trajectory uids differ: {sorted({m['trajectory_uid'] for m in metas})}")
    mean = statistics.fmean(rewards)
    spread = statistics.stdev(rewards) if len(rewards) > 1 else 1.0
    for trial in trials:
        meta = trial["metadata"]
        expected = (rewards[meta["episode"]] - mean) / (spread + EPSILON) if len(rewards) > 1 else rewards[0]
        if abs(meta["advantage"] - expected) > TOLERANCE:
            problems.append(f"episode {meta['episode']}: advantage {meta['advantage']:.6f}, the group gives {expected:.6f}")
        if trial["reward"] is not None and abs(trial["reward"] - rewards[meta["episode"]]) > TOLERANCE:
            problems.append(f"episode {meta['episode']}: reward {trial['reward']} but group_rewards says "
                            f"{rewards[meta['episode']]}")
    return problems


def check(rollouts: Path, metrics: Path) -> dict:
    trials = read_trials(rollouts)
    verl = read_verl_steps(metrics)
    by_step: dict[int, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for name, trial in trials.items():
        meta = trial["metadata"]
        by_step[int(meta["step"])][f"{meta['rllm_group_id']}"].append(trial)
    report: dict = {"trials": len(trials), "steps": [], "ok": True}
    for step in sorted(by_step):
        groups = by_step[step]
        problems = [f"group {g}: {p}" for g, members in sorted(groups.items()) for p in group_problems(members)]
        advantages = [t["metadata"]["advantage"] for members in groups.values() for t in members]
        row = {"step": step, "trials": len(advantages), "groups": len(groups),
               "groups_with_variance": sum(len(set(m[0]["metadata"]["group_rewards"])) > 1 for m in groups.values()),
               "negative_advantages": sum(a < 0 for a in advantages),
               "trials_adv_min": min(advantages), "trials_adv_max": max(advantages),
               "policy_versions": sorted({t["metadata"]["policy_version"] for m in groups.values() for t in m})}
        data = verl.get(step)
        if data is not None and "critic/advantages/min" in data:
            row["verl_adv_min"], row["verl_adv_max"] = data["critic/advantages/min"], data["critic/advantages/max"]
            for side in ("min", "max"):
                if abs(row[f"trials_adv_{side}"] - row[f"verl_adv_{side}"]) > TOLERANCE:
                    problems.append(f"advantage {side}: trials {row[f'trials_adv_{side}']:.6f}, verl "
                                    f"{row[f'verl_adv_{side}']:.6f}")
        else:
            row["verl_adv_min"] = row["verl_adv_max"] = None
        row["problems"] = problems
        report["ok"] = report["ok"] and not problems
        report["steps"].append(row)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rollouts", type=Path)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = check(args.rollouts, args.metrics)
    print(f"{report['trials']} trials read by stock Harbor's models")
    print("step trials groups var_groups neg_adv  trials_min trials_max    verl_min   verl_max  versions  problems")
    for row in report["steps"]:
        verl_min = "-" if row["verl_adv_min"] is None else f"{row['verl_adv_min']:.6f}"
        verl_max = "-" if row["verl_adv_max"] is None else f"{row['verl_adv_max']:.6f}"
        print(f"{row['step']:>4} {row['trials']:>6} {row['groups']:>6} {row['groups_with_variance']:>10} "
              f"{row['negative_advantages']:>7} {row['trials_adv_min']:>11.6f} {row['trials_adv_max']:>10.6f} "
              f"{verl_min:>11} {verl_max:>10}  {row['policy_versions']}  {len(row['problems'])}")
        for problem in row["problems"][:10]:
            print(f"     {problem}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    print("all checks hold" if report["ok"] else "a check failed (see problems)")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
