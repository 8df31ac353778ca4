"""In-container pytest runner of the terminal-agent verifier.

Started by the grader, after every agent process is dead, as

    /usr/bin/python3 -I -S -B VERIFIER_DIR/runner.py VERIFIER_DIR WORKDIR PER_TEST_TIMEOUT KEEP_PIDS

``-I`` ignores PYTHON* variables and the user site, ``-S`` skips ``site`` (no ``.pth`` files, no
sitecustomize/usercustomize), ``-B`` writes no bytecode. The verifier directory is fresh, random
and root-only; it holds the pytest bundle (``bundle.zip``), the tests (``tests/``), ``pytest.ini`` and
this file. First it checks that no agent process survived the grader's kill (it kills and counts
any, skipping init and the pids in KEEP_PIDS) and removes stale verifier output; the count goes to
``out/status.json``, which the grader reads as a tamper signal. The interpreter's system package directories go LAST on ``sys.path`` so nothing there
can shadow pytest. The tests' PATH is the standard one behind ``VERIFIER_DIR/bin``, where the grader
put links to the image's own programs for every one the agent shadowed (``/usr/local/bin/python3``
in front of ``/usr/bin/python3``). Exit status: pytest's own; the JUnit report ``out/report.xml`` is the result.

A task that keeps the agent's processes (``VERIFIER_DIR/gate.json``: terminal-bench v1 runs its tests beside
them) finds them frozen, not dead: they run while the tests run, are frozen again at the start of pytest's
``sessionfinish`` (before the JUnit report is written) and killed after it; a staged file that changed while
they ran is a signal in ``out/status.json`` (``agent_gate.py``).

A task whose tests need packages of their own (``VERIFIER_DIR/runtime/``: the offline verifier runtime's manifest,
wheels and ``uv_standin.py``, whose wheel checks are used here) gets their wheels on ``sys.path`` right after the
bundle and their pytest plugins loaded with ``-p``; one that neither the runtime (a compiled wheel must fit this
interpreter) nor the image's own package dirs provide is written to ``out/status.json`` as ``missing_requirements``
and pytest does not run (the grader reports it as an infrastructure error).
"""

import os
import sys


def _system_package_dirs():
    import site  # with -S, importing site runs nothing: no .pth processing

    dirs = []
    for path in site.getsitepackages():
        if os.path.isdir(path) and path not in dirs:
            dirs.append(path)
    return dirs


class _BlockOptionalImports:
    """pytest may import these for colour/completion; never take them from agent-writable dirs."""

    blocked = ("colorama", "argcomplete")

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.blocked:
            raise ImportError(f"{fullname} is not available inside the verifier")
        return None


def _alive(pid):
    """False for zombies (already dead, waiting to be reaped) and vanished pids."""
    try:
        with open("/proc/%s/stat" % pid, "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X", b"x")


def _sweep_survivors(keep):
    """SIGKILL every process but init, us and ``keep``; return how many there were."""
    import signal
    import time

    keep = set(keep) | {1, os.getpid()}
    seen = set()
    for _ in range(100):
        pids = [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in keep and _alive(n)]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                seen.add(pid)
            except OSError:
                pass
        time.sleep(0.002)
    return len(seen)


def _remove_stale_outputs(verifier_dir):
    import glob
    import shutil

    own = os.path.realpath(verifier_dir)
    for path in glob.glob(os.path.join(os.path.dirname(own), "ta-verifier-*")) + ["/logs/verifier"]:
        if os.path.realpath(path) != own:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.unlink(path)


def _load_gate(verifier_dir, keep):
    """The agent's frozen processes (``gate.json``, staged while they were frozen), or None: they were killed."""
    import json

    path = os.path.join(verifier_dir, "gate.json")
    if not os.path.isfile(path):
        return None
    with open(path) as handle:
        job = json.load(handle)
    sys.path.insert(0, verifier_dir)
    try:
        import agent_gate
    finally:
        sys.path.remove(verifier_dir)
    return agent_gate.AgentGate(keep, job.get("frozen", []), job.get("already_stopped", []), armed=True), agent_gate


def _gate_plugin(gate, verifier_dir, status):
    """In-process pytest plugin: the tests are over at ``sessionfinish``; freeze the agent's processes before the
    JUnit writer runs and give it a fresh output dir (nothing the agent put there is read)."""
    import pytest

    class SessionGate:
        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_sessionfinish(self, session, exitstatus):
            gate.freeze({os.getsid(0)})
            _fresh_out(verifier_dir, status)
            yield

    return SessionGate()


def _fresh_out(verifier_dir, status):
    import shutil

    out = os.path.join(verifier_dir, "out")
    if os.path.islink(out) or not os.path.isdir(out):
        status.setdefault("gate_signals", []).append("the verifier's output dir was replaced while the tests ran")
        if os.path.lexists(out):
            os.unlink(out)
        os.mkdir(out, 0o700)
        return
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _write_status(verifier_dir, status):
    import json

    path = os.path.join(verifier_dir, "out", "status.json")
    if os.path.lexists(path):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(status, handle)


def _load_requirements(verifier_dir):
    """(wheel paths, pytest plugin modules, missing name -> why) of the tests' own requirements; None without any."""
    runtime = os.path.join(verifier_dir, "runtime")
    if not os.path.isfile(os.path.join(runtime, "manifest.json")):
        return None
    sys.path.insert(0, runtime)
    try:
        import uv_standin
    finally:
        sys.path.remove(runtime)
    info = uv_standin.manifest()  # compiled wheels that do not fit this interpreter become unavailable here
    missing = {name: why for name, why in info["unavailable"].items() if not uv_standin.image_has(name)}
    wheels = uv_standin.selected_wheels(info, None)
    paths = [os.path.join(runtime, "wheels", w + ".d" if uv_standin.info_compiled(w) else w) for w in wheels]
    plugins = [module for w in wheels for module in info["wheels"][w]["pytest_plugins"]]
    return paths, plugins, missing


def main(argv):
    verifier_dir, workdir, per_test_timeout = argv[1], argv[2], argv[3]
    keep = [int(p) for p in argv[4].split(",") if p.strip().isdigit()] if len(argv) > 4 else []
    loaded = _load_gate(verifier_dir, keep)
    gate = loaded[0] if loaded else None
    status = {"realpath": os.path.realpath(verifier_dir)}
    if gate is not None:
        status["gate_signals"] = gate.adopt()
        status["undumpable"] = loaded[1].make_undumpable()
        status["survivors"] = 0
    else:
        status["survivors"] = _sweep_survivors(keep)
    _remove_stale_outputs(verifier_dir)

    out = os.path.join(verifier_dir, "out")
    os.mkdir(out, 0o700)
    _write_status(verifier_dir, status)
    live = gate is not None and gate.active
    if live:  # what was staged, but the verifier dir's own entries: it is the tests' HOME (caches go there)
        skip = set(os.path.join(verifier_dir, name) for name in ("out", "tmp", "pycache"))
        gate.watch(loaded[1].tree_paths(verifier_dir, skip)[1:], "staged")
    bundle = os.path.join(verifier_dir, "bundle.zip")
    tests = os.path.join(verifier_dir, "tests")
    report = os.path.join(verifier_dir, "out", "report.xml")

    requirements = _load_requirements(verifier_dir)
    if requirements is not None and requirements[2]:
        status["missing_requirements"] = requirements[2]
        _write_status(verifier_dir, status)
        if gate is not None:
            gate.kill_all()
        return 3
    wheel_paths, plugin_modules = requirements[:2] if requirements is not None else ([], [])

    stdlib = [p for p in sys.path if p and not p.endswith(("site-packages", "dist-packages"))]
    sys.path[:] = [bundle] + wheel_paths + stdlib + _system_package_dirs()
    sys.meta_path.insert(0, _BlockOptionalImports())

    for key in list(os.environ):
        if key.startswith(("PYTHON", "PYTEST", "COV_", "LD_")) or key in ("BASH_ENV", "ENV", "HOME"):
            del os.environ[key]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ["HOME"] = verifier_dir
    os.environ["TEST_DIR"] = tests  # terminal-bench's name for the tests folder (its compose files set it)
    # the verifier's own bin dir first: links to the image's programs that the agent shadowed
    os.environ["PATH"] = os.path.join(verifier_dir, "bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    try:
        os.chdir(workdir)
    except OSError:
        os.chdir("/")

    import pytest

    plugins = [_gate_plugin(gate, verifier_dir, status)] if live else []
    args = [
        "-c", os.path.join(verifier_dir, "pytest.ini"),
        "--rootdir", tests,
        "--confcutdir", tests,
        "-p", "no:cacheprovider",
        "-p", "pytest_timeout",
        "--timeout", per_test_timeout,
        "--junitxml", report,
        "--basetemp", os.path.join(verifier_dir, "tmp"),
        "-o", "junit_family=xunit2",
        "-q", "--color=no", "-rN",
        tests,
    ]
    for module in plugin_modules:
        args[:0] = ["-p", module]
    if not live:
        code = int(pytest.main(args))
        if gate is not None:  # what the agent had stopped itself stays stopped until here
            gate.kill_all()
        return code
    gate.thaw()
    try:
        code = int(pytest.main(args, plugins=plugins))
    finally:
        gate.freeze(set())
        gate.kill_all()
    status["gate"] = gate.verdict()
    if os.path.realpath(verifier_dir) != status["realpath"]:
        status["gate_signals"].append("the verifier dir was replaced while the tests ran")
    if os.path.islink(out) or not os.path.isdir(out):
        _fresh_out(verifier_dir, status)
    _write_status(verifier_dir, status)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
