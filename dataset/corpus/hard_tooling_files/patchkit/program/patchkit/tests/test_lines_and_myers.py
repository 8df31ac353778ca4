import random
import unittest

from patchkit.lines import Text, join_lines, split_lines
from patchkit.myers import distance, edit_script, opcodes


def _lcs_length(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    return table[0][0]


class LinesTest(unittest.TestCase):
    def test_round_trip(self):
        for data in ["", "a\n", "a", "a\nb\n", "a\nb", "\n", "\n\n", "x\r\ny\r\n"]:
            self.assertEqual(join_lines(split_lines(data)), data)

    def test_missing_final_newline_is_a_difference(self):
        self.assertNotEqual(Text(["a"], True).tokens(), Text(["a"], False).tokens())
        self.assertEqual(Text([], True).tokens(), [])


class MyersTest(unittest.TestCase):
    def test_identical_and_empty(self):
        self.assertEqual(distance("abc", "abc"), 0)
        self.assertEqual(distance("", "abc"), 3)
        self.assertEqual(distance("abc", ""), 3)
        self.assertEqual(opcodes([], []), [])

    def test_classic_example(self):
        self.assertEqual(distance("ABCABBA", "CBABAC"), 5)

    def test_scripts_are_shortest_and_rebuild_the_target(self):
        rng = random.Random(5)
        for _ in range(300):
            a = [rng.choice("abcd") for _ in range(rng.randrange(0, 14))]
            b = [rng.choice("abcd") for _ in range(rng.randrange(0, 14))]
            rebuilt = []
            for tag, i1, i2, j1, j2 in opcodes(a, b):
                rebuilt.extend(a[i1:i2] if tag == "equal" else b[j1:j2])
            self.assertEqual(rebuilt, b)
            self.assertEqual(distance(a, b), len(a) + len(b) - 2 * _lcs_length(a, b))

    def test_moves_cover_both_sequences(self):
        moves = edit_script("kitten", "sitting")
        self.assertEqual(sum(1 for kind, _, _ in moves if kind != "+"), 6)
        self.assertEqual(sum(1 for kind, _, _ in moves if kind != "-"), 7)


if __name__ == "__main__":
    unittest.main()
