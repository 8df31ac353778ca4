import unittest

from tinyfmt import render


class RenderTest(unittest.TestCase):
    def test_grid(self):
        self.assertEqual(render([["a", "bb"], ["ccc", "d"]], "grid"),
                         "a   | bb\n--- | --\nccc | d\n")
