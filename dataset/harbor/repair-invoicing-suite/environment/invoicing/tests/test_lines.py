import unittest
from decimal import Decimal

from invoicing.lines import parse_line, parse_lines


class LinesTest(unittest.TestCase):
    def test_simple_line(self):
        line = parse_line("A-1;Tools;3;4.50;")
        self.assertEqual((line.sku, line.category, line.quantity), ("A-1", "tools", 3))
        self.assertEqual(line.unit_price, Decimal("4.50"))
        self.assertEqual(line.discount, Decimal(0))

    def test_discount_percent(self):
        self.assertEqual(parse_line("B;tools;1;10;15%").discount, Decimal("0.15"))

    def test_thousands_in_quantity(self):
        self.assertEqual(parse_line(" C ; food ; 1,200 ; 0.99 ; ").quantity, 1200)

    def test_comments_and_blanks(self):
        self.assertEqual(len(parse_lines("# header\n\nA;x;1;1;\n")), 1)

    def test_malformed(self):
        with self.assertRaises(ValueError):
            parse_line("A;x;1")


if __name__ == "__main__":
    unittest.main()
