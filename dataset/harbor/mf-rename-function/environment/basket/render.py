"""Plain-text rendering of a basket."""

from .core import calc_total, calc_total_tax


def render(basket, tax_rate):
    lines = [f"Basket {basket['id']}"]
    for qty, price in basket["lines"]:
        lines.append(f"  {qty} x {price / 100:.2f}")
    lines.append(f"  tax {calc_total_tax(basket['lines'], tax_rate) / 100:.2f}")
    total = calc_total(basket["lines"], tax_rate, basket.get("discount_cents", 0))
    lines.append(f"  total {total / 100:.2f}")
    return "\n".join(lines)
