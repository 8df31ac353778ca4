"""`eval behaviour`: what the agent did, from transcripts.

The Docker test evaluates two scripted replies files on two shipped tasks through the real CLI (one finishes
properly, one writes text without an action) and checks that the summary tells them apart; the pure tests build
run directories by hand in the runner's layout to check the counting, corrupt and missing transcripts, old
results files and bad input.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from terminal_agent.evaluation.behaviour import behaviour_json, behaviour_markdown
from terminal_agent.evaluation.behaviour_records import EpisodeBehaviour, first_word, summarize_episodes, summarize_run
from terminal_agent.evaluation.behaviour_report import pair_by_task
from terminal_agent.outcome import Termination

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "dataset" / "latest_verified.csv"


def _cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["python", "-m", "terminal_agent", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


# --- a real scripted evaluation ------------------------------------------------------------------
@pytest.mark.docker
def test_two_scripted_runs_on_real_containers_are_told_apart(tmp_path):
    from terminal_agent.task_quality.validation import oracle_replies
    from terminal_agent.tasks.loading import load_tasks

    task = next(t for t in load_tasks(SHIPPED) if t.task_id == "fix-stats-script")
    good = tmp_path / "good.json"  # the oracle's solve command, a look around, then finish
    good.write_text(json.dumps([oracle_replies(task)[0], "<bash>\ncmd: ls -la /app\n</bash>", "<finish>\nmessage: done\n</finish>"]))
    junk = tmp_path / "junk.json"  # prose without any action tag, every turn
    junk.write_text(json.dumps(["I would look at the files first.", "Maybe the script is wrong.", "Let me think.", "Still thinking."]))
    for name, script in (("good", good), ("junk", junk)):
        run = _cli("eval", "run", str(SHIPPED), "-t", "fix-stats-script", "-t", "count-log-levels", "--model", f"scripted:{script}",
                   "--max-steps", "4", "--no-plot", "-o", str(tmp_path / name))
        assert run.returncode == 0, run.stderr[-3000:]

    out = _cli("eval", "behaviour", str(tmp_path / "good"), str(tmp_path / "junk"), "--names", "finishes,junk",
               "--json", str(tmp_path / "behaviour.json"), timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    document = json.loads((tmp_path / "behaviour.json").read_text())
    finishes, junk_run = document["runs"]
    assert finishes["name"] == "finishes" and junk_run["name"] == "junk"
    assert finishes["episodes"] == junk_run["episodes"] == 2 and finishes["transcripts_read"] == 2 and not finishes["problems"]
    # the good script ends by its own finish after 3 replies, all with an action; the oracle passes one task
    assert finishes["terminations"] == {"finished": 1.0} and finishes["mean_turns"] == 3.0
    assert finishes["format_error_reply_share"] == 0.0 and finishes["pass_rate"] == 0.5
    assert finishes["tools_per_turn"] == {"bash": pytest.approx(2 / 3), "finish": pytest.approx(1 / 3)}
    assert dict(finishes["top_bash_words"]) == {"mkdir": 0.5, "ls": 0.5}
    # the junk script is stopped by the env after 3 replies in a row without an action
    assert junk_run["terminations"] == {"format_errors": 1.0} and junk_run["format_error_reply_share"] == 1.0
    assert junk_run["pass_rate"] == 0.0 and junk_run["bash_commands"] == 0 and junk_run["tools_per_turn"] == {}
    assert finishes["length_cut_reply_share"] == junk_run["length_cut_reply_share"] == 0.0  # scripted replies stop
    assert finishes["mean_reply_tokens"] > junk_run["mean_reply_tokens"] > 0
    paired = {m["measure"]: m for m in document["paired_with_first"]["junk"]}
    assert paired["ended by finish"] == {"measure": "ended by finish", "tasks": 2, "higher_in_b": 0.0, "lower_in_b": 1.0}
    assert paired["ended by format errors"]["higher_in_b"] == 1.0 and paired["passed"]["lower_in_b"] == 0.5
    table = out.stdout
    assert "| ended by the agent's finish | 100.0% | 0.0% | -100.0 pp |" in table
    assert "| replies without a runnable action | 0.0% | 100.0% | +100.0 pp |" in table
    assert "| pass rate | 0.500 | 0.000 | -0.500 |" in table


# --- hand-built run directories ------------------------------------------------------------------
def _step(actions: list[dict] | None, only_errors: bool) -> dict:
    return {"model_response": "...", "info": {"actions": actions or [], "only_errors": only_errors, "truncated_reply": False}}


def _bash(cmd: str) -> dict:
    return {"name": "bash", "args": {"cmd": cmd, "block": True}, "ok": True, "duration_s": 0.0, "output_chars": 10, "exit_code": 0}


def _call(finish_reason: str = "stop", completion_ids: list[int] | None = None, completion_tokens: int = 0) -> dict:
    return {"messages": [], "response": {"text": "x", "finish_reason": finish_reason, "completion_tokens": completion_tokens,
                                         "completion_ids": completion_ids}, "latency_s": 0.0, "wait_s": 0.0, "error": None}


def _transcript(steps: list[dict], calls: list[dict]) -> dict:
    return {"task_id": "t", "attempt": 0, "model_calls": calls, "episode": {"trajectory": {"steps": steps}}}


def _trial(task_id: str, attempt: int, termination: str, reward: float | None, turns: int, transcript: str | None = "auto", **extra) -> dict:
    record = {"task_id": task_id, "attempt": attempt, "status": "scored" if reward is not None else "error", "reward": reward,
              "turns": turns, "termination_reason": termination, **extra}
    record["transcript"] = f"transcripts/{task_id}/attempt-{attempt}.json" if transcript == "auto" else transcript
    return record


def _run_dir(path: Path, trials: list[dict], transcripts: dict[str, object]) -> Path:
    """A run directory in the runner's layout: results.json (written as raw JSON, so old spellings stay) and
    transcripts, each a JSON value or raw bytes."""
    path.mkdir(parents=True)
    (path / "results.json").write_text(json.dumps({"schema_version": 1, "run": {"run_id": path.name, "model": "m"}, "trials": trials}))
    for relative, content in transcripts.items():
        file = path / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


def test_counts_replies_tools_commands_and_tokens_and_names_every_unusable_transcript(tmp_path):
    finished = _transcript(
        [_step([_bash("FOO=1 /usr/bin/python3 fix.py && echo ok")], False), _step(None, True),
         _step([_bash("ls"), {"name": "finish", "args": {"message": "done"}, "ok": True}], False)],
        [_call(completion_ids=[1, 2, 3, 4]), _call("length", completion_ids=[1] * 8), _call(completion_tokens=6)],
    )
    malformed = _transcript(  # a malformed tag is a format error, not a use of the tool
        [_step([{"name": "bash", "args": None, "ok": False, "format_error": True}], True)] * 3, [_call("length")] * 3)
    run = _run_dir(tmp_path / "run", [
        _trial("a", 0, "finished", 1.0, 3),
        _trial("b", 0, "format_errors", 0.0, 3),
        _trial("c", 0, "max_steps", 0.0, 5),          # transcript missing
        _trial("d", 0, "max_steps", 0.0, 5),          # transcript not JSON
        _trial("e", 0, "error", None, 0, error={"kind": "sandbox", "message": "dead"}),  # old spelling, a JSON list transcript
        _trial("f", 0, "wall_clock", None, 2, error={"kind": "timeout", "message": "late"}),  # old spelling, no transcript named
        _trial("f", 1, "wall_clock", None, 2, transcript=None, error={"kind": "timeout", "message": "late"}),
    ], {
        "transcripts/a/attempt-0.json": finished,
        "transcripts/b/attempt-0.json": malformed,
        "transcripts/d/attempt-0.json": b'{"model_calls": [',
        "transcripts/e/attempt-0.json": [1, 2],
        "transcripts/f/attempt-0.json": _transcript([], []),
        "transcripts/zzz/attempt-0.json": _transcript([], []),  # no trial lists it
    })
    summary = summarize_run(run, "hand")
    assert summary.episodes == 7 and summary.transcripts_read == 3
    assert {p.path: p.reason for p in summary.problems} == {
        "transcripts/c/attempt-0.json": "missing",
        "transcripts/d/attempt-0.json": summary.problems[1].reason,
        "transcripts/e/attempt-0.json": "not a transcript (expected an object with model_calls and episode)",
        "f attempt 1": "results.json names no transcript",
        "transcripts/zzz/attempt-0.json": "no trial in results.json (not counted)",
    }
    assert summary.problems[1].reason.startswith("not JSON (")
    assert summary.terminations == pytest.approx({"finished": 1 / 7, "format_errors": 1 / 7, "max_steps": 2 / 7,
                                                  "episode_timeout": 2 / 7, "sandbox_error": 1 / 7})
    assert summary.timeout_share == pytest.approx(2 / 7) and summary.infrastructure_share == pytest.approx(1 / 7)
    assert summary.format_error_reply_share == pytest.approx(4 / 6)  # 1 of a's 3 steps, all 3 of b's
    assert summary.length_cut_reply_share == pytest.approx(4 / 6)
    assert summary.mean_reply_tokens == pytest.approx((4 + 8 + 6) / 3)  # token ids first, else the client's count
    assert summary.tools_per_turn == pytest.approx({"bash": 2 / 6, "finish": 1 / 6})
    assert summary.top_bash_words == [("python3", 0.5), ("ls", 0.5)]
    assert summary.pass_rate == pytest.approx(1 / 4) and summary.mean_turns == pytest.approx(16 / 4)
    markdown = behaviour_markdown({"hand": run})
    assert "| ended by episode_timeout | 28.6% |" in markdown and "| ended by sandbox_error | 14.3% |" in markdown
    assert "`hand` (" in markdown and "5 transcript(s) not used" in markdown and "`transcripts/c/attempt-0.json`: missing" in markdown
    json.dumps(behaviour_json([summary]))  # JSON-safe


def test_pairing_by_task_counts_tasks_where_the_later_run_finished_more_often():
    def episode(task_id: str, termination: Termination, passed: bool = False) -> EpisodeBehaviour:
        return EpisodeBehaviour(task_id=task_id, attempt=0, termination=termination, scored=True, passed=passed,
                                reward=float(passed), turns=1)

    base = summarize_episodes("base", "-", [episode("x", Termination.MAX_STEPS), episode("x", Termination.MAX_STEPS),
                                            episode("y", Termination.FINISHED), episode("z", Termination.FINISHED),
                                            episode("only-base", Termination.FINISHED)])
    trained = summarize_episodes("trained", "-", [episode("x", Termination.FINISHED, True), episode("x", Termination.MAX_STEPS),
                                                  episode("y", Termination.FINISHED), episode("z", Termination.FORMAT_ERRORS)])
    paired = {m.measure: m for m in pair_by_task(base, trained)}
    assert paired["ended by finish"].tasks == 3  # only tasks both ran
    assert paired["ended by finish"].higher_in_b == pytest.approx(1 / 3) and paired["ended by finish"].lower_in_b == pytest.approx(1 / 3)
    assert paired["passed"].higher_in_b == pytest.approx(1 / 3) and paired["passed"].lower_in_b == 0.0
    assert paired["used up max steps"].lower_in_b == pytest.approx(1 / 3)


def test_first_word_of_a_bash_command_skips_assignments_and_paths():
    assert first_word("FOO=1 BAR=x /usr/bin/python3 -c 'x'") == "python3"
    assert first_word("  cd /app && ls") == "cd"
    assert first_word("A=1") is None and first_word("") is None
    assert first_word("#!/bin/bash\n# dedupe\n\nawk '{print $1}' f") == "awk"  # a script: its first real command
    assert first_word("#!/bin/bash\n") is None


def test_bad_run_directories_exit_2_naming_the_path(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.json").write_text("{}")
    good = _run_dir(tmp_path / "good", [_trial("a", 0, "finished", 1.0, 1)], {"transcripts/a/attempt-0.json": _transcript([], [])})
    not_a_dir = "is not a directory (give the output directory of `eval run`)"
    for bad, says in ((tmp_path / "missing", not_a_dir), (tmp_path / "file.json", not_a_dir),
                      (tmp_path / "empty", "has no results.json: it is not the output directory of `eval run`")):
        out = _cli("eval", "behaviour", str(good), str(bad), timeout=120)
        assert out.returncode == 2, out.stderr
        assert out.stderr.strip() == f"error: run directory {bad} {says}" and out.stdout == ""
    (tmp_path / "corrupt").mkdir()
    (tmp_path / "corrupt" / "results.json").write_text("[")
    out = _cli("eval", "behaviour", str(tmp_path / "corrupt"), timeout=120)
    assert out.returncode == 2 and f"results file {tmp_path / 'corrupt' / 'results.json'} is not JSON" in out.stderr
    names = _cli("eval", "behaviour", str(good), "--names", "a,b", timeout=120)
    assert names.returncode == 2 and "one non-empty name per run directory (1)" in names.stderr
