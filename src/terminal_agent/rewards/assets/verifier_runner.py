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


def main(argv):
    verifier_dir, workdir, per_test_timeout = argv[1], argv[2], argv[3]
    keep = [int(p) for p in argv[4].split(",") if p.strip().isdigit()] if len(argv) > 4 else []
    survivors = _sweep_survivors(keep)
    _remove_stale_outputs(verifier_dir)
    import json

    out = os.path.join(verifier_dir, "out")
    os.mkdir(out, 0o700)
    with open(os.path.join(out, "status.json"), "w") as handle:
        json.dump({"survivors": survivors, "realpath": os.path.realpath(verifier_dir)}, handle)
    bundle = os.path.join(verifier_dir, "bundle.zip")
    tests = os.path.join(verifier_dir, "tests")
    report = os.path.join(verifier_dir, "out", "report.xml")

    stdlib = [p for p in sys.path if p and not p.endswith(("site-packages", "dist-packages"))]
    sys.path[:] = [bundle] + stdlib + _system_package_dirs()
    sys.meta_path.insert(0, _BlockOptionalImports())

    for key in list(os.environ):
        if key.startswith(("PYTHON", "PYTEST", "COV_", "LD_")) or key in ("BASH_ENV", "ENV", "HOME"):
            del os.environ[key]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ["HOME"] = verifier_dir
    # the verifier's own bin dir first: links to the image's programs that the agent shadowed
    os.environ["PATH"] = os.path.join(verifier_dir, "bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    try:
        os.chdir(workdir)
    except OSError:
        os.chdir("/")

    import pytest

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
    return int(pytest.main(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
