import unittest
from decimal import Decimal

from invoicing.money import format_money, to_money


class MoneyTest(unittest.TestCase):
    def test_rounds_half_away_from_zero(self):
        self.assertEqual(to_money("2.675"), Decimal("2.68"))
        self.assertEqual(to_money("0.125"), Decimal("0.13"))

    def test_exact_cents(self):
        self.assertEqual(str(to_money("19.99")), "19.99")
        self.assertEqual(str(to_money(3)), "3.00")

    def test_format(self):
        self.assertEqual(format_money(Decimal("1234.5")), "1,234.50")


if __name__ == "__main__":
    unittest.main()
