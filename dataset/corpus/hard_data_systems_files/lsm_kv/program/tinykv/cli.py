"""Command line: python3 -m tinykv DIR COMMAND [ARGS].

Commands: put KEY VALUE, get KEY, delete KEY, scan [--start K] [--end K], flush, compact [--newest N], stats,
load FILE, check. Exit status: 0 ok, 1 key not found (get), 2 usage or store error, 3 damaged data.
"""

import argparse
import json
import sys

from .batch import apply_batch, parse_batch
from .errors import StoreError
from .store import Store, StoreOptions


def build_parser():
    parser = argparse.ArgumentParser(prog="tinykv", description="A small log-structured key-value store.")
    parser.add_argument("directory", help="the store's directory (created when missing)")
    parser.add_argument("--memtable-limit", type=int, default=1000, help="keys in memory before a flush")
    parser.add_argument("--sync", action="store_true", help="fsync the log after every write")
    commands = parser.add_subparsers(dest="command", required=True)
    put = commands.add_parser("put", help="set KEY to VALUE")
    put.add_argument("key")
    put.add_argument("value")
    get = commands.add_parser("get", help="print the value of KEY (exit 1 when missing)")
    get.add_argument("key")
    delete = commands.add_parser("delete", help="delete KEY")
    delete.add_argument("key")
    scan = commands.add_parser("scan", help="print KEY<TAB>VALUE lines in key order")
    scan.add_argument("--start", default=None)
    scan.add_argument("--end", default=None)
    commands.add_parser("flush", help="write the memtable to a segment")
    compact = commands.add_parser("compact", help="merge segments (all, or the N newest)")
    compact.add_argument("--newest", type=int, default=None)
    commands.add_parser("stats", help="print the store's layout as JSON")
    load = commands.add_parser("load", help="apply a batch file (see batch.py)")
    load.add_argument("file")
    commands.add_parser("check", help="verify the segments and the log")
    return parser


def run(args, out):
    options = StoreOptions(memtable_limit=args.memtable_limit, sync=args.sync)
    with Store(args.directory, options) as store:
        if args.command == "put":
            store.put(args.key, args.value)
        elif args.command == "get":
            value = store.get(args.key)
            if value is None:
                return 1
            out.write(value + "\n")
        elif args.command == "delete":
            store.delete(args.key)
        elif args.command == "scan":
            for key, value in store.scan(args.start, args.end):
                out.write(f"{key}\t{value}\n")
        elif args.command == "flush":
            name = store.flush()
            out.write((name or "nothing to flush") + "\n")
        elif args.command == "compact":
            result = store.compact(args.newest)
            if result is None:
                out.write("nothing to compact\n")
            else:
                out.write(f"merged {len(result.inputs)} segments into {result.output}: {result.entries_written} "
                          f"entries, {result.tombstones_dropped} tombstones dropped\n")
        elif args.command == "stats":
            out.write(json.dumps(store.stats(), indent=2, sort_keys=True) + "\n")
        elif args.command == "load":
            with open(args.file, encoding="utf-8") as handle:
                commands = parse_batch(handle, args.file)
            counts = apply_batch(store, commands)
            out.write(" ".join(f"{name}={count}" for name, count in sorted(counts.items())) + "\n")
        elif args.command == "check":
            entries = store.check()
            out.write(f"ok: {len(store.segments)} segments, {entries} entries, "
                      f"{store.recovered_records} log records\n")
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return run(args, sys.stdout)
    except StoreError as error:
        print(f"tinykv: {error}", file=sys.stderr)
        return error.exit_status
    except (ValueError, TypeError) as error:  # bad keys or values given on the command line
        print(f"tinykv: {error}", file=sys.stderr)
        return 2
