"""Sorted segment files ("sst"): immutable, written once from a memtable or by compaction.

Layout (FORMAT.md): an 8-byte magic, the entries in key order, a sparse index (the first key and offset of every
block of INDEX_INTERVAL entries) and a fixed-size footer.
"""

import os
import struct
from dataclasses import dataclass

from .codec import TOMBSTONE, TOMBSTONE_LENGTH, U16, U32, U64, checksum, decode_text, encode_key, encode_value, \
    is_tombstone
from .errors import CorruptSegmentError

MAGIC = b"TKVSEG1\n"
FOOTER_MAGIC = b"TKVF"
ENTRY_HEADER = struct.Struct(">HIQ")  # key length, value length (TOMBSTONE_LENGTH: deleted), seq
FOOTER = struct.Struct(">QQQI4s")  # index offset, entry count, tombstone count, index checksum, magic
INDEX_INTERVAL = 16


@dataclass(frozen=True)
class SegmentInfo:
    name: str
    entries: int
    tombstones: int
    min_key: str | None
    max_key: str | None

    def as_dict(self):
        return {"name": self.name, "entries": self.entries, "tombstones": self.tombstones,
                "min_key": self.min_key, "max_key": self.max_key}


def write_segment(path, entries):
    """Write ``entries`` ([(key, seq, value)], keys strictly increasing) to a new segment file at ``path``.

    The file is written under a temporary name and renamed, so a crash never leaves a half segment in place.
    Returns the :class:`SegmentInfo` of the new file.
    """
    tmp_path = path + ".tmp"
    index = []
    tombstones = 0
    previous = None
    count = 0
    with open(tmp_path, "wb") as handle:
        handle.write(MAGIC)
        offset = len(MAGIC)
        for key, seq, value in entries:
            if previous is not None and key <= previous:
                raise ValueError(f"segment entries out of order: {previous!r} then {key!r}")
            previous = key
            key_bytes = encode_key(key)
            if is_tombstone(value):
                tombstones += 1
                value_bytes, value_length = b"", TOMBSTONE_LENGTH
            else:
                value_bytes = encode_value(value)
                value_length = len(value_bytes)
            if count % INDEX_INTERVAL == 0:
                index.append((key_bytes, offset))
            record = ENTRY_HEADER.pack(len(key_bytes), value_length, seq) + key_bytes + value_bytes
            handle.write(record)
            offset += len(record)
            count += 1
        index_block = U32.pack(len(index)) + b"".join(
            U16.pack(len(key_bytes)) + key_bytes + U64.pack(entry_offset) for key_bytes, entry_offset in index)
        handle.write(index_block)
        handle.write(FOOTER.pack(offset, count, tombstones, checksum(index_block), FOOTER_MAGIC))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp_path, path)
    first = decode_text(index[0][0]) if index else None
    return SegmentInfo(os.path.basename(path), count, tombstones, first, previous)


class Segment:
    """A segment file opened for reading; the whole file is read into memory (segments are small)."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        with open(path, "rb") as handle:
            self._data = handle.read()
        self._parse_footer()

    def _parse_footer(self):
        data = self._data
        if len(data) < len(MAGIC) + FOOTER.size or not data.startswith(MAGIC):
            raise CorruptSegmentError(self.path, "not a tinykv segment")
        index_offset, count, tombstones, index_crc, magic = FOOTER.unpack_from(data, len(data) - FOOTER.size)
        if magic != FOOTER_MAGIC:
            raise CorruptSegmentError(self.path, "bad footer magic")
        index_block = data[index_offset:len(data) - FOOTER.size]
        if checksum(index_block) != index_crc:
            raise CorruptSegmentError(self.path, "index checksum mismatch")
        self.index_offset = index_offset
        self.entry_count = count
        self.tombstone_count = tombstones
        (index_length,) = U32.unpack_from(index_block, 0)
        position = 4
        self._index_keys = []
        self._index_offsets = []
        for _ in range(index_length):
            (key_length,) = U16.unpack_from(index_block, position)
            position += 2
            self._index_keys.append(decode_text(index_block[position:position + key_length]))
            position += key_length
            (entry_offset,) = U64.unpack_from(index_block, position)
            position += 8
            self._index_offsets.append(entry_offset)

    def _entry_at(self, offset):
        """(key, seq, value, next offset) of the entry at ``offset``."""
        key_length, value_length, seq = ENTRY_HEADER.unpack_from(self._data, offset)
        position = offset + ENTRY_HEADER.size
        key = decode_text(self._data[position:position + key_length])
        position += key_length
        if value_length == TOMBSTONE_LENGTH:
            return key, seq, TOMBSTONE, position
        value = decode_text(self._data[position:position + value_length])
        return key, seq, value, position + value_length

    def _block_for(self, key):
        """The number of the block that would hold ``key``, or -1 when ``key`` sorts before the first key."""
        keys = self._index_keys
        lo, hi = 0, len(keys)
        while lo < hi:
            mid = (lo + hi) // 2
            if keys[mid] <= key:
                lo = mid + 1
            else:
                hi = mid
        return max(lo - 1, 0) if keys and key >= keys[0] else -1

    def get(self, key):
        """(seq, value) of ``key`` in this segment (value possibly TOMBSTONE), or None."""
        block = self._block_for(key)
        if block < 0:
            return None
        offset = self._index_offsets[block]
        end = self._index_offsets[block + 1] if block + 1 < len(self._index_offsets) else self.index_offset
        while offset < end:
            entry_key, seq, value, offset = self._entry_at(offset)
            if entry_key == key:
                return seq, value
            if entry_key > key:
                return None
        return None

    def entries(self, start=None, end=None):
        """Iterate (key, seq, value) in key order, start <= key < end."""
        offset = len(MAGIC)
        if start is not None:
            block = self._block_for(start)
            if block > 0:
                offset = self._index_offsets[block]
        while offset < self.index_offset:
            key, seq, value, offset = self._entry_at(offset)
            if start is not None and key < start:
                continue
            if end is not None and key >= end:
                return
            yield key, seq, value

    def info(self):
        keys = [key for key, _, _ in self.entries()]
        return SegmentInfo(self.name, self.entry_count, self.tombstone_count, keys[0] if keys else None,
                           keys[-1] if keys else None)

    def verify(self):
        """Check that the entries are in order and their count matches the footer; raise on damage."""
        count = tombstones = 0
        previous = None
        for key, _, value in self.entries():
            if previous is not None and key <= previous:
                raise CorruptSegmentError(self.path, f"key {key!r} out of order")
            previous = key
            count += 1
            tombstones += is_tombstone(value)
        if count != self.entry_count or tombstones != self.tombstone_count:
            raise CorruptSegmentError(self.path, "entry count does not match the footer")
        return count
