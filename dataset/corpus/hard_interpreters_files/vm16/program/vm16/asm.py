"""``python3 -m vm16.asm SOURCE [-o OBJECT] [--symbols]``: assemble a source file into an object file.

The object file defaults to the source's name with the suffix ``.vmo``. ``--symbols`` prints the symbol table
(``address name``, by address). Errors name the file and line; the exit status is then 1.
"""

import argparse
import sys
from pathlib import Path

from vm16.assembler import assemble
from vm16.errors import Vm16Error
from vm16.objfile import write_object


def main(argv=None):
    parser = argparse.ArgumentParser(prog="vm16.asm", description="Assemble vm16 source.")
    parser.add_argument("source", help="the .s file")
    parser.add_argument("-o", "--output", help="the object file to write (default: SOURCE.vmo)")
    parser.add_argument("--symbols", action="store_true", help="print the symbol table")
    options = parser.parse_args(argv)
    source = Path(options.source)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        print(f"vm16.asm: cannot read {source}: {error.strerror}", file=sys.stderr)
        return 1
    try:
        obj = assemble(text, source_name=str(source))
    except Vm16Error as error:
        print(f"vm16.asm: {error}", file=sys.stderr)
        return 1
    output = Path(options.output) if options.output else source.with_suffix(".vmo")
    write_object(obj, output)
    if options.symbols:
        for name, address in sorted(obj.symbols.items(), key=lambda item: (item[1], item[0])):
            print(f"{address:04x} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
