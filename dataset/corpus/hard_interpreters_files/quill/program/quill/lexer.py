"""The lexer: source text to a list of :class:`~quill.tokens.Token`, ending with an EOF token.

Comments run from ``#`` to the end of the line. Numbers are integers (``42``, ``1_000``) or decimals (``3.25``).
Strings take double or single quotes and the escapes of :data:`ESCAPES` plus ``\\uXXXX``; a string may not
span lines (use ``\\n``).
"""

from quill.errors import QuillSyntaxError
from quill.tokens import EOF_KIND, KEYWORD, KEYWORDS, NAME, NUMBER, OP, OPERATORS, STRING, Token

ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "\\": "\\",
    '"': '"',
    "'": "'",
}


class Lexer:
    """A cursor over the source that yields tokens one at a time."""

    def __init__(self, source):
        self.source = source
        self.index = 0
        self.line = 1
        self.column = 1

    # -- cursor ------------------------------------------------------------------------------------
    def peek(self, offset=0):
        position = self.index + offset
        return self.source[position] if position < len(self.source) else ""

    def advance(self):
        char = self.source[self.index]
        self.index += 1
        if char == "\n":
            self.line += 1
            self.column = 1
        else:
            self.column += 1
        return char

    def error(self, message, line=None, column=None):
        return QuillSyntaxError(message, line or self.line, column or self.column)

    # -- scanning ----------------------------------------------------------------------------------
    def skip_space_and_comments(self):
        while self.index < len(self.source):
            char = self.peek()
            if char in " \t\r\n":
                self.advance()
            elif char == "#":
                while self.index < len(self.source) and self.peek() != "\n":
                    self.advance()
            else:
                return

    def tokens(self):
        result = []
        while True:
            self.skip_space_and_comments()
            if self.index >= len(self.source):
                result.append(Token(EOF_KIND, None, self.line, self.column))
                return result
            result.append(self.next_token())

    def next_token(self):
        line, column = self.line, self.column
        char = self.peek()
        if char.isdigit():
            return self.number(line, column)
        if char.isalpha() or char == "_":
            return self.word(line, column)
        if char in "\"'":
            return self.string(line, column)
        for operator in OPERATORS:
            if self.source.startswith(operator, self.index):
                for _ in operator:
                    self.advance()
                return Token(OP, operator, line, column)
        raise self.error(f"unexpected character {char!r}")

    def number(self, line, column):
        text = ""
        while self.peek().isdigit() or self.peek() == "_":
            text += self.advance()
        is_decimal = False
        if self.peek() == "." and self.peek(1).isdigit():
            is_decimal = True
            text += self.advance()
            while self.peek().isdigit() or self.peek() == "_":
                text += self.advance()
        if text.endswith("_") or "__" in text:
            raise self.error(f"malformed number {text!r}", line, column)
        digits = text.replace("_", "")
        return Token(NUMBER, float(digits) if is_decimal else int(digits), line, column)

    def word(self, line, column):
        text = ""
        while self.peek().isalnum() or self.peek() == "_":
            text += self.advance()
        return Token(KEYWORD if text in KEYWORDS else NAME, text, line, column)

    def string(self, line, column):
        quote = self.advance()
        chars = []
        while True:
            if self.index >= len(self.source) or self.peek() == "\n":
                raise self.error("unterminated string", line, column)
            char = self.advance()
            if char == quote:
                return Token(STRING, "".join(chars), line, column)
            if char != "\\":
                chars.append(char)
                continue
            if self.index >= len(self.source):
                raise self.error("unterminated string", line, column)
            escape_line, escape_column = self.line, self.column - 1
            code = self.advance()
            if code == "u":
                chars.append(self.unicode_escape(escape_line, escape_column))
            elif code in ESCAPES:
                chars.append(ESCAPES[code])
            else:
                raise self.error(f"unknown escape \\{code}", escape_line, escape_column)

    def unicode_escape(self, line, column):
        digits = ""
        for _ in range(4):
            if self.peek() == "" or self.peek() not in "0123456789abcdefABCDEF":
                raise self.error("\\u needs four hex digits", line, column)
            digits += self.advance()
        return chr(int(digits, 16))


def tokenize(source):
    """The tokens of ``source`` (a list ending with an EOF token); raises QuillSyntaxError."""
    return Lexer(source).tokens()
