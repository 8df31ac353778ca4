import unittest

from patchkit.format import hunk_header, unified_diff
from patchkit.hunks import build_hunks
from patchkit.lines import split_lines
from patchkit.parse import PatchSyntaxError, parse_patch, strip_path

OLD = "".join(f"line {n}\n" for n in range(1, 21))


class DiffTest(unittest.TestCase):
    def test_no_difference_gives_nothing(self):
        self.assertEqual(unified_diff(split_lines(OLD), split_lines(OLD), "a", "b"), "")

    def test_one_changed_line(self):
        new = OLD.replace("line 10\n", "line ten\n")
        text = unified_diff(split_lines(OLD), split_lines(new), "a/f", "b/f")
        self.assertEqual(text, "--- a/f\n+++ b/f\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n"
                               "+line ten\n line 11\n line 12\n line 13\n")

    def test_close_changes_share_a_hunk(self):
        new = OLD.replace("line 5\n", "five\n").replace("line 11\n", "eleven\n")
        self.assertEqual(len(build_hunks(split_lines(OLD), split_lines(new))), 1)
        new = OLD.replace("line 5\n", "five\n").replace("line 13\n", "thirteen\n")
        self.assertEqual(len(build_hunks(split_lines(OLD), split_lines(new))), 2)

    def test_single_line_ranges_leave_out_the_length(self):
        hunks = build_hunks(split_lines("a\n"), split_lines("b\n"))
        self.assertEqual(hunk_header(hunks[0]), "@@ -1 +1 @@")

    def test_no_newline_marker(self):
        text = unified_diff(split_lines("a\nb\n"), split_lines("a\nb"), "x", "y")
        self.assertIn("\n-b\n+b\n", text)
        self.assertTrue(text.endswith("+b\n\\ No newline at end of file\n"))


class ParseTest(unittest.TestCase):
    def test_parses_what_diff_writes(self):
        new = OLD.replace("line 3\n", "").replace("line 17\n", "line 17\nline 17b\n")
        text = unified_diff(split_lines(OLD), split_lines(new), "a/f.txt", "b/f.txt")
        patches = parse_patch("diff -u a/f.txt b/f.txt\n" + text)
        self.assertEqual(len(patches), 1)
        self.assertEqual(patches[0].new_path, "b/f.txt")
        self.assertEqual([h.old_length for h in patches[0].hunks], [6, 6])
        self.assertEqual([h.new_length for h in patches[0].hunks], [5, 7])

    def test_timestamps_after_a_tab_are_dropped(self):
        patch = parse_patch("--- a/x\t2024-01-01 10:00:00\n+++ b/x\t2024-01-02 10:00:00\n@@ -1 +1 @@\n-a\n+b\n")
        self.assertEqual((patch[0].old_path, patch[0].new_path), ("a/x", "b/x"))

    def test_counts_are_checked(self):
        with self.assertRaises(PatchSyntaxError) as caught:
            parse_patch("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n")
        self.assertIn("line 3", str(caught.exception))

    def test_strip_path(self):
        self.assertEqual(strip_path("a/src/x.c", 1), "src/x.c")
        self.assertEqual(strip_path("x.c", 0), "x.c")
        with self.assertRaises(ValueError):
            strip_path("x.c", 1)


if __name__ == "__main__":
    unittest.main()
