"""python3 -m csvql --data DIR [--table | --no-header] [--explain] (QUERY | -f FILE)

Prints the result as CSV (a header row, then one row per result row). Exit status 0, or 2 with a message on
standard error when the query cannot be parsed, planned or run.
"""

import argparse
import sys

from .catalog import Catalog
from .engine import execute_query, explain
from .errors import CsvqlError
from .formatter import to_csv, to_table


def build_parser():
    parser = argparse.ArgumentParser(prog="csvql", description="SQL over a directory of CSV files.")
    parser.add_argument("--data", required=True, help="directory of NAME.csv files (table NAME)")
    parser.add_argument("query", nargs="?", help="the SQL query")
    parser.add_argument("-f", "--file", help="read the query from this file")
    parser.add_argument("--table", action="store_true", help="aligned text instead of CSV")
    parser.add_argument("--no-header", action="store_true", help="CSV without the header row")
    parser.add_argument("--explain", action="store_true", help="print the plan instead of running it")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if (args.query is None) == (args.file is None):
        print("csvql: give a query or -f FILE (exactly one)", file=sys.stderr)
        return 2
    text = args.query
    if args.file is not None:
        try:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as error:
            print(f"csvql: cannot read {args.file}: {error.strerror}", file=sys.stderr)
            return 2
    try:
        catalog = Catalog(args.data)
        if args.explain:
            sys.stdout.write(explain(text, catalog) + "\n")
            return 0
        result = execute_query(text, catalog)
    except CsvqlError as error:
        print(f"csvql: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(to_table(result) if args.table else to_csv(result, header=not args.no_header))
    return 0
