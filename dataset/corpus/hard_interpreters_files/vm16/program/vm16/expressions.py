"""Operand expressions: numbers, characters, names, and sums/differences of them.

``42``, ``-7``, ``0x1F``, ``0b101``, ``'A'``, ``'\\n'``, ``LIMIT``, ``buffer+4``, ``end-start``, ``.loop``.
Names are looked up as constants first, then as labels (a local ``.name`` in the current scope).
"""

import re

from vm16.directives import decode_string
from vm16.errors import AssemblyError

TERM = re.compile(r"\s*([+-]?)\s*('(?:\\.|[^'\\])+'|0x[0-9A-Fa-f]+|0b[01]+|\d+|\.?[A-Za-z_][A-Za-z0-9_]*)\s*")


class Unresolved(Exception):
    """A label not defined yet (pass 1 meets forward references)."""


def qualify(name, scope):
    """The full name of a label as written at a place whose global label is ``scope``."""
    if name.startswith("."):
        if scope is None:
            raise AssemblyError(f"local label {name} before any global label")
        return scope + name
    return name


def terms(text, line=None):
    """The (sign, token) terms of an expression; raises AssemblyError when it does not parse."""
    result = []
    position = 0
    while position < len(text):
        match = TERM.match(text, position)
        if not match or (result and not match.group(1)):
            raise AssemblyError(f"cannot read expression {text!r}", line)
        result.append((match.group(1) or "+", match.group(2)))
        position = match.end()
    if not result:
        raise AssemblyError("empty expression", line)
    return result


def term_value(token, scope, symbols, constants, line):
    if token.startswith("'"):
        text = decode_string(token, line)
        if len(text) != 1:
            raise AssemblyError(f"character literal {token} holds {len(text)} characters", line)
        return ord(text)
    if token.startswith("0x"):
        return int(token[2:], 16)
    if token.startswith("0b"):
        return int(token[2:], 2)
    if token.isdigit():
        return int(token)
    if token in constants:
        return constants[token]
    full = qualify(token, scope)
    if full in symbols:
        return symbols[full]
    raise Unresolved(full)


def evaluate(text, scope, symbols, constants, line=None):
    """The value of the expression ``text``; raises Unresolved for a label not (yet) defined."""
    total = 0
    for sign, token in terms(text, line):
        value = term_value(token, scope, symbols, constants, line)
        total = total - value if sign == "-" else total + value
    return total


def mentions_label(text, constants, line=None):
    """Whether the expression refers to any label (its value then depends on the layout)."""
    for _, token in terms(text, line):
        if token.startswith("'") or token[0].isdigit():
            continue
        if token not in constants:
            return True
    return False
