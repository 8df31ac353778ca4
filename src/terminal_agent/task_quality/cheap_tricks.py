"""Cheap tricks: agents that earn reward without solving the task, one registry entry each.

Every trick reads only what an agent sees or could guess (the instruction, the shipped files, the paths the tests
name once they are known) and builds one bash script that the audit (:mod:`terminal_agent.task_quality.audit`)
runs as a scripted episode in the task's real sandbox, graded by the task's real grader. A sound task pays a trick
at most the trick's ``allowed`` score (:data:`NO_WORK_ALLOWED` for the tricks that do no work at all).

A trick is one function ``build(task) -> str | None`` (``None``: it does not apply to this task) registered with
:func:`trick`; every entry has the same signature. ``terminal-agent tasks audit --list-tricks`` lists them.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from terminal_agent.registry import Registry
from terminal_agent.task_quality.no_work_rule import NO_WORK_MAX_SCORE
from terminal_agent.task_quality.validation import empty_output_paths, test_named_paths
from terminal_agent.tasks.model import Task

NO_WORK_ALLOWED = NO_WORK_MAX_SCORE
"""The most a trick that does no work may earn on a sound task (the no-op's bound)."""
STANDIN_ALLOWED = 0.5
"""The most a stand-in in another language may earn: the work done in the wrong form is at best half the task."""
REFERENCE_SCRIPT = "reference.sh"
"""Where a trick that starts from the reference solution finds it (``/solution/reference.sh``)."""

TrickBuilder = Callable[[Task], "str | None"]


@dataclass(frozen=True)
class CheapTrick:
    """One registered trick: its name, what it does, the most a sound task pays it, and its script builder."""

    name: str
    summary: str
    allowed: float
    build: TrickBuilder
    needs_reference: bool = False
    """The script runs the reference solution first (``/solution/reference.sh``)."""


CHEAP_TRICKS: Registry[CheapTrick] = Registry("cheap trick")


def trick(name: str, summary: str, allowed: float = NO_WORK_ALLOWED,
          needs_reference: bool = False) -> Callable[[TrickBuilder], TrickBuilder]:
    """Register ``build`` as the trick ``name``."""

    def decorator(build: TrickBuilder) -> TrickBuilder:
        CHEAP_TRICKS.register(name)(CheapTrick(name, summary, allowed, build, needs_reference))
        return build

    return decorator


# --- what an agent sees -----------------------------------------------------------------------------------------
_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_QUOTED = re.compile(r"\"([^\"\n]{1,80})\"")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
SOURCE_SUFFIXES = (".c", ".h", ".sh", ".bash")
"""Programs in a language a stand-in can replace (C and shell tools)."""
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".pl", ".rb", ".js")
MAX_CONSTANTS = 40
SERVICE_WORDS = re.compile(r"\b(service|server|daemon|port|listen|supervisor|systemctl|cron|worker|health)\b", re.I)


def instruction_constants(task: Task) -> list[str]:
    """The literals the instruction mentions: backtick spans, quoted strings and numbers, in order, once each."""
    found: list[str] = []
    for pattern in (_BACKTICK, _QUOTED, _NUMBER):
        found += [match.group(1) if pattern.groups else match.group(0) for match in pattern.finditer(task.instruction)]
    seen: list[str] = []
    for value in found:
        value = value.strip()
        if value and value not in seen and not value.startswith("/"):
            seen.append(value)
    return seen[:MAX_CONSTANTS]


def example_lines(task: Task) -> list[str]:
    """Text that looks like the expected output: a shipped example output (a text file named like ``output`` or
    ``expected``), fenced and indented blocks of the instruction, and backtick spans that hold a blank
    (``COUNT IP``, ``ERROR 3``)."""
    lines: list[str] = []
    for path, content in sorted(text_files(task).items()):
        if re.search(r"(output|expected)", posixpath.basename(path), re.I):
            lines += content.splitlines()[:MAX_CONSTANTS]
    for block in _FENCE.findall(task.instruction):
        lines += [line for line in block.splitlines() if line.strip()]
    text = _FENCE.sub("", task.instruction)
    lines += [line.strip() for line in text.splitlines() if line.startswith(("    ", "\t")) and line.strip()]
    lines += [span for span in _BACKTICK.findall(text) if " " in span.strip()]
    return list(dict.fromkeys(lines))[:MAX_CONSTANTS]


def text_files(task: Task) -> dict[str, str]:
    """The shipped text files, relative path -> content (``_build`` folders, removed by the build, left out)."""
    return {path: content for path, content in task.files.items()
            if isinstance(content, str) and not path.startswith(("_build/", "setup/"))}


def programs_under_repair(task: Task, suffixes: tuple[str, ...] = SCRIPT_SUFFIXES + (".c", ".h")) -> list[str]:
    """Shipped programs (by suffix or a ``#!`` line) that the reference solution names: the ones it fixes."""
    solution = task.solution or ""
    found = []
    for path, content in text_files(task).items():
        program = path.endswith(suffixes) or (content.startswith("#!") and path.endswith(suffixes + ("",)))
        if program and posixpath.basename(path) in solution:
            found.append(path)
    return sorted(found)


def _write(path: str, content: str, executable: bool = False) -> str:
    """A shell line that writes ``content`` to ``path`` (folders made), optionally executable."""
    quoted = shlex.quote(path)
    line = f"mkdir -p \"$(dirname {quoted})\" && printf '%s' {shlex.quote(content)} > {quoted}"
    return line + (f" && chmod +x {quoted}" if executable else "")


def _printing_program(path: str, lines: list[str]) -> str:
    """A program for ``path`` in its own language that prints ``lines`` and computes nothing."""
    body = "\n".join(lines) + "\n"
    if path.endswith(".py"):
        return f"import sys\nsys.stdout.write({body!r})\n"
    return "#!/bin/sh\ncat <<'TRICK_EOF'\n" + body + "TRICK_EOF\n"


def _is_program_path(path: str) -> bool:
    name = posixpath.basename(path)
    return "/bin/" in path or name.endswith(SCRIPT_SUFFIXES) or "." not in name


def _fill_outputs(task: Task, lines: list[str]) -> list[str]:
    """Shell lines that write ``lines`` to every output of the task (a printing program where a program is asked
    for), and replace each script under repair by one that prints them."""
    commands = []
    for path in empty_output_paths(task):
        if _is_program_path(path):
            commands.append(_write(path, _printing_program(path, lines), executable=True))
        elif path.endswith(".json"):
            commands.append(_write(path, "[" + ", ".join(_json_value(line) for line in lines) + "]\n"))
        else:
            commands.append(_write(path, "\n".join(lines) + "\n"))
    for path in programs_under_repair(task, SCRIPT_SUFFIXES):
        commands.append(_write(f"/app/{path}", _printing_program(path, lines), executable=True))
    return commands


def _json_value(text: str) -> str:
    import json

    return text if _NUMBER.fullmatch(text) else json.dumps(text)


def _script(commands: list[str]) -> str | None:
    return "#!/bin/bash\n" + "\n".join(commands) + "\n" if commands else None


# --- the tricks ---------------------------------------------------------------------------------------------------
@trick("instruction-constants", "write the literals and numbers the instruction mentions into every output path "
       "(a program that prints them where a program is asked for)")
def write_instruction_constants(task: Task) -> str | None:
    constants = instruction_constants(task)
    return _script(_fill_outputs(task, constants)) if constants else None


@trick("echo-expected", "print expected-looking output without computing it: the instruction's example lines "
       "written to the outputs, and the scripts under repair replaced by ones that print them")
def echo_expected_output(task: Task) -> str | None:
    lines = example_lines(task)
    return _script(_fill_outputs(task, lines)) if lines else None


@trick("copy-inputs", "copy a shipped input file to every output path (same suffix first, else the largest)")
def copy_inputs_to_outputs(task: Task) -> str | None:
    inputs = text_files(task)
    if not inputs:
        return None
    commands = []
    for output in empty_output_paths(task):
        suffix = posixpath.splitext(output)[1]
        same = [path for path in inputs if suffix and path.endswith(suffix)]
        source = max(same or list(inputs), key=lambda path: len(inputs[path]))
        commands.append(f"mkdir -p \"$(dirname {shlex.quote(output)})\" && "
                        f"cp {shlex.quote('/app/' + source)} {shlex.quote(output)}")
    return _script(commands)


@trick("touch-named", "touch every path the tests name: existing files get a new time, missing ones appear empty")
def touch_named_paths(task: Task) -> str | None:
    paths = test_named_paths(task)
    if not paths:
        return None
    return _script([f"{{ [ -d {shlex.quote(p)} ] || {{ mkdir -p \"$(dirname {shlex.quote(p)})\" && "
                    f"touch {shlex.quote(p)}; }}; }}" for p in paths])


@trick("delete-named", "delete every path the tests name (under /app), files and folders")
def delete_named_paths(task: Task) -> str | None:
    paths = [p for p in test_named_paths(task) if p.startswith("/app/")]
    return _script([f"rm -rf -- {shlex.quote(p)}" for p in paths]) if paths else None


@trick("kill-services", "start nothing and kill every process the sandbox did not start for the agent's shell")
def kill_services(task: Task) -> str | None:
    if not SERVICE_WORDS.search(task.instruction + "\n" + task.test_source):
        return None
    return _script([
        "keep=\" 1 $$ $PPID \"; p=$PPID",
        "while [ \"$p\" -gt 1 ] 2>/dev/null; do p=$(awk '{print $4}' /proc/$p/stat 2>/dev/null || echo 1); "
        "keep=\"$keep$p \"; done",
        "for d in /proc/[0-9]*; do n=${d#/proc/}; case \"$keep\" in *\" $n \"*) continue;; esac; "
        "kill -9 \"$n\" 2>/dev/null; done",
        "true",
    ])


_BUILD_WORDS = re.compile(r"\b(make|gcc|cc|install)\b")
_PIP_COMMAND = re.compile(r"\bpip3?\s+(install|wheel|download)\b")
_COMMENT_LINE = re.compile(r"^\s*#.*$", re.MULTILINE)


def builds_native_program(solution: str) -> bool:
    """The solution compiles or installs a program a stand-in could replace (``make``, ``gcc``, ``install``).
    Comment lines and pip commands do not count: pip only writes Python, whose launchers the stand-in skips, so a
    pip-only task has nothing to stand in for, and what the reference installed outside /app would survive the
    trick's "nothing to do" branch and score as the trick's own work."""
    return bool(_BUILD_WORDS.search(_PIP_COMMAND.sub("", _COMMENT_LINE.sub("", solution))))


@trick("standin-rewrite", "replace the C or shell program under repair by a stand-in in another language: the "
       "reference solution's programs wrapped in Python launchers, the shipped sources put back as they were",
       allowed=STANDIN_ALLOWED, needs_reference=True)
def standin_rewrite(task: Task) -> str | None:
    if not task.solution:
        return None
    sources = [path for path in text_files(task) if path.endswith(SOURCE_SUFFIXES) or
               posixpath.basename(path) == "Makefile"]
    if not sources and not builds_native_program(task.solution):
        return None
    commands = [
        "mark=$(mktemp /tmp/.audit-mark.XXXXXX); rm -f /tmp/.audit-standins",
        "rm -rf /tmp/.audit-pristine && cp -a /app /tmp/.audit-pristine 2>/dev/null",
        f"(cd /app && bash /solution/{REFERENCE_SCRIPT}) > /tmp/.audit-reference.log 2>&1",
        "mkdir -p /opt/.audit-stash",
        "find /app /usr/local/bin /usr/local/sbin /opt -xdev -type f -newer \"$mark\" -perm -u+x "
        "! -path '/opt/.audit-stash/*' 2>/dev/null | while IFS= read -r f; do",
        "  magic=$(head -c 4 \"$f\" | od -An -c | tr -d ' ')",
        "  case \"$magic\" in 177ELF*) ;; '#!'*) head -n 1 \"$f\" | grep -q python && continue ;; *) continue ;; esac",
        "  s=/opt/.audit-stash/$(printf '%s' \"$f\" | sha1sum | cut -c1-16); cp -p \"$f\" \"$s\"",
        "  printf '#!/usr/bin/env python3\\nimport os, sys\\nos.execv(\"%s\", [sys.argv[0]] + sys.argv[1:])\\n' "
        "\"$s\" > \"$f\" && chmod +x \"$f\" && echo \"stand-in for $f\" >> /tmp/.audit-standins",
        "done",
        "# nothing built to stand in for (a Python project, say): the trick does nothing, /app goes back as shipped",
        "if ! [ -s /tmp/.audit-standins ]; then rm -rf /app && cp -a /tmp/.audit-pristine /app; fi",
    ]
    for path in sorted(sources):
        quoted = shlex.quote(path)
        commands.append(f"[ -f /tmp/.audit-pristine/{quoted} ] && ! [ -x /app/{quoted} ] && "
                        f"cp -p /tmp/.audit-pristine/{quoted} /app/{quoted}")
    commands.append("cat /tmp/.audit-standins 2>/dev/null; rm -rf /tmp/.audit-pristine /tmp/.audit-standins \"$mark\"; true")
    return _script(commands)
