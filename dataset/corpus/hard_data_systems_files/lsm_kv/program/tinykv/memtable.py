"""The memtable: the newest writes, in memory, until they are flushed to a segment."""

from .codec import TOMBSTONE, is_tombstone


class Memtable:
    """Key -> (seq, value); a deleted key keeps a TOMBSTONE so that it hides older segments."""

    def __init__(self):
        self._entries = {}
        self.bytes_estimate = 0

    def put(self, seq, key, value):
        self._store(seq, key, value)

    def delete(self, seq, key):
        self._store(seq, key, TOMBSTONE)

    def _store(self, seq, key, value):
        old = self._entries.get(key)
        if old is not None and old[0] > seq:
            return  # an older record replayed after a newer one: keep the newer
        if old is not None:
            self.bytes_estimate -= len(key) + (0 if is_tombstone(old[1]) else len(old[1]))
        self._entries[key] = (seq, value)
        self.bytes_estimate += len(key) + (0 if is_tombstone(value) else len(value))

    def lookup(self, key):
        """(seq, value) of ``key``, value possibly TOMBSTONE, or None when the memtable does not know it."""
        return self._entries.get(key)

    def __len__(self):
        return len(self._entries)

    def __contains__(self, key):
        return key in self._entries

    def sorted_entries(self):
        """[(key, seq, value)] in key order."""
        return [(key, seq, value) for key, (seq, value) in sorted(self._entries.items())]

    def range(self, start=None, end=None):
        """Sorted entries with start <= key < end (either bound may be None)."""
        return [entry for entry in self.sorted_entries()
                if (start is None or entry[0] >= start) and (end is None or entry[0] < end)]

    def max_seq(self):
        return max((seq for seq, _ in self._entries.values()), default=0)

    def clear(self):
        self._entries.clear()
        self.bytes_estimate = 0
