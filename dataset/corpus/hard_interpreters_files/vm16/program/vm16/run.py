"""``python3 -m vm16.run OBJECT [--trace] [--max-steps N] [--stack]``: run an object file.

The program reads standard input (``READ_INT``) and writes standard output. ``--trace`` writes every executed
instruction to standard error; ``--stack`` prints what the stack holds at ``halt``. A machine error prints
``vm16.run: at ADDR: message`` and exits with status 1.
"""

import argparse
import sys

from vm16.errors import Vm16Error
from vm16.objfile import read_object
from vm16.vm import DEFAULT_MAX_STEPS, run_object


def run_and_report(obj, options, program_name):
    try:
        machine = run_object(obj, max_steps=options.max_steps, trace=sys.stderr if options.trace else None)
    except Vm16Error as error:
        sys.stdout.flush()
        print(f"{program_name}: {error}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    if options.stack:
        print("stack:", " ".join(str(value) for value in machine.stack))
    return 0


def add_run_options(parser):
    parser.add_argument("--trace", action="store_true", help="trace every instruction to standard error")
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, help="stop after this many steps")
    parser.add_argument("--stack", action="store_true", help="print the stack at halt")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="vm16.run", description="Run a vm16 object file.")
    parser.add_argument("object", help="a .vmo file")
    add_run_options(parser)
    options = parser.parse_args(argv)
    try:
        obj = read_object(options.object)
    except (OSError, Vm16Error) as error:
        print(f"vm16.run: {error}", file=sys.stderr)
        return 1
    return run_and_report(obj, options, "vm16.run")


if __name__ == "__main__":
    sys.exit(main())
