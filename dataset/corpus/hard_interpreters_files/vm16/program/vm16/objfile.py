"""The object file format (``.vmo``), little-endian:

====================  =========================================================
``b"VM16"``           magic
u8                    format version (2)
u16                   entry address
u16                   code length N
N bytes               the memory image, loaded at address 0
u16                   symbol count
per symbol            u8 name length, the UTF-8 name, u16 address
====================  =========================================================
"""

import struct
from dataclasses import dataclass, field

from vm16.errors import ObjectFormatError

MAGIC = b"VM16"
VERSION = 2


@dataclass
class ObjectFile:
    code: bytes
    entry: int = 0
    symbols: dict = field(default_factory=dict)

    def to_bytes(self):
        out = bytearray(MAGIC)
        out += struct.pack("<BHH", VERSION, self.entry, len(self.code))
        out += self.code
        out += struct.pack("<H", len(self.symbols))
        for name, address in sorted(self.symbols.items(), key=lambda item: (item[1], item[0])):
            encoded = name.encode("utf-8")
            if len(encoded) > 255:
                raise ObjectFormatError(f"symbol name too long: {name[:40]}...")
            out += struct.pack("<B", len(encoded)) + encoded + struct.pack("<H", address)
        return bytes(out)

    def labels_at(self):
        """{address: [names]}: what the disassembler prints before each address."""
        result = {}
        for name, address in self.symbols.items():
            result.setdefault(address, []).append(name)
        return {address: sorted(names) for address, names in result.items()}


def from_bytes(data):
    if data[:4] != MAGIC:
        raise ObjectFormatError("not a vm16 object file (bad magic)")
    try:
        version, entry, length = struct.unpack_from("<BHH", data, 4)
        if version != VERSION:
            raise ObjectFormatError(f"object format version {version}, this toolchain reads {VERSION}")
        offset = 9
        code = data[offset:offset + length]
        if len(code) != length:
            raise ObjectFormatError("object file truncated in its code")
        offset += length
        (count,) = struct.unpack_from("<H", data, offset)
        offset += 2
        symbols = {}
        for _ in range(count):
            (size,) = struct.unpack_from("<B", data, offset)
            name = data[offset + 1:offset + 1 + size].decode("utf-8")
            (address,) = struct.unpack_from("<H", data, offset + 1 + size)
            symbols[name] = address
            offset += 3 + size
    except struct.error:
        raise ObjectFormatError("object file truncated") from None
    return ObjectFile(code=bytes(code), entry=entry, symbols=symbols)


def read_object(path):
    with open(path, "rb") as handle:
        return from_bytes(handle.read())


def write_object(obj, path):
    with open(path, "wb") as handle:
        handle.write(obj.to_bytes())
