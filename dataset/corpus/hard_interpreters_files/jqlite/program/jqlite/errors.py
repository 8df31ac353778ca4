"""Errors of jqlite. The command line maps each kind to its exit status."""


class JqliteError(Exception):
    """Base of every error shown to a user."""

    exit_status = 5

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class FilterSyntaxError(JqliteError):
    """The filter does not compile (lexer, parser, unknown function or variable)."""

    exit_status = 3

    def __init__(self, message, position=None):
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"syntax error{where}: {message}")
        self.position = position


class FilterRuntimeError(JqliteError):
    """The filter failed on its input (a wrong type, error(...), ...)."""

    exit_status = 5


class InputError(JqliteError):
    """An input is not valid JSON, or a file cannot be read."""

    exit_status = 2


class UsageError(JqliteError):
    """The command line is wrong."""

    exit_status = 2
