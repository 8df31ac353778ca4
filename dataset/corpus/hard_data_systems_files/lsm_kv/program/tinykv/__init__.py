"""tinykv: a small log-structured key-value store.

Writes go to a write-ahead log (wal.py) and an in-memory table (memtable.py); a full memtable is flushed to an
immutable sorted segment file (segment.py) listed in the manifest (manifest.py); segments are merged by
compaction (compaction.py). store.py ties the pieces together and cli.py is the command line.
"""

from .errors import CorruptLogError, CorruptSegmentError, StoreError
from .store import Store, StoreOptions

__all__ = ["Store", "StoreOptions", "StoreError", "CorruptLogError", "CorruptSegmentError"]
__version__ = "0.9.2"
