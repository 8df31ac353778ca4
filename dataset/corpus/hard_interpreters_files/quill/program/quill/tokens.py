"""Token kinds and the token record the lexer produces."""

from dataclasses import dataclass

# kinds
NUMBER = "NUMBER"
STRING = "STRING"
NAME = "NAME"
KEYWORD = "KEYWORD"
OP = "OP"
EOF_KIND = "EOF"

KEYWORDS = frozenset({
    "let", "fn", "return", "if", "else", "while", "for", "in", "break", "continue",
    "true", "false", "nil", "and", "or", "not",
})

# longest first: the lexer tries them in this order
OPERATORS = (
    "**", "//", "==", "!=", "<=", ">=", "+=", "-=", "=>",
    "+", "-", "*", "/", "%", "<", ">", "=",
    "(", ")", "[", "]", "{", "}", ",", ";", ":",
)


@dataclass(frozen=True)
class Token:
    """One token: its kind, its value (the text, or the decoded value of a literal) and where it starts."""

    kind: str
    value: object
    line: int
    column: int

    def is_op(self, *texts):
        return self.kind == OP and self.value in texts

    def is_keyword(self, *words):
        return self.kind == KEYWORD and self.value in words

    def __str__(self):
        if self.kind in (OP, KEYWORD, NAME):
            return f"{self.kind} {self.value}"
        if self.kind == EOF_KIND:
            return "EOF"
        return f"{self.kind} {self.value!r}"
