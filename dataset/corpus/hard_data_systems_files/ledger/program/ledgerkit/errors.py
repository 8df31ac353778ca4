"""Errors of ledgerkit; each names the file, line or value that is wrong."""


class LedgerError(Exception):
    exit_status = 2


class MoneyError(LedgerError):
    """An amount that cannot be parsed, or arithmetic across two currencies."""


class UnbalancedError(LedgerError):
    def __init__(self, where, residue):
        super().__init__(f"{where}: transaction does not balance ({residue})")
        self.where = where


class JournalSyntaxError(LedgerError):
    def __init__(self, path, line_number, reason):
        super().__init__(f"{path}:{line_number}: {reason}")
        self.path = path
        self.line_number = line_number


class ImportError_(LedgerError):
    """A line of an imported bank file that cannot be understood (named ImportError_ not to hide the builtin)."""

    def __init__(self, path, line_number, reason):
        super().__init__(f"{path}:{line_number}: {reason}")
        self.path = path
        self.line_number = line_number


class RateError(LedgerError):
    """No exchange rate for a pair of currencies on or before a date."""
