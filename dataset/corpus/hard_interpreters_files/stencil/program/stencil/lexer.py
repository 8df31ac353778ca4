"""Splitting template text into tokens: TEXT, OUTPUT (``{{ ... }}``), TAG (``{% ... %}``).

Comments (``{# ... #}``) are dropped. A ``-`` right inside a delimiter (``{%-``, ``-%}``, ``{{-``, ``-}}``) strips
the whitespace of the text on that side. Each token records the line it starts on.
"""

import re
from dataclasses import dataclass

from stencil.errors import TemplateSyntaxError

TEXT, OUTPUT, TAG = "TEXT", "OUTPUT", "TAG"
OPENERS = {"{{": ("}}", OUTPUT), "{%": ("%}", TAG), "{#": ("#}", None)}
START = re.compile(r"\{\{|\{%|\{#")


@dataclass
class Token:
    kind: str
    value: str
    line: int


def tokenize(source, name=None):
    tokens = []
    position = 0
    line = 1
    strip_next = False
    while position < len(source):
        match = START.search(source, position)
        end_of_text = match.start() if match else len(source)
        text = source[position:end_of_text]
        if strip_next:
            text = text.lstrip()
        if match and source.startswith("-", match.end()):
            text = text.rstrip()
        if text:
            tokens.append(Token(TEXT, text, line))
        line += source.count("\n", position, end_of_text)
        if not match:
            break
        closer, kind = OPENERS[match.group()]
        inner_start = match.end() + (1 if source.startswith("-", match.end()) else 0)
        close = source.find(closer, inner_start)
        if close == -1:
            raise TemplateSyntaxError(f"unclosed {match.group()}", name, line)
        inner_end = close
        strip_next = close > inner_start and source[close - 1] == "-"
        if strip_next:
            inner_end -= 1
        if kind is not None:
            tokens.append(Token(kind, source[inner_start:inner_end].strip(), line))
        line += source.count("\n", match.start(), close + len(closer))
        position = close + len(closer)
    return tokens
