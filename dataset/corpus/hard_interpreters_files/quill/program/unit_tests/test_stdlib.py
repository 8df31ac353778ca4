import unittest

from quill.errors import QuillAssertionError, QuillRuntimeError
from unit_tests.helpers import output_of


class StdlibTest(unittest.TestCase):
    def test_map_filter_reduce(self):
        source = ("let xs = range(1, 6); print(map(fn(x) => x * x, xs), filter(fn(x) => x % 2 == 1, xs), "
                  "reduce(fn(a, b) => a + b, xs, 0));")
        self.assertEqual(output_of(source), "[1, 4, 9, 16, 25] [1, 3, 5] 15\n")

    def test_sort_with_key(self):
        self.assertEqual(output_of('print(sort(["bb", "a", "ccc"], len), sort([3, 1, 2]));'), '["a", "bb", "ccc"] [1, 2, 3]\n')

    def test_strings(self):
        source = 'print(upper("ab"), split("a,b", ","), join([1, 2], "-"), trim("  x "), replace("aa", "a", "b"));'
        self.assertEqual(output_of(source), 'AB ["a", "b"] 1-2 x bb\n')

    def test_format(self):
        self.assertEqual(output_of('print(format("{} of {}", 1, "two"));'), "1 of two\n")

    def test_conversions(self):
        self.assertEqual(output_of('print(int("12") + 1, float("2.5"), str(3) + "!", type([]));'), "13 2.5 3! list\n")

    def test_collections(self):
        source = 'let m = {"x": 1}; print(keys(m), values(m), has(m, "x"), contains([1, 2], 2), len("abc"));'
        self.assertEqual(output_of(source), '["x"] [1] true true 3\n')

    def test_slice_and_reverse(self):
        self.assertEqual(output_of('print(slice([1, 2, 3, 4], 1, 3), reverse("abc"), min(3, 1), max([2, 9]));'), "[2, 3] cba 1 9\n")

    def test_plain_repr(self):
        self.assertEqual(output_of('print(repr("plain"), repr([1, "x"]));'), '"plain" [1, "x"]\n')

    def test_assert(self):
        with self.assertRaises(QuillAssertionError):
            output_of('assert(1 == 2, "math");')

    def test_arity(self):
        with self.assertRaises(QuillRuntimeError):
            output_of("len();")


if __name__ == "__main__":
    unittest.main()
