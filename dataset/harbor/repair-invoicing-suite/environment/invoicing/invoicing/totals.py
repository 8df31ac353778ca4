from decimal import Decimal

from invoicing.money import to_money
from invoicing.tax import rate_for


def line_net(line):
    """quantity * unit price, rounded, minus the line's discount, rounded again."""
    gross = to_money(line.quantity * line.unit_price)
    return to_money(gross * (1 - line.discount))


def invoice(lines, region):
    """``{"subtotal", "tax", "total"}``: the sum of the lines' nets, the sum of each line's tax on its net
    (rounded per line), and their sum."""
    subtotal = Decimal(0)
    tax = Decimal(0)
    for line in lines:
        gross = to_money(line.quantity * line.unit_price)
        subtotal += line_net(line)
        tax += to_money(gross * rate_for(region, line.category))
    return {"subtotal": subtotal, "tax": tax, "total": subtotal + tax}
