"""Binary encoding shared by the log and the segments: keys, values, tombstones and checksums.

Keys and values are text, stored as UTF-8. A key is at most MAX_KEY_BYTES bytes long once encoded; a value at
most MAX_VALUE_BYTES. A deleted key is represented by the TOMBSTONE marker (never a real value).
"""

import struct
import zlib

MAX_KEY_BYTES = 0xFFFF
MAX_VALUE_BYTES = 0xFFFFFFFE
TOMBSTONE_LENGTH = 0xFFFFFFFF
"""The value length written for a tombstone in a segment entry."""

OP_PUT = 1
OP_DELETE = 2
OPS = {OP_PUT: "put", OP_DELETE: "delete"}

U16 = struct.Struct(">H")
U32 = struct.Struct(">I")
U64 = struct.Struct(">Q")


class _Tombstone:
    """The value of a deleted key (a singleton; compare with ``is``)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "TOMBSTONE"

    def __reduce__(self):
        return (_Tombstone, ())


TOMBSTONE = _Tombstone()


def is_tombstone(value):
    return value is TOMBSTONE


def encode_key(key):
    """The UTF-8 bytes of ``key``, refusing empty keys and keys that are too long."""
    if not isinstance(key, str):
        raise TypeError(f"keys are text, not {type(key).__name__}")
    data = key.encode("utf-8")
    if not data:
        raise ValueError("the empty key is not allowed")
    if len(data) > MAX_KEY_BYTES:
        raise ValueError(f"key of {len(data)} bytes is longer than {MAX_KEY_BYTES}")
    return data


def encode_value(value):
    if not isinstance(value, str):
        raise TypeError(f"values are text, not {type(value).__name__}")
    data = value.encode("utf-8")
    if len(data) > MAX_VALUE_BYTES:
        raise ValueError(f"value of {len(data)} bytes is longer than {MAX_VALUE_BYTES}")
    return data


def decode_text(data):
    return bytes(data).decode("utf-8")


def checksum(data):
    """CRC-32 of ``data`` as an unsigned 32-bit integer."""
    return zlib.crc32(data) & 0xFFFFFFFF


def pack_log_payload(op, seq, key, value):
    """The payload of one log record: op (1 byte), seq (8), key length (2), key, value (the rest)."""
    if op not in OPS:
        raise ValueError(f"unknown operation {op}")
    key_bytes = encode_key(key)
    value_bytes = b"" if op == OP_DELETE else encode_value(value)
    return bytes([op]) + U64.pack(seq) + U16.pack(len(key_bytes)) + key_bytes + value_bytes


def unpack_log_payload(payload):
    """(op, seq, key, value) of a payload made by :func:`pack_log_payload`; value is TOMBSTONE for a delete."""
    if len(payload) < 11:
        raise ValueError(f"payload of {len(payload)} bytes is shorter than its fixed part")
    op = payload[0]
    if op not in OPS:
        raise ValueError(f"unknown operation {op}")
    (seq,) = U64.unpack_from(payload, 1)
    (key_length,) = U16.unpack_from(payload, 9)
    if 11 + key_length > len(payload):
        raise ValueError("key runs past the end of the payload")
    key = decode_text(payload[11:11 + key_length])
    if op == OP_DELETE:
        return op, seq, key, TOMBSTONE
    return op, seq, key, decode_text(payload[11 + key_length:])
