"""Token kinds of the filter language."""

from dataclasses import dataclass

NUMBER = "NUMBER"
STRING = "STRING"
IDENT = "IDENT"        # a name: function, keyword or field after a dot
FIELD = "FIELD"        # .name
VARIABLE = "VARIABLE"  # $name
OP = "OP"
END = "END"

KEYWORDS = frozenset({"if", "then", "elif", "else", "end", "and", "or", "as", "true", "false", "null"})

OPERATORS = ("//", "==", "!=", "<=", ">=", "|", ",", "+", "-", "*", "/", "%", "<", ">", "(", ")", "[", "]",
             "{", "}", ":", ";", "?", ".")


@dataclass(frozen=True)
class Token:
    kind: str
    value: object
    position: int

    def is_op(self, *texts):
        return self.kind == OP and self.value in texts

    def is_word(self, *words):
        return self.kind == IDENT and self.value in words
