"""The journal file: plain text, one transaction per block.

    2024-03-01 Rent for March  ; tags: home
        Expenses:Housing:Rent        1250.00 EUR
        Assets:Bank:Checking

The first line is the date (YYYY-MM-DD) and the description; each following indented line is a posting: the
account, two or more spaces, then ``AMOUNT CURRENCY`` (or nothing, for the one elided posting). Lines starting
with ``;`` or ``#`` are comments; blank lines separate transactions.
"""

import re
from datetime import date

from .errors import JournalSyntaxError, LedgerError
from .journal import Posting, Transaction, balance_transaction
from .money import Money

HEADER = re.compile(r"^(\d{4}-\d{2}-\d{2})\s+(.*?)\s*(?:;\s*tags:\s*(.*))?$")
POSTING = re.compile(r"^\s+(\S+)(?:\s{2,}(\S+\s+[A-Z]{3}))?\s*$")


def parse_journal(text, path="<journal>"):
    transactions = []
    current = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line or line.lstrip().startswith((";", "#")):
            if not line and current is not None:
                transactions.append(_finish(current))
                current = None
            continue
        if not line[0].isspace():
            if current is not None:
                transactions.append(_finish(current))
            match = HEADER.match(line)
            if not match:
                raise JournalSyntaxError(path, number, f"expected 'YYYY-MM-DD description', got {line!r}")
            try:
                day = date.fromisoformat(match.group(1))
            except ValueError:
                raise JournalSyntaxError(path, number, f"bad date {match.group(1)}") from None
            tags = tuple(t.strip() for t in (match.group(3) or "").split(",") if t.strip())
            current = Transaction(day, match.group(2), [], f"{path}:{number}", tags)
            continue
        if current is None:
            raise JournalSyntaxError(path, number, "posting outside a transaction")
        match = POSTING.match(line)
        if not match:
            raise JournalSyntaxError(path, number, f"cannot read posting {line.strip()!r}")
        try:
            money = Money.parse(match.group(2)) if match.group(2) else None
        except LedgerError as error:
            raise JournalSyntaxError(path, number, str(error)) from None
        current.postings.append(Posting(match.group(1), money))
    if current is not None:
        transactions.append(_finish(current))
    return transactions


def _finish(transaction):
    return balance_transaction(transaction)


def read_journal(path):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return []
    return parse_journal(text, path)


def format_transaction(transaction):
    header = f"{transaction.day.isoformat()} {transaction.description}"
    if transaction.tags:
        header += f"  ; tags: {', '.join(transaction.tags)}"
    width = max(len(p.account) for p in transaction.postings) + 4
    lines = [header]
    for posting in transaction.postings:
        if posting.money is None:
            lines.append(f"    {posting.account}")
        else:
            lines.append(f"    {posting.account.ljust(width)}{posting.money.format():>16}")
    return "\n".join(lines) + "\n"


def append_transactions(path, transactions):
    """Append ``transactions`` to the journal at ``path`` (created when missing), one blank line between."""
    existing = ""
    try:
        with open(path, encoding="utf-8") as handle:
            existing = handle.read()
    except FileNotFoundError:
        pass
    with open(path, "a", encoding="utf-8") as handle:
        if existing and not existing.endswith("\n\n"):
            handle.write("\n" if existing.endswith("\n") else "\n\n")
        handle.write("\n".join(format_transaction(t) for t in transactions))
