"""quicknotes: `add TEXT`, `list`, `search WORD` (case-insensitive), `remove N`."""

import argparse
import sys

import store


def main(argv=None):
    parser = argparse.ArgumentParser(prog="qn")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("add").add_argument("text")
    sub.add_parser("list")
    sub.add_parser("search").add_argument("word")
    sub.add_parser("remove").add_argument("number", type=int)
    args = parser.parse_args(argv)
    notes = store.load()
    if args.command == "add":
        notes.append(args.text)
        store.save(notes)
        print(f"added {len(notes)}")
    elif args.command == "list":
        for number, text in enumerate(notes, 1):
            print(f"{number} {text}")
    elif args.command == "search":
        for number, text in enumerate(notes, 1):
            if args.word.lower() in text.lower():
                print(f"{number} {text}")
    elif args.command == "remove":
        if not 1 <= args.number <= len(notes):
            print(f"no note {args.number}", file=sys.stderr)
            return 1
        del notes[args.number - 1]
        store.save(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
