import unittest

from patchkit.apply import apply_hunks, candidate_positions, reverse_hunk
from patchkit.format import unified_diff
from patchkit.hunks import build_hunks
from patchkit.lines import Text, join_lines, split_lines
from patchkit.merge3 import merge
from patchkit.parse import parse_patch

OLD = "".join(f"row {n}\n" for n in range(1, 31))


def _text(*lines):
    return Text(list(lines), True)


class ApplyTest(unittest.TestCase):
    def test_exact_application(self):
        new = OLD.replace("row 4\n", "row four\n").replace("row 25\n", "")
        hunks = build_hunks(split_lines(OLD), split_lines(new))
        result, outcomes = apply_hunks(split_lines(OLD), hunks)
        self.assertEqual(join_lines(result), new)
        self.assertTrue(all(o.applied and o.offset == 0 and o.fuzz == 0 for o in outcomes))

    def test_through_the_text_format(self):
        new = OLD.replace("row 12\n", "row 12\nrow 12.5\n")
        patch = parse_patch(unified_diff(split_lines(OLD), split_lines(new), "a/t", "b/t"))[0]
        result, _ = apply_hunks(split_lines(OLD), patch.hunks)
        self.assertEqual(join_lines(result), new)

    def test_reverse_undoes(self):
        new = OLD.replace("row 9\n", "nine\n")
        hunks = build_hunks(split_lines(OLD), split_lines(new))
        result, _ = apply_hunks(split_lines(new), [reverse_hunk(h) for h in hunks])
        self.assertEqual(join_lines(result), OLD)

    def test_a_missing_context_fails(self):
        new = OLD.replace("row 9\n", "nine\n")
        hunks = build_hunks(split_lines(OLD), split_lines(new))
        target = OLD.replace("row 8\n", "row eight\n")
        result, outcomes = apply_hunks(split_lines(target), hunks)
        self.assertFalse(outcomes[0].applied)
        self.assertEqual(join_lines(result), target)

    def test_expected_position_is_tried_first(self):
        self.assertEqual(candidate_positions(3, 2, 10)[0], 3)
        self.assertEqual(sorted(candidate_positions(3, 2, 10)), list(range(0, 9)))


class MergeTest(unittest.TestCase):
    def test_separate_changes_merge_cleanly(self):
        base = _text("a", "b", "c", "d", "e", "f")
        mine = _text("A", "b", "c", "d", "e", "f")
        theirs = _text("a", "b", "c", "d", "e", "F")
        result = merge(base, mine, theirs)
        self.assertEqual(result.conflicts, 0)
        self.assertEqual(result.text.lines, ["A", "b", "c", "d", "e", "F"])

    def test_one_sided_change(self):
        base = _text("a", "b", "c")
        result = merge(base, _text("a", "x", "y", "c"), base)
        self.assertEqual((result.conflicts, result.text.lines), (0, ["a", "x", "y", "c"]))

    def test_clashing_edits_conflict(self):
        base = _text("a", "b", "c")
        result = merge(base, _text("a", "mine", "c"), _text("a", "theirs", "c"), labels=("M", "B", "T"))
        self.assertEqual(result.conflicts, 1)
        self.assertEqual(result.text.lines, ["a", "<<<<<<< M", "mine", "=======", "theirs", ">>>>>>> T", "c"])


if __name__ == "__main__":
    unittest.main()
