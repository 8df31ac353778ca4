import os
import tempfile
import unittest

from tinykv.codec import OP_DELETE, OP_PUT, TOMBSTONE, pack_log_payload, unpack_log_payload
from tinykv.wal import WriteAheadLog, encode_record, replay


class CodecTest(unittest.TestCase):
    def test_round_trip_put(self):
        payload = pack_log_payload(OP_PUT, 42, "clé", "valeur avec espaces")
        self.assertEqual(unpack_log_payload(payload), (OP_PUT, 42, "clé", "valeur avec espaces"))

    def test_round_trip_delete(self):
        payload = pack_log_payload(OP_DELETE, 7, "gone", None)
        self.assertEqual(unpack_log_payload(payload), (OP_DELETE, 7, "gone", TOMBSTONE))

    def test_empty_key_refused(self):
        with self.assertRaises(ValueError):
            pack_log_payload(OP_PUT, 1, "", "x")

    def test_short_payload_refused(self):
        with self.assertRaises(ValueError):
            unpack_log_payload(b"\x01\x00")


class WalTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "wal.log")

    def tearDown(self):
        self.tmp.cleanup()

    def test_missing_log_is_empty(self):
        result = replay(self.path)
        self.assertEqual((result.records, result.valid_length), ([], 0))

    def test_append_and_replay(self):
        wal = WriteAheadLog(self.path).open()
        wal.append(OP_PUT, 1, "a", "1")
        wal.append(OP_PUT, 2, "b", "2")
        wal.append(OP_DELETE, 3, "a", None)
        wal.close()
        result = replay(self.path)
        self.assertEqual([(r.op, r.seq, r.key, r.value) for r in result.records],
                         [(OP_PUT, 1, "a", "1"), (OP_PUT, 2, "b", "2"), (OP_DELETE, 3, "a", TOMBSTONE)])
        self.assertEqual(result.valid_length, os.path.getsize(self.path))
        self.assertEqual(result.records[1].offset, len(encode_record(OP_PUT, 1, "a", "1")))

    def test_reset_empties_the_log(self):
        wal = WriteAheadLog(self.path).open()
        wal.append(OP_PUT, 1, "a", "1")
        wal.reset()
        wal.append(OP_PUT, 2, "b", "2")
        wal.close()
        self.assertEqual([r.key for r in replay(self.path).records], ["b"])


if __name__ == "__main__":
    unittest.main()
