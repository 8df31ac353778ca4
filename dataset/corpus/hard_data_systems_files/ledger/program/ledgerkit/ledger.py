"""The ledger: the transactions of a journal, and balances from them."""

from datetime import date

from .accounts import is_under, parents
from .journal import balance_transaction
from .money import Money


class Ledger:
    def __init__(self, transactions=()):
        self.transactions = []
        for transaction in transactions:
            self.add(transaction)

    def add(self, transaction):
        self.transactions.append(balance_transaction(transaction))

    def sorted_transactions(self):
        return sorted(self.transactions, key=lambda t: (t.day, t.source))

    def postings(self, start=None, end=None):
        """(transaction, posting) for the transactions with start <= day <= end (bounds inclusive, optional)."""
        for transaction in self.sorted_transactions():
            if start is not None and transaction.day < start:
                continue
            if end is not None and transaction.day > end:
                continue
            for posting in transaction.postings:
                yield transaction, posting

    def balances(self, start=None, end=None, prefix=None):
        """{account: {currency: Money}} over the period, for the accounts under ``prefix`` (all when None)."""
        result = {}
        for _, posting in self.postings(start, end):
            if prefix is not None and not is_under(posting.account, prefix):
                continue
            by_currency = result.setdefault(posting.account, {})
            money = posting.money.rounded()
            by_currency[money.currency] = by_currency.get(money.currency, Money.zero(money.currency)) + money
        return result

    def rolled_up(self, balances):
        """Balances with every parent account holding the sum of its children (and itself)."""
        result = {}
        for account, by_currency in balances.items():
            for name in parents(account) + [account]:
                target = result.setdefault(name, {})
                for currency, money in by_currency.items():
                    target[currency] = target.get(currency, Money.zero(currency)) + money
        return result

    def accounts(self):
        return sorted({posting.account for _, posting in self.postings()})

    def first_day(self):
        return min((t.day for t in self.transactions), default=None)

    def last_day(self):
        return max((t.day for t in self.transactions), default=None)

    def duplicates_of(self, transaction):
        """Transactions already in the ledger with the same day, description and postings (import de-dup)."""
        key = _fingerprint(transaction)
        return [t for t in self.transactions if _fingerprint(t) == key]


def _fingerprint(transaction):
    postings = sorted((p.account, str(p.money)) for p in transaction.postings)
    return (transaction.day, transaction.description.strip().lower(), tuple(postings))


def parse_day(text):
    return None if text is None else date.fromisoformat(text)
