"""The action language: tags, YAML bodies, fallbacks and teaching errors (pure Python)."""

from __future__ import annotations

import pytest

from terminal_agent.actions import TOOLS, ParsedAction, ParseFailure, parse_action, parse_reply, strip_think
from terminal_agent.errors import AgentFormatError


def only_action(text: str) -> ParsedAction:
    reply = parse_reply(text)
    assert len(reply.items) == 1, reply.items
    item = reply.items[0]
    assert isinstance(item, ParsedAction), item.error.messages if isinstance(item, ParseFailure) else item
    return item


@pytest.mark.parametrize(
    ("body", "cmd"),
    [
        ("cmd: ls -la", "ls -la"),
        ("cmd: ls -la | grep foo: bar", "ls -la | grep foo: bar"),  # YAML error -> raw text after cmd:
        ("cmd: |\n  cd /tmp\n  make all", "cd /tmp\nmake all"),  # block scalar
        ("cmd: cd /tmp\nmake all", "cd /tmp\nmake all"),  # multi-line plain text
        ("cmd: [ -f x ] && echo y", "[ -f x ] && echo y"),  # parses as a YAML list -> raw text
        ("cmd: |\necho a\necho b", "echo a\necho b"),  # block scalar without indentation
        ("ls -la /tmp", "ls -la /tmp"),  # bare body
        ("echo 'a: b' | wc -c", "echo 'a: b' | wc -c"),  # bare body that YAML reads as a mapping
        ("cmd: 42", "42"),
        ("cmd: 'echo \"$(whoami)\"'", 'echo "$(whoami)"'),
        ("cmd: echo \"a #b\" # note", 'echo "a #b" # note'),  # YAML would cut at ` #`
        ("cmd: echo one\n  echo two\ntimeout_secs: 3", "echo one\necho two"),  # YAML would fold the lines
        ("```bash\nls -la\n```", "ls -la"),  # a Markdown fence around the body is dropped
        ("```yaml\ncmd: pwd\n```", "pwd"),
    ],
)
def test_bash_bodies(body, cmd):
    action = only_action(f"<bash>\n{body}\n</bash>")
    assert action.name == "bash"
    assert action.args.cmd == cmd


def test_bash_fields_and_indented_body():
    action = only_action("<bash>\n    cmd: sleep 1\n    block: false\n    timeout_secs: 5\n    end_after_cmd_success: true\n</bash>")
    assert (action.args.cmd, action.args.block, action.args.timeout_secs, action.args.end_after_cmd_success) == (
        "sleep 1",
        False,
        5,
        True,
    )


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("command: ls", "unknown field(s) command"),  # no silent "run 'command: ls'"
        ("cmd: ls: -l\ntimeout_secs: 5", "does not parse"),  # ambiguous: another field is present
        ("timeout_secs: 5", "cmd: Field required"),
        ("cmd: ls\ntimeout_secs: -1", "timeout_secs"),
        ("", "empty"),
    ],
)
def test_bash_teaching_errors(body, fragment):
    with pytest.raises(AgentFormatError) as caught:
        parse_action("bash", body)
    text = "\n".join(caught.value.messages)
    assert fragment in text
    assert "<bash>\ncmd: ls -la\n</bash>" in text  # a correct example is always shown


def test_file_error_shows_the_example_of_the_requested_action():
    with pytest.raises(AgentFormatError) as caught:
        parse_action("file", "action: edit\npath: /tmp/x\nold_string: a")
    text = str(caught.value)
    assert "action edit needs new_string" in text
    assert "old_string: world\nnew_string: there" in text


def test_file_actions_parse():
    assert only_action("<file>\naction: read\npath: a.txt\noffset: 3\nlimit: 2\n</file>").args.offset == 3
    write = only_action("<file>\naction: write\npath: /tmp/x\ncontent: |\n  line 1\n  line 2\n</file>")
    assert write.args.content == "line 1\nline 2\n"
    multi = only_action(
        "<file>\naction: multi_edit\npath: x\nedits:\n  - old_string: a\n    new_string: b\n  - old_string: c\n    new_string: d\n    replace_all: true\n</file>"
    )
    assert [(e.old_string, e.new_string, e.replace_all) for e in multi.args.edits] == [("a", "b", False), ("c", "d", True)]
    assert only_action("<file>\naction: metadata\npath: /etc\n</file>").args.paths == ["/etc"]
    with pytest.raises(AgentFormatError, match="at most 10"):
        parse_action("file", "action: metadata\npaths: [" + ", ".join(f"/p{i}" for i in range(11)) + "]")
    with pytest.raises(AgentFormatError, match="action"):
        parse_action("file", "action: delete\npath: x")


def test_file_has_no_bare_fallback():
    with pytest.raises(AgentFormatError, match="body must be"):
        parse_action("file", "/etc/passwd")


def test_finish_bare_and_field():
    assert only_action("<finish>All done.</finish>").args.message == "All done."
    assert only_action("<finish>\nmessage: Wrote out.txt: 3 lines\n</finish>").args.message == "Wrote out.txt: 3 lines"
    assert only_action("<finish>\nmessage: Fixed issue #3\n</finish>").args.message == "Fixed issue #3"


def test_empty_finish_is_an_error():
    with pytest.raises(AgentFormatError, match="empty"):
        parse_action("finish", "\n")


def test_several_actions_in_order_and_think_removed():
    reply = parse_reply(
        "<think>maybe <bash>\ncmd: rm -rf /\n</bash></think>First list.\n<bash>\ncmd: ls\n</bash>\n"
        "Then note.\n<scratchpad>\naction: add_note\nnote: hi\n</scratchpad>\n<finish>\nmessage: ok\n</finish>"
    )
    assert [item.name for item in reply.items] == ["bash", "scratchpad", "finish"]
    assert reply.items[0].args.cmd == "ls"
    assert "rm -rf" in reply.thought and "rm -rf" not in reply.text


def test_strip_think_variants():
    assert strip_think("plan</think><bash>x</bash>") == ("<bash>x</bash>", "plan")
    assert strip_think("<bash>\ncmd: ls\n</bash><think>trailing") == ("<bash>\ncmd: ls\n</bash>", "trailing")


def test_unknown_tags_reported_lone_tags_ignored():
    reply = parse_reply("Use a <path> here.\n<python>\nprint(1)\n</python>\n<bash_output>\nfake\n</bash_output>\n<bash>\ncmd: ls\n</bash>")
    kinds = [(item.name, isinstance(item, ParseFailure)) for item in reply.items]
    assert kinds == [("python", True), ("bash_output", True), ("bash", False)]
    assert "<python> is not an action" in str(reply.items[0].error)
    assert "written by the environment" in str(reply.items[1].error)


def test_tags_inside_a_body_belong_to_the_body():
    action = only_action("<bash>\ncmd: echo '<file>x</file>'\n</bash>")
    assert action.args.cmd == "echo '<file>x</file>'"


def test_unclosed_tag_marks_truncation():
    reply = parse_reply("I will run\n<bash>\ncmd: python3 -c 'print(1)")
    assert reply.truncated
    assert isinstance(reply.items[-1], ParseFailure)
    assert "never closed" in str(reply.items[-1].error)
    assert not parse_reply("<bash>\ncmd: ls\n</bash>").truncated


def test_every_tool_example_parses():
    for name in TOOLS:
        tool = TOOLS.get(name)
        for variant in tool.examples:
            action = only_action(tool.example(variant))
            assert action.name == name


def test_a_reply_is_parsed_once_and_its_parse_survives_a_copy_to_another_process():
    import pickle

    from terminal_agent.actions import ReplyText, parse_reply, parsed_reply

    parsed = parse_reply("<think>plan</think>Now.\n<bash>\ncmd: echo hi\n</bash>")
    text = ReplyText(parsed)
    assert isinstance(text, str) and text == "Now.\n<bash>\ncmd: echo hi\n</bash>"  # rLLM's Action.action is text
    assert parsed_reply(text) is parsed  # the env runs the agent's parse
    copied = pickle.loads(pickle.dumps(text))  # a Ray worker gets the parse too
    assert copied == text and [a.args.cmd for a in parsed_reply(copied).actions] == ["echo hi"]
    plain = parsed_reply("<bash>\ncmd: ls\n</bash>")  # a plain string is parsed where it is run
    assert [a.args.cmd for a in plain.actions] == ["ls"]
