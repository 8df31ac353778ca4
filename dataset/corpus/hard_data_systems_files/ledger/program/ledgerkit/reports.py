"""Reports: balances per account, optionally converted into one currency.

A converted report converts each account's balance in each currency at the rate of the report's date (see
rates.py), rounds each converted amount to the report currency (money.py), and only then adds them up; parent
accounts and totals are sums of those rounded amounts, so that every printed column adds up exactly.
"""

from dataclasses import dataclass

from .accounts import ROOTS, natural_sign, root
from .money import Money


@dataclass
class ReportLine:
    account: str
    amounts: list
    """Money values, one per currency (a single one when converted), sorted by currency."""
    depth: int


def _convert_balances(balances, currency, rates, day):
    converted = {}
    for account, by_currency in balances.items():
        total = Money.zero(currency)
        for money in by_currency.values():
            rate = rates.rate(money.currency, currency, day)
            total = total + money.convert(currency, rate)
        converted[account] = {currency: total}
    return converted


def balance_report(ledger, day=None, currency=None, rates=None, prefix=None, start=None):
    """Report lines for the balances from ``start`` (or the beginning) to ``day`` (or the end), parents
    included, accounts in order; amounts with their natural sign when ``natural`` roots are credit roots."""
    balances = ledger.balances(start, day, prefix)
    if currency is not None:
        if rates is None:
            raise ValueError("a converted report needs exchange rates")
        day = day or ledger.last_day()
        balances = _convert_balances(balances, currency, rates, day)
    rolled = ledger.rolled_up(balances)
    lines = []
    for account in sorted(rolled, key=lambda name: (ROOTS.index(root(name)), name)):
        amounts = [money for _, money in sorted(rolled[account].items()) if not money.is_zero()]
        if amounts:
            lines.append(ReportLine(account, amounts, account.count(":")))
    return lines


def income_statement(ledger, start, end, currency=None, rates=None):
    """Income and expenses over [start, end], with the net result; converted at ``end``'s rates."""
    lines = []
    for prefix in ("Income", "Expenses"):
        lines += balance_report(ledger, end, currency, rates, prefix, start)
    return lines


def net_total(lines, prefixes=("Income", "Expenses")):
    """{currency: Money} summing the root lines of ``prefixes``."""
    totals = {}
    for line in lines:
        if line.depth == 0 and line.account in prefixes:
            for money in line.amounts:
                totals[money.currency] = totals.get(money.currency, Money.zero(money.currency)) + money
    return totals


def format_report(lines, natural=False):
    out = []
    for line in lines:
        sign = natural_sign(line.account) if natural else 1
        shown = "  ".join((money * sign).format() for money in line.amounts)
        out.append(f"{'  ' * line.depth}{line.account.split(':')[-1] if line.depth else line.account}\t{shown}")
    return "\n".join(out)


def format_flat(lines):
    """One ``ACCOUNT<TAB>AMOUNT CUR`` line per account and currency: the machine-readable form."""
    out = []
    for line in lines:
        for money in line.amounts:
            out.append(f"{line.account}\t{money.format()}")
    return "\n".join(out)
