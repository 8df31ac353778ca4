"""The store: a directory holding MANIFEST, wal.log and the segment files."""

import os
from dataclasses import dataclass

from .codec import OP_DELETE, OP_PUT, TOMBSTONE, encode_key, encode_value, is_tombstone
from .compaction import apply_compaction, plan_compaction, run_compaction
from .errors import StoreError
from .manifest import load_manifest, save_manifest
from .memtable import Memtable
from .merge import live_items, merge_newest
from .segment import Segment, write_segment
from .wal import WriteAheadLog, replay

WAL_NAME = "wal.log"
LOCK_NAME = "LOCK"


@dataclass
class StoreOptions:
    memtable_limit: int = 1000
    """Flush the memtable to a new segment once it holds this many keys."""
    sync: bool = False
    """fsync the log after every write (slow; off by default)."""


class Store:
    """A log-structured key-value store in one directory. Use as a context manager or call close()."""

    def __init__(self, directory, options=None):
        self.directory = directory
        self.options = options or StoreOptions()
        if self.options.memtable_limit < 1:
            raise StoreError(f"memtable_limit must be at least 1, not {self.options.memtable_limit}")
        os.makedirs(directory, exist_ok=True)
        self.manifest = load_manifest(directory)
        self.segments = [Segment(os.path.join(directory, name)) for name in self.manifest.segments]
        self.memtable = Memtable()
        self.wal_path = os.path.join(directory, WAL_NAME)
        replayed = replay(self.wal_path)
        last_seq = self.manifest.flushed_seq
        for record in replayed.records:
            if record.seq <= self.manifest.flushed_seq:
                continue  # already in a segment (a crash between the flush and the log reset)
            if record.op == OP_PUT:
                self.memtable.put(record.seq, record.key, record.value)
            else:
                self.memtable.delete(record.seq, record.key)
            last_seq = max(last_seq, record.seq)
        self.recovered_records = len(replayed.records)
        self.discarded_bytes = replayed.discarded_bytes
        self.next_seq = last_seq + 1
        self.wal = WriteAheadLog(self.wal_path, sync=self.options.sync).open(replayed.valid_length)
        self._closed = False

    # -- context manager -------------------------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if not self._closed:
            self.wal.close()
            self._closed = True

    def _check_open(self):
        if self._closed:
            raise StoreError("the store is closed")

    # -- writes ----------------------------------------------------------------------------------------------
    def _next(self):
        seq = self.next_seq
        self.next_seq += 1
        return seq

    def put(self, key, value):
        self._check_open()
        encode_key(key)
        encode_value(value)
        seq = self._next()
        self.wal.append(OP_PUT, seq, key, value)
        self.memtable.put(seq, key, value)
        self._maybe_flush()

    def delete(self, key):
        self._check_open()
        encode_key(key)
        seq = self._next()
        self.wal.append(OP_DELETE, seq, key, None)
        self.memtable.delete(seq, key)
        self._maybe_flush()

    def _maybe_flush(self):
        if len(self.memtable) >= self.options.memtable_limit:
            self.flush()

    def flush(self):
        """Write the memtable to a new segment and empty the log. Returns the segment name (None: nothing)."""
        self._check_open()
        if not len(self.memtable):
            return None
        name = self.manifest.new_segment_name()
        write_segment(os.path.join(self.directory, name), self.memtable.sorted_entries())
        self.manifest.segments.append(name)
        self.manifest.flushed_seq = max(self.manifest.flushed_seq, self.memtable.max_seq())
        save_manifest(self.directory, self.manifest)
        self.segments.append(Segment(os.path.join(self.directory, name)))
        self.memtable.clear()
        self.wal.reset()
        return name

    # -- reads -----------------------------------------------------------------------------------------------
    def _lookup(self, key):
        found = self.memtable.lookup(key)
        if found is not None:
            return found[1]
        for segment in reversed(self.segments):
            found = segment.get(key)
            if found is not None:
                return found[1]
        return None

    def get(self, key, default=None):
        """The value of ``key``, or ``default`` when it was never written or was deleted."""
        self._check_open()
        value = self._lookup(key)
        if value is None or is_tombstone(value):
            return default
        return value

    def __contains__(self, key):
        return self.get(key, TOMBSTONE) is not TOMBSTONE

    def scan(self, start=None, end=None):
        """[(key, value)] of the live keys with start <= key < end, in key order."""
        self._check_open()
        streams = [self.memtable.range(start, end)]
        streams += [segment.entries(start, end) for segment in reversed(self.segments)]
        return list(live_items(merge_newest(streams)))

    # -- maintenance -----------------------------------------------------------------------------------------
    def compact(self, newest=None):
        """Merge the ``newest`` newest segments (all of them when None). Returns the CompactionResult or None."""
        self._check_open()
        plan = plan_compaction(self.manifest, newest)
        if plan is None:
            return None
        result = run_compaction(self.directory, self.manifest, plan)
        apply_compaction(self.manifest, result)
        save_manifest(self.directory, self.manifest)
        for name in result.inputs:
            os.remove(os.path.join(self.directory, name))
        self.segments = [Segment(os.path.join(self.directory, name)) for name in self.manifest.segments]
        return result

    def stats(self):
        return {
            "segments": [segment.info().as_dict() for segment in self.segments],
            "memtable_entries": len(self.memtable),
            "wal_bytes": self.wal.size(),
            "flushed_seq": self.manifest.flushed_seq,
            "next_seq": self.next_seq,
        }

    def check(self):
        """Verify every segment; returns the number of entries checked."""
        return sum(segment.verify() for segment in self.segments)
