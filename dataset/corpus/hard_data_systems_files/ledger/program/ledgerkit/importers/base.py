"""What every importer produces, and how a bank line becomes a transaction."""

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from ..journal import Posting, Transaction, balance_transaction
from ..money import Money, round_amount

GROUPED = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?$")


@dataclass(frozen=True)
class BankLine:
    day: date
    description: str
    amount: Decimal
    """Positive: money into the bank account; negative: money out."""
    currency: str
    source: str
    """file:line of the line in the imported file."""
    category: str | None = None
    """An account named by the file itself (QIF ``L`` lines); wins over the rules."""


def parse_bank_amount(text):
    """Bank-file amount text -> Decimal: ``-12.50``, ``+3``, ``1,234.56`` (thousands separators), ``(12.50)``
    (accounting notation for a negative amount)."""
    cleaned = text.strip().replace(" ", "")
    negative = False
    if cleaned.startswith("(") and cleaned.endswith(")"):
        cleaned = cleaned[1:-1]
        negative = True
    if cleaned.startswith("-"):
        negative, cleaned = not negative, cleaned[1:]
    elif cleaned.startswith("+"):
        cleaned = cleaned[1:]
    if GROUPED.match(cleaned):
        cleaned = cleaned.replace(",", "")
    value = Decimal(cleaned)
    return -value if negative else value


def to_transactions(lines, bank_account, rules):
    """One balanced transaction per bank line: the bank account, and the account the rules pick."""
    transactions = []
    for line in lines:
        money = Money(round_amount(line.amount, line.currency), line.currency)
        other = line.category or rules.account_for(line.description, line.amount)
        transaction = Transaction(line.day, line.description,
                                  [Posting(bank_account, money), Posting(other, -money)], line.source, ("imported",))
        transactions.append(balance_transaction(transaction))
    return transactions
