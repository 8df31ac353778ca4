"""tinyfmt [--template NAME] < rows.csv: print the CSV rows as a table (the first row is the header)."""

import argparse
import csv
import sys

from tinyfmt.table import render


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tinyfmt")
    parser.add_argument("--template", default="plain")
    args = parser.parse_args(argv)
    rows = [row for row in csv.reader(sys.stdin) if row]
    sys.stdout.write(render(rows, args.template))
    return 0
