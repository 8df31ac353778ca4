"""The disassembler: an object file back to a listing, using the shared instruction table.

    python3 -m vm16.disasm program.vmo

Each line is ``ADDR: BYTES  mnemonic operands``; labels from the symbol table are printed before their address
and used for address operands. Bytes that are not an instruction are listed as ``.byte``.
"""

import argparse
import sys

from vm16 import isa
from vm16.errors import Vm16Error
from vm16.objfile import read_object


def disassemble(obj):
    """The listing of ``obj`` as a list of lines."""
    labels = obj.labels_at()
    first_label = {address: names[0] for address, names in labels.items()}
    lines = [f"; entry {obj.entry:#06x}" + (f" ({first_label[obj.entry]})" if obj.entry in first_label else "")]
    code = obj.code
    address = 0
    while address < len(code):
        for name in labels.get(address, []):
            lines.append(f"{name}:")
        instruction = isa.BY_OPCODE.get(code[address])
        if instruction is None or address + instruction.size > len(code):
            lines.append(f"  {address:04x}: {code[address]:02x}{'':<14}.byte {code[address]}")
            address += 1
            continue
        offset = address + 1
        shown = []
        for kind in instruction.operands:
            value = isa.decode_operand(kind, code, offset)
            offset += isa.OPERAND_SIZES[kind]
            shown.append(first_label.get(value, f"{value:#06x}") if kind == "addr" else str(value))
        raw = " ".join(f"{byte:02x}" for byte in code[address:offset])
        lines.append(f"  {address:04x}: {raw:<16}{instruction.mnemonic} {', '.join(shown)}".rstrip())
        address = offset
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(prog="vm16.disasm", description="List a vm16 object file.")
    parser.add_argument("object", help="a .vmo file")
    options = parser.parse_args(argv)
    try:
        obj = read_object(options.object)
    except (OSError, Vm16Error) as error:
        print(f"vm16.disasm: {error}", file=sys.stderr)
        return 1
    print("\n".join(disassemble(obj)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
