"""The Harbor verifier mode: reward files, CTRF, the offline runtime, and the grader against real containers.

The tasks are built here (no third-party task is copied): a TB2-style ``tests/test.sh`` (apt-get, the uv
installer piped to sh, ``source $HOME/.local/bin/env``, ``uvx -p 3.13 -w pytest==8.4.1 -w
pytest-json-ctrf==0.3.5 pytest --ctrf ...``, ``echo 1 > /logs/verifier/reward.txt``) graded with no network,
reward.json, CTRF with weights, a ``-w`` tool the host fetches, a binary fixture, a verifier user and env,
a separate verifier environment, and verifiers that need the network, crash, hang or write no reward.
"""

from __future__ import annotations

import hashlib
import os
import sys
import textwrap

import pytest

from terminal_agent.errors import GradingError
from terminal_agent.rewards.grading import GradingConfig
from terminal_agent.rewards.grading_modes import GRADING_MODES, GraderSettings, ModeGraders
from terminal_agent.rewards.harbor.ctrf_scoring import CtrfTest, parse_ctrf, score_ctrf
from terminal_agent.rewards.harbor.reward_files import parse_reward_json, parse_reward_text, read_reward
from terminal_agent.rewards.harbor.verifier import HarborGrader
from terminal_agent.rewards.harbor_config import HarborGradingConfig
from terminal_agent.rewards.verifier_runtime import ToolUnavailable, fetch_tool, parse_requirement, scan_scripts
from terminal_agent.tasks.model import GradingMode, Task, TaskLimits, VerifierSpec

DOCKERFILE = "FROM terminal-agent/base:bookworm\nWORKDIR /app\n"

TB2_TEST_SH = textwrap.dedent(
    """\
    #!/bin/bash
    apt-get update
    apt-get install -y curl
    curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
    source $HOME/.local/bin/env

    if [ "$PWD" = "/" ]; then
        echo "Error: No working directory set."
        exit 1
    fi

    uvx \\
      -p 3.13 \\
      -w pytest==8.4.1 \\
      -w pytest-json-ctrf==0.3.5 \\
      pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA

    if [ $? -eq 0 ]; then
      echo 1 > /logs/verifier/reward.txt
    else
      echo 0 > /logs/verifier/reward.txt
    fi
    """
)

ANSWER_TESTS = textwrap.dedent(
    """\
    import os


    def test_answer_exists():
        assert os.path.isfile("/app/answer.txt")


    def test_answer_value():
        with open("/app/answer.txt") as handle:
            assert handle.read().strip() == "42"


    def test_notes():
        assert os.path.isfile("/app/notes.txt")
    """
)


def harbor_task(test_sh: str = TB2_TEST_SH, source: str = ANSWER_TESTS, **fields) -> Task:
    verifier = fields.pop("verifier", VerifierSpec(mode=GradingMode.HARBOR))
    support = {"test.sh": test_sh, **fields.pop("support", {})}
    limits = fields.pop("limits", TaskLimits(network=False, test_timeout_s=60))
    return Task(task_id=fields.pop("task_id", "harbor-unit"), instruction="Write 42 to /app/answer.txt.",
                dockerfile=fields.pop("dockerfile", DOCKERFILE), test_source=source, test_support_files=support,
                verifier=verifier, limits=limits, **fields)


def simple_sh(body: str) -> str:
    return "#!/bin/bash\n" + textwrap.dedent(body)


# --- reward files and CTRF ------------------------------------------------------------------------
def test_reward_text_is_a_float_and_anything_else_is_a_grading_error():
    assert parse_reward_text(b" 1\n").reward == 1.0
    assert parse_reward_text(b"0.25").rewards == {"reward": 0.25}
    for bad in (b"", b"  ", b"pass", b"1,0", b"nan", b"inf", b"\xff"):
        with pytest.raises(GradingError):
            parse_reward_text(bad)


def test_reward_json_takes_its_reward_key_or_the_mean_and_wins_over_text():
    assert parse_reward_json(b'{"reward": 0.5, "style": 1}').reward == 0.5
    assert parse_reward_json(b'{"correct": 1, "speed": 0}').reward == 0.5
    assert read_reward(b'{"reward": 1}', b"0").source == "reward.json"
    assert read_reward(None, b"0").reward == 0.0
    for bad in (b"", b"[1]", b"{}", b'{"reward": "1"}', b'{"reward": true}', b"{", b'{"reward": NaN}'):
        with pytest.raises(GradingError):
            parse_reward_json(bad)
    with pytest.raises(GradingError, match="no reward file"):
        read_reward(None, None)


def test_ctrf_partial_credit_matches_weights_by_full_or_bare_name():
    tests = [CtrfTest("test_outputs.py::test_a", "passed"), CtrfTest("test_outputs.py::TestB::test_b", "failed", "boom"),
             CtrfTest("test_outputs.py::test_c", "skipped"), CtrfTest("test_outputs.py::test_extra", "passed")]
    score, outcomes = score_ctrf({"test_a": 2.0, "TestB::test_b": 1.0, "test_outputs.py::test_c": 1.0, "test_gone": 1.0}, tests)
    assert score == pytest.approx(2.0 / 5.0)
    by_name = {o.name: o for o in outcomes}
    assert by_name["test_a"].passed and not by_name["TestB::test_b"].passed and by_name["TestB::test_b"].message == "boom"
    assert not by_name["test_outputs.py::test_c"].passed
    assert not by_name["test_gone"].reported
    assert by_name["test_outputs.py::test_extra"].weight == 0.0  # reported, unweighted


def test_a_parametrized_test_passes_only_when_every_case_passed():
    tests = [CtrfTest("t.py::test_p", "passed"), CtrfTest("t.py::test_p", "failed")]
    assert score_ctrf({"test_p": 1.0}, tests)[0] == 0.0


def test_a_report_that_is_not_ctrf_is_a_grading_error():
    for bad in (b"{", b"[]", b'{"results": {}}', b'{"results": {"tests": [{"name": 1}]}}'):
        with pytest.raises(GradingError):
            parse_ctrf(bad)


# --- what the scripts ask for ---------------------------------------------------------------------
def test_tb2_script_asks_for_pytest_and_the_ctrf_plugin():
    found = scan_scripts({"test.sh": TB2_TEST_SH}, "pytest-json-ctrf==0.3.5")
    assert [(r.name, r.pinned, r.origin) for r in found] == [
        ("pytest", "8.4.1", "uvx -w"), ("pytest-json-ctrf", "0.3.5", "uvx -w"), ("pytest", None, "uvx tool"),
    ]


def test_requirements_of_pip_uv_run_and_ctrf_without_a_pin():
    script = textwrap.dedent(
        """\
        pip3 install --break-system-packages -i https://x.example/simple pytest==8.4.1 rdflib==7.1.4 # comment
        uv run --with tabulate==0.9.0,six pytest -q && python3 -m pip install attrs
        FOO=1 uvx --from ruff@0.5.0 ruff check .
        pytest --ctrf /logs/verifier/ctrf.json /tests
        """
    )
    names = [r.spec for r in scan_scripts({"test.sh": script, "data.bin": b"\0uvx -w evil"}, "pytest-json-ctrf==0.3.5")]
    assert names == ["pytest==8.4.1", "rdflib==7.1.4", "tabulate==0.9.0", "six", "attrs", "ruff==0.5.0",
                     "pytest-json-ctrf==0.3.5"]
    assert parse_requirement("https://x/y.whl", "pip install") is None
    assert parse_requirement("./local", "pip install") is None


# --- the grading-mode registry ----------------------------------------------------------------------
def test_grading_modes_pick_the_grader_by_the_tasks_mode():
    from terminal_agent.rewards.weighted_pytest.grader import Grader

    assert GRADING_MODES.names() == ["harbor", "weighted_pytest"]
    graders = ModeGraders(GraderSettings())
    assert isinstance(graders.for_task(harbor_task()), HarborGrader)
    weighted = Task(task_id="w", instruction="x", dockerfile=DOCKERFILE, test_source="def test_a():\n    pass\n",
                    test_weights={"test_a": 1.0})
    assert isinstance(graders.for_task(weighted), Grader)
    assert graders.for_task(harbor_task()) is graders.for_task(harbor_task())


def test_harbor_settings_live_in_the_grading_config():
    config = GradingConfig.model_validate({"harbor": {"network": "offline", "isolate_home": False}})
    assert config.harbor.network == "offline" and not config.harbor.isolate_home
    with pytest.raises(ValueError):
        GradingConfig.model_validate({"harbor": {"network": "sometimes"}})


# --- real containers ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def image(docker_client):
    from terminal_agent.sandbox.backends import resolve_task_image
    from terminal_agent.sandbox.config import SandboxConfig

    return resolve_task_image(SandboxConfig(), harbor_task())


@pytest.fixture()
def grade(image):
    """grade(task, setup_command=None, grader=None) in a fresh container of the base image."""
    from terminal_agent.sandbox.backends import start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig

    started = []

    def run(task: Task, setup: str | None = None, grader: HarborGrader | None = None):
        sandbox = start_sandbox(SandboxConfig(), image, task.limits, run_id="test-grading-harbor")
        started.append(sandbox)
        if setup:
            assert sandbox.exec(setup, timeout=30).ok
        return (grader or HarborGrader(sandbox_config=SandboxConfig(), run_id="test-grading-harbor")).grade(sandbox, task)

    yield run
    for sandbox in started:
        sandbox.close()


SOLVE = "echo 42 > /app/answer.txt && touch /app/notes.txt"


@pytest.fixture(params=["docker", "bwrap"])
def grade_on_each_backend(request, docker_client):
    """Like ``grade``, on each sandbox backend (the grader sees only the Sandbox contract)."""
    from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig

    if request.param == "bwrap":
        from bwrap_support import bwrap_config

        config = bwrap_config([harbor_task()])
    else:
        config = SandboxConfig()
    image = resolve_task_image(config, harbor_task())
    started = []

    def run(task: Task, setup: str | None = None, grading: GradingConfig | None = None):
        sandbox = start_sandbox(config, image, task.limits, run_id="test-grading-harbor")
        started.append(sandbox)
        if setup:
            assert sandbox.exec(setup, timeout=30).ok
        return HarborGrader(grading, sandbox_config=config, run_id="test-grading-harbor").grade(sandbox, task)

    run.backend = request.param

    yield run
    for sandbox in started:
        sandbox.close()


@pytest.mark.docker
def test_tb2_style_verifier_grades_offline_one_with_the_work_done(grade_on_each_backend):
    result = grade_on_each_backend(harbor_task(), SOLVE)
    assert result.scored, (result.error, result.log_tail)
    assert result.score == 1.0 and result.verifier["reward_source"] == "reward.txt" and result.verifier["rewards"] == {"reward": 1.0}
    assert result.verifier["runtime"] == "offline" and result.verifier["verifier_network"] is False
    assert {t.name.split("::")[-1]: t.passed for t in result.tests} == {
        "test_answer_exists": True, "test_answer_value": True, "test_notes": True}
    assert any(s.startswith("pytest==8.4.1 -> host pytest") for s in result.verifier["substitutions"]), result.verifier["substitutions"]
    assert any(s.startswith("python 3.13 -> the image's python") for s in result.verifier["substitutions"]), result.verifier["substitutions"]
    assert any("uv installer" in s for s in result.verifier["skipped"]) and any("apt-get install curl" in s for s in result.verifier["skipped"])
    info = result.to_info()
    assert info["mode"] == "harbor" and info["scored"] is True


@pytest.mark.docker
def test_tb2_style_verifier_grades_zero_without_the_work(grade_on_each_backend):
    result = grade_on_each_backend(harbor_task(), "echo 41 > /app/answer.txt")
    assert result.scored, result.error
    assert result.score == 0.0
    assert {t.name.split("::")[-1]: t.passed for t in result.tests} == {
        "test_answer_exists": True, "test_answer_value": False, "test_notes": False}


@pytest.mark.docker
def test_ctrf_with_weights_gives_partial_credit_where_the_reward_file_says_zero(grade):
    task = harbor_task(test_weights={"test_answer_exists": 1.0, "test_answer_value": 2.0, "test_notes": 1.0})
    result = grade(task, "echo 42 > /app/answer.txt")
    assert result.scored, (result.error, result.log_tail)
    assert result.score == pytest.approx(0.75) and result.verifier["reward_source"] == "ctrf"
    assert result.verifier["harbor_reward"] == 0.0  # what Harbor itself would give: all or nothing
    assert [(t.name, t.passed) for t in result.tests] == [
        ("test_answer_exists", True), ("test_answer_value", True), ("test_notes", False)]


@pytest.mark.docker
def test_reward_json_with_several_keys(grade):
    sh = simple_sh(
        """\
        n=0
        [ -f /app/answer.txt ] && n=1
        printf '{"reward": %s, "style": 0.5}' "$n" > /logs/verifier/reward.json
        echo 0 > /logs/verifier/reward.txt
        """
    )
    result = grade(harbor_task(sh, ""), SOLVE)
    assert result.scored and result.score == 1.0 and result.verifier["reward_source"] == "reward.json", (result.error, result.log_tail)
    assert result.verifier["rewards"] == {"reward": 1.0, "style": 0.5}


def _require_tool(spec: str) -> None:
    from terminal_agent.rewards.verifier_runtime import parse_requirement as parse

    try:
        fetch_tool(parse(spec, "uvx -w"), HarborGradingConfig())
    except ToolUnavailable as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the host cannot fetch {spec}: {exc}")


@pytest.mark.docker
def test_a_tool_named_with_w_is_fetched_by_the_host_with_its_dependencies(grade):
    # rdflib (pure Python) needs pyparsing: both come from the host, neither is in the image
    _require_tool("rdflib==7.1.4")
    source = textwrap.dedent(
        """\
        import rdflib


        def test_graph():
            graph = rdflib.Graph().parse(data="@prefix ex: <http://e.x/> . ex:a ex:b ex:c .", format="turtle")
            assert rdflib.__version__ == "7.1.4" and len(graph) == 1
        """
    )
    sh = TB2_TEST_SH.replace("-w pytest-json-ctrf==0.3.5 \\", "-w pytest-json-ctrf==0.3.5 -w rdflib==7.1.4 \\")
    assert "rdflib" in sh
    result = grade(harbor_task(sh, source))
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    # without -w the same tests fail: the image has no rdflib and nothing else provides it
    result = grade(harbor_task(TB2_TEST_SH, source))
    assert result.scored and result.score == 0.0, (result.error, result.log_tail)


@pytest.mark.docker
def test_a_compiled_tool_is_fetched_for_the_hosts_python_and_runs_where_the_image_matches(grade):
    # numpy has no pure-Python wheel (13 of TB2's 89 test.sh files ask for it): the host fetches the wheel for its
    # own interpreter, ships it unpacked, and the stand-in uses it where the image's python fits its tags
    _require_tool("numpy==2.3.3")
    source = textwrap.dedent(
        """\
        import numpy


        def test_eigenvalues():
            assert numpy.__version__ == "2.3.3"
            assert sorted(numpy.linalg.eigvalsh(numpy.array([[2.0, 0.0], [0.0, 3.0]])).round(6)) == [2.0, 3.0]
        """
    )
    sh = TB2_TEST_SH.replace("-w pytest-json-ctrf==0.3.5 \\", "-w pytest-json-ctrf==0.3.5 -w numpy==2.3.3 \\")
    assert "numpy" in sh
    result = grade(harbor_task(sh, source))
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert len(result.tests) == 1 and result.tests[0].passed


def test_a_compiled_wheel_fits_only_its_own_python_and_platform():
    import importlib.util
    import platform
    from importlib import resources

    path = resources.files("terminal_agent.rewards").joinpath("assets", "uv_standin.py")
    spec = importlib.util.spec_from_file_location("uv_standin_probe", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    here = "cp%d%d" % sys.version_info[:2]
    machine = platform.machine()
    assert module.wheel_fits(f"numpy-2.3.3-{here}-{here}-manylinux_2_27_{machine}.manylinux_2_28_{machine}.whl") is None
    assert module.wheel_fits(f"x-1.0-cp38-abi3-manylinux2014_{machine}.whl") is None
    assert "built for cp313" in module.wheel_fits(f"numpy-2.3.3-cp313-cp313-manylinux_2_28_{machine}.whl")
    assert "glibc" in module.wheel_fits(f"numpy-2.3.3-{here}-{here}-manylinux_9_99_{machine}.whl")
    assert module.wheel_fits(f"numpy-2.3.3-{here}-{here}-macosx_14_0_arm64.whl") is not None
    info = {"wheels": {"a-1-cp313-cp313-linux_x86_64.whl": {"compiled": True}, "b-1-py3-none-any.whl": {"compiled": False}},
            "provided": {"a": ["a-1-cp313-cp313-linux_x86_64.whl", "b-1-py3-none-any.whl"], "b": ["b-1-py3-none-any.whl"]},
            "unavailable": {}}
    if sys.version_info[:2] != (3, 13):
        module.drop_unfit_wheels(info)
        assert list(info["provided"]) == ["b"] and "built for cp313" in info["unavailable"]["a"]


@pytest.mark.docker
def test_binary_fixture_reaches_tests_byte_for_byte(grade):
    blob = bytes(range(256)) * 64 + b"\0\xff"
    source = textwrap.dedent(
        f"""\
        import hashlib

        def test_fixture():
            data = open("/tests/data/blob.bin", "rb").read()
            assert hashlib.sha256(data).hexdigest() == {hashlib.sha256(blob).hexdigest()!r}
        """
    )
    result = grade(harbor_task(source=source, support={"data/blob.bin": blob}))
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)


@pytest.mark.docker
def test_verifier_runs_as_its_user_with_its_env_in_the_workdir(grade):
    sh = simple_sh(
        """\
        ok=1
        [ "$(id -u)" = "65534" ] || ok=0
        [ "$EXPECTED" = "forty-two" ] || ok=0
        [ "$TASK_LEVEL" = "harbor" ] || ok=0
        [ "$PWD" = "/app" ] || ok=0
        touch /logs/verifier/probe || ok=0
        echo "uid=$(id -u) EXPECTED=$EXPECTED PWD=$PWD"
        echo $ok > /logs/verifier/reward.txt
        """
    )
    task = harbor_task(sh, "", env={"TASK_LEVEL": "harbor"},
                       verifier=VerifierSpec(mode=GradingMode.HARBOR, user="nobody", env={"EXPECTED": "forty-two"}))
    result = grade(task)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)


@pytest.mark.docker
def test_a_login_shell_of_the_verifier_reads_bashrc_through_the_fresh_homes_profile(grade):
    # as a TB2 test that appends to $HOME/.bashrc and starts tmux (a login shell): the fresh HOME holds the
    # image's /etc/skel start-up files, so ~/.profile sources ~/.bashrc as in the image's own home
    sh = simple_sh(
        """\
        echo 'export FROM_BASHRC=seen' >> "$HOME/.bashrc"
        [ "$(bash -lic 'echo $FROM_BASHRC' 2>/dev/null)" = seen ] && [ -f "$HOME/.profile" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
        """
    )
    result = grade(harbor_task(sh, ""), SOLVE)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)


@pytest.mark.docker
def test_tb2_style_verifier_as_a_non_root_user(grade):
    task = harbor_task(verifier=VerifierSpec(mode=GradingMode.HARBOR, user="nobody"))
    result = grade(task, SOLVE + " && chmod -R a+rX /app")
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)


@pytest.mark.docker
def test_an_unknown_verifier_user_is_not_scored(grade):
    result = grade(harbor_task(verifier=VerifierSpec(mode=GradingMode.HARBOR, user="no-such-user")), SOLVE)
    assert not result.scored and "no-such-user" in result.error


@pytest.mark.docker
def test_with_a_network_the_stand_ins_serve_only_where_no_real_uv_is_found(grade):
    # the verifier may have a network (the agent's policy): `command -v uv` finds nothing, so a TB2 script runs
    # its installer as written; when that brings no uv (here: no curl, no reachable host), uvx still runs,
    # from the stand-in behind bash's command_not_found_handle
    sh = simple_sh(
        """\
        if command -v uv || command -v uvx; then exit 3; fi
        echo "pytest=$(command -v pytest)"
        case "$(command -v pytest)" in /var/lib/ta-verifier-*/bin/pytest) ;; *) exit 4 ;; esac
        uvx -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
        bash -c 'uv --version' | grep -q stand-in || echo 0 > /logs/verifier/reward.txt
        nosuchcommand; [ $? -eq 127 ] || echo 0 > /logs/verifier/reward.txt
        """
    )
    task = harbor_task(sh, limits=TaskLimits(network=True, test_timeout_s=60))
    result = grade(task, SOLVE)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert result.verifier["runtime"] == "network" and result.verifier["verifier_network"] is True


@pytest.mark.docker
def test_with_a_network_a_tool_the_stand_in_cannot_serve_is_not_scored_as_zero(grade):
    # as TB2 tasks whose test.sh asks for a package the host cannot fetch: no real uv came, the stand-in served
    # without it, the tests failed on the import and test.sh wrote 0: that 0 is not the task's reward
    sh = simple_sh(
        """\
        uvx -w pytest-json-ctrf==0.3.5 -w no-such-tool-here==1.0 pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
        """
    )
    source = "import no_such_tool_here\n\n\ndef test_uses_it():\n    assert no_such_tool_here\n"
    result = grade(harbor_task(sh, source, limits=TaskLimits(network=True, test_timeout_s=60)), SOLVE)
    assert result.verifier["runtime"] == "network"
    assert not result.scored and result.score is None
    assert result.error_kind == "grading" and "could not serve" in result.error and "no-such-tool-here" in result.error


@pytest.mark.docker
def test_offline_config_grades_on_the_runtime_even_where_the_agent_had_a_network(grade_on_each_backend):
    task = harbor_task(limits=TaskLimits(network=True, test_timeout_s=60))
    result = grade_on_each_backend(task, SOLVE, GradingConfig(harbor=HarborGradingConfig(network="offline")))
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert result.verifier["runtime"] == "offline"
    if grade_on_each_backend.backend == "docker":  # disconnected for the verifier phase
        assert result.verifier["verifier_network"] is False and result.verifier["notes"] == []
    else:  # bwrap's network namespace is fixed at start: said so, graded on the runtime all the same
        assert result.verifier["verifier_network"] is True and "could not be taken away" in result.verifier["notes"][0]


@pytest.mark.docker
@pytest.mark.parametrize("line", ["apt-get install -y jq", "curl -fsSL https://example.com/data.csv -o /tmp/data.csv",
                                  "pip3 install no-such-tool-here==1.0"])
def test_a_verifier_that_needs_the_network_is_an_infrastructure_error_that_says_so(grade, line):
    sh = simple_sh(f"{line}\necho 0 > /logs/verifier/reward.txt\n")
    result = grade(harbor_task(sh, ""), SOLVE)
    assert not result.scored and result.score is None
    assert result.error_kind == "grading" and "the verifier needs the network" in result.error, result.error


@pytest.mark.docker
@pytest.mark.parametrize(
    "body, expected",
    [
        ("exit 3\n", "no reward file"),
        ("echo pass > /logs/verifier/reward.txt\n", "not a number"),
        ("echo -n > /logs/verifier/reward.txt\n", "empty"),
        ("sleep 60\necho 1 > /logs/verifier/reward.txt\n", "timeout"),
        ("ln -s /etc/passwd /logs/verifier/reward.txt\n", "not a regular file"),
    ],
    ids=["crash", "unparsable", "empty", "timeout", "symlink"],
)
def test_a_broken_verifier_is_not_scored(grade, body, expected):
    task = harbor_task(simple_sh(body), "", limits=TaskLimits(network=False, test_timeout_s=3))
    result = grade(task, SOLVE)
    assert not result.scored and result.score is None
    assert result.error_kind == "grading" and expected in result.error, result.error


@pytest.mark.docker
def test_weights_without_a_ctrf_report_are_not_scored(grade):
    task = harbor_task(simple_sh("echo 1 > /logs/verifier/reward.txt\n"), test_weights={"test_answer_value": 1.0})
    result = grade(task, SOLVE)
    assert not result.scored and "ctrf.json" in result.error


@pytest.mark.docker
def test_a_separate_verifier_environment_gets_the_artifacts_only(grade):
    source = textwrap.dedent(
        """\
        import os


        def test_artifact_handed_over():
            assert open("/app/out/answer.txt").read().strip() == "42"


        def test_nothing_else_of_the_agent():
            assert not os.path.exists("/app/scratch.txt")
            assert not os.path.exists("/etc/agent-was-here")
            assert not os.path.exists("/logs/verifier/reward.json")
        """
    )
    sh = TB2_TEST_SH
    task = harbor_task(sh, source, verifier=VerifierSpec(mode=GradingMode.HARBOR, separate_environment=True,
                                                         artifacts=["/app/out", "/logs/verifier"]))
    setup = ("mkdir -p /app/out /logs/verifier && echo 42 > /app/out/answer.txt && touch /app/scratch.txt /etc/agent-was-here"
             " && echo '{\"reward\": 1}' > /logs/verifier/reward.json")
    result = grade(task, setup)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert result.verifier["separate_environment"] and {"artifacts_s", "start_s"} <= set(result.timings)


@pytest.mark.docker
def test_a_separate_verifier_without_artifacts_gets_the_working_directory(grade):
    task = harbor_task(verifier=VerifierSpec(mode=GradingMode.HARBOR, separate_environment=True))
    result = grade(task, SOLVE)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    result = grade(task, "echo 42 > /tmp/answer.txt")
    assert result.scored and result.score == 0.0, (result.error, result.log_tail)


@pytest.mark.docker
def test_a_pip_installing_verifier_grades_offline(grade):
    sh = simple_sh(
        """\
        apt-get update && apt-get install -y curl python3-pip
        pip3 install --break-system-packages pytest==8.4.1 pytest-json-ctrf==0.3.5
        pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA -v
        if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
        """
    )
    result = grade(harbor_task(sh), SOLVE)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert len(result.tests) == 3 and any("pip3 install" in s for s in result.verifier["skipped"]), result.verifier["skipped"]


@pytest.mark.docker
def test_a_separate_verifier_environment_of_its_own_dockerfile(grade):
    dockerfile = "FROM terminal-agent/base:bookworm\nRUN mkdir -p /verifier-env && echo yes > /verifier-env/marker\nWORKDIR /app\n"
    sh = simple_sh(
        """\
        ok=1
        [ "$(cat /verifier-env/marker)" = yes ] || ok=0
        [ "$(cat /app/answer.txt)" = 42 ] || ok=0
        echo $ok > /logs/verifier/reward.txt
        """
    )
    task = harbor_task(sh, "", verifier=VerifierSpec(mode=GradingMode.HARBOR, separate_environment=True,
                                                     environment_dockerfile=dockerfile))
    result = grade(task, SOLVE)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)


@pytest.mark.docker
def test_the_env_flags_a_broken_verifier_as_not_scored(image):
    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.env import DockerIsolatedEnv, EnvConfig
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.episode import run_episode

    task = harbor_task(simple_sh("echo verifier crashed >&2\nexit 2\n"), "")
    env = DockerIsolatedEnv(task, EnvConfig(max_steps=2))
    result = run_episode(env, TerminalBenchAgent(), ScriptedModelClient(["<finish>\nmessage: done\n</finish>"]), max_steps=2)
    assert not result.scored and result.reward in (None, 0.0)
    assert env.final_info["error_kind"] == "grading" and "no reward file" in env.final_info["error"]
    assert env.final_info["grade"]["mode"] == "harbor" and "verifier crashed" in env.final_info["grade"]["log_tail"]
    assert env.outcome is not None and not env.outcome.scored


@pytest.mark.docker
def test_other_spellings_of_uv_run_from_the_runtime(grade):
    _require_tool("tabulate==0.9.0")
    sh = simple_sh(
        """\
        set -e
        uv --version
        uv tool run --with pytest-json-ctrf==0.3.5 pytest -q /tests/test_outputs.py
        uvx --with=pytest-json-ctrf==0.3.5 --offline pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py
        printf 'a\\tb\\n1\\t2\\n' > /tmp/table.tsv
        uvx --from tabulate==0.9.0 tabulate -1 /tmp/table.tsv | grep -q -- '---'
        uv pip install tabulate==0.9.0
        echo 1 > /logs/verifier/reward.txt
        """
    )
    result = grade(harbor_task(sh), SOLVE)
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert len(result.tests) == 3


@pytest.mark.docker
@pytest.mark.parametrize("solved", [True, False])
def test_a_harbor_task_directory_is_graded_by_its_own_verifier_through_the_env(tmp_path, image, solved):
    """The whole path: a Harbor directory read by the Harbor format, an episode in the env, grading in harbor mode
    (the task allows internet, as Harbor tasks do by default; the training-cluster setting grades it offline)."""
    import yaml

    from terminal_agent.agent import TerminalBenchAgent
    from terminal_agent.env import DockerIsolatedEnv, EnvConfig
    from terminal_agent.models.scripted import ScriptedModelClient
    from terminal_agent.rollout.episode import run_episode
    from terminal_agent.tasks.harbor.format import read_harbor_task

    (tmp_path / "environment").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "task.toml").write_text('version = "1.0"\n\n[verifier]\ntimeout_sec = 120.0\n\n[environment]\nmemory = "2G"\nstorage = "10G"\n')
    (tmp_path / "instruction.md").write_text("Write 42 to /app/answer.txt and create /app/notes.txt.\n")
    (tmp_path / "environment" / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / "tests" / "test.sh").write_text(TB2_TEST_SH)
    (tmp_path / "tests" / "test_outputs.py").write_text(ANSWER_TESTS)
    task = read_harbor_task(tmp_path)
    assert task.verifier.mode is GradingMode.HARBOR and task.limits.network is True
    command = SOLVE if solved else "ls /app"
    replies = ["<bash>\n" + yaml.safe_dump({"cmd": command}, default_style="|") + "</bash>", "<finish>\nmessage: done\n</finish>"]
    config = EnvConfig(max_steps=3, grading=GradingConfig(harbor=HarborGradingConfig(network="offline")))
    result = run_episode(DockerIsolatedEnv(task, config), TerminalBenchAgent(), ScriptedModelClient(replies), max_steps=3)
    assert result.scored, result.error
    assert result.reward == (1.0 if solved else 0.0), result.grade
    assert result.grade.verifier["mode"] == "harbor" and result.grade.verifier["runtime"] == "offline" and result.grade.verifier["verifier_network"] is False


WORKDIR_MODULE_TESTS = textwrap.dedent(
    """\
    def test_the_module_shipped_in_the_workdir():
        import shipped_helper

        assert shipped_helper.ANSWER == 42
    """
)


@pytest.mark.docker
@pytest.mark.parametrize("command, reward", [("python -m pytest", 1.0), ("python3 -m pytest", 1.0),
                                             ("uv run python -m pytest", 1.0), ("pytest", 0.0)])
def test_python_m_pytest_imports_from_the_workdir_as_under_harbor(grade, command, reward):
    # Harbor runs test.sh in the task's WORKDIR: `python -m pytest` has it first on sys.path, the console pytest not
    sh = simple_sh(f"{command} /tests/test_outputs.py -rA && echo 1 > /logs/verifier/reward.txt "
                   "|| echo 0 > /logs/verifier/reward.txt\n")
    result = grade(harbor_task(sh, WORKDIR_MODULE_TESTS), "printf 'ANSWER = 42\\n' > /app/shipped_helper.py")
    assert result.scored and result.score == reward, (result.error, result.log_tail)


@pytest.mark.docker
def test_a_pytest_planted_in_the_workdir_does_not_replace_the_runtimes(grade):
    sh = simple_sh("python -m pytest /tests/test_outputs.py -rA && echo 1 > /logs/verifier/reward.txt "
                   "|| echo 0 > /logs/verifier/reward.txt\n")
    planted = "import sys\\nsys.exit(0)\\n"
    result = grade(harbor_task(sh, ANSWER_TESTS),  # nothing solved: the real tests fail
                   f"printf '{planted}' > /app/pytest.py && mkdir -p /app/_pytest && cp /app/pytest.py /app/_pytest/__init__.py"
                   f" && cp /app/pytest.py /app/pluggy.py")
    assert result.scored and result.score == 0.0, (result.error, result.log_tail)
    assert any("not imported as 'pytest'" in note for note in result.verifier["substitutions"]), result.verifier["substitutions"]


@pytest.mark.docker
@pytest.mark.slow
def test_a_python_313_task_is_graded_on_cpython_313_with_its_workdir_module(docker_client):
    # a TB2 task on python:3.13-slim-bookworm: its tests use 3.12+ syntax and a module its image ships in WORKDIR
    from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig

    source = textwrap.dedent(
        """\
        import sys


        def test_python_313_and_the_workdir_module():
            import modern  # 3.12+ syntax: a SyntaxError on 3.11
            import shipped_helper

            assert sys.version_info[:2] == (3, 13) and shipped_helper.ANSWER == modern.ANSWER
        """
    )
    sh = TB2_TEST_SH.replace("pytest --ctrf /logs/verifier/ctrf.json", "python -m pytest --ctrf /logs/verifier/ctrf.json")
    task = harbor_task(sh, source, task_id="harbor-py313", support={"modern.py": "type Answer = int\nANSWER: Answer = 42\n"},
                       dockerfile="FROM python:3.13-slim-bookworm\nWORKDIR /app\nRUN echo 'ANSWER = 42' > shipped_helper.py\n")
    image = resolve_task_image(SandboxConfig(), task)
    sandbox = start_sandbox(SandboxConfig(), image, task.limits, run_id="test-grading-harbor")
    try:
        result = HarborGrader(sandbox_config=SandboxConfig(), run_id="test-grading-harbor").grade(sandbox, task)
    finally:
        sandbox.close()
    assert result.scored and result.score == 1.0, (result.error, result.log_tail)
    assert not any("python 3.13 -> the image's python" in note for note in result.verifier["substitutions"]), result.verifier["substitutions"]


@pytest.mark.docker
@pytest.mark.slow
def test_a_compiled_tool_of_a_python_313_task_is_fetched_for_cpython_313(docker_client):
    # a TB2 task on python:3.13-slim-bookworm whose tests import numpy (uvx -w numpy): the host runs 3.11, so the
    # wheels must be fetched for the image's CPython 3.13 (the grader asks the sandbox), not for the host's
    from terminal_agent.sandbox.backends import resolve_task_image, start_sandbox
    from terminal_agent.sandbox.config import SandboxConfig

    _require_tool("numpy==2.3.3")
    source = textwrap.dedent(
        """\
        import sys

        import numpy


        def test_numpy_on_python_313():
            assert sys.version_info[:2] == (3, 13)
            assert numpy.__version__ == "2.3.3"
            assert float(numpy.loadtxt("/app/values.txt").sum()) == 42.0
        """
    )
    sh = TB2_TEST_SH.replace("-w pytest-json-ctrf==0.3.5 \\", "-w pytest-json-ctrf==0.3.5 -w numpy==2.3.3 \\")
    assert "numpy" in sh
    task = harbor_task(sh, source, task_id="harbor-py313-numpy", solution="printf '40\\n2\\n' > /app/values.txt\n",
                       dockerfile="FROM python:3.13-slim-bookworm\nWORKDIR /app\n")
    image = resolve_task_image(SandboxConfig(), task)
    results = []
    for solve in (task.solution, None):
        sandbox = start_sandbox(SandboxConfig(), image, task.limits, run_id="test-grading-harbor")
        try:
            if solve:
                assert sandbox.exec(solve, timeout=30).ok
            grader = HarborGrader(sandbox_config=SandboxConfig(), run_id="test-grading-harbor")
            results.append(grader.grade(sandbox, task))
        finally:
            sandbox.close()
    solved, unsolved = results
    assert solved.scored and solved.score == 1.0, (solved.error, solved.log_tail, solved.substitutions)
    assert len(solved.tests) == 1 and solved.tests[0].passed
    assert unsolved.scored and unsolved.score == 0.0, (unsolved.error, unsolved.log_tail)  # numpy ran: no values
