"""The offline verifier runtime's ``sys.path``, run on this host's interpreter as the verifier runs it in a sandbox
(``PYTHON -I -S -B runtime/uv_standin.py TOOL ARGS``), no Docker needed.

Python puts the working directory first for ``python -m pytest`` (Harbor runs test.sh in the task's WORKDIR, so a test
imports a module shipped there) and nothing for the console ``pytest``; the runtime does the same, and never lets a
module planted in the working directory stand in for its own pytest stack, the standard library or the tests' files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from terminal_agent.rewards.verifier_bundle import get_bundle

PLUGIN_WHEEL = "grader_plugin-1.0-py3-none-any.whl"

TEST_IMPORTING_THE_WORKDIR = textwrap.dedent(
    """\
    import sys


    def test_imports_the_module_shipped_in_the_workdir():
        import shipped_helper

        assert shipped_helper.ANSWER == 42


    def test_sys_path_starts_where_python_starts_it():
        import os

        # pytest put the tests' dir in front (its prepend import mode); Python's own first entry follows
        assert sys.path[:2] == [os.path.dirname(__file__), os.environ["EXPECTED_FIRST"]]
    """
)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Path:
    """A verifier dir with the runtime as the grader lays it out: bin wrappers, runtime/{uv_standin.py, bundle.zip,
    manifest.json, pytest.ini}."""
    vdir = tmp_path_factory.mktemp("vdir")
    (vdir / "runtime" / "wheels").mkdir(parents=True)
    (vdir / "bin").mkdir()
    source = resources.files("terminal_agent.rewards").joinpath("assets", "uv_standin.py").read_bytes()
    (vdir / "runtime" / "uv_standin.py").write_bytes(source)
    (vdir / "runtime" / "bundle.zip").write_bytes(get_bundle().data)
    (vdir / "runtime" / "pytest.ini").write_text("[pytest]\n")
    # a pure wheel with a pytest plugin, as the CTRF plugin reaches the tests (zipimport, `-p grader_plugin`)
    with zipfile.ZipFile(vdir / "runtime" / "wheels" / PLUGIN_WHEEL, "w") as wheel:
        wheel.writestr("grader_plugin.py", "def pytest_report_header():\n    return 'REAL grader plugin'\n")
    (vdir / "runtime" / "manifest.json").write_text(json.dumps(
        {"interpreter": sys.executable, "host_pytest": "", "provided": {"grader-plugin": [PLUGIN_WHEEL]},
         "bundled": ["pytest"], "unavailable": {},
         "wheels": {PLUGIN_WHEEL: {"distribution": "grader-plugin", "version": "1.0", "pytest_plugins": ["grader_plugin"],
                                   "console_scripts": [], "compiled": False}}}))
    for name, tool in (("python", "python"), ("python3", "python"), ("pytest", "pytest"), ("uv", "uv")):
        wrapper = vdir / "bin" / name
        wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S -B {vdir}/runtime/uv_standin.py {tool} "$@"\n')
        wrapper.chmod(0o755)
    return vdir


def task_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """(the task's working directory with a module in it, the tests dir elsewhere)."""
    workdir, tests = tmp_path / "app", tmp_path / "tests"
    workdir.mkdir()
    tests.mkdir()
    (workdir / "shipped_helper.py").write_text("ANSWER = 42\n")
    (tests / "test_outputs.py").write_text(TEST_IMPORTING_THE_WORKDIR)
    return workdir, tests


def run(runtime: Path, command: str, cwd: Path, expected_first: str = "", log: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": f"{runtime}/bin:/usr/bin:/bin", "EXPECTED_FIRST": expected_first,
           "TA_VERIFIER_LOG": str(log or cwd.parent / "verifier.log"), "HOME": str(cwd)}
    return subprocess.run(["sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", ["python -m pytest", "python3 -m pytest", "uv run python -m pytest",
                                     "python -B -W default -m pytest"])
def test_python_m_pytest_puts_the_working_directory_first(runtime, tmp_path, command):
    workdir, tests = task_dirs(tmp_path)
    result = run(runtime, f"{command} -q -p no:cacheprovider {tests}/test_outputs.py", workdir, str(workdir))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_the_console_pytest_does_not(runtime, tmp_path):
    workdir, tests = task_dirs(tmp_path)
    result = run(runtime, f"pytest -q -p no:cacheprovider {tests}/test_outputs.py", workdir, str(workdir))
    assert result.returncode == 1
    assert "ModuleNotFoundError: No module named 'shipped_helper'" in result.stdout
    assert "1 passed, 2 failed" not in result.stdout and "2 failed" in result.stdout  # sys.path[0] is not the workdir


def test_python_p_leaves_the_working_directory_out_as_python_does(runtime, tmp_path):
    workdir, tests = task_dirs(tmp_path)
    result = run(runtime, f"python -P -m pytest -q -p no:cacheprovider {tests}/test_outputs.py", workdir)
    assert "No module named 'shipped_helper'" in result.stdout, result.stdout + result.stderr


PLANTED = {
    # each would make every test pass (or report passes) if it were imported in place of the real one
    "pytest.py": "import sys\nprint('PLANTED pytest')\ndef main(*a, **k):\n    return 0\nsys.exit(0)\n",
    "_pytest/__init__.py": "raise SystemExit('PLANTED _pytest')\n",
    "pluggy.py": "raise SystemExit('PLANTED pluggy')\n",
    "iniconfig.py": "raise SystemExit('PLANTED iniconfig')\n",
    "json.py": "raise SystemExit('PLANTED json')\n",
    "xml/__init__.py": "raise SystemExit('PLANTED xml')\n",
    "doctest.py": "raise SystemExit('PLANTED doctest')\n",
    "helpers.py": "def check():\n    return True\n",  # the tests' own helper module, shadowed by a lenient one
    "ta_session_gate.py": "raise SystemExit('PLANTED gate')\n",
}


@pytest.mark.parametrize("command", ["python -m pytest", "uv run python -m pytest"])
def test_nothing_planted_in_the_working_directory_replaces_the_runtime_or_the_tests(runtime, tmp_path, command):
    workdir, tests = task_dirs(tmp_path)
    for relative, text in PLANTED.items():
        (workdir / relative).parent.mkdir(parents=True, exist_ok=True)
        (workdir / relative).write_text(text)
    (tests / "helpers.py").write_text("def check():\n    return False\n")
    (tests / "test_outputs.py").write_text(TEST_IMPORTING_THE_WORKDIR + textwrap.dedent(
        """\


        def test_the_tests_own_helper_wins():
            import helpers

            assert helpers.check()
        """))
    log = tmp_path / "verifier.log"
    result = run(runtime, f"{command} -q -p no:cacheprovider --junitxml {tmp_path}/junit.xml -p doctest "
                          f"{tests}/test_outputs.py", workdir, str(workdir), log)
    output = result.stdout + result.stderr
    assert "PLANTED" not in output, output
    # the real pytest ran: the workdir module imports, the tests' own helper (which fails) is the one imported
    assert "1 failed, 2 passed" in result.stdout and "assert False" in result.stdout, output
    assert result.returncode == 1
    assert '<testcase classname="test_outputs" name="test_the_tests_own_helper_wins"' in (tmp_path / "junit.xml").read_text()
    refused = [json.loads(line)["message"] for line in log.read_text().splitlines()]
    assert any("pytest.py" in message and "not imported as 'pytest'" in message for message in refused), refused


def test_the_shadow_guard_holds_for_pytests_assertion_rewriter(runtime, tmp_path):
    # pytest's rewriting hook looks `-p` plugins up itself (PathFinder over sys.path, ahead of every other finder):
    # a plugin module planted in the workdir must still not replace the runtime's, which sits in a zip behind it
    workdir, tests = task_dirs(tmp_path)
    (workdir / "grader_plugin.py").write_text("raise SystemExit('PLANTED plugin')\n")
    (tests / "test_outputs.py").write_text("def test_ok():\n    assert True\n")
    result = run(runtime, f"python -m pytest {tests}/test_outputs.py", workdir)
    assert "PLANTED" not in result.stdout + result.stderr and "REAL grader plugin" in result.stdout, result.stdout
    assert result.returncode == 0


def test_python_script_gets_its_own_directory_first(runtime, tmp_path):
    workdir, tests = task_dirs(tmp_path)
    (tests / "sibling.py").write_text("VALUE = 'sibling'\n")
    (tests / "check.py").write_text("import sys, sibling\nprint(sys.path[0], sibling.VALUE)\n")
    result = run(runtime, f"uv run python {tests}/check.py", workdir)
    assert result.stdout.split() == [str(tests), "sibling"], result.stdout + result.stderr


def test_other_python_command_lines_run_the_interpreter_as_is(runtime, tmp_path):
    workdir, _ = task_dirs(tmp_path)
    result = run(runtime, "python -c 'import sys, shipped_helper; print(repr(sys.path[0]), shipped_helper.ANSWER)'", workdir)
    assert result.stdout.split() == ["''", "42"], result.stdout + result.stderr
    assert os.path.isdir(workdir)
