"""Reading assembly source into :class:`Statement` records (one per label, instruction or directive).

A line is ``[label:] [mnemonic-or-directive [operand, ...]] [; comment]``. Labels that start with a dot are
local to the last global label (``.loop`` after ``fact:`` is ``fact.loop``). Operands are split on commas outside
quotes; string operands keep their quotes here and are decoded by :mod:`vm16.directives`.
"""

import re
from dataclasses import dataclass, field

from vm16.errors import AssemblyError

LABEL = re.compile(r"^(\.?[A-Za-z_][A-Za-z0-9_]*):")
NAME = re.compile(r"^\.?[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Statement:
    """One thing a source line asks for. ``kind`` is "label", "instruction" or "directive"."""

    kind: str
    name: str
    operands: list = field(default_factory=list)
    line: int = 0


def strip_comment(text):
    """``text`` without its ``;`` comment (a ``;`` inside quotes is kept)."""
    quote = None
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\" and quote:
            escaped = True
        elif quote:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == ";":
            return text[:index]
    return text


def split_operands(text, line, source_name):
    """The comma-separated operands of ``text`` (commas inside quotes do not split)."""
    operands, current, quote, escaped = [], "", None, False
    for char in text:
        if escaped:
            current += char
            escaped = False
            continue
        if char == "\\" and quote:
            current += char
            escaped = True
            continue
        if quote:
            current += char
            if char == quote:
                quote = None
            continue
        if char in "\"'":
            quote = char
            current += char
        elif char == ",":
            operands.append(current.strip())
            current = ""
        else:
            current += char
    if quote:
        raise AssemblyError("unterminated quote", line, source_name)
    if current.strip() or operands:
        operands.append(current.strip())
    if any(not operand for operand in operands):
        raise AssemblyError("empty operand", line, source_name)
    return operands


def read_source(text, source_name="<input>"):
    """The statements of a whole source text, in order."""
    statements = []
    for number, raw in enumerate(text.splitlines(), 1):
        rest = strip_comment(raw).strip()
        while True:
            match = LABEL.match(rest)
            if not match:
                break
            statements.append(Statement("label", match.group(1), [], number))
            rest = rest[match.end():].strip()
        if not rest:
            continue
        head, _, tail = rest.partition(" ")
        head = head.strip()
        if "\t" in head:
            head, _, more = head.partition("\t")
            tail = more + " " + tail
        operands = split_operands(tail.strip(), number, source_name) if tail.strip() else []
        if head.startswith("."):
            statements.append(Statement("directive", head.lower(), operands, number))
        elif NAME.match(head):
            statements.append(Statement("instruction", head.lower(), operands, number))
        else:
            raise AssemblyError(f"cannot read {head!r}", number, source_name)
    return statements
