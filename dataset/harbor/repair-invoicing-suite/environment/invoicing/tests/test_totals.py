import unittest
from decimal import Decimal

from invoicing.lines import parse_lines
from invoicing.totals import invoice


class TotalsTest(unittest.TestCase):
    def test_invoice_with_discount(self):
        lines = parse_lines("A;tools;2;50.00;10%\nB;books;1;20.00;\n")
        result = invoice(lines, "north")
        self.assertEqual(result["subtotal"], Decimal("110.00"))
        self.assertEqual(result["tax"], Decimal("18.00"))
        self.assertEqual(result["total"], Decimal("128.00"))


if __name__ == "__main__":
    unittest.main()
