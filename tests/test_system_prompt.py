"""The system prompt states only what the code does: every example in it parses and runs."""

from __future__ import annotations

import pytest

from terminal_agent.actions import TOOLS, ActionConfig, ParsedAction, ToolContext, parse_reply, run_turn
from terminal_agent.agent import AgentConfig, TerminalBenchAgent
from terminal_agent.prompts import prompt_examples, render_system_prompt

IMAGE = "terminal-agent/base:bookworm"


def test_prompt_shows_one_example_per_tool_and_they_parse():
    prompt = render_system_prompt()
    examples = prompt_examples(prompt)
    assert sorted(name for name, _ in examples) == TOOLS.names()  # exactly one each, none missing
    for name, block in examples:
        reply = parse_reply(block)
        assert [type(item) for item in reply.items] == [ParsedAction], block
        assert reply.items[0].name == name
        assert block == TOOLS.get(name).example()  # the prompt and the teaching messages agree


def test_prompt_renders_the_configured_limits():
    prompt = render_system_prompt(ActionConfig(max_timeout_secs=42, max_output_chars=1234, max_consecutive_error_turns=5))
    assert "at most 42)" in prompt and "longer than 1234 characters" in prompt and "After 5 replies" in prompt
    assert "${" not in prompt
    assert len(prompt) < 2000  # the embedded model has an 8k context: keep it small


def test_prompt_names_every_field_of_every_tool():
    prompt = render_system_prompt()
    for name in TOOLS:
        for field in TOOLS.get(name).Args.model_fields:
            assert field in prompt, (name, field)


def test_agent_uses_override_template():
    agent = TerminalBenchAgent(AgentConfig(system_prompt="Be brief. Max ${max_timeout_secs} s."))
    assert agent.chat_completions[0] == {"role": "system", "content": "Be brief. Max 600 s."}


@pytest.mark.docker
def test_every_prompt_example_runs_in_a_container(docker_client):
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox

    box = DockerSandbox.start(IMAGE, run_id="test-system-prompt")
    try:
        ctx = ToolContext(sandbox=box)
        for name, block in prompt_examples(render_system_prompt()):
            turn = run_turn(block, ctx)
            assert not turn.only_errors, turn.observation
            assert [action["name"] for action in turn.actions] == [name]
            assert turn.actions[0]["ok"], turn.observation
            assert turn.observation.startswith(f"<{name}_output>\n"), turn.observation
            assert turn.finished == (name == "finish")
    finally:
        box.close()
