"""Tools: the pure edit logic, then every tool and run_turn against a real container."""

from __future__ import annotations

import json

import pytest

from terminal_agent.actions import ActionConfig, ToolContext, run_turn
from terminal_agent.actions.tools.file import EditError, EditSpec, apply_edit, apply_edits
from terminal_agent.errors import SandboxError

IMAGE = "terminal-agent/base:bookworm"


# --- pure edit logic ---------------------------------------------------------------------------
def test_edit_exact_multiline():
    text = "def f():\n    return 1\n\ndef g():\n    return 2\n"
    new, count, line = apply_edit(text, "def g():\n    return 2", "def g():\n    return 3")
    assert new == "def f():\n    return 1\n\ndef g():\n    return 3\n"
    assert (count, line) == (1, 4)


def test_edit_missing_string_hints_at_whitespace():
    with pytest.raises(EditError, match=r"not found.*line 2"):
        apply_edit("a\n  value = 1\n", "value = 1\nvalue = 2", "x")


def test_edit_not_unique_names_lines_and_replace_all_works():
    text = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(EditError, match=r"occurs 2 times \(lines 1, 3\)"):
        apply_edit(text, "x = 1", "x = 9")
    new, count, _ = apply_edit(text, "x = 1", "x = 9", replace_all=True)
    assert new == "x = 9\ny = 2\nx = 9\n" and count == 2


@pytest.mark.parametrize(("old", "new", "message"), [("", "a", "empty"), ("same", "same", "the same")])
def test_edit_rejects_noop(old, new, message):
    with pytest.raises(EditError, match=message):
        apply_edit("same", old, new)


def test_multi_edit_sequential_and_atomic():
    edits = [EditSpec(old_string="a", new_string="b"), EditSpec(old_string="b c", new_string="d")]
    assert apply_edits("a c", edits)[0] == "d"
    with pytest.raises(EditError, match="edit 2 of 2 failed, no edit was written"):
        apply_edits("a c", [EditSpec(old_string="a", new_string="b"), EditSpec(old_string="zzz", new_string="y")])


# --- against a real container ----------------------------------------------------------------
@pytest.fixture(scope="module")
def sandbox(docker_client):
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox

    box = DockerSandbox.start(IMAGE, run_id="test-tools")
    yield box
    box.close()


@pytest.fixture
def ctx(sandbox):
    return ToolContext(sandbox=sandbox, config=ActionConfig(default_timeout_secs=20, max_timeout_secs=30))


def run(ctx, text):
    turn = run_turn(text, ctx)
    return turn, turn.observation


@pytest.mark.docker
def test_bash_output_exit_code_and_persistent_cwd(ctx):
    turn, obs = run(ctx, "<bash>\ncmd: cd /tmp && echo hi\n</bash>\n<bash>\ncmd: pwd; exit 3\n</bash>")
    assert obs == "<bash_output>\nhi\n[exit code: 0]\n</bash_output>\n<bash_output>\n/tmp\n[exit code: 3]\n</bash_output>"
    assert [a["exit_code"] for a in turn.actions] == [0, 3] and [a["ok"] for a in turn.actions] == [True, False]
    assert not turn.finished and not turn.only_errors
    run(ctx, "<bash>\ncmd: cd /\n</bash>")


@pytest.mark.docker
def test_bash_timeout_is_bounded_and_reported(ctx):
    ctx.config = ActionConfig(default_timeout_secs=20, max_timeout_secs=1)
    turn, obs = run(ctx, "<bash>\ncmd: sleep 5\ntimeout_secs: 100\n</bash>")
    assert "[timeout_secs lowered to the maximum, 1]" in obs
    assert "[timed out after 1 s" in obs
    assert turn.actions[0]["duration_s"] < 3


@pytest.mark.docker
def test_bash_background_and_end_after_success(ctx):
    turn, obs = run(ctx, "<bash>\ncmd: sleep 1; echo done > /tmp/bg.txt\nblock: false\n</bash>")
    assert "started in the background (job 1)" in obs and turn.actions[0]["duration_s"] < 1
    assert "output is discarded" in obs and "killed after" not in obs  # no deadline is promised
    turn, obs = run(ctx, "<bash>\ncmd: sleep 2; cat /tmp/bg.txt\nend_after_cmd_success: true\n</bash>\n<bash>\ncmd: echo never\n</bash>")
    assert "done" in obs and "never" not in obs
    assert turn.finished and len(turn.actions) == 1
    turn, _ = run(ctx, "<bash>\ncmd: false\nend_after_cmd_success: true\n</bash>")
    assert not turn.finished


@pytest.mark.docker
def test_output_is_capped(ctx):
    ctx.config = ActionConfig(max_output_chars=300)
    _, obs = run(ctx, "<bash>\ncmd: seq 1 5000\n</bash>")
    assert "characters cut" in obs and len(obs) < 450
    assert obs.rstrip().endswith("5000\n[exit code: 0]\n</bash_output>")


@pytest.mark.docker
def test_file_paths_with_shell_syntax_are_data(ctx, sandbox):
    path = "/tmp/we ird/'q\"$(touch /tmp/pwned)`id`\nname.txt"
    content = "line $(touch /tmp/pwned2)\n"
    body = f"action: write\npath: {json.dumps(path)}\ncontent: {json.dumps(content)}"
    turn, obs = run(ctx, f"<file>\n{body}\n</file>")
    assert turn.actions[0]["ok"], obs
    assert sandbox.read_file(path) == content.encode()
    _, obs = run(ctx, f"<file>\naction: read\npath: {json.dumps(path)}\n</file>")
    assert "line $(touch /tmp/pwned2)" in obs
    _, obs = run(ctx, f"<search>\naction: grep\npattern: {json.dumps('$(touch /tmp/pwned3)|touch')}\npath: /tmp/we ird\n</search>")
    assert "name.txt" in obs
    check = sandbox.exec("ls /tmp/pwned /tmp/pwned2 /tmp/pwned3 2>&1; true")
    assert check.output.count("No such file") == 3, check.output


@pytest.mark.docker
def test_file_read_offset_limit_binary_dir_missing(ctx, sandbox):
    sandbox.write_file("/tmp/lines.txt", "".join(f"row {i}\n" for i in range(1, 11)).encode())
    sandbox.write_file("/tmp/blob.bin", b"\x00\x01\x02")
    _, obs = run(ctx, "<file>\naction: read\npath: /tmp/lines.txt\noffset: 4\nlimit: 2\n</file>")
    assert obs == "<file_output>\n     4\trow 4\n     5\trow 5\n[lines 4-5 of 10; continue with offset: 6]\n</file_output>"
    _, obs = run(ctx, "<file>\naction: read\npath: /tmp/blob.bin\n</file>")
    assert "binary file (3 bytes)" in obs
    turn, obs = run(ctx, "<file>\naction: read\npath: /tmp\n</file>")
    assert "is a directory" in obs and not turn.actions[0]["ok"] and not turn.only_errors
    _, obs = run(ctx, "<file>\naction: read\npath: /nope/x\n</file>")
    assert "Error: file not found: /nope/x" in obs


@pytest.mark.docker
def test_file_write_where_the_model_cannot_write_is_a_tool_error(ctx, sandbox):
    # a parent that is a regular file, and a parent that cannot be created: the model's mistake,
    # shown to it as the tool's error; the turn (and the episode) goes on
    turn, obs = run(
        ctx,
        "<file>\naction: write\npath: /etc/hostname/x\ncontent: hi\n</file>\n"
        "<file>\naction: write\npath: /sys/kernel/nope/x\ncontent: hi\n</file>\n"
        "<bash>\ncmd: echo still here\n</bash>",
    )
    assert obs.count("Error: cannot write") == 2, obs
    assert [a["ok"] for a in turn.actions] == [False, False, True] and "still here" in obs
    assert sandbox.is_alive()


@pytest.mark.docker
def test_reading_a_symlink_loop_is_a_tool_error(ctx, sandbox):
    # the model's own doing: shown as the tool's error, never a broken sandbox (which would mask the sample)
    sandbox.exec("ln -sfn /tmp/loop-b /tmp/loop-a && ln -sfn /tmp/loop-a /tmp/loop-b")
    turn, obs = run(ctx, "<file>\naction: read\npath: /tmp/loop-a\n</file>")
    assert "Error: cannot read /tmp/loop-a" in obs and not turn.actions[0]["ok"]
    assert sandbox.is_alive() and run(ctx, "<bash>\ncmd: echo ok\n</bash>")[1].count("ok") == 1


@pytest.mark.docker
def test_file_edit_keeps_mode_and_fails_clearly(ctx, sandbox):
    sandbox.write_file("/tmp/run.sh", b"#!/bin/sh\necho one\necho one\n", 0o755)
    turn, obs = run(ctx, "<file>\naction: edit\npath: /tmp/run.sh\nold_string: echo one\nnew_string: echo two\n</file>")
    assert "occurs 2 times (lines 2, 3)" in obs and not turn.actions[0]["ok"]
    turn, obs = run(
        ctx,
        "<file>\naction: edit\npath: /tmp/run.sh\nold_string: |\n  echo one\n  echo one\nnew_string: |\n  echo two\n  echo three\n</file>",
    )
    assert "Edited /tmp/run.sh: 1 replacement." in obs, obs
    result = sandbox.exec("/tmp/run.sh; stat -c %a /tmp/run.sh")
    assert result.output == "two\nthree\n755\n"
    _, obs = run(ctx, "<file>\naction: edit\npath: /tmp/run.sh\nold_string: echo four\nnew_string: x\n</file>")
    assert "old_string was not found" in obs


@pytest.mark.docker
def test_multi_edit_is_atomic_in_the_container(ctx, sandbox):
    sandbox.write_file("/tmp/conf.ini", b"a=1\nb=2\n")
    edit = "<file>\naction: multi_edit\npath: /tmp/conf.ini\nedits:\n  - old_string: a=1\n    new_string: a=5\n  - old_string: {second}\n    new_string: b=6\n</file>"
    _, obs = run(ctx, edit.format(second="c=3"))
    assert "edit 2 of 2 failed" in obs
    assert sandbox.read_file("/tmp/conf.ini") == b"a=1\nb=2\n"
    _, obs = run(ctx, edit.format(second="b=2"))
    assert sandbox.read_file("/tmp/conf.ini") == b"a=5\nb=6\n"


@pytest.mark.docker
def test_relative_paths_follow_the_shell_cwd(ctx, sandbox):
    run(ctx, "<bash>\ncmd: mkdir -p /tmp/rel && cd /tmp/rel\n</bash>")
    run(ctx, "<file>\naction: write\npath: notes.txt\ncontent: hi\n</file>")
    assert sandbox.read_file("/tmp/rel/notes.txt") == b"hi"
    run(ctx, "<file>\naction: write\npath: ~/home-note.txt\ncontent: home\n</file>")
    assert sandbox.read_file("/root/home-note.txt") == b"home"
    run(ctx, "<bash>\ncmd: cd /\n</bash>")


@pytest.mark.docker
def test_metadata_of_several_paths(ctx, sandbox):
    sandbox.write_file("/tmp/meta.txt", b"1\n2\n3\n", 0o600)
    _, obs = run(ctx, "<file>\naction: metadata\npaths: [/tmp/meta.txt, /tmp, /does/not/exist]\n</file>")
    lines = obs.splitlines()[1:-1]
    assert lines[0].startswith("/tmp/meta.txt: file, 6 bytes, mode 0600, owner root") and lines[0].endswith("3 lines")
    assert lines[1].startswith("/tmp: directory")
    assert lines[2] == "/does/not/exist: does not exist"


@pytest.mark.docker
def test_search_grep_glob_ls_sorted_and_capped(ctx, sandbox):
    for name in ["b/two.py", "a/one.py", "a/deep/three.py", "a/readme.md", "skip.log"]:
        sandbox.write_file(f"/tmp/proj/{name}", b"import os\nTODO: fix\n")
    _, obs = run(ctx, "<search>\naction: grep\npattern: TODO\npath: /tmp/proj\ninclude: '*.py'\n</search>")
    assert obs.splitlines()[1:-1] == [
        "/tmp/proj/a/deep/three.py:2: TODO: fix",
        "/tmp/proj/a/one.py:2: TODO: fix",
        "/tmp/proj/b/two.py:2: TODO: fix",
    ]
    _, obs = run(ctx, "<search>\naction: glob\npattern: '**/*.py'\npath: /tmp/proj\n</search>")
    assert obs.splitlines()[1:-1] == ["/tmp/proj/a/deep/three.py", "/tmp/proj/a/one.py", "/tmp/proj/b/two.py"]
    _, obs = run(ctx, "<search>\naction: ls\npath: /tmp/proj\nignore: ['*.log']\ndepth: 2\n</search>")
    assert obs.splitlines()[1:-1] == ["/tmp/proj:", "a/", "  deep/", "  one.py  (20 bytes)", "  readme.md  (20 bytes)", "b/", "  two.py  (20 bytes)"]
    ctx.config = ActionConfig(search_max_results=2)
    _, obs = run(ctx, "<search>\naction: grep\npattern: import\npath: /tmp/proj\n</search>")
    assert "[3 more results not shown; narrow the search]" in obs
    _, obs = run(ctx, "<search>\naction: grep\npattern: '(['\npath: /tmp/proj\n</search>")
    assert "invalid regular expression" in obs


@pytest.mark.docker
def test_todo_and_scratchpad_keep_episode_state(ctx):
    _, obs = run(ctx, "<todo>\noperations:\n  - action: add\n    content: one\n  - action: add\n    content: two\n  - action: complete\n    id: 1\n</todo>")
    assert "1. [x] one\n2. [ ] two" in obs
    turn, obs = run(ctx, "<todo>\noperations:\n  - action: delete\n    id: 7\n  - action: delete\n    id: 2\n</todo>")
    assert "no todo with id 7" in obs and "2. [ ] two" not in obs and not turn.actions[0]["ok"]
    run(ctx, "<scratchpad>\naction: add_note\nnote: port is 8080\n</scratchpad>")
    _, obs = run(ctx, "<scratchpad>\naction: view_all_notes\n</scratchpad>")
    assert "1. port is 8080" in obs


@pytest.mark.docker
def test_turn_order_errors_and_finish(ctx):
    turn, obs = run(ctx, "just talking")
    assert turn.only_errors and "No action found" in obs and "Markdown" not in obs
    turn, obs = run(ctx, "Run this:\n```bash\nls\n```")
    assert turn.only_errors and "Markdown code blocks are not run" in obs and "<bash>\ncmd: ls -la\n</bash>" in obs
    turn, obs = run(ctx, "<python>\nprint(1)\n</python>\n<bash>\ncmd: echo after-unknown\n</bash>")
    assert not turn.only_errors and "<python> is not an action" in obs and "after-unknown" in obs
    turn, obs = run(ctx, "<bash>\ncommand: ls\n</bash>\n<bash>\ncmd: echo skipped\n</bash>")
    assert turn.only_errors and "skipped" not in obs and "1 later action(s) not run" in obs
    turn, obs = run(ctx, "<bash>\ncmd: echo a\n</bash><finish>\nmessage: done\n</finish><bash>\ncmd: echo b\n</bash>")
    assert turn.finished and turn.finish_message == "done" and "echo b" not in obs and "\nb\n" not in obs
    turn, obs = run(ctx, "<bash>\ncmd: echo 1")
    assert turn.truncated_reply and turn.only_errors


@pytest.mark.docker
def test_sandbox_errors_propagate(docker_client):
    from terminal_agent.sandbox.docker.sandbox import DockerSandbox

    box = DockerSandbox.start(IMAGE, run_id="test-tools-broken")
    ctx = ToolContext(sandbox=box)
    box.close()
    with pytest.raises(SandboxError):
        run_turn("<bash>\ncmd: echo hi\n</bash>", ctx)
    with pytest.raises(SandboxError):
        run_turn("<file>\naction: read\npath: /etc/hostname\n</file>", ctx)


@pytest.mark.docker
def test_helper_is_uploaded_again_when_the_agent_deletes_it(ctx):
    _, obs = run(ctx, "<search>\naction: ls\npath: /etc/apt\n</search>")
    assert "sources.list" in obs
    run(ctx, "<bash>\ncmd: rm -rf /var/tmp/terminal-agent-tools\n</bash>")
    _, obs = run(ctx, "<search>\naction: glob\npattern: '*.list'\npath: /etc/apt\n</search>")
    assert "/etc/apt/sources.list" in obs
