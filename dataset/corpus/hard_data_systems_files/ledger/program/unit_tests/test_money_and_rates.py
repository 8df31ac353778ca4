import unittest
from datetime import date
from decimal import Decimal

from ledgerkit.errors import MoneyError, RateError
from ledgerkit.money import Money, round_amount
from ledgerkit.rates import RateTable


class MoneyTest(unittest.TestCase):
    def test_parse_and_format(self):
        self.assertEqual(Money.parse("12.5 USD").format(), "12.50 USD")
        self.assertEqual(Money.parse("1500 JPY").format(), "1500 JPY")
        self.assertEqual(Money.parse("-0.1234 KWD").format(), "-0.123 KWD")

    def test_half_even(self):
        self.assertEqual(round_amount(Decimal("0.125"), "USD"), Decimal("0.12"))
        self.assertEqual(round_amount(Decimal("0.135"), "USD"), Decimal("0.14"))
        self.assertEqual(round_amount(Decimal("2.5"), "JPY"), Decimal("2"))

    def test_no_mixing(self):
        with self.assertRaises(MoneyError):
            Money.parse("1 USD") + Money.parse("1 EUR")
        with self.assertRaises(MoneyError):
            Money.parse("1 XYZ")

    def test_convert_between_two_decimal_currencies(self):
        self.assertEqual(Money.parse("100.00 EUR").convert("USD", Decimal("1.0855")).format(), "108.55 USD")

    def test_negative_zero_prints_as_zero(self):
        self.assertEqual((Money.parse("1.00 USD") - Money.parse("1.00 USD")).format(), "0.00 USD")


class RateTest(unittest.TestCase):
    def setUp(self):
        self.rates = RateTable()
        self.rates.add(date(2024, 1, 2), "EUR", "USD", Decimal("1.10"))
        self.rates.add(date(2024, 1, 3), "EUR", "USD", Decimal("1.20"))
        self.rates.add(date(2024, 1, 2), "USD", "JPY", Decimal("140"))

    def test_exact_day(self):
        self.assertEqual(self.rates.rate("EUR", "USD", date(2024, 1, 3)), Decimal("1.20"))

    def test_after_the_last_rate(self):
        self.assertEqual(self.rates.rate("EUR", "USD", date(2024, 2, 1)), Decimal("1.20"))

    def test_inverse(self):
        self.assertEqual(self.rates.rate("USD", "EUR", date(2024, 1, 2)), Decimal(1) / Decimal("1.10"))

    def test_before_the_first_rate(self):
        with self.assertRaises(RateError):
            self.rates.rate("EUR", "USD", date(2023, 12, 31))

    def test_same_currency(self):
        self.assertEqual(self.rates.rate("CHF", "CHF", date(2000, 1, 1)), 1)


if __name__ == "__main__":
    unittest.main()
