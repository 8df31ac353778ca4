"""Amounts of money: a Decimal and a currency code, never floats.

Each currency has a number of minor-unit digits (its exponent): USD, EUR, GBP and CHF 2, JPY and KRW 0, KWD and
BHD 3. An amount is rounded to its currency's exponent with ROUND_HALF_EVEN ("banker's rounding") whenever it is
stored or printed, and a converted amount is rounded to the exponent of the currency it was converted INTO.
"""

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from .errors import MoneyError

EXPONENTS = {"USD": 2, "EUR": 2, "GBP": 2, "CHF": 2, "CAD": 2, "SEK": 2, "JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3}
CURRENCY_CODE = re.compile(r"^[A-Z]{3}$")


def check_currency(code):
    if not isinstance(code, str) or not CURRENCY_CODE.match(code):
        raise MoneyError(f"not a currency code: {code!r}")
    if code not in EXPONENTS:
        raise MoneyError(f"unknown currency {code} (known: {', '.join(sorted(EXPONENTS))})")
    return code


def exponent(code):
    return EXPONENTS[check_currency(code)]


def quantum(code):
    return Decimal(1).scaleb(-exponent(code))


def round_amount(amount, code):
    """``amount`` rounded half-even to the minor unit of ``code``."""
    return Decimal(amount).quantize(quantum(code), rounding=ROUND_HALF_EVEN)


def parse_decimal(text):
    """A Decimal from plain text such as ``-1234.50`` (no grouping, no currency signs)."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        raise MoneyError(f"not an amount: {text!r}") from None
    if not value.is_finite():
        raise MoneyError(f"not an amount: {text!r}")
    return value


@dataclass(frozen=True)
class Money:
    amount: Decimal
    currency: str

    def __post_init__(self):
        check_currency(self.currency)
        if not isinstance(self.amount, Decimal):
            object.__setattr__(self, "amount", Decimal(str(self.amount)))

    @classmethod
    def parse(cls, text):
        """``"12.50 USD"`` -> Money."""
        parts = text.split()
        if len(parts) != 2:
            raise MoneyError(f"expected 'AMOUNT CUR', got {text!r}")
        return cls(round_amount(parse_decimal(parts[0]), parts[1]), parts[1])

    @classmethod
    def zero(cls, currency):
        return cls(Decimal(0), currency)

    def rounded(self):
        return Money(round_amount(self.amount, self.currency), self.currency)

    def _same(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        if other.currency != self.currency:
            raise MoneyError(f"cannot combine {self.currency} and {other.currency}")
        return other

    def __add__(self, other):
        other = self._same(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other):
        other = self._same(other)
        return Money(self.amount - other.amount, self.currency)

    def __neg__(self):
        return Money(-self.amount, self.currency)

    def __mul__(self, factor):
        return Money(self.amount * Decimal(factor), self.currency)

    def is_zero(self):
        return self.rounded().amount == 0

    def convert(self, target, rate):
        """This amount in ``target`` at ``rate`` (units of target per unit of this currency), rounded."""
        check_currency(target)
        converted = self.amount * Decimal(rate)
        return Money(round_amount(converted, target), target)

    def format(self):
        value = round_amount(self.amount, self.currency)
        if value == 0:
            value = abs(value)
        return f"{value} {self.currency}"

    def __str__(self):
        return self.format()


def total(moneys, currency):
    """The sum of ``moneys`` (all in ``currency``)."""
    result = Money.zero(currency)
    for money in moneys:
        result = result + money
    return result
