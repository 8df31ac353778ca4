"""Trainer faults under load: the local GRPO trainer SIGKILLed mid-rollout, mid-update and mid-checkpoint, and
dockerd restarted under a running step; then resumed.

    python benchmarks/trainer_faults.py [--steps 6] [--tasks-per-step 2] [--group-size 4] [--concurrency 8]

The trainer runs in a child process (this script with ``--child``): the real embedded policy on the CPU, real Docker
sandboxes, the real grader, and a demonstration driver (the package's ``DemonstrationClient``): in each task the
first episode to ask runs the reference solution, the next finishes at once, and so on, so every group has reward
variance and every step updates. The child prints its phases as JSON lines; the parent injects, by step:

* ``kill-rollout`` (step 2): SIGKILL once the step's containers run;
* ``kill-update`` (step 3): SIGKILL as soon as the update phase starts (after the step's rollouts);
* ``kill-checkpoint`` (step 4): SIGKILL while the step's checkpoint is being written (its staging directory exists);
* ``dockerd-restart`` (step 5): dockerd stopped and started again by the set-up's own script while the step's
  containers run; the trainer is not killed.

After each kill the parent waits for the child's labelled containers to be gone, checks that the newest checkpoint
is a complete one of the step before (never the half-written one), and starts the child again: it resumes.

Checked at the end (exit 1 when any fails): every step is recorded exactly once and drew the same tasks as a
fault-free run of the same config made first in this script (the data order survives the kills); the dockerd step
masked its broken episodes (``batch/masked_infrastructure``) and the run went on; 0 labelled containers of any child
are left. Printed: per fault the time from the fault to 0 containers and the time lost (wall time of the faulted
run over the fault-free one, split by fault), and the throughput against the fault-free run.

Dockerd restarts stop every container on the machine: run it on a machine where nothing else uses the daemon.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASK_IDS = ("fix-stats-script", "count-log-levels", "make-project-tree", "csv-to-json-summary")
SEED = 5
FAULTS = {2: "kill-rollout", 3: "kill-update", 4: "kill-checkpoint", 5: "dockerd-restart"}


# --- the child: one local training run, its phases as JSON lines on stdout ------------------------------------------

def shipped(task_ids: tuple[str, ...]) -> list:
    from terminal_agent.tasks.csv.format import read_tasks_csv

    tasks = {t.task_id: t for t in read_tasks_csv(ROOT / "dataset" / "latest_verified.csv").tasks}
    missing = [t for t in task_ids if t not in tasks]
    if missing:
        raise SystemExit(f"dataset/latest_verified.csv has no task {missing}")
    return [tasks[t] for t in task_ids]


def child_config(args: argparse.Namespace) -> Any:
    from terminal_agent.rollout.episode_spec import EpisodeSpec
    from terminal_agent.training.local.config import LocalTrainingConfig

    return LocalTrainingConfig(
        group_size=args.group_size, tasks_per_step=args.tasks_per_step, concurrency=args.concurrency,
        episode=EpisodeSpec.small(2),
        steps=args.steps, num_threads=2, save_freq=1, keep_checkpoints=None, seed=SEED, micro_batch_tokens=2048,
        experiment="trainer-faults", wandb=False,
    )


class JsonLinesProgress:
    """The trainer's progress as JSON lines on stdout, flushed at once (the parent acts on them)."""

    @staticmethod
    def _emit(**event: Any) -> None:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()

    def run_started(self, first_step: int, last_step: int, resumed_from: int | None) -> None:
        self._emit(event="run", first=first_step, last=last_step, resumed_from=resumed_from)

    def phase_started(self, step: int, phase: str, total: int) -> None:
        self._emit(event="phase", step=step, phase=phase)

    def phase_advanced(self, step: int, phase: str, done: int) -> None:
        pass

    def step_finished(self, step: int, metrics: dict[str, Any]) -> None:
        self._emit(event="step", step=step, masked=metrics.get("batch/masked_infrastructure"))

    def message(self, text: str) -> None:
        self._emit(event="message", text=text)


def child(args: argparse.Namespace) -> int:
    from terminal_agent.training.local.demonstration_client import alternating_demonstrations
    from terminal_agent.training.local.trainer import train_local

    tasks = shipped(TASK_IDS)
    summary = train_local(child_config(args), tasks, Path(args.child), progress=JsonLinesProgress(),
                          client_factory=alternating_demonstrations(tasks, strict=False))
    JsonLinesProgress._emit(event="done", resumed_from=summary.resumed_from, steps_this_session=summary.steps_this_session,
                            masked_infrastructure=summary.masked_infrastructure)
    return 0


# --- the parent: the runs, the faults, the checks -----------------------------------------------------------------

@dataclass
class Fault:
    kind: str
    step: int
    at: float = 0.0
    """monotonic time of the injection"""
    landed: str = ""
    """what the fault hit (checked after it), or why it missed"""
    clear_s: float | None = None
    """seconds from the fault to 0 labelled containers of the child"""
    checkpoint_after: int | None = None


@dataclass
class Child:
    process: subprocess.Popen
    events: queue.Queue = field(default_factory=queue.Queue)
    stderr_tail: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, run_dir: Path, args: argparse.Namespace) -> "Child":
        command = [sys.executable, __file__, "--child", str(run_dir), "--steps", str(args.steps),
                   "--tasks-per-step", str(args.tasks_per_step), "--group-size", str(args.group_size),
                   "--concurrency", str(args.concurrency)]
        env = {**os.environ, "WANDB_MODE": "disabled", "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        me = cls(process)
        threading.Thread(target=me._read_stdout, daemon=True).start()
        threading.Thread(target=me._read_stderr, daemon=True).start()
        return me

    def _read_stdout(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            try:
                self.events.put(json.loads(line))
            except ValueError:  # a stray print: not an event
                continue
        self.events.put({"event": "eof"})

    def _read_stderr(self) -> None:
        for line in self.process.stderr:  # type: ignore[union-attr]
            self.stderr_tail = (self.stderr_tail + [line])[-40:]

    def next_event(self, timeout: float) -> dict[str, Any]:
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            raise SystemExit(f"the trainer said nothing for {timeout:.0f} s:\n{''.join(self.stderr_tail)}") from None


def containers_of(pid: int) -> list:
    from terminal_agent.sandbox import labels
    from terminal_agent.sandbox.docker.sandbox import docker_client

    return docker_client().containers.list(all=True, sparse=True, filters={"label": [f"{labels.OWNER_PID}={pid}"]})


def wait_until(predicate: Any, timeout: float, poll: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(poll)
    return bool(predicate())


def staging_dirs(run_dir: Path, step: int) -> list[Path]:
    root = run_dir / "checkpoints"
    return sorted(root.glob(f".step_{step:06d}.tmp-*")) if root.is_dir() else []


def restart_dockerd() -> None:
    pid = int(Path("/var/run/docker.pid").read_text().strip())
    os.kill(pid, signal.SIGTERM)
    wait_until(lambda: not Path(f"/proc/{pid}").exists(), 60, poll=0.2)
    subprocess.run(["bash", str(ROOT / "scripts" / "ensure_docker.sh")], check=True, capture_output=True, timeout=180)


def run_clean(run_dir: Path, args: argparse.Namespace) -> float:
    started = time.monotonic()
    runner = Child.start(run_dir, args)
    while runner.next_event(900)["event"] not in ("done", "eof"):
        pass
    runner.process.wait(timeout=60)
    if runner.process.returncode != 0:
        raise SystemExit(f"the fault-free run failed:\n{''.join(runner.stderr_tail)}")
    return time.monotonic() - started


def run_faulted(run_dir: Path, args: argparse.Namespace) -> tuple[float, list[Fault], list[int]]:
    from terminal_agent.training.local.checkpoints import latest_checkpoint, load_checkpoint

    faults = [Fault(kind, step) for step, kind in sorted(FAULTS.items()) if step <= args.steps]
    pending = list(faults)
    pids: list[int] = []
    started = time.monotonic()
    while True:
        runner = Child.start(run_dir, args)
        pids.append(runner.process.pid)
        killed: Fault | None = None
        while killed is None:
            event = runner.next_event(900)
            if event["event"] in ("done", "eof"):
                break
            fault = pending[0] if pending else None
            if fault is None or event["event"] != "phase" or event["step"] != fault.step:
                continue
            pid = runner.process.pid
            if fault.kind in ("kill-rollout", "dockerd-restart") and event["phase"] == "rollouts":
                if not wait_until(lambda: containers_of(pid), 300):
                    fault.landed = "missed: the step started no container"
                elif fault.kind == "kill-rollout":
                    fault.at = time.monotonic()
                    runner.process.send_signal(signal.SIGKILL)
                    fault.landed = f"SIGKILL with {len(containers_of(pid))} containers running"
                    killed = fault
                else:
                    running = len(containers_of(pid))
                    fault.at = time.monotonic()
                    restart_dockerd()
                    fault.landed = f"dockerd restarted under {running} running containers ({time.monotonic() - fault.at:.1f} s)"
                    fault.clear_s = time.monotonic() - fault.at
                pending.pop(0)
            elif fault.kind == "kill-update" and event["phase"] == "update":
                fault.at = time.monotonic()
                runner.process.send_signal(signal.SIGKILL)
                fault.landed = "SIGKILL at the start of the update"
                killed = pending.pop(0)
            elif fault.kind == "kill-checkpoint" and event["phase"] == "update":
                hit = wait_until(lambda: staging_dirs(run_dir, fault.step), 120, poll=0.001)
                fault.at = time.monotonic()
                runner.process.send_signal(signal.SIGKILL)
                fault.landed = ("SIGKILL while the checkpoint's staging directory existed" if hit
                                else "missed: no staging directory seen; SIGKILL after the update")
                killed = pending.pop(0)
        runner.process.wait(timeout=60)
        if killed is None:
            if runner.process.returncode != 0:
                raise SystemExit(f"the faulted run failed (exit {runner.process.returncode}):\n{''.join(runner.stderr_tail)}")
            break
        gone = wait_until(lambda: not containers_of(runner.process.pid), 120, poll=0.1)
        killed.clear_s = time.monotonic() - killed.at if gone else None
        newest = latest_checkpoint(run_dir)
        killed.checkpoint_after = load_checkpoint(newest).step if newest is not None else None
    return time.monotonic() - started, faults, pids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--tasks-per-step", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8, help="episodes (containers) at once")
    parser.add_argument("--no-clean", action="store_true", help="skip the fault-free run: the data order is checked "
                        "against the TaskOrder alone and the time lost against the faulted run's own step times")
    parser.add_argument("--out", default=None, help="where the two runs go (default: a temporary directory)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.steps < max(FAULTS) + 1:
        parser.error(f"--steps must be at least {max(FAULTS) + 1} (the faults hit steps {sorted(FAULTS)})")

    import tempfile

    from terminal_agent.sandbox.images.manager import ensure_task_image
    from terminal_agent.training.local.checkpoints import TaskOrder
    from terminal_agent.training.local.metrics import read_metrics

    for task in shipped(TASK_IDS):
        ensure_task_image(task)
    out = Path(args.out or tempfile.mkdtemp(prefix="trainer-faults-"))
    print(f"{args.steps} steps of {args.tasks_per_step} tasks x {args.group_size} episodes, {args.concurrency} at once -> {out}")
    clean_s = None if args.no_clean else run_clean(out / "clean", args)
    if clean_s is not None:
        print(f"fault-free run: {clean_s:.1f} s")
    faulted_s, faults, pids = run_faulted(out / "faulted", args)
    print(f"faulted run: {faulted_s:.1f} s in {len(pids)} processes")

    faulted = read_metrics(out / "faulted")
    clean = read_metrics(out / "clean") if clean_s is not None else None
    if clean_s is None:  # the steps as recorded (each once, the last run of it): what an uninterrupted run costs
        clean_s = sum(r["time/step_s"] for r in faulted)
    problems: list[str] = []
    steps = [r["step"] for r in faulted]
    if steps != list(range(1, args.steps + 1)):
        problems.append(f"steps recorded {steps}, expected 1..{args.steps} once each")
    order = TaskOrder(len(TASK_IDS), seed=SEED)
    expected = [[TASK_IDS[i] for i in order.next_batch(args.tasks_per_step)] for _ in range(args.steps)]
    if clean is not None and [r["task_ids"] for r in clean] != expected:
        problems.append("the fault-free run drew other tasks than its TaskOrder")
    if [r["task_ids"] for r in faulted] != expected:
        problems.append("the faulted run drew other tasks than the uninterrupted TaskOrder")
    for fault in faults:
        if fault.landed.startswith("missed"):
            problems.append(f"{fault.kind}: {fault.landed}")
        if fault.kind.startswith("kill-") and fault.checkpoint_after != fault.step - 1:
            problems.append(f"{fault.kind} at step {fault.step}: the newest complete checkpoint was step "
                            f"{fault.checkpoint_after}, expected {fault.step - 1}")
        if fault.kind.startswith("kill-") and fault.clear_s is None:
            problems.append(f"{fault.kind}: containers of the killed trainer were left")
    restart = next((f for f in faults if f.kind == "dockerd-restart"), None)
    masked = {r["step"]: r.get("batch/masked_infrastructure", 0) for r in faulted}
    if restart is not None and not masked.get(restart.step):
        problems.append(f"the dockerd restart's step {restart.step} masked no episode")
    left = sum(len(containers_of(pid)) for pid in pids)
    if left:
        problems.append(f"{left} labelled containers left")

    clean_step = clean_s / args.steps
    print("\n| fault | step | what it hit | kill to 0 containers / daemon outage | newest checkpoint after |")
    print("| --- | --- | --- | --- | --- |")
    for fault in faults:
        clear = f"{fault.clear_s:.1f} s" if fault.clear_s is not None else "-"
        print(f"| {fault.kind} | {fault.step} | {fault.landed} | {clear} | "
              f"{'step ' + str(fault.checkpoint_after) if fault.checkpoint_after is not None else '-'} |")
    print(f"\nmasked infrastructure episodes per step: {masked}")
    print(f"time lost to the faults: {faulted_s - clean_s:.1f} s ({(faulted_s - clean_s) / clean_step:.1f} fault-free steps; "
          f"{(faulted_s - clean_s) / max(1, len(faults)):.1f} s a fault)")
    print(f"throughput: {args.steps / faulted_s * 60:.2f} steps/min faulted against {args.steps / clean_s * 60:.2f} fault-free "
          f"({clean_s / faulted_s:.2f}x)")
    print(f"labelled containers left: {left}")
    for problem in problems:
        print(f"FAIL: {problem}")
    print("OK" if not problems else f"{len(problems)} check(s) failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
