import os
import tempfile
import unittest

from tinykv.codec import TOMBSTONE
from tinykv.errors import CorruptSegmentError
from tinykv.merge import merge_newest
from tinykv.segment import Segment, write_segment


class SegmentTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "seg-000001.sst")

    def tearDown(self):
        self.tmp.cleanup()

    def test_write_and_read_small_segment(self):
        entries = [("apple", 1, "red"), ("banana", 2, TOMBSTONE), ("cherry", 3, "dark")]
        info = write_segment(self.path, entries)
        self.assertEqual((info.entries, info.tombstones, info.min_key, info.max_key), (3, 1, "apple", "cherry"))
        segment = Segment(self.path)
        self.assertEqual(segment.get("cherry"), (3, "dark"))
        self.assertEqual(segment.get("banana"), (2, TOMBSTONE))
        self.assertIsNone(segment.get("aardvark"))
        self.assertIsNone(segment.get("blueberry"))
        self.assertEqual(list(segment.entries()), entries)
        self.assertEqual(segment.verify(), 3)

    def test_range_of_entries(self):
        write_segment(self.path, [(f"k{i:02d}", i, f"v{i}") for i in range(10)])
        segment = Segment(self.path)
        self.assertEqual([key for key, _, _ in segment.entries("k03", "k06")], ["k03", "k04", "k05"])

    def test_out_of_order_refused(self):
        with self.assertRaises(ValueError):
            write_segment(self.path, [("b", 1, "x"), ("a", 2, "y")])

    def test_damaged_footer_detected(self):
        write_segment(self.path, [("a", 1, "x")])
        with open(self.path, "r+b") as handle:
            handle.seek(-2, os.SEEK_END)
            handle.write(b"??")
        with self.assertRaises(CorruptSegmentError):
            Segment(self.path)


class MergeTest(unittest.TestCase):
    def test_newest_version_wins(self):
        older = [("a", 1, "old"), ("c", 2, "c1")]
        newer = [("a", 5, "new"), ("b", 6, TOMBSTONE)]
        self.assertEqual(list(merge_newest([older, newer])), [("a", 5, "new"), ("b", 6, TOMBSTONE), ("c", 2, "c1")])


if __name__ == "__main__":
    unittest.main()
