"""The packages a terminal-bench v1 ``run-tests.sh`` installs for its tests.

terminal-bench runs ``run-tests.sh`` in the task's container; the usual one installs uv, then pytest and whatever
the tests import (``uv pip install pytest==8.2.1 rdflib==7.1.4``). Read directly, such a task is graded by weighted
pytest on the grader's own pytest bundle, offline, so the tests would not see those packages unless the reader
records them: :func:`read_test_requirements` lists every requirement that ``pip install``, ``pip3 install``,
``python -m pip install``, ``uv pip install`` and ``uv add`` name (pins kept as written; ``-r FILE`` read when the
file is one of the task's test files), and refuses, naming the line, what it cannot turn into a named package (a
path, a URL, a variable, an option it does not know, a requirements file outside ``tests/``).
The weighted grader then provides them the way the Harbor mode's offline verifier runtime does
(``rewards/weighted_pytest/requirements.py``).
"""

from __future__ import annotations

import re
import shlex

from packaging.requirements import InvalidRequirement, Requirement

from terminal_agent.errors import TaskFormatError

TEST_REQUIREMENTS_METADATA_KEY = "tb_test_requirements"
"""``Task.metadata`` key: the requirements run-tests.sh installs for the tests (a list of strings, as written)."""

_RUN_TESTS = "run-tests.sh"
_FLAGS_WITH_VALUE = {
    # pip install
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "-t", "--target",
    "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi", "--cache-dir", "--src",
    "--upgrade-strategy", "--progress-bar", "--log", "--timeout", "--retries", "--trusted-host", "--proxy",
    "--cert", "--client-cert", "--only-binary", "--no-binary", "--report", "--root-user-action",
    # uv pip install / uv add
    "-p", "--python", "--index", "--default-index", "--index-strategy", "--keyring-provider", "--resolution",
    "--prerelease", "--exclude-newer", "--link-mode", "--directory", "--project", "--config-file", "--color",
    "--python-preference", "--group", "--optional", "--extra", "--package", "--script", "--tag", "--branch",
    "--rev", "--bounds", "--overrides", "--constraints", "--python-platform", "--torch-backend",
}
_REQUIREMENT_FILE_FLAGS = {"-r", "--requirement", "--requirements"}
_REFUSED_FLAGS = {"-e", "--editable", "--with-editable"}
_TEST_DIR_PREFIXES = ("$TEST_DIR/", "${TEST_DIR}/", "/tests/")
_REDIRECTION = re.compile(r"(?<!\S)\d*(?:>>|>|<)(?:&\d+|\s*[^\s;&|]+)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def read_test_requirements(script: str, test_files: dict[str, str | bytes], location: str) -> list[str]:
    """The requirements ``script`` (a run-tests.sh) installs, in order, without repeats.

    ``test_files`` are the task's files under ``tests/`` (a ``-r $TEST_DIR/requirements.txt`` is read from them).
    Raises :class:`TaskFormatError` (field ``run-tests.sh``) naming the line of anything that installs what is not
    a named package.
    """
    found: list[str] = []
    for number, line in _logical_lines(script):
        for words in _commands(line, number, location):
            args = _install_arguments(words)
            if args is None:
                continue
            for spec in _requirements_of(args, test_files, number, line, location):
                if spec not in found:
                    found.append(spec)
    return found


def _refusal(number: int, line: str, why: str, location: str) -> TaskFormatError:
    return TaskFormatError(f"line {number}: `{line.strip()}`: {why}; the grader can provide the tests "
                           "only named packages (`name` or `name==version`)", location=location, field=_RUN_TESTS)


def _logical_lines(script: str) -> list[tuple[int, str]]:
    """(number of the first physical line, text) of each logical line (backslash continuations joined)."""
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(script.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        lines.append((start, pending + raw))
        pending = ""
    if pending:
        lines.append((start, pending))
    return lines


def _commands(line: str, number: int, location: str) -> list[list[str]]:
    """The words of each simple command of ``line`` (split at ``;``, ``&&``, ``||``, ``|``), redirections and
    comments dropped; a line that does not lex (an unclosed quote) is ignored unless it installs something."""
    text = _REDIRECTION.sub(" ", line)
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError as exc:
        if re.search(r"\b(pip3?|uv)\b.*\b(install|add)\b", line):
            raise _refusal(number, line, f"cannot be split into words ({exc})", location) from None
        return []
    commands: list[list[str]] = [[]]
    for word in words:
        if word and set(word) <= set(";&|()"):
            commands.append([])
        else:
            commands[-1].append(word)
    return [command for command in commands if command]


def _install_arguments(words: list[str]) -> list[str] | None:
    """The arguments after the install command of ``words``, or None when it installs nothing."""
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    while words and words[0] in ("exec", "time", "sudo", "command", "nohup"):
        words = words[1:]
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if re.fullmatch(r"pip3?(\.\d+)?", program) and words[1:2] == ["install"]:
        return words[2:]
    if re.fullmatch(r"python3?(\.\d+)?", program) and words[1:4] == ["-m", "pip", "install"]:
        return words[4:]
    if program == "uv" and words[1:3] == ["pip", "install"]:
        return words[3:]
    if program == "uv" and words[1:2] == ["add"]:
        return words[2:]
    return None


def _requirements_of(args: list[str], test_files: dict[str, str | bytes], number: int, line: str,
                     location: str) -> list[str]:
    found: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        flag, _, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if flag in _REFUSED_FLAGS or word.startswith("-e") and len(word) > 2:
            raise _refusal(number, line, f"`{word}` installs a local project in editable mode", location)
        if flag in _REQUIREMENT_FILE_FLAGS or (word.startswith("-r") and len(word) > 2):
            value = inline or (word[2:] if not word.startswith("--") and len(word) > 2 else None)
            if value is None:
                if index + 1 >= len(args):
                    raise _refusal(number, line, f"`{word}` names no file", location)
                value, index = args[index + 1], index + 1
            found += _requirements_file(value, test_files, number, line, location)
        elif flag in _FLAGS_WITH_VALUE:
            index += 0 if inline or (len(word) > 2 and not word.startswith("--")) else 1
        elif word.startswith("-"):
            pass  # a flag without a value (-q, -U, --system, --break-system-packages, --dev, ...)
        else:
            found.append(_requirement(word, number, line, location))
        index += 1
    return found


def _requirement(word: str, number: int, line: str, location: str) -> str:
    """``word`` as a requirement string, or a refusal naming the line."""
    if "$" in word or "`" in word:
        raise _refusal(number, line, f"`{word}` depends on a shell variable", location)
    if "://" in word or word.startswith(("git+", ".", "/", "~")) or word.endswith((".whl", ".tar.gz", ".zip")):
        raise _refusal(number, line, f"`{word}` is a path or URL, not a package name", location)
    spec = word
    if "@" in word and not re.search(r"[<>=!~]", word):  # uv's name@version spelling
        name, _, version = word.partition("@")
        spec = f"{name}=={version}"
    try:
        parsed = Requirement(spec)
    except InvalidRequirement as exc:
        raise _refusal(number, line, f"`{word}` is not a requirement ({exc})", location) from None
    if parsed.url:
        raise _refusal(number, line, f"`{word}` installs from a URL", location)
    return spec


def _requirements_file(path: str, test_files: dict[str, str | bytes], number: int, line: str,
                       location: str) -> list[str]:
    """The requirements of a file among the task's tests (``-r $TEST_DIR/requirements.txt``)."""
    relative = next((path[len(prefix):] for prefix in _TEST_DIR_PREFIXES if path.startswith(prefix)), None)
    content = test_files.get(relative) if relative is not None else None
    if not isinstance(content, str):
        raise _refusal(number, line, f"the requirements file `{path}` is not one of the task's test files", location)
    found: list[str] = []
    for entry in content.splitlines():
        entry = entry.split(" #", 1)[0].strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith("-"):
            raise _refusal(number, line, f"`{path}` holds the option line `{entry}`", location)
        found.append(_requirement(entry, number, line, location))
    return found
