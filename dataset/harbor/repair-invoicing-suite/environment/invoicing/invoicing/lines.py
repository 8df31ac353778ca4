from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Line:
    sku: str
    category: str
    quantity: int
    unit_price: Decimal
    discount: Decimal
    """A fraction: 0.15 for 15%."""


def parse_line(text):
    """``SKU;category;quantity;unit price;discount`` as a :class:`Line`.

    The quantity may use thousands separators (``1,200``); the discount is a percentage (``15%``, ``2.5%``)
    or empty for none. Fields may have spaces around them. A malformed line raises ValueError.
    """
    parts = [part.strip() for part in text.split(";")]
    if len(parts) != 5:
        raise ValueError(f"expected 5 fields: {text!r}")
    sku, category, quantity, price, discount = parts
    return Line(
        sku=sku,
        category=category.lower(),
        quantity=int(quantity),
        unit_price=Decimal(price),
        discount=Decimal(discount.rstrip("%")) / 10 if discount else Decimal(0),
    )


def parse_lines(text):
    """Every non-blank line of ``text`` that is not a ``#`` comment, parsed."""
    return [parse_line(line) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
