"""Accounts: colon-separated names under five roots.

Assets and Expenses have debit balances (positive amounts); Liabilities, Equity and Income have credit balances
(negative amounts in the journal). Reports show each root with its natural sign.
"""

import re

from .errors import LedgerError

ROOTS = ("Assets", "Liabilities", "Equity", "Income", "Expenses")
DEBIT_ROOTS = ("Assets", "Expenses")
SEGMENT = re.compile(r"^[A-Z][A-Za-z0-9-]*$")


def check_account(name):
    parts = name.split(":")
    if parts[0] not in ROOTS:
        raise LedgerError(f"account {name!r} must start with one of {', '.join(ROOTS)}")
    for part in parts[1:]:
        if not SEGMENT.match(part):
            raise LedgerError(f"account {name!r}: bad segment {part!r}")
    return name


def root(name):
    return name.split(":", 1)[0]


def parents(name):
    """'Assets:Bank:Checking' -> ['Assets', 'Assets:Bank']."""
    parts = name.split(":")
    return [":".join(parts[:i]) for i in range(1, len(parts))]


def natural_sign(name):
    return 1 if root(name) in DEBIT_ROOTS else -1


def is_under(name, prefix):
    return name == prefix or name.startswith(prefix + ":")
