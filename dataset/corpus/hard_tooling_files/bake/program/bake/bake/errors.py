"""The errors bake reports to its user (each names the Bakefile line or the target concerned)."""


class BakeError(Exception):
    """Any problem bake reports and stops on (exit status 2)."""


class BakefileSyntaxError(BakeError):
    """The Bakefile cannot be read: ``FILE:LINE: message``."""

    def __init__(self, filename: str, line: int, message: str):
        super().__init__(f"{filename}:{line}: {message}")
        self.filename = filename
        self.line = line


class ExpansionError(BakeError):
    """A variable reference cannot be expanded (unterminated, or a variable that refers to itself)."""


class GraphError(BakeError):
    """No rule makes a needed target, or the rules form a cycle."""
