import unittest

from basket.core import calc_total, calc_total_tax, recalc_totals


class TotalsTest(unittest.TestCase):
    def test_total_with_tax(self):
        self.assertEqual(calc_total([(2, 1000), (1, 250)], 0.2), 2700)

    def test_discount_never_negative(self):
        self.assertEqual(calc_total([(1, 100)], 0.0, discount_cents=500), 0)

    def test_tax_rounding(self):
        self.assertEqual(calc_total_tax([(1, 333)], 0.15), 50)

    def test_many(self):
        baskets = [{"id": "a", "lines": [(1, 100)]}, {"id": "b", "lines": [(3, 10)], "discount_cents": 5}]
        self.assertEqual(recalc_totals(baskets, 0.1), {"a": 110, "b": 28})


if __name__ == "__main__":
    unittest.main()
