"""Weighted pytest grading of one episode, hardened against the agent that was just graded.

Order of a grading (every step through the Engine API, never through the agent's shell):

1. kill every agent process (``sandbox.kill_agent_processes()``);
2. list what the agent changed in the container's filesystem (overlay upper dir, or ``docker diff``)
   and look for interpreter tampering; a tampered interpreter grades 0 with ``tamper_signals``;
3. copy the verifier in (one archive): a fresh random root-only directory under ``/var/lib`` with
   the cached pytest bundle zip, the runner, a verifier ``pytest.ini`` and the task's tests;
4. run ``PYTHON -I -S -B runner.py`` by ``docker exec`` as root with a host-side deadline; the runner
   re-sweeps processes, then runs pytest with ``--confcutdir``/``--rootdir`` on the tests dir, no
   cache provider, no plugin autoload, a per-test timeout and the JUnit report inside its own dir;
5. read the report back with ``get_archive`` and score ``sum(weight*passed)/sum(weight)`` over every
   declared test (one that never reported failed).

Infrastructure failures (daemon errors, a grader past its deadline, no report) return a
:class:`GradeResult` with ``score=None`` and ``error`` set: not scored, never 0.

Step 2 lives in :mod:`terminal_agent.rewards.tamper_detection`, step 5's parsing and scoring in
:mod:`terminal_agent.rewards.junit_scoring`; their public names are importable from here too.
"""

from __future__ import annotations

import io
import json
import logging
import posixpath
import secrets
import tarfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import docker
import docker.errors
from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import GradingError, SandboxError
from terminal_agent.interfaces import GradeResult
from terminal_agent.rewards.junit_scoring import parse_junit, score_tests
from terminal_agent.rewards.tamper_detection import (
    Change,
    ChangeScan,
    choose_interpreter,
    find_tamper_signals,
    scan_changes,
)
from terminal_agent.rewards.verifier_bundle import get_bundle, runner_source
from terminal_agent.tasks.model import Task

__all__ = [
    "Change",
    "ChangeScan",
    "DetailedGradeResult",
    "Grader",
    "GradingConfig",
    "choose_interpreter",
    "find_tamper_signals",
    "grade_episode",
    "parse_junit",
    "scan_changes",
    "score_tests",
]

logger = logging.getLogger(__name__)

TEST_FILE_NAME = "test_outputs.py"
VERIFIER_INI = b"[pytest]\n"


class GradingConfig(BaseModel):
    """How episodes are graded."""

    model_config = ConfigDict(extra="forbid")

    verifier_parent: str = "/var/lib"
    """Directory in the container under which the random verifier directory is created."""
    python_candidates: list[str] = Field(default_factory=lambda: ["/usr/bin/python3", "/usr/local/bin/python3"])
    """Interpreters the verifier may use, in order; the first that the image itself ships is taken."""
    startup_grace_s: float = Field(30.0, gt=0)
    """Added to the task's ``test_timeout_s`` to form the host-side deadline of the whole pytest run."""
    min_per_test_timeout_s: float = Field(5.0, gt=0)
    """Floor of the per-test timeout (``test_timeout_s / number of tests`` otherwise)."""
    check_tamper: bool = True
    """Look for interpreter tampering in the container's changes before running the tests."""
    change_source: Literal["auto", "diff"] = "auto"
    """``auto``: read the overlay upper dir on this host when possible, else ``docker diff``; ``diff``: always the API."""


# --- the grader --------------------------------------------------------------------------------
@dataclass
class DetailedGradeResult(GradeResult):
    """A :class:`GradeResult` with timings and diagnostics for ``info``."""

    timings: dict[str, float] = field(default_factory=dict)
    error_kind: str | None = None
    interpreter: str = ""
    pycache_isolated: bool = False
    change_source: str = ""
    exit_code: int | None = None
    log_tail: str = ""

    def to_info(self) -> dict[str, Any]:
        """JSON-safe summary for an rLLM ``info`` dict."""
        return {
            "scored": self.scored,
            "score": self.score,
            "error": self.error,
            "error_kind": self.error_kind,
            "tests": [
                {"name": t.name, "weight": t.weight, "passed": t.passed, "reported": t.reported, "message": t.message}
                for t in self.tests
            ],
            "tamper_signals": list(self.tamper_signals),
            "timings": dict(self.timings),
            "duration_s": self.duration_s,
            "interpreter": self.interpreter,
            "pycache_isolated": self.pycache_isolated,
        }


def _tar(entries: list[tuple[str, bytes | None, int]]) -> bytes:
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data, mode in entries:
            info = tarfile.TarInfo(name)
            info.mode = mode
            info.mtime = now
            info.uid = info.gid = 0
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _verifier_skeleton(task: Task, verifier_dir: str) -> bytes:
    rel = verifier_dir.strip("/")
    entries: list[tuple[str, bytes | None, int]] = []
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        entries.append(("/".join(parts[:depth]), None, 0o755))
    entries.append((rel, None, 0o700))
    entries.append((f"{rel}/tests", None, 0o755))
    entries.append((f"{rel}/pytest.ini", VERIFIER_INI, 0o644))
    entries.append((f"{rel}/runner.py", runner_source(), 0o644))
    entries.append((f"{rel}/bundle.zip", get_bundle().data, 0o644))
    entries.append((f"{rel}/tests/{TEST_FILE_NAME}", task.test_source.encode(), 0o644))
    made = {f"{rel}/tests"}
    for path, text in sorted(task.test_support_files.items()):
        target = f"{rel}/tests/{path.replace(chr(92), '/')}"
        parent = posixpath.dirname(target)
        missing = []
        while parent not in made and parent != rel:
            missing.append(parent)
            parent = posixpath.dirname(parent)
        for directory in reversed(missing):
            entries.append((directory, None, 0o755))
            made.add(directory)
        entries.append((target, text.encode(), 0o644))
    return _tar(entries)


def _read_archive_dir(api: docker.APIClient, container_id: str, path: str) -> dict[str, bytes]:
    """Regular files of directory ``path`` (one level), by base name; empty when it is absent."""
    try:
        stream, _ = api.get_archive(container_id, path)
    except docker.errors.NotFound:
        return {}
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream)), mode="r:") as tar:
        for member in tar:
            if member.isfile():
                handle = tar.extractfile(member)
                if handle is not None:
                    files[posixpath.basename(member.name)] = handle.read()
    return files


def _exec_with_deadline(
    api: docker.APIClient, container_id: str, cmd: list[str], deadline_s: float
) -> tuple[int | None, bytes]:
    """Run ``cmd`` by docker exec as root; (exit code, output), exit code None when past the deadline."""
    exec_id = api.exec_create(container_id, cmd, user="0", workdir="/", environment={"LC_ALL": "C.UTF-8"})["Id"]
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["output"] = api.exec_start(exec_id)
        except Exception as exc:  # noqa: BLE001 - reported to the caller below
            box["error"] = exc

    thread = threading.Thread(target=target, name="ta-grader-exec", daemon=True)
    thread.start()
    thread.join(deadline_s)
    if thread.is_alive():
        return None, b""
    if "error" in box:
        raise box["error"]
    return api.exec_inspect(exec_id).get("ExitCode"), box.get("output") or b""


def _grade_zero(result: DetailedGradeResult, task: Task) -> None:
    """Score a tampered container 0, with every declared test listed as failed and unreported."""
    _, result.tests = score_tests(task, {})
    result.score = 0.0


class Grader:
    """Grades episodes in their sandbox. Thread-safe; one instance can serve many envs."""

    def __init__(self, config: GradingConfig | None = None, client: docker.DockerClient | None = None):
        self.config = config or GradingConfig()
        self._client = client

    def _api(self) -> docker.APIClient:
        if self._client is None:
            from terminal_agent.sandbox.docker_sandbox import docker_client

            self._client = docker_client()
        return self._client.api

    def grade(self, sandbox: Any, task: Task, *, workdir: str | None = None) -> DetailedGradeResult:
        """Grade the episode that just ended in ``sandbox``. Never raises for infrastructure failures."""
        started = time.monotonic()
        timings: dict[str, float] = {}
        result = DetailedGradeResult(score=None)
        try:
            self._grade(sandbox, task, workdir, timings, result)
        except (GradingError, SandboxError, docker.errors.DockerException, OSError) as exc:
            kind = "sandbox" if isinstance(exc, SandboxError) else "grading"
            result.score = None
            result.error = f"{type(exc).__name__}: {exc}"
            result.error_kind = kind
            logger.warning("grading %s failed: %s", task.task_id, result.error)
        except Exception as exc:  # noqa: BLE001 - a grader bug flags the sample, it never scores it 0
            logger.exception("grading %s crashed", task.task_id)
            result.score = None
            result.error = f"grader crashed: {type(exc).__name__}: {exc}"
            result.error_kind = "grading"
        result.duration_s = time.monotonic() - started
        timings["total_s"] = result.duration_s
        result.timings = timings
        return result

    def _grade(
        self, sandbox: Any, task: Task, workdir: str | None, timings: dict[str, float], result: DetailedGradeResult
    ) -> None:
        api = self._api()
        cid = sandbox.id
        mark = time.monotonic()
        sandbox.kill_agent_processes()
        timings["kill_s"] = time.monotonic() - mark

        mark = time.monotonic()
        inspected = api.inspect_container(cid)
        scan = scan_changes(api, cid, inspected, use_upper_dir=self.config.change_source == "auto")
        interpreter = choose_interpreter(scan, self.config.python_candidates)
        signals, pycache_touched = find_tamper_signals(scan, interpreter) if self.config.check_tamper else ([], False)
        result.interpreter, result.change_source = interpreter, scan.source
        result.pycache_isolated = pycache_touched
        timings["inspect_s"] = time.monotonic() - mark
        if signals:
            result.tamper_signals = signals
            _grade_zero(result, task)
            logger.warning("task %s: interpreter tampering, graded 0: %s", task.task_id, signals)
            return

        mark = time.monotonic()
        verifier_dir = posixpath.join(self.config.verifier_parent, f"ta-verifier-{secrets.token_hex(12)}")
        api.put_archive(cid, "/", _verifier_skeleton(task, verifier_dir))
        timings["upload_s"] = time.monotonic() - mark

        mark = time.monotonic()
        keep = str((getattr(sandbox, "server_info", None) or {}).get("pid", ""))
        n_tests = max(1, len(task.test_functions))
        per_test = max(self.config.min_per_test_timeout_s, task.limits.test_timeout_s / n_tests)
        cmd = [interpreter, "-I", "-S", "-B"]
        if pycache_touched:
            cmd += ["-X", f"pycache_prefix={verifier_dir}/pycache"]
        cmd += [f"{verifier_dir}/runner.py", verifier_dir, workdir or (inspected.get("Config") or {}).get("WorkingDir") or "/", f"{per_test:.1f}", keep]
        deadline = task.limits.test_timeout_s + self.config.startup_grace_s
        exit_code, output = _exec_with_deadline(api, cid, cmd, deadline)
        timings["run_s"] = time.monotonic() - mark
        result.exit_code = exit_code
        text = output.decode("utf-8", errors="replace")
        result.log_tail = text[-4000:]
        if exit_code is None:
            self._kill_everything(api, cid)
            raise GradingError(f"the tests ran past the grader's deadline of {deadline:.0f} s")

        mark = time.monotonic()
        out = _read_archive_dir(api, cid, f"{verifier_dir}/out")
        status_raw, report = out.get("status.json"), out.get("report.xml")
        timings["read_s"] = time.monotonic() - mark
        if status_raw is None:
            raise GradingError(f"the verifier did not start (exit {exit_code}): {text[-1500:]}")
        status = json.loads(status_raw)
        if status.get("survivors"):
            result.tamper_signals.append(f"{status['survivors']} agent process(es) survived the kill")
        if status.get("realpath") != verifier_dir:
            result.tamper_signals.append(f"verifier dir redirected to {status.get('realpath')}")
        if result.tamper_signals:  # the tests ran in a compromised container: their report does not count
            _grade_zero(result, task)
            return
        if report is None:
            raise GradingError(f"pytest wrote no report (exit {exit_code}): {text[-1500:]}")
        result.score, result.tests = score_tests(task, parse_junit(report))

    def _kill_everything(self, api: docker.APIClient, cid: str) -> None:
        try:
            exec_id = api.exec_create(cid, ["kill", "-9", "-1"], user="0")["Id"]
            api.exec_start(exec_id)
        except docker.errors.DockerException:
            logger.debug("kill after grader timeout failed", exc_info=True)


def grade_episode(sandbox: Any, task: Task, config: GradingConfig | None = None) -> DetailedGradeResult:
    """Convenience: grade with a fresh :class:`Grader`."""
    return Grader(config).grade(sandbox, task)
