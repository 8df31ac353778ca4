"""The errors of Quill. Each carries the source position it refers to, when known."""


class QuillError(Exception):
    """Base of every error Quill reports to a user."""

    kind = "error"

    def __init__(self, message, line=None, column=None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def describe(self):
        """The one-line form the command line prints: ``kind at line L, column C: message``."""
        if self.line is None:
            return f"{self.kind}: {self.message}"
        if self.column is None:
            return f"{self.kind} at line {self.line}: {self.message}"
        return f"{self.kind} at line {self.line}, column {self.column}: {self.message}"


class QuillSyntaxError(QuillError):
    """The text is not a Quill program (lexer or parser)."""

    kind = "syntax error"


class QuillRuntimeError(QuillError):
    """The program did something Quill does not allow (a wrong type, an unknown name, ...)."""

    kind = "runtime error"


class QuillAssertionError(QuillRuntimeError):
    """``assert(...)`` failed."""

    kind = "assertion failed"
