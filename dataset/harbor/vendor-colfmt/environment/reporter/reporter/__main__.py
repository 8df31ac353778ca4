"""python3 -m reporter FILE.csv: print the CSV as aligned columns."""

import csv
import sys

from colfmt import render


def main(argv):
    with open(argv[0], newline="") as handle:
        rows = [row for row in csv.reader(handle) if row]
    sys.stdout.write(render(rows))
    return 0


sys.exit(main(sys.argv[1:]))
