"""Reading inputs: a file or standard input holds any number of JSON values one after another."""

import json

from jqlite.errors import InputError

_DECODER = json.JSONDecoder()


def parse_stream(text, source="<stdin>"):
    """Every JSON value in ``text``, in order (whitespace between them is ignored)."""
    values = []
    position = 0
    length = len(text)
    while True:
        while position < length and text[position] in " \t\r\n":
            position += 1
        if position >= length:
            return values
        try:
            value, position = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as error:
            line = text.count("\n", 0, error.pos) + 1
            raise InputError(f"{source}: invalid JSON at line {line}: {error.msg}") from None
        values.append(value)


def read_inputs(paths, stdin):
    """The input values of all ``paths`` (standard input when there are none)."""
    if not paths:
        return parse_stream(stdin.read())
    values = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as error:
            raise InputError(f"cannot read {path}: {error.strerror}") from None
        values.extend(parse_stream(text, path))
    return values
