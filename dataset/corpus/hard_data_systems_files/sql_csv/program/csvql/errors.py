"""Errors of csvql; each names what is wrong (the CLI prints it and exits 2)."""


class CsvqlError(Exception):
    """Base class."""


class TokenizeError(CsvqlError):
    def __init__(self, text, position, reason):
        super().__init__(f"{reason} at position {position}: {text[position:position + 20]!r}")
        self.position = position


class ParseError(CsvqlError):
    def __init__(self, token, expected):
        where = "end of query" if token is None else f"{token.text!r} at position {token.position}"
        super().__init__(f"expected {expected}, found {where}")
        self.token = token


class CatalogError(CsvqlError):
    """A table or column that does not exist, or a CSV file that cannot be read."""


class PlanError(CsvqlError):
    """A query that parses but cannot be run (an aggregate in WHERE, a bare column next to an aggregate, ...)."""


class EvaluationError(CsvqlError):
    """A type error while evaluating (text + number, an unknown function, ...)."""
