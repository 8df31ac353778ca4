"""Expanding ``$(NAME)``, ``${NAME}``, ``$X`` (one-character names such as the automatic ``$@ $< $^ $* $?``),
``$$`` (a literal dollar) and the functions ``$(patsubst PATTERN,REPLACEMENT,WORDS)``, ``$(wildcard GLOB...)``,
``$(addprefix P,WORDS)`` and ``$(strip TEXT)``.

Variables assigned with ``=`` are recursive: their value is expanded each time it is used. Assignments with
``:=`` are expanded once, when the line is read.
"""

from __future__ import annotations

import glob
import os
from typing import Mapping

from bake.errors import ExpansionError

MAX_DEPTH = 40


def _find_closing(text: str, start: int, opener: str) -> int:
    closer = ")" if opener == "(" else "}"
    depth = 1
    i = start
    while i < len(text):
        if text[i] == opener:
            depth += 1
        elif text[i] == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ExpansionError(f"unterminated variable reference in {text!r}")


def pattern_match(pattern: str, word: str) -> str | None:
    """The stem when ``word`` matches ``pattern`` (one ``%`` matching any non-empty text), else None.
    A pattern without ``%`` matches only itself (stem "")."""
    if "%" not in pattern:
        return "" if pattern == word else None
    prefix, suffix = pattern.split("%", 1)
    if len(word) < len(prefix) + len(suffix) + 1:
        return None
    if word.startswith(prefix) and word.endswith(suffix):
        return word[len(prefix):len(word) - len(suffix)]
    return None


def patsubst(pattern: str, replacement: str, words: str) -> str:
    out = []
    for word in words.split():
        stem = pattern_match(pattern, word)
        if stem is None:
            out.append(word)
        else:
            out.append(replacement.replace("%", stem, 1) if "%" in replacement else replacement)
    return " ".join(out)


class Expander:
    """Expands text against ``variables`` (name -> unexpanded value) and ``automatic`` (name -> final value)."""

    def __init__(self, variables: Mapping[str, str], automatic: Mapping[str, str] | None = None,
                 root: str = "."):
        self.variables = variables
        self.automatic = dict(automatic or {})
        self.root = root

    def expand(self, text: str) -> str:
        return self._expand(text, ())

    def _lookup(self, name: str, active: tuple[str, ...]) -> str:
        if name in self.automatic:
            return self.automatic[name]
        if name in active:
            raise ExpansionError(f"recursive variable '{name}' references itself (eventually)")
        if len(active) >= MAX_DEPTH:
            raise ExpansionError(f"variable references nest deeper than {MAX_DEPTH} levels at '{name}'")
        value = self.variables.get(name)
        if value is None:
            value = os.environ.get(name, "")
            return value
        return self._expand(value, active + (name,))

    def _function(self, name: str, argument: str, active: tuple[str, ...]) -> str:
        if name == "patsubst":
            parts = argument.split(",", 2)
            if len(parts) != 3:
                raise ExpansionError("patsubst takes three arguments: PATTERN,REPLACEMENT,WORDS")
            pattern, replacement, words = (self._expand(part, active) for part in parts)
            return patsubst(pattern.strip(), replacement.strip(), words)
        if name == "addprefix":
            prefix, _, words = argument.partition(",")
            return " ".join(self._expand(prefix, active).strip() + word
                            for word in self._expand(words, active).split())
        if name == "wildcard":
            found = []
            for pattern in self._expand(argument, active).split():
                matches = sorted(glob.glob(os.path.join(self.root, pattern)))
                found.extend(os.path.relpath(match, self.root) for match in matches)
            return " ".join(found)
        if name == "strip":
            return " ".join(self._expand(argument, active).split())
        raise ExpansionError(f"unknown function '{name}'")

    def _expand(self, text: str, active: tuple[str, ...]) -> str:
        out: list[str] = []
        i = 0
        while i < len(text):
            char = text[i]
            if char != "$":
                out.append(char)
                i += 1
                continue
            if i + 1 >= len(text):
                out.append("$")
                break
            following = text[i + 1]
            if following == "$":
                out.append("$")
                i += 2
            elif following in "({":
                end = _find_closing(text, i + 2, following)
                inner = text[i + 2:end]
                head, space, rest = inner.partition(" ")
                if space and head in ("patsubst", "addprefix", "wildcard", "strip"):
                    out.append(self._function(head, rest, active))
                else:
                    out.append(self._lookup(self._expand(inner, active), active))
                i = end + 1
            else:
                out.append(self._lookup(following, active))
                i += 2
        return "".join(out)


def expand(text: str, variables: Mapping[str, str], automatic: Mapping[str, str] | None = None,
           root: str = ".") -> str:
    """``text`` with every reference expanded."""
    return Expander(variables, automatic, root).expand(text)
