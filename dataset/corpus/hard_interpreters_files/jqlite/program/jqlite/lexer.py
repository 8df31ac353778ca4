"""The lexer: a filter's text to tokens.

``.name`` is one FIELD token (``.`` alone, or before ``[``/``"``, is the OP ``.``); ``$name`` is one VARIABLE
token; strings are JSON strings (the same escapes); numbers are JSON numbers; ``#`` starts a comment.
"""

import json
import re

from jqlite.errors import FilterSyntaxError
from jqlite.tokens import END, FIELD, IDENT, NUMBER, OP, OPERATORS, STRING, VARIABLE, Token

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NUMBER_PATTERN = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_STRING_DECODER = json.JSONDecoder()


def tokenize(text):
    tokens = []
    position = 0
    while position < len(text):
        char = text[position]
        if char in " \t\r\n":
            position += 1
            continue
        if char == "#":
            while position < len(text) and text[position] != "\n":
                position += 1
            continue
        if char == '"':
            value, position = read_string(text, position)
            tokens.append(Token(STRING, value, position))
            continue
        if char == "." and position + 1 < len(text) and (text[position + 1].isalpha() or text[position + 1] == "_"):
            match = NAME.match(text, position + 1)
            tokens.append(Token(FIELD, match.group(), position))
            position = match.end()
            continue
        if char == "$":
            match = NAME.match(text, position + 1)
            if not match:
                raise FilterSyntaxError("'$' must be followed by a variable name", position)
            tokens.append(Token(VARIABLE, match.group(), position))
            position = match.end()
            continue
        if char.isdigit() or (char == "." and position + 1 < len(text) and text[position + 1].isdigit()):
            match = NUMBER_PATTERN.match(text, position)
            literal = match.group()
            value = float(literal) if any(c in literal for c in ".eE") else int(literal)
            tokens.append(Token(NUMBER, value, position))
            position = match.end()
            continue
        if char.isalpha() or char == "_":
            match = NAME.match(text, position)
            tokens.append(Token(IDENT, match.group(), position))
            position = match.end()
            continue
        for operator in OPERATORS:
            if text.startswith(operator, position):
                tokens.append(Token(OP, operator, position))
                position += len(operator)
                break
        else:
            raise FilterSyntaxError(f"unexpected character {char!r}", position)
    tokens.append(Token(END, None, len(text)))
    return tokens


def read_string(text, start):
    """The decoded JSON string starting at ``start`` and the position after it."""
    try:
        value, end = _STRING_DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise FilterSyntaxError(f"bad string literal ({error.msg})", start) from None
    return value, end
