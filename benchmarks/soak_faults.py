"""Fault-injected soak: many scripted, really graded episodes through the rollout runner while faults hit them.

    python benchmarks/soak_faults.py [--episodes 2000] [--concurrency 16] [--clean-episodes 200]
                                     [--kill-every 50] [--dockerd-restarts 2] [--shell-kills 1] [--grader-timeouts 1]
    python benchmarks/soak_faults.py --backend ray --episodes 200 --concurrency 8 --clean-episodes 40 --host-kills 1

Each episode is the project's own stack end to end: ``RolloutRunner`` -> ``DockerIsolatedEnv`` -> a Docker sandbox, a
scripted model client (``scripted``: two shell turns with a short sleep, then finish) and the real grader (pytest in
the container, JUnit, weights). The task is built here from the offline base image, so nothing is pulled.

Faults, injected from a thread while the runner works (counted by episodes finished):

* ``container-kill``: every ``--kill-every`` episodes a running container of this run is killed (``docker kill``);
* ``dockerd-restart``: ``--dockerd-restarts`` times, evenly spread, dockerd is stopped (SIGTERM to the pid in its pid
  file) and started again by the set-up's own start script (``scripts/ensure_docker.sh``);
* ``shell-kill``: ``--shell-kills`` times, the shell server of a running sandbox is SIGKILLed (its host pid);
* ``host-kill`` (``--backend ray`` only): ``--host-kills`` times, a Ray host actor with sandboxes open is killed
  (``ray.kill``); its episodes are sandbox failures and the next start brings a new host up on that node;
* ``grader-timeout``: ``--grader-timeouts`` episodes leave a marker that makes their test hang past the grader's
  deadline (the test blocks SIGALRM, so only the host-side deadline ends it).

Checked at the end (exit 1 when any fails): every episode has exactly one trial (none lost, none twice); every trial
is scored with reward 1.0 or flagged with the kind its fault calls for (sandbox for lost containers, shell servers and
daemons; grading for the grader timeout); flagged sandbox episodes were retried (``RolloutConfig.retries``); and 0
objects labelled with this run remain (containers, networks, volumes, bwrap state dirs and cgroups).

Printed: counts per fault, the time lost to each (wall seconds of the attempts thrown away, plus the daemon's outage),
and the throughput against a fault-free run of ``--clean-episodes`` made first in the same script.

Dockerd restarts stop every container on the machine: run it on a machine where nothing else uses the daemon.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from terminal_agent.evaluation.results import TrialResult
from terminal_agent.models.scripted import ScriptedModelClient
from terminal_agent.rollout.runner import RolloutConfig, RolloutRunner, TrialSpec
from terminal_agent.sandbox import labels
from terminal_agent.sandbox.cleanup import find_leaked
from terminal_agent.sandbox.config import SandboxConfig
from terminal_agent.sandbox.docker.daemon_errors import DAEMON_ERRORS
from terminal_agent.sandbox.docker.sandbox import docker_client
from terminal_agent.tasks.model import Task, TaskLimits

ROOT = Path(__file__).resolve().parents[1]
HANG_MARKER = "/app/hang"
TEST_SOURCE = f"""\
import os
import signal
import time


def test_answer():
    with open("/app/answer.txt") as handle:
        assert handle.read().strip() == "42"


def test_no_hang():
    if os.path.exists("{HANG_MARKER}"):  # the injected grader timeout: pytest-timeout cannot end this
        signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGALRM}})
        time.sleep(600)
"""
SANDBOX_KINDS = {"container-kill", "shell-kill", "dockerd-restart", "host-kill"}
FAULTS = ("container-kill", "shell-kill", "dockerd-restart", "host-kill", "grader-timeout", "unattributed")


def soak_task() -> Task:
    return Task(
        task_id="soak-answer",
        instruction="Write 42 to /app/answer.txt.",
        dockerfile="FROM terminal-agent/base:bookworm\nWORKDIR /app\n",
        test_source=TEST_SOURCE,
        test_weights={"test_answer": 1.0, "test_no_hang": 1.0},
        limits=TaskLimits(memory_mb=256, pids=128, test_timeout_s=4.0, agent_timeout_s=120.0),
    )


def replies(hang: bool) -> list[str]:
    first = "echo 42 > /app/answer.txt && sleep 1" + (f" && touch {HANG_MARKER}" if hang else "")
    return [
        f"<bash>\ncmd: {first}\n</bash>",
        "<bash>\ncmd: sleep 1; cat /app/answer.txt\n</bash>",
        "<finish>\nmessage: done\n</finish>",
    ]


@dataclass
class Injection:
    fault: str
    at: float
    """monotonic time the fault hit"""
    until: float
    """monotonic time it was over (the daemon answering again; == at for instant faults)"""
    detail: str = ""


@dataclass
class Attempt:
    spec_attempt: int
    trial: TrialResult
    ended: float
    final: bool

    @property
    def started(self) -> float:
        return self.ended - (self.trial.wall_s or 0.0)


@dataclass
class Soak:
    """Shared state of one run: attempts seen, faults injected."""

    run_id: str
    attempts: list[Attempt] = field(default_factory=list)
    injections: list[Injection] = field(default_factory=list)
    finished: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def mid_episode_container(run_id: str, rng: random.Random, hit: set[str]) -> tuple[str, dict] | None:
    """A running container of the run in its agent phase (its script's ``sleep 1`` runs in it), not hit before:
    its id and its ``docker top``; None when none is."""
    api = docker_client().api
    running = api.containers(filters={"label": [f"{labels.MANAGED}=true", f"{labels.RUN_ID}={run_id}"], "status": "running"})
    rng.shuffle(running)
    for container in running:
        if container["Id"] in hit:
            continue
        try:
            top = api.top(container["Id"], ps_args="-o pid,args")
        except DAEMON_ERRORS:  # it ended meanwhile: look at the next one
            continue
        if any(p[-1].startswith("sleep 1") for p in top.get("Processes") or []):
            hit.add(container["Id"])
            return container["Id"], top
    return None


def kill_container(run_id: str, rng: random.Random, hit: set[str]) -> str | None:
    found = mid_episode_container(run_id, rng, hit)
    if found is None:
        return None
    docker_client().api.kill(found[0])
    return found[0][:12]


def kill_shell_server(run_id: str, rng: random.Random, hit: set[str]) -> str | None:
    found = mid_episode_container(run_id, rng, hit)
    if found is None:
        return None
    container_id, top = found
    pid_at = top["Titles"].index("PID")
    # the server runs as ta-sandbox (its renamed interpreter) under docker-init; the oldest one is the server itself
    servers = [int(p[pid_at]) for p in top.get("Processes") or [] if "ta-sandbox" in p[-1] and "docker-init" not in p[-1]]
    if not servers:
        return None
    os.kill(min(servers), signal.SIGKILL)
    return f"{container_id[:12]} pid {min(servers)}"


def sandbox_config(args: argparse.Namespace) -> SandboxConfig:
    """Docker sandboxes here, or (``--backend ray``) the same through the Ray host actors of the local cluster."""
    if args.backend == "ray":
        from terminal_agent.sandbox.config import RaySandboxConfig

        return SandboxConfig(backend="ray", max_concurrent_starts=4,
                             ray=RaySandboxConfig(max_sandboxes_per_node=max(8, args.concurrency)))
    return SandboxConfig(max_concurrent_starts=4)


def kill_host(config: SandboxConfig, rng: random.Random) -> str | None:
    """SIGKILL-like end of one Ray host actor that has sandboxes open (``ray.kill``, no restart)."""
    import ray

    from terminal_agent.sandbox.ray.backend import fleet_for

    busy = [slot for slot in fleet_for(config).hosts() if slot.live > 0 and slot.lost is None]
    if not busy:
        return None
    slot = rng.choice(busy)
    ray.kill(slot.handle, no_restart=True)
    return f"host on node {slot.node_id[:12]} with {slot.live} sandboxes"


def start_ray_cluster() -> object:
    """A two-node Ray cluster on this machine, each node advertising the sandbox host resource."""
    import ray
    from ray.cluster_utils import Cluster

    from terminal_agent.sandbox.config import DEFAULT_HOST_RESOURCE

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {DEFAULT_HOST_RESOURCE: 1},
                                                            "include_dashboard": False})
    cluster.add_node(num_cpus=1, resources={DEFAULT_HOST_RESOURCE: 1})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    return cluster


def restart_dockerd() -> str:
    pid = int(Path("/var/run/docker.pid").read_text().strip())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    subprocess.run(["bash", str(ROOT / "scripts" / "ensure_docker.sh")], check=True, capture_output=True, timeout=180)
    return f"dockerd pid {pid} stopped, started again"


def injector(soak: Soak, args: argparse.Namespace, total: int, stop: threading.Event) -> None:
    rng = random.Random(7)
    hit: set[str] = set()
    restarts_at = [int(total * (i + 1) / (args.dockerd_restarts + 1)) for i in range(args.dockerd_restarts)]
    shells_at = [int(total * (i + 0.5) / (args.shell_kills + 1)) for i in range(args.shell_kills)]
    hosts_at = [int(total * (i + 0.7) / (args.host_kills + 1)) for i in range(args.host_kills)] if args.backend == "ray" else []
    next_kill = args.kill_every
    while not stop.is_set():
        done = soak.finished
        fault, action = None, None
        if restarts_at and done >= restarts_at[0]:
            restarts_at.pop(0)
            fault, action = "dockerd-restart", restart_dockerd
        elif hosts_at and done >= hosts_at[0]:
            fault, action = "host-kill", lambda: kill_host(sandbox_config(args), rng)
        elif shells_at and done >= shells_at[0]:
            fault, action = "shell-kill", lambda: kill_shell_server(soak.run_id, rng, hit)
        elif args.kill_every and done >= next_kill:
            fault, action = "container-kill", lambda: kill_container(soak.run_id, rng, hit)
        if action is None:
            stop.wait(0.1)
            continue
        at = time.monotonic()
        try:
            detail = action()
        except Exception as exc:  # noqa: BLE001 - an injection that fails is reported, the soak goes on
            detail = None
            print(f"  {fault} injection failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        if detail is None:  # nothing mid-episode to hit yet: try again shortly
            stop.wait(0.05)
            continue
        if fault == "shell-kill":
            shells_at.pop(0)
        elif fault == "host-kill":
            hosts_at.pop(0)
        elif fault == "container-kill":
            next_kill += args.kill_every
        with soak.lock:
            soak.injections.append(Injection(fault, at, time.monotonic(), str(detail)))
        print(f"  [{done} done] {fault}: {detail} ({time.monotonic() - at:.1f} s)", file=sys.stderr)


def run(args: argparse.Namespace, episodes: int, faults: bool, hang: set[int]) -> tuple[Soak, float]:
    run_id = f"soakf-{os.getpid()}-{int(time.time())}-{'f' if faults else 'c'}"
    soak = Soak(run_id)
    config = RolloutConfig(
        attempts=episodes, max_steps=4, concurrency=args.concurrency, sweep_leaked=False, run_id=run_id,
        episode_timeout_s=180.0, retries=args.retries, retry_delay_s=args.retry_delay,
        sandbox=sandbox_config(args),
    )

    def on_attempt(spec: TrialSpec, trial: TrialResult, final: bool) -> None:
        with soak.lock:
            soak.attempts.append(Attempt(spec.attempt, trial, time.monotonic(), final))
            if final:
                soak.finished += 1
                if soak.finished % 100 == 0:
                    flagged = sum(1 for a in soak.attempts if a.trial.status == "error")
                    print(f"  {soak.finished}/{episodes} episodes ({flagged} attempts flagged)", file=sys.stderr)

    runner = RolloutRunner(
        ScriptedModelClient([], name="scripted"), config,
        model_for_trial=lambda spec: ScriptedModelClient(replies(spec.attempt in hang)),
        on_attempt=on_attempt,
    )
    stop = threading.Event()
    thread = threading.Thread(target=injector, args=(soak, args, episodes, stop), daemon=True) if faults else None
    started = time.monotonic()
    if thread:
        thread.start()
    try:
        results = runner.run([soak_task()])
    finally:
        stop.set()
        if thread:
            thread.join(timeout=300)
    wall = time.monotonic() - started
    soak.results = results  # type: ignore[attr-defined]
    return soak, wall


def leftovers(run_id: str) -> dict[str, int]:
    api = docker_client().api
    selector = {"label": [f"{labels.MANAGED}=true", f"{labels.RUN_ID}={run_id}"]}
    counts = {
        "containers": len(api.containers(all=True, filters=selector)),
        "networks": len(api.networks(filters=selector)),
        "volumes": len((api.volumes(filters=selector) or {}).get("Volumes") or []),
    }
    # everything labelled with the run, whatever its owner's state: a TTL far in the future has passed for all
    for obj in find_leaked(backends=["docker", "bwrap"], now=time.time() + 10 * 365 * 86400):
        if obj.run_id == run_id and obj.kind not in ("container", "network", "volume"):
            counts[obj.kind] = counts.get(obj.kind, 0) + 1
    counts.setdefault("bwrap", 0)
    return counts


def attribute(soak: Soak, hang: set[int]) -> dict[int, str]:
    """Which fault each flagged attempt is put down to (index into soak.attempts -> fault name)."""
    blame: dict[int, str] = {}
    for index, attempt in enumerate(soak.attempts):
        if attempt.trial.status != "error":
            continue
        if attempt.spec_attempt in hang and attempt.trial.error and attempt.trial.error.kind == "grading":
            blame[index] = "grader-timeout"
            continue
        hits = [i for i in soak.injections if i.at <= attempt.ended + 0.5 and i.until >= attempt.started - 0.5]
        outages = [i for i in hits if i.fault == "dockerd-restart"]
        chosen = outages or hits
        blame[index] = min(chosen, key=lambda i: abs(i.at - attempt.ended)).fault if chosen else "unattributed"
    return blame


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--clean-episodes", type=int, default=200, help="Fault-free baseline run first (0: none).")
    parser.add_argument("--kill-every", type=int, default=50, help="Kill a running container every N episodes (0: never).")
    parser.add_argument("--backend", choices=("docker", "ray"), default="docker",
                        help="ray: the same episodes through the host actors of a two-node Ray cluster started here")
    parser.add_argument("--dockerd-restarts", type=int, default=None, help="default 2 (docker), 0 (ray)")
    parser.add_argument("--host-kills", type=int, default=1, help="Ray host actors killed mid-run (--backend ray)")
    parser.add_argument("--shell-kills", type=int, default=1)
    parser.add_argument("--grader-timeouts", type=int, default=1)
    parser.add_argument("--retries", type=int, default=3, help="RolloutConfig.retries for sandbox failures.")
    parser.add_argument("--retry-delay", type=float, default=5.0, help="RolloutConfig.retry_delay_s.")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="Wall time the faulty run may take: fewer episodes than --episodes when the fault-free "
                             "rate says they would not fit (it assumes the faults cost a third of the throughput).")
    args = parser.parse_args()
    if args.dockerd_restarts is None:
        args.dockerd_restarts = 2 if args.backend == "docker" else 0
    cluster = start_ray_cluster() if args.backend == "ray" else None
    try:
        return soak_and_report(args)
    finally:
        if cluster is not None:
            import ray

            from terminal_agent.sandbox.ray.backend import shutdown_fleets

            shutdown_fleets()
            ray.shutdown()
            cluster.shutdown()  # type: ignore[attr-defined]


def soak_and_report(args: argparse.Namespace) -> int:
    problems: list[str] = []
    clean_rate = None
    if args.clean_episodes:
        print(f"fault-free run: {args.clean_episodes} episodes, {args.concurrency} at a time", file=sys.stderr)
        clean, clean_wall = run(args, args.clean_episodes, faults=False, hang=set())
        clean_rate = args.clean_episodes / clean_wall
        flagged = [a for a in clean.attempts if a.trial.status == "error"]
        print(f"fault-free: {clean_wall:.1f} s wall, {clean_rate * 60:.1f} episodes/min, {len(flagged)} attempts flagged")
        if flagged:
            problems.append(f"fault-free run flagged {len(flagged)} attempt(s): {flagged[0].trial.error}")
        remaining = leftovers(clean.run_id)
        if any(remaining.values()):
            problems.append(f"fault-free run left {remaining}")

    if args.budget_s and clean_rate:
        fits = int(clean_rate * args.budget_s * 0.67) // 10 * 10
        if fits < args.episodes:
            print(f"only {fits} of {args.episodes} episodes fit in {args.budget_s:.0f} s at the fault-free rate: running {fits}")
            args.episodes = fits
    hang = {int(args.episodes * (i + 1) / (args.grader_timeouts + 2)) + 3 for i in range(args.grader_timeouts)}
    print(f"faulty run: {args.episodes} episodes, {args.concurrency} at a time, grader timeouts at {sorted(hang)}", file=sys.stderr)
    soak, wall = run(args, args.episodes, faults=True, hang=hang)
    results = soak.results  # type: ignore[attr-defined]
    time.sleep(2)  # auto-remove of the last containers may still be finishing
    remaining = leftovers(soak.run_id)

    # --- none lost, none twice ---------------------------------------------------------------------------------
    per_attempt = Counter(t.attempt for t in results.trials)
    lost = sorted(set(range(args.episodes)) - set(per_attempt))
    twice = sorted(a for a, n in per_attempt.items() if n > 1)
    if lost or twice or len(results.trials) != args.episodes:
        problems.append(f"{len(results.trials)} trials for {args.episodes} episodes: lost {lost[:10]}, twice {twice[:10]}")
    # --- every trial scored right or flagged with the right kind -------------------------------------------------
    blame = attribute(soak, hang)
    final_by_attempt = {a.spec_attempt: (i, a) for i, a in enumerate(soak.attempts) if a.final}
    outcomes: Counter[str] = Counter()
    for trial in results.trials:
        if trial.status == "scored":
            outcomes["scored"] += 1
            if trial.reward != 1.0:
                problems.append(f"episode {trial.attempt} scored {trial.reward}, not 1.0")
            continue
        kind = trial.error.kind if trial.error else "?"
        outcomes[f"flagged {kind}"] += 1
        index, _ = final_by_attempt[trial.attempt]
        fault = blame.get(index, "unattributed")
        wanted = "grading" if fault == "grader-timeout" else "sandbox" if fault in SANDBOX_KINDS else None
        if kind != wanted:
            problems.append(f"episode {trial.attempt} flagged {kind!r} ({trial.error.message[:160] if trial.error else ''}); fault {fault} wants {wanted!r}")
    for index, attempt in enumerate(soak.attempts):
        if not attempt.final and attempt.trial.error and attempt.trial.error.kind not in ("sandbox",):
            problems.append(f"a {attempt.trial.error.kind} attempt of episode {attempt.spec_attempt} was retried")
        if (attempt.final and attempt.trial.status == "error" and attempt.trial.error.kind == "sandbox"
                and sum(1 for a in soak.attempts if a.spec_attempt == attempt.spec_attempt) <= args.retries):
            problems.append(f"episode {attempt.spec_attempt} ended a sandbox failure without using its {args.retries} retries")
    for h in hang:
        trial = next((t for t in results.trials if t.attempt == h), None)
        if trial is None or trial.status != "error" or trial.error.kind != "grading":
            problems.append(f"grader-timeout episode {h} ended {trial.status if trial else 'missing'}, not a grading flag")
    if any(remaining.values()):
        problems.append(f"left behind: {remaining}")

    # --- report ------------------------------------------------------------------------------------------------
    rate = args.episodes / wall
    retried = [a for a in soak.attempts if not a.final]
    print(f"\nfaulty run: {args.episodes} episodes in {wall:.1f} s wall ({rate * 60:.1f} episodes/min), "
          f"{len(soak.attempts)} attempts ({len(retried)} retried)")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    injected = Counter(i.fault for i in soak.injections)
    injected["grader-timeout"] = len(hang)
    flagged_by: dict[str, list[Attempt]] = defaultdict(list)
    for index, fault in blame.items():
        flagged_by[fault].append(soak.attempts[index])
    print(f"{'fault':<16} {'injected':>8} {'attempts hit':>12} {'retried':>8} {'final flags':>11} {'lost s':>8}  kinds")
    for fault in FAULTS:
        hit = flagged_by.get(fault, [])
        if not hit and not injected.get(fault):
            continue
        outage = sum(i.until - i.at for i in soak.injections if i.fault == fault)
        lost_s = sum(a.trial.wall_s or 0.0 for a in hit) + outage
        kinds = Counter(a.trial.error.kind for a in hit if a.trial.error)
        print(f"{fault:<16} {injected.get(fault, 0):>8} {len(hit):>12} {sum(1 for a in hit if not a.final):>8} "
              f"{sum(1 for a in hit if a.final):>11} {lost_s:>8.1f}  {dict(kinds)}"
              + (f" (outage {outage:.1f} s)" if fault == "dockerd-restart" else ""))
    if clean_rate:
        print(f"throughput: {rate * 60:.1f} vs {clean_rate * 60:.1f} episodes/min fault-free: ratio {rate / clean_rate:.2f}")
    print(f"left behind (run {soak.run_id}): {remaining}")
    for problem in problems[:20]:
        print("  PROBLEM: " + problem)
    print("OK" if not problems else f"FAILED: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
