"""Basket arithmetic. Amounts are integer cents; lines are (quantity, unit price in cents)."""

from decimal import ROUND_HALF_UP, Decimal


def _cents(value):
    return int(Decimal(value).quantize(Decimal("1"), ROUND_HALF_UP))


def calc_total_tax(lines, tax_rate):
    """Tax on the lines, in cents (rounded half up)."""
    subtotal = sum(qty * price for qty, price in lines)
    return _cents(Decimal(subtotal) * Decimal(str(tax_rate)))


def calc_total(lines, tax_rate=0.0, discount_cents=0):
    """Total of one basket in cents: the lines, plus tax, less a discount (never below zero)."""
    subtotal = sum(qty * price for qty, price in lines)
    return max(0, subtotal + calc_total_tax(lines, tax_rate) - discount_cents)


def recalc_totals(baskets, tax_rate):
    """Totals of many baskets: {basket id: total in cents}."""
    return {bk["id"]: calc_total(bk["lines"], tax_rate, bk.get("discount_cents", 0)) for bk in baskets}
