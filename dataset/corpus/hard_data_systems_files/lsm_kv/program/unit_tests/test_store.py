import io
import json
import os
import tempfile
import unittest

from tinykv import Store, StoreOptions
from tinykv.batch import parse_batch
from tinykv.cli import main
from tinykv.errors import BatchSyntaxError


class StoreTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_put_get_delete(self):
        with Store(self.dir) as store:
            store.put("a", "1")
            store.put("b", "2")
            store.delete("a")
            self.assertIsNone(store.get("a"))
            self.assertEqual(store.get("b"), "2")
            self.assertEqual(store.scan(), [("b", "2")])

    def test_values_survive_reopen_without_flush(self):
        with Store(self.dir) as store:
            store.put("x", "one")
            store.put("x", "two")
        with Store(self.dir) as store:
            self.assertEqual(store.get("x"), "two")
            self.assertEqual(store.recovered_records, 2)

    def test_flush_writes_a_segment_and_empties_the_log(self):
        with Store(self.dir) as store:
            for i in range(5):
                store.put(f"k{i}", str(i))
            name = store.flush()
            self.assertTrue(os.path.exists(os.path.join(self.dir, name)))
            self.assertEqual(store.stats()["wal_bytes"], 0)
        with Store(self.dir) as store:
            self.assertEqual(store.get("k3"), "3")

    def test_newer_segment_wins(self):
        with Store(self.dir, StoreOptions(memtable_limit=100)) as store:
            store.put("k", "old")
            store.flush()
            store.put("k", "new")
            store.flush()
            self.assertEqual(store.get("k"), "new")
            store.compact()
            self.assertEqual(store.get("k"), "new")
            self.assertEqual(len(store.stats()["segments"]), 1)

    def test_automatic_flush(self):
        with Store(self.dir, StoreOptions(memtable_limit=3)) as store:
            for i in range(7):
                store.put(f"k{i}", str(i))
            self.assertEqual(len(store.segments), 2)
            self.assertEqual(len(store.memtable), 1)


class BatchAndCliTest(unittest.TestCase):
    def test_batch_syntax(self):
        commands = parse_batch(["put a hello world\n", "# note\n", "del a\n", "flush\n", "compact 2\n"])
        self.assertEqual([c.name for c in commands], ["put", "del", "flush", "compact"])
        self.assertEqual(commands[0].value, "hello world")
        with self.assertRaises(BatchSyntaxError):
            parse_batch(["frobnicate x\n"])

    def test_cli_round_trip(self):
        with tempfile.TemporaryDirectory() as directory:
            self.assertEqual(main([directory, "put", "name", "tinykv"]), 0)
            out = io.StringIO()
            import contextlib
            with contextlib.redirect_stdout(out):
                self.assertEqual(main([directory, "get", "name"]), 0)
                self.assertEqual(main([directory, "get", "nope"]), 1)
                main([directory, "stats"])
            text = out.getvalue()
            self.assertTrue(text.startswith("tinykv\n"))
            self.assertEqual(json.loads(text[len("tinykv\n"):])["memtable_entries"], 1)


if __name__ == "__main__":
    unittest.main()
