import unittest
from decimal import Decimal

from invoicing.tax import rate_for


class TaxTest(unittest.TestCase):
    def test_known_region(self):
        self.assertEqual(rate_for("north", "tools"), Decimal("0.20"))

    def test_region_case_and_spaces(self):
        self.assertEqual(rate_for(" South ", "tools"), Decimal("0.10"))

    def test_exempt(self):
        self.assertEqual(rate_for("north", "books"), Decimal(0))

    def test_unknown_region(self):
        with self.assertRaises(KeyError):
            rate_for("east", "tools")


if __name__ == "__main__":
    unittest.main()
