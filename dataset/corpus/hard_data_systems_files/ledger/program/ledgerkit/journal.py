"""Transactions and postings, and the balancing rule of double entry.

A transaction balances when, for every currency, its postings sum to zero once each posting is rounded to its
currency. At most one posting may leave its amount out; it takes the amount that balances the rest (which then
must be in a single currency).
"""

from dataclasses import dataclass, field
from datetime import date

from .accounts import check_account
from .errors import LedgerError, UnbalancedError
from .money import Money


@dataclass(frozen=True)
class Posting:
    account: str
    money: Money | None
    """None: the amount was left out in the journal (filled in by :func:`balance_transaction`)."""
    note: str = ""


@dataclass
class Transaction:
    day: date
    description: str
    postings: list = field(default_factory=list)
    source: str = ""
    """Where the transaction came from (``file:line`` of the journal or of an imported file)."""
    tags: tuple = ()

    def currencies(self):
        return sorted({p.money.currency for p in self.postings if p.money is not None})


def balance_transaction(transaction):
    """Check ``transaction`` balances, filling in the one elided amount if there is one; returns it."""
    if len(transaction.postings) < 2:
        raise LedgerError(f"{transaction.source}: a transaction needs at least two postings")
    for posting in transaction.postings:
        check_account(posting.account)
    elided = [i for i, p in enumerate(transaction.postings) if p.money is None]
    if len(elided) > 1:
        raise LedgerError(f"{transaction.source}: only one posting may leave its amount out")
    sums = {}
    for posting in transaction.postings:
        if posting.money is not None:
            rounded = posting.money.rounded()
            sums[rounded.currency] = sums.get(rounded.currency, Money.zero(rounded.currency)) + rounded
    residue = {currency: money for currency, money in sums.items() if not money.is_zero()}
    if elided:
        if len(residue) > 1:
            raise UnbalancedError(transaction.source, "an elided amount cannot balance several currencies")
        if residue:
            (money,) = residue.values()
            index = elided[0]
            old = transaction.postings[index]
            transaction.postings[index] = Posting(old.account, -money, old.note)
        else:
            raise LedgerError(f"{transaction.source}: nothing left for the elided posting")
        return transaction
    if residue:
        raise UnbalancedError(transaction.source, ", ".join(str(m) for m in residue.values()))
    return transaction
