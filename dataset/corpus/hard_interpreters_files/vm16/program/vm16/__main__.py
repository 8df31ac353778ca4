"""``python3 -m vm16 SOURCE [run options]``: assemble SOURCE in memory and run it."""

import argparse
import sys
from pathlib import Path

from vm16.assembler import assemble
from vm16.errors import Vm16Error
from vm16.run import add_run_options, run_and_report


def main(argv=None):
    parser = argparse.ArgumentParser(prog="vm16", description="Assemble and run a vm16 program.")
    parser.add_argument("source", help="the .s file")
    add_run_options(parser)
    options = parser.parse_args(argv)
    try:
        obj = assemble(Path(options.source).read_text(encoding="utf-8"), source_name=options.source)
    except OSError as error:
        print(f"vm16: cannot read {options.source}: {error.strerror}", file=sys.stderr)
        return 1
    except Vm16Error as error:
        print(f"vm16: {error}", file=sys.stderr)
        return 1
    return run_and_report(obj, options, "vm16")


if __name__ == "__main__":
    sys.exit(main())
