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
"""

from __future__ import annotations

import fnmatch
import io
import json
import logging
import os
import posixpath
import secrets
import tarfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Literal

import docker
import docker.errors
from pydantic import BaseModel, ConfigDict, Field

from terminal_agent.errors import GradingError, SandboxError
from terminal_agent.interfaces import GradeResult, TestOutcome
from terminal_agent.rewards.verifier_bundle import get_bundle, runner_source
from terminal_agent.tasks.model import Task

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


# --- tamper detection --------------------------------------------------------------------------
@dataclass
class Change:
    """One path the agent added, changed or deleted, relative to the image."""

    path: str
    kind: str
    """``A`` added, ``C`` changed, ``D`` deleted."""
    is_dir: bool = False


@dataclass
class ChangeScan:
    changes: list[Change]
    source: str
    """``upperdir`` (read on the host) or ``diff`` (``docker diff`` through the API)."""
    lower_dirs: list[str] = field(default_factory=list)

    def in_image(self, path: str) -> bool | None:
        """Whether ``path`` exists in the image; ``None`` when the layers cannot be read."""
        if not self.lower_dirs:
            return None
        return any(os.path.lexists(lower + path) for lower in self.lower_dirs)


def scan_changes(
    api: docker.APIClient, container_id: str, info: dict[str, Any] | None = None, use_upper_dir: bool = True
) -> ChangeScan:
    """The agent's filesystem changes: the overlay upper dir when this host can read it, else ``docker diff``."""
    info = info or api.inspect_container(container_id)
    graph = info.get("GraphDriver") or {}
    data = graph.get("Data") or {}
    upper = data.get("UpperDir")
    if use_upper_dir and graph.get("Name") == "overlay2" and upper and os.path.isdir(upper):
        lowers = [d for d in (data.get("LowerDir") or "").split(":") if d]
        return ChangeScan(_walk_upper(upper, lowers), "upperdir", lowers)
    entries = api.diff(container_id) or []
    kinds = {0: "C", 1: "A", 2: "D"}
    paths = [e["Path"] for e in entries]
    parents = {posixpath.dirname(p) for p in paths}
    return ChangeScan([Change(e["Path"], kinds.get(e["Kind"], "C"), e["Path"] in parents) for e in entries], "diff")


# Only these parts of the filesystem matter to the verifier; the walk skips the rest, so an agent
# that wrote 100k files into /app or dist-packages costs the grader nothing.
_WATCHED_TREES = ("/usr/bin", "/usr/local/bin", "/usr/lib/python3.*", "/usr/local/lib/python3.*")
_WATCHED_FILES_IN = ("/etc",)


def _watched_dir(path: str) -> bool:
    parts = path.strip("/").split("/")
    for pattern in _WATCHED_TREES + _WATCHED_FILES_IN:
        pattern_parts = pattern.strip("/").split("/")
        shared = min(len(parts), len(pattern_parts))
        if not all(fnmatch.fnmatch(parts[i], pattern_parts[i]) for i in range(shared)):
            continue
        if len(parts) <= len(pattern_parts):
            return True  # an ancestor of a watched place, or the place itself
        if pattern in _WATCHED_TREES and not any(part in _PACKAGE_DIRS for part in parts[len(pattern_parts):]):
            return True
    return False


def _walk_upper(upper: str, lowers: list[str]) -> list[Change]:
    changes: list[Change] = []
    for root, dirs, files in os.walk(upper):
        rel_root = "/" + os.path.relpath(root, upper).lstrip(".").lstrip("/")
        for name in dirs + files:
            full = os.path.join(root, name)
            path = posixpath.join(rel_root, name)
            st = os.lstat(full)
            if (st.st_mode & 0o170000) == 0o020000 and st.st_rdev == 0:  # overlay whiteout
                changes.append(Change(path, "D"))
                continue
            existed = any(os.path.lexists(lower + path) for lower in lowers)
            is_dir = os.path.isdir(full) and not os.path.islink(full)
            if is_dir:
                opaque = False
                try:
                    opaque = os.getxattr(full, "trusted.overlay.opaque", follow_symlinks=False) == b"y"
                except OSError:
                    pass
                if not existed or opaque:
                    changes.append(Change(path, "A" if not existed else "C", True))
                continue
            changes.append(Change(path, "C" if existed else "A"))
        dirs[:] = [d for d in dirs if _watched_dir(posixpath.join(rel_root, d))]  # recurse only where it matters
    return changes


_STDLIB_TREES = ("/usr/lib/python3.*", "/usr/local/lib/python3.*")
_PACKAGE_DIRS = ("site-packages", "dist-packages")


def _under_stdlib(path: str) -> bool:
    parts = path.strip("/").split("/")
    if len(parts) < 3:
        return False
    root = "/" + "/".join(parts[:3])
    if not any(fnmatch.fnmatch(root, pattern) for pattern in _STDLIB_TREES):
        return False
    return not any(part in _PACKAGE_DIRS for part in parts[3:])


def find_tamper_signals(scan: ChangeScan, interpreter: str) -> tuple[list[str], bool]:
    """(tamper signals, stdlib bytecode touched) for the changes in ``scan``.

    Signals: the chosen interpreter or any ``python3*`` next to it changed or deleted, anything
    changed, added or deleted in the interpreter's standard library (packages dirs excepted),
    ``/etc/ld.so.preload`` present, or a directory on the interpreter's path replaced.
    Bytecode (``__pycache__``) in the standard library is not a signal: the verifier then ignores
    every cached bytecode file (``-X pycache_prefix``) instead.
    """
    signals: list[str] = []
    pycache_touched = False
    bin_dir = posixpath.dirname(interpreter)
    ancestors = set()
    current = bin_dir
    while current not in ("/", ""):
        ancestors.add(current)
        current = posixpath.dirname(current)
    for change in scan.changes:
        path = change.path
        if path == "/etc/ld.so.preload" and change.kind != "D":
            signals.append(f"{change.kind} {path} (preloads a library into every process)")
        elif posixpath.dirname(path) == bin_dir and posixpath.basename(path).startswith("python3"):
            if change.kind != "A":
                signals.append(f"{change.kind} {path} (interpreter)")
        elif _under_stdlib(path):
            if "__pycache__" in path.split("/"):
                pycache_touched = True
            elif not change.is_dir or change.kind != "C":
                signals.append(f"{change.kind} {path} (standard library)")
        elif path in ancestors and (change.kind == "D" or not change.is_dir):
            signals.append(f"{change.kind} {path} (directory on the interpreter's path replaced)")
    return signals, pycache_touched


def choose_interpreter(scan: ChangeScan, candidates: list[str]) -> str:
    added = {c.path for c in scan.changes if c.kind == "A"}
    for candidate in candidates:
        shipped = scan.in_image(candidate)
        if shipped is None:
            if candidate not in added:
                return candidate
        elif shipped:
            return candidate
    raise GradingError(f"the task image ships none of {candidates}: the verifier needs a python3")


# --- junit -------------------------------------------------------------------------------------
def parse_junit(xml_bytes: bytes) -> dict[str, list[tuple[bool, str]]]:
    """Bare test function name -> [(passed, message)] for every reported test case."""
    try:
        root = ET.fromstring(xml_bytes)
    except ET.ParseError as exc:
        raise GradingError(f"the JUnit report does not parse: {exc}") from None
    results: dict[str, list[tuple[bool, str]]] = {}
    for case in root.iter("testcase"):
        name = (case.get("name") or "").split("[", 1)[0]
        if not name:
            continue
        bad = [child for child in case if child.tag in ("failure", "error", "skipped")]
        message = (bad[0].get("message") or bad[0].tag)[:500] if bad else ""
        results.setdefault(name, []).append((not bad, message))
    return results


def score_tests(task: Task, reported: dict[str, list[tuple[bool, str]]]) -> tuple[float, list[TestOutcome]]:
    """Weighted score over every declared test; tests without a weight count with weight 0."""
    outcomes: list[TestOutcome] = []
    for name in task.test_functions:
        weight = float(task.test_weights.get(name, 0.0))
        runs = reported.get(name)
        if not runs:
            outcomes.append(TestOutcome(name, weight, passed=False, reported=False, message="not reported"))
            continue
        passed = all(ok for ok, _ in runs)
        message = next((msg for ok, msg in runs if not ok), "")
        outcomes.append(TestOutcome(name, weight, passed=passed, message=message))
    total = sum(o.weight for o in outcomes)
    score = sum(o.weight for o in outcomes if o.passed) / total if total > 0 else 0.0
    return score, outcomes


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
    api: docker.APIClient, container_id: str, cmd: list[str], workdir: str, deadline_s: float
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
            _, result.tests = score_tests(task, {})
            result.score = 0.0
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
        exit_code, output = _exec_with_deadline(api, cid, cmd, "/", deadline)
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
            _, result.tests = score_tests(task, {})
            result.score = 0.0
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
