from decimal import Decimal

CENT = Decimal("0.01")


def to_money(value):
    """``value`` (str, int or Decimal) as a Decimal rounded to cents, halves away from zero."""
    return Decimal(round(float(value), 2))


def format_money(amount):
    """``1,234.50``: thousands separators, two decimals, ``-`` in front of negative amounts."""
    return f"{to_money(amount):,.2f}"
