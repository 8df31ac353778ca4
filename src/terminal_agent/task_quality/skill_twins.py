"""Skill twins: two tasks that exercise the same skill although their words differ (the check beside TF-IDF).

The TF-IDF near-twin check (:mod:`~terminal_agent.task_quality.similarity`) compares words, so it misses a held-out
task that asks for the same work as a training task in other words: "restore the deleted file docs/x.md" and
"bring data/rates.csv back from its last good version" share few words but one skill (find the commit in
``git rev-list``, check the file out of its parent, commit). This check compares what the reference solutions
*do*:

* **tools**: the distinctive commands of the solution (``git rev-list``, ``git reflog``, ``sqlite3``, ``make``,
  ``tar`` ...; ``git log -g`` counts as ``git reflog``). Commands every task uses (``cd``, ``cat``, ``grep``,
  ``awk``, ``python3``, ``git log``, ``git commit`` ...) are left out: they say nothing about the skill;
* **output kind**: what the solution leaves behind: ``repository`` (it writes git history), ``program`` (it
  writes or edits a program) or ``report`` (a file of results).

A held-out task is a skill twin of a training task when their output kinds are equal and the training task uses
at least :data:`SKILL_TWIN` of the held-out task's distinctive tools, each tool weighted by its inverse document
frequency over the tasks compared (a tool few tasks use says more about the skill). Measured on the corpus of
issue 36: the review's two git twins (the old ``deleted-file`` and ``lost-branch`` keys of ``git-recover``) score
1.0 against ``git-restore-last-good-file`` (``git rev-list``) and ``git-recover-reset-commits`` (``git reflog``);
no held-out task kept after it reaches 0.5. Programs whose *function* is the same (two de-duplicators) have no
distinctive tools and are not seen: such a pair needs a review.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from terminal_agent.tasks.model import Task

SKILL_TWIN = 0.5
"""Overlap of distinctive tools (with the same output kind) at or above which two tasks are skill twins."""

GENERIC_COMMANDS = frozenset({
    "cd", "cat", "echo", "printf", "set", "true", "false", "test", "[", "[[", "if", "then", "else", "fi", "for",
    "while", "do", "done", "case", "esac", "in", "export", "local", "read", "return", "exit", "grep", "egrep",
    "sed", "awk", "head", "tail", "cut", "sort", "uniq", "wc", "tr", "xargs", "ls", "mkdir", "rm", "cp", "mv",
    "chmod", "touch", "python3", "python", "bash", "sh", "env", "tee", "basename", "dirname", "eval", "source",
    ".", "shift", "break", "continue", "function", "trap", "wait", "sleep", "{", "}", "(", ")", "!", "EOF",
    "mktemp", "date", "seq", "printenv", "command", "type", "which", "pwd", "ln", "stat", "install", "find",
    "sqlite3",
})
"""Commands that say nothing about the skill: shell plumbing and text filters every task uses, and tools that name
a whole category (``sqlite3``: the skill is in the SQL, which this check does not read)."""
GENERIC_GIT = frozenset({"git log", "git show", "git status", "git diff", "git add", "git commit", "git rev-parse",
                         "git branch", "git checkout", "git switch", "git config", "git init", "git -C"})
"""Git subcommands nearly every git task uses."""
GIT_WRITES = frozenset({"git commit", "git cherry-pick", "git branch", "git rebase", "git reset", "git revert",
                        "git merge", "git tag", "git filter-branch", "git filter-repo", "git stash", "git am",
                        "git checkout", "git update-ref", "git reflog", "git gc", "git replace"})
"""Subcommands that leave the repository changed (with ``git reflog`` for ``reflog expire``)."""
_PROGRAM_WRITE = re.compile(r"(>\s*\S+\.(py|sh|c|h|js|pl)\b|chmod\s+\+?[0-7]*x|sed\s+-i\S*\s.*\.(py|sh|c)\b|"
                            r"\bpatch\b|\bmake\b|\bgcc\b)")
_SPLIT = re.compile(r"\|\||&&|[|;\n`]|\$\(|\bthen\b|\bdo\b|\belse\b")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n.*?\n\1\s*(?=\n|$)", re.DOTALL)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


@dataclass(frozen=True)
class SkillSignature:
    """What a task's reference solution does: its distinctive tools and the kind of output it leaves."""

    tools: frozenset[str]
    output_kind: str


@dataclass(frozen=True)
class SkillTwin:
    """A held-out task and the training task whose skill it repeats."""

    held_out: str
    train: str
    overlap: float
    shared_tools: tuple[str, ...]
    output_kind: str

    def to_dict(self) -> dict[str, object]:
        return {"held_out": self.held_out, "train": self.train, "overlap": round(self.overlap, 4),
                "shared_tools": list(self.shared_tools), "output_kind": self.output_kind}


def _commands(script: str) -> list[list[str]]:
    """The words of every simple command of ``script`` (heredoc bodies and comments left out)."""
    script = _HEREDOC.sub("\n", script)
    script = "\n".join(line.split(" #", 1)[0] for line in script.splitlines() if not line.lstrip().startswith("#"))
    commands = []
    for piece in _SPLIT.split(script):
        words = [word.strip("'\"()") for word in piece.split()]
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in ("sudo", "time", "nice", "exec", "!")):
            words = words[1:]
        if words and words[0]:
            commands.append(words)
    return commands


def _git_subcommand(words: list[str]) -> str:
    rest = words[1:]
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
    if not rest:
        return "git"
    sub = rest[0]
    if sub == "log" and any(flag in ("-g", "--walk-reflogs") for flag in rest[1:]):
        return "git reflog"
    return f"git {sub}"


def skill_signature(task: Task) -> SkillSignature:
    """The tools and output kind of ``task``'s reference solution (and the text files beside it)."""
    script = (task.solution or "") + "\n" + "\n".join(
        content for path, content in task.solution_files.items() if isinstance(content, str) and path.endswith(".sh"))
    used: set[str] = set()
    for words in _commands(script):
        name = words[0].rsplit("/", 1)[-1]
        used.add(_git_subcommand(words) if name == "git" else name)
    if used & GIT_WRITES:
        kind = "repository"
    elif _PROGRAM_WRITE.search(script):
        kind = "program"
    else:
        kind = "report"
    tools = frozenset(tool for tool in used if tool not in GENERIC_COMMANDS and tool not in GENERIC_GIT
                      and re.fullmatch(r"[a-z0-9][\w.+-]*( [\w-]+)?", tool))
    return SkillSignature(tools, kind)


def tool_weights(signatures: Sequence[SkillSignature]) -> dict[str, float]:
    """Inverse document frequency of every tool over ``signatures``: a tool few tasks use says more."""
    total = len(signatures)
    counts: dict[str, int] = {}
    for signature in signatures:
        for tool in signature.tools:
            counts[tool] = counts.get(tool, 0) + 1
    return {tool: 1.0 + math.log((1 + total) / (1 + count)) for tool, count in counts.items()}


def skill_overlap(held_out: SkillSignature, train: SkillSignature, weights: dict[str, float] | None = None) -> float:
    """The share of the held-out task's tools (weighted by ``weights``, default 1 each) that the training task
    uses too; 0 when the output kinds differ or either has no distinctive tool."""
    if held_out.output_kind != train.output_kind or not held_out.tools or not train.tools:
        return 0.0
    weight = (weights or {}).get
    total = sum(weight(tool, 1.0) for tool in held_out.tools)
    return sum(weight(tool, 1.0) for tool in held_out.tools & train.tools) / total


def skill_twins(held_out: Sequence[Task], train: Sequence[Task], threshold: float = SKILL_TWIN) -> list[SkillTwin]:
    """Every (held-out, train) pair at or above ``threshold``, the closest first. Tools are weighted by their
    inverse document frequency over both lists. Instances of one family count once per signature, so a family's
    many instances do not repeat a finding."""
    train_signatures: dict[SkillSignature, Task] = {}
    for task in train:
        train_signatures.setdefault(skill_signature(task), task)
    held_signatures = {task.task_id: skill_signature(task) for task in held_out}
    weights = tool_weights([*held_signatures.values(), *(skill_signature(task) for task in train)])
    found: dict[tuple[SkillSignature, str], SkillTwin] = {}
    for task in held_out:
        mine = held_signatures[task.task_id]
        for theirs, other in train_signatures.items():
            overlap = skill_overlap(mine, theirs, weights)
            if overlap >= threshold and (mine, other.task_id) not in found:
                found[(mine, other.task_id)] = SkillTwin(task.task_id, other.task_id, overlap,
                                                         tuple(sorted(mine.tools & theirs.tools)), mine.output_kind)
    return sorted(found.values(), key=lambda twin: (-twin.overlap, twin.held_out, twin.train))
