"""Guard tests (``Task.guards``): scoring in both grading modes, every task format, and real grading in containers.

A guard earns nothing; a failed or unreported guard zeroes the score (``on_failure: zero``) or caps it
(``on_failure: cap``). The Harbor-mode task of the Docker tests has the corpus's own ``tests/test.sh``
(``dataset/corpus/_spec.py``), which writes reward.txt by the same rule: our CTRF score must equal it.
"""

from __future__ import annotations

import base64
import csv
import json
import sys
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tomlkit
import tomllib
import yaml
from pydantic import ValidationError
from task_builders import DATA, REPO, RICH_TESTS, full_task, harbor_mode_task, plain_task, rich_task
from test_grading import junit, sandbox_factory  # noqa: F401 - the weighted grader's sandboxes, on each backend
from test_grading_harbor import grade, harbor_task, image  # noqa: F401 - the Harbor grader's containers

from terminal_agent.errors import GradingError
from terminal_agent.outcome import Grade
from terminal_agent.outcome import TestVerdict as Verdict  # not a pytest class
from terminal_agent.rewards.guard_scoring import failed_guard_names, weighted_score
from terminal_agent.rewards.harbor.ctrf_scoring import CtrfTest, score_ctrf
from terminal_agent.rewards.harbor.verifier import HarborGrader, HarborVerifierFacts
from terminal_agent.rewards.weighted_pytest.grader import Grader
from terminal_agent.rewards.weighted_pytest.junit_scoring import parse_junit, score_tests
from terminal_agent.tasks.csv.format import OUR_COLUMNS, STANDARD_COLUMNS, read_tasks_csv, write_tasks_csv
from terminal_agent.tasks.harbor.format import default_test_script, read_harbor_task, write_harbor_task
from terminal_agent.tasks.loading import collect_tasks
from terminal_agent.tasks.model import GradingMode, Task, TestGuards, VerifierSpec
from terminal_agent.tasks.parquet.rows import read_parquet_with_errors, task_to_flat_dict, task_to_row, write_parquet
from terminal_agent.tasks.terminal_bench.format import read_tb_task, write_tb_task

sys.path.insert(0, str(REPO / "dataset" / "corpus"))
from _spec import harbor_test_script  # noqa: E402 - the corpus's Harbor test.sh

DOCKERFILE = "FROM terminal-agent/base:bookworm\nWORKDIR /app\n"

SOURCE = textwrap.dedent(
    """\
    import os


    def test_out():
        assert open("/app/out.txt").read().strip() == "done"


    def test_log():
        assert os.path.isfile("/app/log.txt")


    def test_guard_input_unchanged():
        assert open("/app/input.txt").read() == "keep\\n"


    def test_guard_nothing_else():
        assert not os.path.exists("/app/stray")
    """
)
GUARD_NAMES = ["test_guard_input_unchanged", "test_guard_nothing_else"]
WEIGHTS = {"test_out": 3.0, "test_log": 1.0}


def zero_guards() -> TestGuards:
    return TestGuards(tests=list(GUARD_NAMES))


def cap_guards(cap: float = 0.5) -> TestGuards:
    return TestGuards(tests=list(GUARD_NAMES), on_failure="cap", cap=cap)


def guarded_task(guards: TestGuards | None = None, **fields) -> Task:
    return Task(task_id=fields.pop("task_id", "guarded"), instruction="Write done to /app/out.txt, keep the input.",
                dockerfile=DOCKERFILE, test_source=SOURCE, test_weights=fields.pop("test_weights", dict(WEIGHTS)),
                guards=guards if guards is not None else zero_guards(), **fields)


def report(**passed: bool | None) -> dict[str, list[tuple[bool, str]]]:
    """A parsed JUnit report: name -> passed (None: not reported)."""
    return {name: [(ok, "" if ok else "assert False")] for name, ok in passed.items() if ok is not None}


# --- the model ---------------------------------------------------------------------------------------------
def test_a_guard_with_a_weight_is_refused_and_weight_zero_is_allowed():
    with pytest.raises(ValidationError, match="guard tests earn nothing by themselves.*test_guard_input_unchanged"):
        guarded_task(test_weights={**WEIGHTS, "test_guard_input_unchanged": 1.0})
    task = guarded_task(test_weights={**WEIGHTS, "test_guard_input_unchanged": 0.0})
    score, outcomes = score_tests(task, report(test_out=True, test_log=True, test_guard_input_unchanged=False,
                                               test_guard_nothing_else=True))
    assert score == 0.0  # a guard named with weight 0 is still a guard
    assert [o.name for o in outcomes if o.guard] == GUARD_NAMES


def test_an_unknown_guard_name_is_refused_in_weighted_pytest_mode():
    with pytest.raises(ValidationError, match="guards name tests that do not exist: test_gone"):
        guarded_task(TestGuards(tests=["test_guard_input_unchanged", "test_gone"]))


@pytest.mark.parametrize("data, message", [
    ({"tests": []}, "at least 1"),
    ({"tests": ["a", "a"]}, "names a test twice"),
    ({"tests": ["a"], "cap": 0.5}, "on_failure is zero"),
    ({"tests": ["a"], "on_failure": "cap", "cap": 1.0}, "strictly between 0 and 1"),
    ({"tests": ["a"], "on_failure": "cap"}, "strictly between 0 and 1"),
    ({"tests": ["a"], "on_failure": "halve"}, "zero"),
    ({"tests": ["a"], "weight": 1}, "Extra inputs"),
])
def test_bad_guard_settings_are_refused(data, message):
    with pytest.raises(ValidationError, match=message):
        TestGuards.model_validate(data)


def test_guards_change_the_weights_hash_only_when_set():
    plain = guarded_task().model_copy(update={"guards": None})
    assert plain.content_hashes()["weights"] != guarded_task().content_hashes()["weights"]
    assert guarded_task(zero_guards()).content_hashes()["weights"] != guarded_task(cap_guards()).content_hashes()["weights"]
    assert plain.unweighted_tests == GUARD_NAMES and guarded_task().unweighted_tests == []


# --- scoring: weighted pytest -------------------------------------------------------------------------------
def test_a_failed_guard_zeroes_the_weighted_score_and_says_so():
    score, outcomes = score_tests(guarded_task(), report(test_out=True, test_log=True, test_guard_input_unchanged=False,
                                                         test_guard_nothing_else=True))
    assert score == 0.0
    assert failed_guard_names(outcomes) == ["test_guard_input_unchanged"]
    guard = next(o for o in outcomes if o.name == "test_guard_input_unchanged")
    assert guard.weight == 0.0 and guard.guard and guard.message.startswith("guard failed (score zeroed)")
    assert not next(o for o in outcomes if o.name == "test_out").guard


def test_passing_guards_leave_the_weighted_score_and_never_pay_for_doing_nothing():
    score, outcomes = score_tests(guarded_task(), report(test_out=True, test_log=False, test_guard_input_unchanged=True,
                                                         test_guard_nothing_else=True))
    assert score == pytest.approx(0.75) and failed_guard_names(outcomes) == []
    # a no-op agent: every guard holds, no weighted test passes -> nothing
    score, _ = score_tests(guarded_task(), report(test_out=False, test_log=False, test_guard_input_unchanged=True,
                                                  test_guard_nothing_else=True))
    assert score == 0.0


def test_a_failed_guard_caps_the_score_with_on_failure_cap():
    task = guarded_task(cap_guards(0.5))
    full = report(test_out=True, test_log=True, test_guard_input_unchanged=True, test_guard_nothing_else=False)
    score, outcomes = score_tests(task, full)
    assert score == 0.5 and failed_guard_names(outcomes) == ["test_guard_nothing_else"]
    assert next(o for o in outcomes if o.name == "test_guard_nothing_else").message.startswith(
        "guard failed (score capped at 0.5)")
    low = report(test_out=False, test_log=True, test_guard_input_unchanged=True, test_guard_nothing_else=False)
    assert score_tests(task, low)[0] == pytest.approx(0.25)  # below the cap: unchanged


def test_an_unreported_guard_has_failed():
    score, outcomes = score_tests(guarded_task(), report(test_out=True, test_log=True, test_guard_input_unchanged=True))
    assert score == 0.0 and failed_guard_names(outcomes) == ["test_guard_nothing_else"]
    missing = next(o for o in outcomes if o.name == "test_guard_nothing_else")
    assert missing.reported is False and "not reported" in missing.message


def test_a_parametrized_guard_fails_when_one_case_fails():
    xml = junit('<testcase name="test_out"/>', '<testcase name="test_log"/>',
                '<testcase name="test_guard_input_unchanged"/>',
                '<testcase name="test_guard_nothing_else[a]"/>',
                '<testcase name="test_guard_nothing_else[b]"><failure message="stray"/></testcase>')
    score, outcomes = score_tests(guarded_task(), parse_junit(xml))
    assert score == 0.0 and failed_guard_names(outcomes) == ["test_guard_nothing_else"]


def test_the_shared_rule_ignores_guard_weights_and_unreported_weighted_tests():
    outcomes = [Verdict("a", 2.0, True), Verdict("b", 2.0, True, reported=False), Verdict("g", 0.0, True, guard=True)]
    assert weighted_score(outcomes, cap_guards()) == (0.5, outcomes)  # the guard passed: nothing marked
    assert weighted_score(outcomes, None) == (0.5, outcomes)


# --- scoring: Harbor CTRF ----------------------------------------------------------------------------------
CTRF_PASS = [CtrfTest("test_outputs.py::test_out", "passed"), CtrfTest("test_outputs.py::test_log", "failed", "no log"),
             CtrfTest("test_outputs.py::test_guard_input_unchanged", "passed"),
             CtrfTest("test_outputs.py::TestStray::test_guard_nothing_else", "passed")]


def test_ctrf_guards_match_names_like_weights_and_zero_or_cap():
    weights = {"test_out": 3.0, "test_outputs.py::test_log": 1.0}
    guards = TestGuards(tests=["test_outputs.py::test_guard_input_unchanged", "TestStray::test_guard_nothing_else"])
    score, outcomes = score_ctrf(weights, CTRF_PASS, guards)
    assert score == pytest.approx(0.75)
    assert [(o.name, o.guard) for o in outcomes] == [
        ("test_out", False), ("test_outputs.py::test_log", False),
        ("test_outputs.py::test_guard_input_unchanged", True), ("TestStray::test_guard_nothing_else", True)]
    failing = [CtrfTest(t.name, "failed" if "input" in t.name else t.status) for t in CTRF_PASS]
    score, outcomes = score_ctrf(weights, failing, guards)
    assert score == 0.0 and failed_guard_names(outcomes) == ["test_outputs.py::test_guard_input_unchanged"]
    capped = guards.model_copy(update={"on_failure": "cap", "cap": 0.5})
    assert score_ctrf(weights, failing, capped)[0] == 0.5


def test_a_guard_the_ctrf_report_never_names_has_failed():
    score, outcomes = score_ctrf({"test_out": 1.0}, CTRF_PASS, TestGuards(tests=["test_guard_gone"]))
    assert score == 0.0 and failed_guard_names(outcomes) == ["test_guard_gone"]
    assert next(o for o in outcomes if o.name == "test_guard_gone").reported is False


def _status(vdir: str, reward: str | None, ctrf: list[CtrfTest] | None) -> dict:
    files = {}
    if reward is not None:
        files["reward.txt"] = {"b64": base64.b64encode(reward.encode()).decode()}
    if ctrf is not None:
        body = {"results": {"tests": [{"name": t.name, "status": t.status, "message": t.message} for t in ctrf]}}
        files["ctrf.json"] = {"b64": base64.b64encode(json.dumps(body).encode()).decode()}
    return {"exit_code": 0, "realpath": vdir, "files": files, "shim_log": []}


def _interpret(task: Task, reward: str | None, ctrf: list[CtrfTest] | None) -> Grade:
    result, facts = Grade(), HarborVerifierFacts()
    HarborGrader()._interpret(_status("/var/lib/v", reward, ctrf), task, "/var/lib/v", True, result, facts)
    result.verifier = facts.to_info()
    return result


def test_guards_without_weights_zero_or_cap_the_reward_files_score():
    guards = TestGuards(tests=["test_outputs.py::test_guard_input_unchanged"])
    task = harbor_mode_task(guards=guards)
    result = _interpret(task, "1", CTRF_PASS)
    assert result.score == 1.0 and result.verifier["reward_source"] == "reward.txt" and result.failed_guards == []
    failing = [CtrfTest(t.name, "failed" if "input" in t.name else t.status) for t in CTRF_PASS]
    result = _interpret(task, "1", failing)
    assert result.score == 0.0 and result.verifier["harbor_reward"] == 1.0
    assert result.failed_guards == ["test_outputs.py::test_guard_input_unchanged"]
    info = result.to_info()
    assert info["failed_guards"] == ["test_outputs.py::test_guard_input_unchanged"]
    assert [t["name"] for t in info["tests"] if t["guard"]] == ["test_outputs.py::test_guard_input_unchanged"]
    capped = harbor_mode_task(guards=guards.model_copy(update={"on_failure": "cap", "cap": 0.3}))
    assert _interpret(capped, "0.8", failing).score == pytest.approx(0.3)
    assert _interpret(capped, "0.2", failing).score == pytest.approx(0.2)


def test_guards_without_a_ctrf_report_are_a_grading_error():
    task = harbor_mode_task(guards=TestGuards(tests=["test_guard_input_unchanged"]))
    with pytest.raises(GradingError, match="guards name CTRF tests, but the verifier wrote no /logs/verifier/ctrf.json"):
        _interpret(task, "1", None)
    weighted = harbor_mode_task(guards=TestGuards(tests=["test_guard_input_unchanged"]), test_weights={"test_out": 1.0})
    with pytest.raises(GradingError, match="ctrf.json"):
        _interpret(weighted, "1", None)


def test_weighted_ctrf_grading_reports_the_failed_guards():
    task = harbor_mode_task(guards=TestGuards(tests=["test_guard_nothing_else"]), test_weights={"test_out": 1.0})
    failing = [CtrfTest(t.name, "failed" if "nothing" in t.name else t.status) for t in CTRF_PASS]
    result = _interpret(task, "1", failing)
    assert result.score == 0.0 and result.verifier["reward_source"] == "ctrf" and result.failed_guards == ["test_guard_nothing_else"]


def test_grade_info_lists_failed_guards_and_marks_guard_tests():
    task = guarded_task()
    result = Grade()
    result.score, result.tests = score_tests(task, report(test_out=True, test_log=True, test_guard_input_unchanged=True,
                                                          test_guard_nothing_else=False))
    result.failed_guards = failed_guard_names(result.tests)
    info = result.to_info()
    assert info["failed_guards"] == ["test_guard_nothing_else"]
    assert {t["name"]: t["guard"] for t in info["tests"]} == {
        "test_out": False, "test_log": False, "test_guard_input_unchanged": True, "test_guard_nothing_else": True}


# --- every format round-trips the guards --------------------------------------------------------------------
GUARDED_RICH = RICH_TESTS + "\n\ndef test_guard_kept():\n    assert True\n"


def format_tasks() -> list[Task]:
    return [
        rich_task(task_id="rich-cap", test_source=GUARDED_RICH,
                  guards=TestGuards(tests=["test_guard_kept"], on_failure="cap", cap=0.25)),
        full_task(task_id="full-zero", test_source=GUARDED_RICH, guards=TestGuards(tests=["test_guard_kept"])),
        harbor_mode_task(task_id="harbor-guards", guards=TestGuards(tests=["test_outputs.py::test_kept", "test_b"],
                                                                    on_failure="cap", cap=0.1)),
        plain_task("no-guards"),
    ]


def test_csv_round_trips_guards_and_files_without_them_keep_their_header(tmp_path):
    tasks = format_tasks()
    path = write_tasks_csv(tasks, tmp_path / "tasks.csv")
    result = read_tasks_csv(path)
    assert result.errors == [] and result.tasks == tasks
    assert "guards" in path.read_text().splitlines()[0].split(",")
    plain = write_tasks_csv([plain_task(), rich_task(metadata={})], tmp_path / "plain.csv")
    assert plain.read_text().splitlines()[0] == ",".join(STANDARD_COLUMNS + OUR_COLUMNS)


def test_parquet_round_trips_guards_with_one_schema(tmp_path):
    tasks = format_tasks()
    tasks_read, errors = read_parquet_with_errors(write_parquet(tasks, tmp_path / "tasks.parquet"))
    assert errors == [] and tasks_read == tasks
    assert task_to_flat_dict(plain_task())["guards"] == ""
    assert json.loads(task_to_flat_dict(tasks[0])["guards"]) == {"tests": ["test_guard_kept"], "on_failure": "cap",
                                                                 "cap": 0.25}


@pytest.mark.parametrize("task", format_tasks()[:2] + format_tasks()[3:], ids=lambda task: task.task_id)
def test_terminal_bench_round_trips_guards_under_its_own_key(tmp_path, task):
    task_dir = write_tb_task(task, tmp_path)
    assert read_tb_task(task_dir) == task
    extra = yaml.safe_load((task_dir / "task.yaml").read_text())["terminal_agent"]
    assert extra.get("guards") == (None if task.guards is None else task.guards.model_dump(mode="json"))


@pytest.mark.parametrize("task", format_tasks(), ids=lambda task: task.task_id)
def test_harbor_round_trips_guards_in_our_table(tmp_path, task):
    task_dir = write_harbor_task(task, tmp_path)
    assert read_harbor_task(task_dir) == task
    table = tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["terminal_agent"]
    if task.guards is None:
        assert "guards_json" not in table
    else:
        assert TestGuards.model_validate_json(table["guards_json"]) == task.guards


def test_a_harbor_native_task_with_guards_keeps_them_in_its_overlay(tmp_path):
    native = read_harbor_task(DATA / "harbor_tasks" / "sum-numbers")
    assert native.verifier.mode is GradingMode.HARBOR
    task = native.model_copy(update={"guards": TestGuards(tests=["test_inputs_unchanged"])})
    task = Task.model_validate(task.model_dump())
    task_dir = write_harbor_task(task, tmp_path / "once")
    back = read_harbor_task(task_dir)
    assert back.guards == task.guards
    kept = "harbor_task_toml"  # the task's own task.toml travels along: now the patched one
    assert back.model_copy(update={"metadata": {**back.metadata, kept: None}}) == \
        task.model_copy(update={"metadata": {**task.metadata, kept: None}})
    again = write_harbor_task(back, tmp_path / "twice")
    assert (again / "task.toml").read_bytes() == (task_dir / "task.toml").read_bytes()
    assert read_harbor_task(again) == back
    overlay = tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["terminal_agent"]
    assert overlay["harbor_native"] is True and json.loads(overlay["guards_json"])["tests"] == ["test_inputs_unchanged"]


def test_the_harbor_test_sh_of_a_weighted_task_applies_the_guards():
    script = default_test_script(guarded_task(cap_guards(0.5)))
    assert '"on_failure": "cap"' in script and 'min(score, guards["cap"])' in script
    assert "guards" not in default_test_script(guarded_task().model_copy(update={"guards": None}))


# --- bad guard data: an error naming the field and the place, the other tasks go on -------------------------
def test_a_bad_guards_cell_is_a_row_error_and_other_rows_load(tmp_path):
    path = write_tasks_csv([guarded_task(task_id=name) for name in ("good", "bad", "paid")], tmp_path / "tasks.csv")
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    rows[2][header.index("guards")] = '{"tests": ["test_guard_input_unchanged"], "on_failure": "halve"}'
    rows[3][header.index("test_weights")] = json.dumps({**WEIGHTS, "test_guard_nothing_else": 2.0})
    with path.open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    result = read_tasks_csv(path)
    assert [task.task_id for task in result.tasks] == ["good"]
    assert [(error.field, error.location.split(":")[0]) for error in result.errors] == [
        ("guards", "tasks.csv"), ("guards", "tasks.csv")]
    assert "zero" in result.errors[0].reason and "earn nothing" in result.errors[1].reason


def test_a_bad_guards_key_is_a_parquet_row_error_and_other_rows_load(tmp_path):
    rows = [task_to_row(guarded_task(task_id=f"t{index}"), index=index) for index in range(3)]
    rows[1]["extra_info"]["guards"] = '{"tests": [], "on_failure": "zero", "cap": 0.0}'
    rows[2]["extra_info"]["guards"] = "{not json"
    path = tmp_path / "tasks.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    tasks, errors = read_parquet_with_errors(path)
    assert [task.task_id for task in tasks] == ["t0"]
    assert [(error.location, error.field.split(".")[0]) for error in errors] == [
        ("tasks.parquet:row 1", "guards"), ("tasks.parquet:row 2", "guards")]


def test_bad_guards_in_task_folders_name_the_field_and_the_folder(tmp_path):
    tb, harbor = tmp_path / "tb", tmp_path / "harbor"
    for name in ("good", "bad"):
        write_tb_task(guarded_task(task_id=name), tb)
        write_harbor_task(guarded_task(task_id=name), harbor)
    yaml_path = tb / "bad" / "task.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("on_failure: zero", "on_failure: cap", 1))
    toml_path = harbor / "bad" / "task.toml"
    doc = tomlkit.parse(toml_path.read_text())
    doc["metadata"]["terminal_agent"]["guards_json"] = "{broken"
    toml_path.write_text(tomlkit.dumps(doc))
    for parent, field in ((tb, "guards"), (harbor, "terminal_agent.guards_json")):
        tasks, errors = collect_tasks(parent)
        assert [task.task_id for task in tasks] == ["good"], errors
        assert len(errors) == 1 and errors[0].field.startswith(field) and errors[0].location.endswith("bad"), errors


# --- real containers: weighted pytest ----------------------------------------------------------------------
SETUP = "mkdir -p /app && printf 'keep\\n' > /app/input.txt"
SOLVED = SETUP + " && echo done > /app/out.txt && touch /app/log.txt"


@pytest.mark.docker
def test_weighted_grading_in_a_container_zeroes_or_caps_on_a_failed_guard(sandbox_factory):  # noqa: F811
    runs = {  # the work done in both; the guards' passing case is the Harbor test's below
        "zero": (zero_guards(), SOLVED + " && echo changed > /app/input.txt"),
        "cap": (cap_guards(0.5), SOLVED + " && touch /app/stray"),
    }
    results = {}
    for name, (guards, setup) in runs.items():
        task = guarded_task(guards)
        sandbox = sandbox_factory(task)
        assert sandbox.exec(setup).ok
        results[name] = Grader().grade(sandbox, task)
        assert results[name].scored, results[name].error
    assert results["zero"].score == 0.0 and results["zero"].failed_guards == ["test_guard_input_unchanged"]
    assert results["cap"].score == 0.5 and results["cap"].failed_guards == ["test_guard_nothing_else"]
    info = results["zero"].to_info()
    assert info["failed_guards"] == ["test_guard_input_unchanged"]
    failed = next(t for t in info["tests"] if t["name"] == "test_guard_input_unchanged")
    assert failed["guard"] and failed["weight"] == 0.0 and failed["message"].startswith("guard failed (score zeroed)")


# --- real containers: Harbor mode with the corpus's test.sh -------------------------------------------------
def corpus_harbor_task(guards: TestGuards) -> Task:
    return harbor_task(test_sh=harbor_test_script(WEIGHTS, guards), source=SOURCE, test_weights=dict(WEIGHTS),
                       guards=guards, task_id="harbor-guarded")


@pytest.mark.docker
@pytest.mark.parametrize("guards, setup, expected, failed", [
    (cap_guards(0.5), SOLVED + " && echo changed > /app/input.txt", 0.5, ["test_guard_input_unchanged"]),
    (zero_guards(), SETUP + " && echo done > /app/out.txt", 0.75, []),
], ids=["guard-fails-cap", "guards-pass-partial"])
def test_harbor_grading_of_the_ctrf_report_equals_the_reward_txt_of_the_corpus_script(grade, guards, setup,  # noqa: F811
                                                                                      expected, failed):
    task = corpus_harbor_task(guards)
    assert task.verifier == VerifierSpec(mode=GradingMode.HARBOR)
    result = grade(task, setup)
    assert result.scored, (result.error, result.log_tail)
    assert result.verifier["reward_source"] == "ctrf" and result.failed_guards == failed
    assert result.score == pytest.approx(expected)
    assert result.verifier["harbor_reward"] == pytest.approx(result.score, abs=1e-6)  # the script's reward.txt, same rule
    assert [t.name for t in result.tests if t.guard] == GUARD_NAMES
