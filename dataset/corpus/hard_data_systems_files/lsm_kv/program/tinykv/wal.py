"""The write-ahead log: every put and delete is appended here before it reaches the memtable.

A record is ``crc32(payload) (4 bytes) | length of payload (4 bytes) | payload`` (FORMAT.md). The log is replayed
when the store opens; it is emptied when the memtable is flushed to a segment.
"""

import os
from dataclasses import dataclass

from .codec import U32, checksum, pack_log_payload, unpack_log_payload
from .errors import CorruptLogError

HEADER_SIZE = 8
MAX_RECORD_SIZE = 64 * 1024 * 1024


@dataclass(frozen=True)
class LogRecord:
    """One replayed record and where it starts in the file."""

    offset: int
    op: int
    seq: int
    key: str
    value: object


@dataclass
class ReplayResult:
    """What :func:`replay` found: the good records, and where the good part of the file ends."""

    records: list
    valid_length: int
    discarded_bytes: int = 0


def encode_record(op, seq, key, value):
    payload = pack_log_payload(op, seq, key, value)
    return U32.pack(checksum(payload)) + U32.pack(len(payload)) + payload


def replay(path):
    """The records of the log at ``path`` (none when it does not exist), oldest first.

    A torn final write (a header or payload cut short by the end of the file, or a last record whose checksum
    does not match) is discarded: ``valid_length`` is where the good records end. A damaged record with more
    data after it is corruption and raises :class:`CorruptLogError`.
    """
    if not os.path.exists(path):
        return ReplayResult([], 0)
    with open(path, "rb") as handle:
        data = handle.read()
    records = []
    offset = 0
    size = len(data)
    while offset < size:
        if size - offset < HEADER_SIZE:
            break  # torn write: the header was cut short
        crc = U32.unpack_from(data, offset)[0]
        length = U32.unpack_from(data, offset + 4)[0]
        end = offset + HEADER_SIZE + length
        if end > size:
            break  # torn write: the payload was cut short
        if length > MAX_RECORD_SIZE:
            raise CorruptLogError(path, offset, f"record length {length} is too large")
        payload = data[offset + HEADER_SIZE:end]
        if checksum(payload) != crc:
            if end == size:
                break  # torn write: the last record did not reach the disk whole
            raise CorruptLogError(path, offset, "checksum mismatch")
        try:
            op, seq, key, value = unpack_log_payload(payload)
        except ValueError as error:  # the checksum matched, so this is a writer bug, not a torn write
            raise CorruptLogError(path, offset, str(error)) from error
        records.append(LogRecord(offset, op, seq, key, value))
        offset = end
    return ReplayResult(records, offset, size - offset)


class WriteAheadLog:
    """The log file of one store, open for appending."""

    def __init__(self, path, sync=False):
        self.path = path
        self.sync = sync
        self._handle = None

    def open(self, valid_length=None):
        """Open for appending, after the last good record when ``valid_length`` is given."""
        if valid_length is not None and os.path.exists(self.path) and os.path.getsize(self.path) > valid_length:
            with open(self.path, "r+b") as handle:  # drop a torn tail so that new records follow good ones
                handle.truncate(valid_length)
                handle.flush()
                os.fsync(handle.fileno())
        self._handle = open(self.path, "ab")
        return self

    def append(self, op, seq, key, value):
        if self._handle is None:
            raise RuntimeError("the log is not open")
        self._handle.write(encode_record(op, seq, key, value))
        self._handle.flush()
        if self.sync:
            os.fsync(self._handle.fileno())

    def reset(self):
        """Empty the log (its records are all in a segment now)."""
        if self._handle is not None:
            self._handle.close()
        self._handle = open(self.path, "wb")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def size(self):
        return os.path.getsize(self.path) if os.path.exists(self.path) else 0

    def close(self):
        if self._handle is not None:
            self._handle.close()
            self._handle = None
