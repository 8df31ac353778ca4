"""TerminalBenchAgent: rLLM surface, deterministic compaction, one-shot length correction."""

from __future__ import annotations

import pytest

from terminal_agent.actions import ToolContext, run_turn
from terminal_agent.agent import LENGTH_CORRECTION, AgentConfig, TerminalBenchAgent
from terminal_agent.compat.rllm import Action, BaseAgent

IMAGE = "terminal-agent/base:bookworm"


def bash(cmd: str) -> str:
    return f"<bash>\ncmd: {cmd}\n</bash>"


def test_rllm_surface_and_live_step():
    agent = TerminalBenchAgent()
    assert isinstance(agent, BaseAgent)
    agent.update_from_env({"instruction": "Create /app/a.txt"}, 0.0, False, {})
    assert agent.get_current_state() is None
    messages = agent.chat_completions
    assert [m["role"] for m in messages] == ["system", "user"] and messages[1]["content"] == "Create /app/a.txt"

    action = agent.update_from_model("<think>plan it</think>Writing.\n" + bash("touch /app/a.txt"))
    assert isinstance(action, Action) and action.action == "Writing.\n" + bash("touch /app/a.txt")
    step = agent.get_current_state()
    assert step is agent.trajectory.steps[-1]
    assert step.thought == "plan it" and step.model_response.startswith("<think>")
    assert [m["role"] for m in step.chat_completions] == ["system", "user", "assistant"]
    assert step.observation == {"instruction": "Create /app/a.txt"}

    agent.update_from_env("<bash_output>\n[exit code: 0]\n</bash_output>", 1.0, True, {"graded": True})
    assert (step.reward, step.done, step.info["graded"]) == (1.0, True, True)
    assert agent.chat_completions[-1] == {"role": "user", "content": "<bash_output>\n[exit code: 0]\n</bash_output>"}
    step.info["engine"] = "x"  # the engine mutates the live step
    assert agent.trajectory.steps[-1].info["engine"] == "x"

    agent.reset()
    assert agent.trajectory.steps == [] and len(agent.chat_completions) == 2 and agent.chat_completions[1]["content"] == ""


def test_plain_string_task_and_config_as_dict():
    agent = TerminalBenchAgent({"keep_last_turns": 2}, compaction_threshold_tokens=1000)
    assert agent.config.keep_last_turns == 2 and agent.config.compaction_threshold_tokens == 1000
    agent.update_from_env("Fix the bug", 0.0, False, {})
    assert agent.trajectory.task == "Fix the bug"


def drive(agent: TerminalBenchAgent, turns: int) -> None:
    agent.update_from_env({"instruction": "TASK: build it"}, 0.0, False, {})
    for i in range(turns):
        reply = bash(f"make step{i}")
        if i == 0:
            reply += "\n<file>\naction: write\npath: /app/main.c\ncontent: int main(){}\n</file>"
            reply += "\n<todo>\noperations:\n  - action: add\n    content: compile\n  - action: add\n    content: test\n</todo>"
            reply += "\n<scratchpad>\naction: add_note\nnote: gcc is installed\n</scratchpad>"
        if i == 1:
            reply += "\n<todo>\noperations:\n  - action: complete\n    id: 1\n</todo>"
        agent.update_from_model(reply)
        observation = f"<bash_output>\n{'x' * 400}\n[exit code: {i % 3}]\n</bash_output>"
        if i == 0:
            observation += "\n<file_output>\nWrote 12 bytes (1 lines) to /app/main.c.\n</file_output>"
            observation += "\n<todo_output>\n...\n</todo_output>\n<scratchpad_output>\nNote 1 saved.\n</scratchpad_output>"
        if i == 1:
            observation += "\n<todo_output>\n...\n</todo_output>"
        # the env's records of the actions (info["actions"] of DockerIsolatedEnv.step): the summary reads exit codes
        # and outcomes there, never from the observation's text
        records = [{"name": "bash", "ok": i % 3 == 0, "exit_code": i % 3}]
        if i == 0:
            records += [{"name": "file", "ok": True}, {"name": "todo", "ok": True}, {"name": "scratchpad", "ok": True}]
        if i == 1:
            records += [{"name": "todo", "ok": True}]
        agent.update_from_env(observation, 0.0, False, {"actions": records})


def test_compaction_keeps_system_task_last_turns_and_a_deterministic_summary():
    config = AgentConfig(compaction_threshold_tokens=900, keep_last_turns=2)
    agent = TerminalBenchAgent(config)
    drive(agent, 8)
    messages = agent.chat_completions
    assert agent.compacted_turns >= 6
    assert agent.estimate_tokens() <= 900
    assert messages[0]["content"] == agent.system_prompt
    task = messages[1]["content"]
    assert task.startswith("TASK: build it\n\n[Summary of the first")
    assert "- `make step0` -> exit 0" in task and "- `make step1` -> exit 1" in task and "- `make step2` -> exit 2" in task
    assert "Files written or edited: /app/main.c." in task
    assert "1. [x] compile\n2. [ ] test" in task
    assert "1. gcc is installed" in task
    kept = messages[2:]
    assert [m["role"] for m in kept] == ["assistant", "user"] * (8 - agent.compacted_turns)
    assert kept[-2]["content"] == bash("make step7")
    # the same history gives the same summary, and the chat stays alternating
    other = TerminalBenchAgent(config)
    drive(other, 8)
    assert other.chat_completions == messages
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in zip(roles[1:], roles[2:]))


def test_token_counter_is_used_for_compaction():
    calls = []

    def count(messages):
        calls.append(len(messages))
        return 100 * len(messages)  # 4 turns -> 1000 "tokens"

    agent = TerminalBenchAgent(count_tokens=count, compaction_threshold_tokens=700, keep_last_turns=2)
    drive(agent, 4)
    assert calls and agent.compacted_turns == 2 and agent.estimate_tokens() == 600


def test_no_compaction_below_threshold():
    agent = TerminalBenchAgent(compaction_threshold_tokens=100000)
    drive(agent, 5)
    assert agent.compacted_turns == 0 and len(agent.chat_completions) == 2 + 2 * 5


def test_length_correction_once_in_a_row():
    agent = TerminalBenchAgent()
    agent.update_from_env("task", 0.0, False, {})
    agent.update_from_model("Let me think about this at length " * 20, finish_reason="length")
    assert agent.get_current_state().info["truncated_reply"]
    agent.update_from_env("<format_error>\nNo action\n</format_error>", 0.0, False, {})
    assert agent.chat_completions[-1]["content"].startswith(LENGTH_CORRECTION + "\n\n<format_error>")
    # a second cut-off reply right after: no second correction
    agent.update_from_model("<bash>\ncmd: python3 -c 'print(1)")  # unclosed tag, no kwarg
    agent.update_from_env("<format_error>\nunclosed\n</format_error>", 0.0, False, {})
    assert LENGTH_CORRECTION not in agent.chat_completions[-1]["content"]
    # a good reply resets the streak; the next cut-off reply is corrected again
    agent.update_from_model(bash("ls"))
    agent.update_from_env("<bash_output>\n[exit code: 0]\n</bash_output>", 0.0, False, {})
    agent.update_from_model("<bash>\ncmd: cat <<EOF", finish_reason="length")
    agent.update_from_env("<format_error>\nunclosed\n</format_error>", 0.0, False, {})
    assert agent.chat_completions[-1]["content"].startswith(LENGTH_CORRECTION)


def test_length_limit_with_a_complete_action_is_not_corrected():
    agent = TerminalBenchAgent()
    agent.update_from_env("task", 0.0, False, {})
    agent.update_from_model(bash("ls") + "\nAnd then I will", finish_reason="length")
    agent.update_from_env("<bash_output>\n[exit code: 0]\n</bash_output>", 0.0, False, {})
    assert LENGTH_CORRECTION not in agent.chat_completions[-1]["content"]


def test_observations_are_capped():
    agent = TerminalBenchAgent(max_observation_chars=1000)
    agent.update_from_env("task", 0.0, False, {})
    agent.update_from_model(bash("seq 1 100000"))
    agent.update_from_env("y" * 50000, 0.0, False, {})
    content = agent.chat_completions[-1]["content"]
    assert len(content) < 1100 and "characters cut" in content


@pytest.mark.docker
def test_scripted_episode_against_a_real_container(docker_client):
    """Scripted replies drive the real agent and the real tools; compaction sees real outputs."""
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox

    replies = [
        "<think>start</think>" + bash("mkdir -p /app && cd /app && echo hello > out.txt"),
        "<file>\naction: edit\npath: out.txt\nold_string: hello\nnew_string: hello world\n</file>",
        bash("grep -c world out.txt") + "\n" + bash("exit 4"),
        "<file>\naction: read\npath: /app/out.txt\n</file>",
        "<finish>\nmessage: wrote /app/out.txt\n</finish>",
    ]
    box = DockerSandbox.start(IMAGE, run_id="test-agent")
    try:
        agent = TerminalBenchAgent(compaction_threshold_tokens=700, keep_last_turns=1)
        ctx = ToolContext(sandbox=box)
        agent.update_from_env({"instruction": "Write hello world to /app/out.txt"}, 0.0, False, {})
        for reply in replies:
            action = agent.update_from_model(reply)
            turn = run_turn(action.action, ctx)
            agent.update_from_env(turn.observation, 1.0 if turn.finished else 0.0, turn.finished, {"actions": turn.actions})
            if turn.finished:
                break
        assert turn.finished and turn.finish_message == "wrote /app/out.txt"
        assert box.read_file("/app/out.txt") == b"hello world\n"
        assert len(agent.trajectory.steps) == 5 and agent.trajectory.steps[-1].done
        assert "     1\thello world" in agent.trajectory.steps[4].observation  # the read's output led to finish
        summary = agent.chat_completions[1]["content"]
        assert agent.compacted_turns >= 3
        assert "- `grep -c world out.txt` -> exit 0" in summary and "- `exit 4` -> exit 4" in summary
        assert "Files written or edited: out.txt." in summary
    finally:
        box.close()
