"""``python3 -m bake [options] [NAME=value ...] [target ...]``.

Exit status: 0 when every goal is up to date, 1 when a recipe failed, 2 when the Bakefile or the graph is wrong.
"""

from __future__ import annotations

import argparse
import os
import sys

from bake.errors import BakeError
from bake.executor import Builder, Options
from bake.graph import build_graph
from bake.parser import parse


def _split_arguments(words: list[str]) -> tuple[dict[str, str], list[str]]:
    overrides: dict[str, str] = {}
    goals: list[str] = []
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name and not any(c.isspace() or c in "/:%" for c in name):
            overrides[name] = value
        else:
            goals.append(word)
    return overrides, goals


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bake", description="a small make-like incremental build tool")
    parser.add_argument("words", nargs="*", metavar="NAME=value | target")
    parser.add_argument("-f", "--file", default="Bakefile", help="the Bakefile (default: ./Bakefile)")
    parser.add_argument("-C", "--directory", default=".", help="change to this folder first")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="recipes to run at once")
    parser.add_argument("-n", "--dry-run", action="store_true", help="print the commands, run nothing")
    parser.add_argument("-k", "--keep-going", action="store_true", help="build what can be built after a failure")
    parser.add_argument("--hash", action="store_true", help="decide staleness by content hashes, not times")
    parser.add_argument("--explain", action="store_true", help="say why each target is rebuilt")
    parser.add_argument("--print-graph", action="store_true", help="print the graph instead of building")
    return parser


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.jobs < 1:
        raise BakeError("-j needs a positive number of jobs")
    root = os.path.abspath(args.directory)
    path = os.path.join(root, args.file)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise BakeError(f"no Bakefile at {path}") from None
    overrides, goals = _split_arguments(args.words)
    bakefile = parse(text, args.file, overrides)
    if not goals:
        if bakefile.default_goal is None:
            raise BakeError("no targets")
        goals = [bakefile.default_goal]
    graph = build_graph(bakefile, goals, root)
    if args.print_graph:
        for name in graph.order:
            node = graph.nodes[name]
            kind = "phony" if node.phony else "source" if node.source else "target"
            line = f"{name} [{kind}]: {' '.join(node.prerequisites)}"
            if node.order_only:
                line += f" | {' '.join(node.order_only)}"
            print(line.rstrip())
        return 0
    options = Options(args.jobs, args.dry_run, args.keep_going, args.hash, args.explain)
    builder = Builder(bakefile, graph, root, options)
    outcome = builder.build()
    if not outcome.ok:
        if outcome.skipped:
            print(f"bake: not built: {' '.join(outcome.skipped)}", file=sys.stderr)
        return 1
    for goal in goals:
        if goal not in outcome.ran:
            node = graph.nodes[goal]
            if node.phony or not node.recipe and not node.source:
                if not any(name in outcome.ran for name in graph.order):
                    print(f"bake: Nothing to be done for '{goal}'.")
            else:
                print(f"bake: '{goal}' is up to date.")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except BakeError as error:
        print(f"bake: *** {error}", file=sys.stderr)
        return 2
