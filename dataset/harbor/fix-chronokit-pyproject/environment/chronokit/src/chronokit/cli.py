"""chrono SECONDS: print a duration like 1d 1h 1m 1s; chrono --units: list the units."""

import sys

from chronokit.units import humanize, units


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args == ["--units"]:
        for unit in units():
            print(f"{unit['symbol']} {unit['seconds']}")
        return 0
    if len(args) != 1 or not args[0].isdigit():
        print("usage: chrono SECONDS | chrono --units", file=sys.stderr)
        return 2
    print(humanize(int(args[0])))
    return 0
