"""Reading a Bakefile.

The syntax is a subset of make's:

* ``NAME = value`` (recursive), ``NAME := value`` (expanded now), ``NAME += more``, ``NAME ?= value``;
* ``targets : prerequisites | order-only prerequisites`` followed by recipe lines that start with a tab.
  Targets and prerequisites are expanded when the rule line is read. A target with ``%`` makes a pattern rule;
* ``.PHONY: names`` marks targets that are not files; ``.DEFAULT_GOAL := name`` picks the default goal (else the
  first target of the first explicit rule);
* ``#`` starts a comment outside recipes; a backslash at the end of a line continues it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bake.errors import BakefileSyntaxError, ExpansionError
from bake.variables import expand


@dataclass
class Rule:
    """One rule as written. ``recipe`` lines are kept unexpanded (they are expanded when they run)."""

    targets: list[str]
    prerequisites: list[str]
    recipe: list[str] = field(default_factory=list)
    line: int = 0
    order_only: list[str] = field(default_factory=list)
    """Prerequisites after ``|``: built before the target, never a reason to rebuild it."""

    @property
    def is_pattern(self) -> bool:
        return any("%" in target for target in self.targets)


@dataclass
class Bakefile:
    """Everything a Bakefile says."""

    filename: str
    variables: dict[str, str] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    phony: set[str] = field(default_factory=set)
    default_goal: str | None = None

    def explicit_rules(self) -> list[Rule]:
        return [rule for rule in self.rules if not rule.is_pattern]

    def pattern_rules(self) -> list[Rule]:
        return [rule for rule in self.rules if rule.is_pattern]


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Physical lines joined at trailing backslashes, each with the number of its first physical line."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending.append(raw[:-1] if raw.startswith("\t") else raw[:-1].rstrip() + " ")
            continue
        pending.append(raw)
        out.append((start, "".join(pending)))
        pending = []
    if pending:
        out.append((start, "".join(pending)))
    return out


def _strip_comment(line: str) -> str:
    result = []
    i = 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and line[i + 1] == "#":
            result.append("#")
            i += 2
            continue
        if line[i] == "#":
            break
        result.append(line[i])
        i += 1
    return "".join(result)


ASSIGNMENT_OPERATORS = (":=", "+=", "?=", "=")


def _split_assignment(line: str) -> tuple[str, str, str] | None:
    """``(name, operator, value)`` when ``line`` assigns a variable (an ``=`` before any ``:`` rule colon)."""
    for index, char in enumerate(line):
        if char == ":" and line[index:index + 2] != ":=":
            return None
        if char in "=:+?":
            for operator in ASSIGNMENT_OPERATORS:
                if line.startswith(operator, index):
                    name = line[:index].strip()
                    if not name or any(c.isspace() for c in name):
                        return None
                    return name, operator, line[index + len(operator):].strip()
    return None


class _Reader:
    def __init__(self, filename: str, overrides: dict[str, str]):
        self.bakefile = Bakefile(filename)
        self.overrides = overrides
        self.current: Rule | None = None

    def error(self, line: int, message: str) -> BakefileSyntaxError:
        return BakefileSyntaxError(self.bakefile.filename, line, message)

    def expand(self, line: int, text: str) -> str:
        try:
            return expand(text, {**self.bakefile.variables, **self.overrides})
        except ExpansionError as error:
            raise self.error(line, str(error)) from None

    def assign(self, line: int, name: str, operator: str, value: str) -> None:
        variables = self.bakefile.variables
        if name == ".DEFAULT_GOAL":
            self.bakefile.default_goal = self.expand(line, value).strip() or None
            return
        if operator == ":=":
            variables[name] = self.expand(line, value).replace("$", "$$")
        elif operator == "+=":
            variables[name] = (variables[name] + " " + value) if variables.get(name) else value
        elif operator == "?=":
            variables.setdefault(name, value)
        else:
            variables[name] = value

    def rule(self, line: int, text: str) -> None:
        head, colon, tail = text.partition(":")
        if not colon:
            raise self.error(line, f"missing separator in {text.strip()!r} (a rule needs ':', a recipe a tab)")
        if tail.startswith(":"):
            raise self.error(line, "double-colon rules are not supported")
        targets = self.expand(line, head).split()
        if not targets:
            raise self.error(line, "a rule without targets")
        recipe_inline = None
        if ";" in tail:
            tail, recipe_inline = tail.split(";", 1)
        normal, _, order_only = tail.partition("|")
        prerequisites = self.expand(line, normal).split()
        order = self.expand(line, order_only).split()
        if targets == [".PHONY"]:
            self.bakefile.phony.update(prerequisites)
            self.current = None
            return
        pattern = any("%" in target for target in targets)
        if pattern and not all("%" in target for target in targets):
            raise self.error(line, "a rule mixes pattern and explicit targets")
        self.current = Rule(targets, prerequisites, line=line, order_only=order)
        if recipe_inline is not None and recipe_inline.strip():
            self.current.recipe.append(recipe_inline.strip())
        self.bakefile.rules.append(self.current)
        if self.bakefile.default_goal is None and not pattern and not targets[0].startswith("."):
            self.bakefile.default_goal = targets[0]

    def read(self, text: str) -> Bakefile:
        for line, raw in _logical_lines(text):
            if raw.startswith("\t"):
                if self.current is None:
                    if raw.strip() == "":
                        continue
                    raise self.error(line, "recipe line before any rule")
                command = raw[1:]
                if command.strip():
                    self.current.recipe.append(command)
                continue
            content = _strip_comment(raw)
            if not content.strip():
                continue
            assignment = _split_assignment(content)
            if assignment is not None:
                self.assign(line, *assignment)
                self.current = None
                continue
            self.rule(line, content)
        return self.bakefile


def parse(text: str, filename: str = "Bakefile", overrides: dict[str, str] | None = None) -> Bakefile:
    """The Bakefile in ``text``. ``overrides`` (command-line ``NAME=value``) win over its assignments."""
    bakefile = _Reader(filename, dict(overrides or {})).read(text)
    for name, value in (overrides or {}).items():
        bakefile.variables[name] = value
    return bakefile
