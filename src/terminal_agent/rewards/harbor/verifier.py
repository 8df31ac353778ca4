"""The ``harbor`` grading mode (Harbor's verifier): the task's own ``tests/test.sh`` decides the reward.

Order of a grading, every step through the :class:`~terminal_agent.interfaces.GradingSandbox` contract:

1. kill (or freeze) every agent process, and
2. tamper detection on the agent's changes, both as in every grading mode
   (:func:`~terminal_agent.rewards.grading.agent_processes_held_for_grading`,
   :func:`~terminal_agent.rewards.grading.inspect_for_grading`), with ``uv`` and ``uvx`` protected too; a
   tampered sandbox grades 0 with ``tamper_signals``; the interpreter of the runner and the runtime is the
   image's own python3 (none: a grading error that says so);
3. the host plans the offline verifier runtime (:mod:`~terminal_agent.rewards.verifier_runtime`): the tools the
   test scripts name, fetched once and cached, as wheels for the python that runs the verifier (asked of the
   sandbox, :mod:`~terminal_agent.rewards.target_python`; in a separate environment, of the fresh sandbox);
4. the verifier phase's network: ``task.verifier.verifier_network(limits.network)`` (or never, with
   ``HarborGradingConfig.network = "offline"``), through ``Sandbox.set_network`` when it differs from the
   agent's; in ``environment_mode = "separate"`` a fresh sandbox of the task's image (or the verifier's own
   environment) with that policy, holding the declared artifacts (else the agent's working directory);
5. one archive at ``/``: a fresh random verifier directory under ``/var/lib`` with the runner, the runtime, the
   PATH directories, a fresh ``HOME`` and the task's tests staged; then ``PYTHON -I -S -B runner.py VDIR`` as root
   with a deadline (``assets/harbor_runner.py``: re-sweeps processes, replaces ``/tests``, recreates
   ``/logs/verifier`` empty and owned by the verifier user, runs ``bash /tests/test.sh`` as that user with
   the task's timeout, env and working directory, and collects the reward files and ``ctrf.json``);
6. one ``read_file`` of the runner's result: the reward (``reward.json`` over ``reward.txt``, see
   :mod:`~terminal_agent.rewards.harbor.reward_files`), per-test results from CTRF, partial credit from CTRF
   where ``test_weights`` are given, and what the runtime substituted or could not serve. The task's guard
   tests (``Task.guards``) zero or cap the score, judged on the CTRF report, also when the reward file gives it
   (no CTRF report then: a grading error).

PATH of the verifier (first match wins):

* offline: ``VDIR/bin`` (``pytest``, ``py.test``, ``python``/``python3``: ``-m pytest`` is the runtime's pytest, anything else the image's interpreter), ``VDIR/uv``
  (``uv``, ``uvx`` stand-ins), ``VDIR/shims`` (``apt-get``, ``apt``, ``curl``, ``wget``, ``pip``, ``pip3``),
  ``VDIR/overrides`` (links to the image's programs the agent shadowed, masks over the agent's own ``uv``,
  ``curl`` ...), then the image's PATH;
* with a network: ``VDIR/bin``, ``VDIR/overrides``, the image's PATH; ``VDIR/uv`` is NOT on PATH, so
  ``command -v uv`` fails and the task's own installs run as written (the uv installer puts the real uv in
  ``$HOME/.local/bin`` and its ``env`` file puts that first); when no real uv came, bash's
  ``command_not_found_handle`` (exported to test.sh) runs the stand-in for ``uv``/``uvx``.

A verifier crash, a timeout, no or an unparsable reward file, a runtime that could not serve what the
offline verifier asked for (``the verifier needs the network: ...``): ``score=None``, ``error`` set,
``error_kind="grading"`` (``sandbox`` when a sandbox broke). Never reward 0.

:func:`harbor_grader` is the entry of the grading-mode table.
"""

from __future__ import annotations

import base64
import json
import logging
import posixpath
import secrets
import shlex
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terminal_agent.errors import ConfigError, GradingError, SandboxError
from terminal_agent.interfaces import GradingSandbox, Sandbox
from terminal_agent.outcome import Grade, TestVerdict
from terminal_agent.rewards.agent_processes import KEEP, HeldProcesses, gate_signals
from terminal_agent.rewards.grading import (
    GradingConfig,
    _tar,
    agent_processes_held_for_grading,
    grade_at_boundary,
    inspect_for_grading,
    late_tamper_signals,
)
from terminal_agent.rewards.grading_modes import EpisodeGrader, GraderSettings
from terminal_agent.rewards.guard_scoring import failed_guard_names
from terminal_agent.rewards.harbor.ctrf_scoring import ctrf_outcomes, guard_reward, parse_ctrf, score_ctrf
from terminal_agent.rewards.harbor.reward_files import read_reward
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.tamper_detection import BIN_DIRS, ChangeScan, choose_interpreter
from terminal_agent.rewards.target_python import probe_target_python
from terminal_agent.rewards.verifier_bundle import get_bundle, runner_source
from terminal_agent.rewards.verifier_runtime import (
    Requirement,
    RuntimePlan,
    asset,
    host_pytest_version,
    needs_wheels,
    plan_runtime,
    scan_scripts,
    unpacked_wheel,
)
from terminal_agent.tasks.model import Task, file_bytes

if TYPE_CHECKING:
    from terminal_agent.sandbox.config import SandboxConfig

logger = logging.getLogger(__name__)

HARBOR_PROTECTED = ("uv", "uvx")
"""Programs protected in harbor mode on top of ``GradingConfig.protected_programs``."""
MASKED_TOOLS = {"uv": "uv", "uvx": "uv", "curl": "shims", "wget": "shims", "apt-get": "shims", "apt": "shims",
                "pip": "shims", "pip3": "shims", "pytest": "bin", "py.test": "bin"}
"""Program names the verifier runs whose agent-added copies on PATH are masked (name -> our dir holding its stand-in)."""
SHIM_NAMES = ("apt-get", "apt", "curl", "wget", "pip", "pip3")
OFFLINE_ENV_FILE = b"# terminal-agent verifier runtime: uv and uvx are already on PATH (offline)\n:\n"
PACK_ARTIFACTS = r"""
import os, stat, sys, tarfile
out, cap, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
skip = ("/logs/verifier", "/tests", "/proc", "/sys", "/dev")
total = [0]
def keep(info):
    path = "/" + info.name
    if any(path == s or path.startswith(s + "/") for s in skip):
        return None
    if not (info.isreg() or info.isdir() or info.issym()):
        return None
    total[0] += info.size
    if total[0] > cap:
        raise SystemExit("the artifacts hold more than %d bytes" % cap)
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
with tarfile.open(out, "w") as tar:
    made = set()
    for path in paths:
        if not os.path.lexists(path):
            continue
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent not in made:
                made.add(parent)
                info = tarfile.TarInfo(parent)
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
        tar.add(path, arcname=path.strip("/"), recursive=True, filter=keep)
"""


@dataclass
class HarborVerifierFacts:
    """What the Harbor verifier mode found beside the grade: its part of the grade (:attr:`Grade.verifier
    <terminal_agent.outcome.Grade.verifier>`, :meth:`to_info`), filled while it grades."""

    mode: str = "harbor"
    rewards: dict[str, float] = field(default_factory=dict)
    """Harbor's rewards dict (from reward.json, or ``{"reward": x}`` from reward.txt)."""
    reward_source: str = ""
    """``reward.json``, ``reward.txt``, or ``ctrf`` (partial credit from test_weights)."""
    harbor_reward: float | None = None
    """The reward file's scalar (what Harbor gives), also when ``test_weights`` decided the score."""
    runtime: str = ""
    """``offline`` (the verifier runtime with shims) or ``network`` (the task's installs as written)."""
    verifier_network: bool | None = None
    """Whether the verifier phase had a network."""
    separate_environment: bool = False
    substitutions: list[str] = field(default_factory=list)
    """What the verifier got instead of what it pinned (``pytest==8.4.1 -> host pytest 9.0.3``)."""
    skipped: list[str] = field(default_factory=list)
    """Install steps the offline shims made harmless (``apt-get update``, the uv installer)."""
    notes: list[str] = field(default_factory=list)
    """Anything else worth reading (a network the verifier could not get, config files moved aside)."""

    def to_info(self) -> dict[str, Any]:
        """The grade's ``verifier`` part (JSON-safe)."""
        return {
            "mode": self.mode, "rewards": dict(self.rewards), "reward_source": self.reward_source,
            "harbor_reward": self.harbor_reward, "runtime": self.runtime, "verifier_network": self.verifier_network,
            "separate_environment": self.separate_environment, "substitutions": list(self.substitutions),
            "skipped": list(self.skipped), "notes": list(self.notes),
        }


def _zero(result: Grade, task: Task) -> None:
    result.score = 0.0
    result.tests = [TestVerdict(name, float(w), passed=False, reported=False, message="not run (tampering)")
                    for name, w in task.test_weights.items()]


class HarborGrader:
    """Grades episodes of harbor-mode tasks. Thread-safe; one instance can serve many envs.

    ``sandbox_config`` and ``run_id`` start the fresh sandbox of a separate verifier environment (the env
    passes its own); without them such a task is graded with the default Docker settings.
    """

    def __init__(self, config: GradingConfig | None = None, *, sandbox_config: SandboxConfig | None = None,
                 run_id: str | None = None):
        self.config = config or GradingConfig()
        self.sandbox_config = sandbox_config
        self.run_id = run_id

    @property
    def harbor(self) -> HarborGradingConfig:
        return self.config.harbor

    def grade(self, sandbox: GradingSandbox, task: Task, *, workdir: str | None = None) -> Grade:
        """Grade the episode that just ended in ``sandbox``. Never raises for infrastructure failures. The grade's
        ``verifier`` part is this mode's :class:`HarborVerifierFacts`; its output tail is kept short."""
        result, facts = Grade(), HarborVerifierFacts(separate_environment=task.verifier.separate_environment)
        grade_at_boundary(lambda timings: self._grade(sandbox, task, workdir, timings, result, facts), result, task,
                          "grading (harbor)")
        result.verifier, result.log_tail = facts.to_info(), result.log_tail[-2000:]
        return result

    # --- the steps ---------------------------------------------------------------------------
    def _grade(self, sandbox: GradingSandbox, task: Task, workdir: str | None, timings: dict[str, float],
               result: Grade, facts: HarborVerifierFacts) -> None:
        with agent_processes_held_for_grading(sandbox, task, self.config, result, timings) as held:
            if held.note:
                facts.notes.append(held.note)
            self._grade_held(sandbox, task, workdir, timings, result, facts, held)

    def _grade_held(self, sandbox: GradingSandbox, task: Task, workdir: str | None, timings: dict[str, float],
                    result: Grade, facts: HarborVerifierFacts, held: HeldProcesses) -> None:
        inspection = inspect_for_grading(sandbox, self.config, result, timings, HARBOR_PROTECTED)
        signals, interpreter, pycache_touched = inspection.signals, inspection.interpreter, inspection.pycache_touched
        shadowing, scan, candidates = inspection.shadowing, inspection.scan, self.config.python_candidates
        if signals:
            result.tamper_signals = signals
            _zero(result, task)
            logger.warning("task %s: tampering, graded 0: %s", task.task_id, signals)
            return

        requirements = scan_scripts(task.test_support_files, self.harbor.ctrf_plugin)
        env = self._verifier_env(task)
        wanted = False if self.harbor.network == "offline" else task.verifier.verifier_network(task.limits.network)

        if not task.verifier.separate_environment:
            plan = self._plan_runtime(sandbox, interpreter, requirements, timings, facts)
            # the sandbox keeps the verifier's policy afterwards: grading is its last phase (the env releases it)
            network = self._set_network(sandbox, wanted, task.limits.network, facts)
            facts.verifier_network = network
            untrusted = sorted(c.path for c in scan.changes if c.kind in ("A", "C") and not c.is_dir
                               and posixpath.dirname(c.path) in BIN_DIRS)
            # the task's own installs run only where a network was both wanted and had
            self._run_verifier(sandbox, task, workdir or sandbox.image_workdir or "/", interpreter, pycache_touched,
                               dict(shadowing.overrides), untrusted, plan, env, wanted and network, timings, result,
                               facts, True, held.job())
            if held.action == KEEP and held.frozen and self.config.check_tamper and not result.tamper_signals:
                mark = time.monotonic()  # the agent's processes ran beside the tests, after the first scan
                late = late_tamper_signals(sandbox, self.config, signals, HARBOR_PROTECTED)
                if late:
                    result.tamper_signals += late
                    _zero(result, task)
                timings["rescan_s"] = time.monotonic() - mark
            return

        mark = time.monotonic()
        artifacts = self._pack_artifacts(sandbox, task, workdir or sandbox.image_workdir or "/", interpreter)
        timings["artifacts_s"] = time.monotonic() - mark
        mark = time.monotonic()
        fresh = self._start_verifier_sandbox(task, wanted)
        timings["start_s"] = time.monotonic() - mark
        try:
            if artifacts:
                fresh.put_archive("/", artifacts)
            own_python = fresh.image_has(list(candidates))
            fresh_interpreter = choose_interpreter(ChangeScan([], "fresh", own_python), candidates)
            result.interpreter = fresh_interpreter
            facts.verifier_network = wanted
            plan = self._plan_runtime(fresh, fresh_interpreter, requirements, timings, facts)
            self._run_verifier(fresh, task, fresh.image_workdir or "/", fresh_interpreter, False, {}, [], plan, env,
                               wanted, timings, result, facts, False, None)
        finally:
            fresh.close()

    def _plan_runtime(self, sandbox: GradingSandbox, interpreter: str, requirements: list[Requirement],
                      timings: dict[str, float], facts: HarborVerifierFacts) -> RuntimePlan:
        """Step 3: the runtime of ``requirements`` for the python that runs the verifier in ``sandbox`` (asked
        only when some requirement comes as wheels: compiled ones import on that python alone)."""
        mark = time.monotonic()
        target = probe_target_python(sandbox, interpreter) if needs_wheels(requirements) else None
        plan = plan_runtime(requirements, self.harbor, target)
        facts.substitutions += plan.substitutions
        timings["runtime_s"] = time.monotonic() - mark
        return plan

    def _verifier_env(self, task: Task) -> dict[str, str]:
        """The task's env, then the verifier's (Harbor ``[verifier] env``), templates resolved from the host."""
        from terminal_agent.sandbox.task_env import resolve_sandbox_env

        try:
            env = resolve_sandbox_env(task.env, task_id=task.task_id)
            env.update(resolve_sandbox_env(task.verifier.env, task_id=task.task_id))
        except ConfigError as exc:
            raise GradingError(f"the verifier's env cannot be resolved: {exc}") from None
        return env

    def _set_network(self, sandbox: GradingSandbox, wanted: bool, agent: bool, facts: HarborVerifierFacts) -> bool:
        """The verifier phase's network in the agent's sandbox; what it really is after trying."""
        if wanted == agent:
            return agent
        try:
            sandbox.set_network(wanted)
        except SandboxError as exc:
            # bwrap cannot change it at all; a sandbox that really broke fails the next step (not scored)
            change = "enabled" if wanted else "taken away"
            facts.notes.append(f"the verifier's network could not be {change} ({exc}): it keeps network={agent}")
            return agent
        return wanted

    def _start_verifier_sandbox(self, task: Task, network: bool) -> GradingSandbox:
        from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
        from terminal_agent.sandbox.config import SandboxConfig

        config = self.sandbox_config or SandboxConfig()
        image_task = task
        if task.verifier.environment_dockerfile:
            image_task = task.model_copy(update={"dockerfile": task.verifier.environment_dockerfile, "docker_image": None,
                                                 "task_id": f"{task.task_id}.verifier"})
        image = resolve_task_image(config, image_task)
        limits = task.limits.model_copy(update={"network": network})
        fresh: Sandbox = start_sandbox(config, image, limits, self.run_id, env=task.env, task_id=task.task_id)
        if not isinstance(fresh, GradingSandbox):
            fresh.close()
            raise SandboxError(f"the {config.backend} backend serves no grader: the separate verifier environment "
                               "needs a sandbox with the grader's members (interfaces.GradingSandbox)")
        return fresh

    def _pack_artifacts(self, sandbox: GradingSandbox, task: Task, workdir: str, interpreter: str) -> bytes:
        """The declared artifacts (else the working directory) of the agent's sandbox, as one tar."""
        paths = list(task.verifier.artifacts) or [workdir]
        if paths == ["/"]:
            raise GradingError("the agent's working directory is '/': declare verifier.artifacts to hand over")
        out = f"{self.harbor.verifier_parent}/ta-artifacts-{secrets.token_hex(12)}.tar"
        run = sandbox.run_privileged(
            [interpreter, "-I", "-S", "-B", "-c", PACK_ARTIFACTS, out, str(self.harbor.max_artifact_bytes), *paths], 120.0
        )
        if run.timed_out or run.exit_code != 0:
            raise GradingError(f"packing the artifacts {paths} failed (exit {run.exit_code}): {run.output[-800:]}")
        return sandbox.read_file(out)

    def _skeleton(self, task: Task, vdir: str, interpreter: str, pycache: bool, overrides: dict[str, str],
                  untrusted: list[str], plan: RuntimePlan, job: dict[str, Any], network: bool) -> bytes:
        rel = vdir.strip("/")
        entries: list[tuple[str, bytes | str | None, int]] = []
        parts = rel.split("/")
        entries += [("/".join(parts[:depth]), None, 0o755) for depth in range(1, len(parts))]
        entries.append((rel, None, 0o755))  # readable by a non-root verifier user; written by root only
        python = [interpreter, "-I", "-S", "-B"] + (["-X", f"pycache_prefix={vdir}/pycache"] if pycache else [])

        def wrapper(script: str, tool: str) -> bytes:
            command = " ".join(shlex.quote(w) for w in python + [f"{vdir}/runtime/{script}", tool])
            return f'#!/bin/sh\nexec {command} "$@"\n'.encode()

        for directory in ("runtime", "runtime/wheels", "bin", "uv", "shims", "overrides", "log", "home",
                          "home/.local", "home/.local/bin", "tests", "gate"):
            entries.append((f"{rel}/{directory}", None, 0o755))
        entries += [
            (f"{rel}/runner.py", asset("harbor_runner.py"), 0o644),
            (f"{rel}/agent_gate.py", asset("agent_gate.py"), 0o644),
            (f"{rel}/gate/ta_session_gate.py", asset("ta_session_gate.py"), 0o644),
            (f"{rel}/verifier_runner.py", runner_source(), 0o644),
            (f"{rel}/job.json", json.dumps(job).encode(), 0o644),
            (f"{rel}/runtime/bundle.zip", get_bundle().data, 0o644),
            (f"{rel}/runtime/uv_standin.py", asset("uv_standin.py"), 0o644),
            (f"{rel}/runtime/offline_shims.py", asset("offline_shims.py"), 0o644),
            (f"{rel}/runtime/pytest.ini", b"[pytest]\n", 0o644),
            (f"{rel}/bin/pytest", wrapper("uv_standin.py", "pytest"), 0o755),
            (f"{rel}/bin/py.test", wrapper("uv_standin.py", "pytest"), 0o755),
            # python -m pytest (a v1 run-tests.sh after uv venv) is the runtime's pytest; anything else execs the
            # image's interpreter (one more interpreter start, ~20 ms)
            (f"{rel}/bin/python3", wrapper("uv_standin.py", "python"), 0o755),
            (f"{rel}/bin/python", wrapper("uv_standin.py", "python"), 0o755),
            (f"{rel}/uv/uv", wrapper("uv_standin.py", "uv"), 0o755),
            (f"{rel}/uv/uvx", wrapper("uv_standin.py", "uvx"), 0o755),
        ]
        manifest = plan.manifest(interpreter, host_pytest_version())
        manifest["untrusted"] = untrusted
        entries.append((f"{rel}/runtime/manifest.json", json.dumps(manifest).encode(), 0o644))
        for name, wheel in sorted(plan.wheels.items()):
            if wheel.compiled:  # extension modules cannot be imported from a zip: shipped unpacked
                entries += unpacked_wheel(f"{rel}/runtime/wheels/{name}.d", wheel.data, name)
            else:
                entries.append((f"{rel}/runtime/wheels/{name}", wheel.data, 0o644))
        entries += [(f"{rel}/shims/{name}", wrapper("offline_shims.py", name), 0o755) for name in SHIM_NAMES]
        masks = {posixpath.basename(path) for path in untrusted if posixpath.basename(path) in MASKED_TOOLS}
        links = dict(overrides)
        for name in sorted(masks):
            links[name] = f"{vdir}/{MASKED_TOOLS[name]}/{name}"
        entries += [(f"{rel}/overrides/{name}", target, 0o777) for name, target in sorted(links.items())]
        if not network:
            entries.append((f"{rel}/home/.local/bin/env", OFFLINE_ENV_FILE, 0o644))
        if task.test_source.strip():
            entries.append((f"{rel}/tests/test_outputs.py", task.test_source.encode(), 0o644))
        made = {f"{rel}/tests"}
        for path, content in sorted(task.test_support_files.items()):
            target = f"{rel}/tests/{path}"
            parent, missing = posixpath.dirname(target), []
            while parent not in made:
                missing.append(parent)
                parent = posixpath.dirname(parent)
            for directory in reversed(missing):
                entries.append((directory, None, 0o755))
                made.add(directory)
            entries.append((target, file_bytes(content), 0o755 if path.endswith(".sh") else 0o644))
        return _tar(entries)

    def _run_verifier(self, sandbox: GradingSandbox, task: Task, workdir: str, interpreter: str, pycache: bool,
                      overrides: dict[str, str], untrusted: list[str], plan: RuntimePlan, env: dict[str, str],
                      network: bool, timings: dict[str, float], result: Grade, facts: HarborVerifierFacts,
                      shared: bool, gate: dict[str, Any] | None) -> None:
        facts.runtime = "network" if network else "offline"
        vdir = posixpath.join(self.harbor.verifier_parent, f"ta-verifier-{secrets.token_hex(12)}")
        head = [f"{vdir}/bin", f"{vdir}/overrides"] if network else [f"{vdir}/bin", f"{vdir}/uv", f"{vdir}/shims", f"{vdir}/overrides"]
        job = {
            "keep_pids": list(sandbox.service_pids), "timeout_s": task.limits.test_timeout_s, "user": task.verifier.user,
            "env": env, "mode": facts.runtime, "path_head": head, "fallback_uv_dir": f"{vdir}/uv" if network else None,
            "isolate_home": self.harbor.isolate_home, "workdir": workdir, "max_report_bytes": self.harbor.max_report_bytes,
            "gate": gate,
        }
        mark = time.monotonic()
        sandbox.put_archive("/", self._skeleton(task, vdir, interpreter, pycache, overrides, untrusted, plan, job, network))
        timings["upload_s"] = time.monotonic() - mark

        mark = time.monotonic()
        command = [interpreter, "-I", "-S", "-B"] + (["-X", f"pycache_prefix={vdir}/pycache"] if pycache else [])
        deadline = task.limits.test_timeout_s + self.harbor.startup_grace_s
        run = sandbox.run_privileged(command + [f"{vdir}/runner.py", vdir], deadline)
        timings["run_s"] = time.monotonic() - mark
        result.log_tail = run.output[-4000:]
        if run.timed_out:
            raise GradingError(f"the verifier ran past the grader's deadline of {deadline:.0f} s")

        mark = time.monotonic()
        try:
            raw = sandbox.read_file(f"{vdir}/out/result.json")
        except FileNotFoundError:
            raise GradingError(f"the verifier runner did not finish (exit {run.exit_code}): {run.output[-1500:]}") from None
        timings["read_s"] = time.monotonic() - mark
        self._interpret(json.loads(raw), task, vdir, shared, result, facts)

    def _interpret(self, status: dict[str, Any], task: Task, vdir: str, shared: bool, result: Grade,
                   facts: HarborVerifierFacts) -> None:
        if status.get("error"):
            raise GradingError(status["error"])
        exit_code = status.get("exit_code")
        result.log_tail = status.get("stdout_tail", "") or result.log_tail
        if status.get("moved_aside"):
            facts.notes.append(f"moved aside while the verifier ran: {', '.join(status['moved_aside'])}")
        if shared and status.get("agent_survivors"):
            result.tamper_signals.append(f"{status['agent_survivors']} agent process(es) survived the kill")
        if shared:
            result.tamper_signals += gate_signals(status)
        if status.get("realpath") != vdir:
            result.tamper_signals.append(f"verifier dir redirected to {status.get('realpath')}")
        files: dict[str, bytes | None] = {}
        for name in ("reward.txt", "reward.json", "ctrf.json"):
            entry = status.get("files", {}).get(name)
            if entry and "error" in entry:
                raise GradingError(f"/logs/verifier/{name}: {entry['error']}")
            files[name] = base64.b64decode(entry["b64"]) if entry else None
        if files["reward.json"] is not None and not any(
            "reward.json" in (content if isinstance(content, str) else "") for content in task.test_support_files.values()
        ) and "reward.json" not in task.test_source:
            result.tamper_signals.append("reward.json appeared in /logs/verifier, but no verifier file names it")
        if result.tamper_signals:
            _zero(result, task)
            return

        needs, gaps = [], []
        for entry in status.get("shim_log", []):
            kind, message = entry.get("kind"), str(entry.get("message", ""))
            if kind == "substituted" and message not in facts.substitutions:
                facts.substitutions.append(message)
            elif kind == "skipped":
                facts.skipped.append(message)
            elif kind == "needs_network":
                needs.append(message)
            elif kind in ("missing", "unsupported", "garbled"):
                gaps.append(message)
        if status.get("timed_out"):
            raise GradingError(f"the verifier (tests/test.sh) ran past its timeout of {task.limits.test_timeout_s:.0f} s")
        if needs and facts.runtime == "offline":
            extra = f" ({'; '.join(facts.notes)})" if facts.notes else ""
            raise GradingError(f"the verifier needs the network: {'; '.join(needs)}{extra}")
        if gaps:
            # with a network too: the stand-ins only log gaps when they served (no real uv came), and a reward
            # computed without a tool the verifier asked for is not the task's reward
            raise GradingError(f"the verifier runtime could not serve the verifier: {'; '.join(gaps)}")

        tests = None
        if files["ctrf.json"] is not None:
            try:
                tests = parse_ctrf(files["ctrf.json"])
            except GradingError as exc:
                if task.test_weights or task.guards is not None:
                    raise
                facts.notes.append(str(exc))
        reward = None
        try:
            reward = read_reward(files["reward.json"], files["reward.txt"])
        except GradingError as exc:
            if not task.test_weights:
                raise GradingError(f"{exc} (exit {exit_code}): {result.log_tail[-1500:]}") from None
            facts.notes.append(str(exc))
        if reward is not None:
            facts.rewards, facts.harbor_reward = dict(reward.rewards), reward.reward
        if task.test_weights:
            if tests is None:
                raise GradingError("test_weights name CTRF tests, but the verifier wrote no /logs/verifier/ctrf.json")
            result.score, result.tests = score_ctrf(task.test_weights, tests, task.guards)
            result.failed_guards = failed_guard_names(result.tests)
            facts.reward_source = "ctrf"
            return
        if reward is None:  # only test_weights let a missing reward file through, and they returned above
            raise GradingError("the verifier wrote no reward file")
        result.score, facts.reward_source = reward.reward, reward.source
        if task.guards is not None:
            # the reward file decides, the guards still zero or cap it: judged on the CTRF report
            if tests is None:
                raise GradingError("guards name CTRF tests, but the verifier wrote no /logs/verifier/ctrf.json")
            result.score, result.tests = guard_reward(reward.reward, tests, task.guards)
            result.failed_guards = failed_guard_names(result.tests)
            return
        result.tests = ctrf_outcomes(tests) if tests is not None else []



def harbor_grader(settings: GraderSettings) -> EpisodeGrader:
    """The grading-mode table's entry for ``harbor``."""
    return HarborGrader(settings.grading, sandbox_config=settings.sandbox, run_id=settings.run_id)


__all__ = ["HarborGrader", "HarborVerifierFacts", "HarborGradingConfig", "harbor_grader"]
