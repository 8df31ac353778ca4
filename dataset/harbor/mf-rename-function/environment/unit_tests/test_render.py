import unittest

from basket import calc_total
from basket.render import render


class RenderTest(unittest.TestCase):
    def test_render_ends_with_total(self):
        basket = {"id": "x1", "lines": [(1, 1999)]}
        text = render(basket, 0.2)
        self.assertTrue(text.endswith(f"total {calc_total(basket['lines'], 0.2) / 100:.2f}"))


if __name__ == "__main__":
    unittest.main()
