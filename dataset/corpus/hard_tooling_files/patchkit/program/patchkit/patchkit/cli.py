"""``python3 -m patchkit``: the command line.

    patchkit diff OLD NEW [-U N] [--label-old L] [--label-new L]     exit 0: same, 1: different, 2: trouble
    patchkit apply PATCH [-d DIR] [-p N] [--fuzz N] [--dry-run] [-R]  exit 0: all hunks applied, 1: some failed
    patchkit merge MINE BASE THEIRS [-o OUT] [--diff3] [-L LABEL]...  exit 0: clean, 1: conflicts
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from patchkit.apply import apply_hunks, reverse_hunk
from patchkit.format import format_hunk, unified_diff
from patchkit.lines import Text, join_lines, read_text, write_text
from patchkit.merge3 import merge
from patchkit.parse import DEV_NULL, FilePatch, PatchSyntaxError, parse_patch, strip_path


class UsageError(Exception):
    """A problem with the command's input that the user must fix (exit 2)."""


def _read(path: str) -> Text:
    try:
        return read_text(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory") from None


def command_diff(args: argparse.Namespace) -> int:
    old, new = _read(args.old), _read(args.new)
    text = unified_diff(old, new, args.label_old or args.old, args.label_new or args.new, context=args.unified)
    sys.stdout.write(text)
    return 1 if text else 0


def _target(patch: FilePatch, strip: int) -> str:
    name = patch.old_path if patch.deletes else patch.new_path
    if name == DEV_NULL:
        raise UsageError("a file patch names /dev/null on both sides")
    try:
        return strip_path(name, strip)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _write_rejects(path: Path, patch: FilePatch, failed: list[int]) -> None:
    out = [f"--- {patch.old_path}", f"+++ {patch.new_path}"]
    for index in failed:
        out.extend(format_hunk(patch.hunks[index]))
    path.write_text("\n".join(out) + "\n")


def _apply_file(patch: FilePatch, root: Path, args: argparse.Namespace) -> bool:
    relative = _target(patch, args.strip)
    path = root / relative
    print(f"patching file {relative}")
    hunks = [reverse_hunk(h) for h in patch.hunks] if args.reverse else patch.hunks
    creates = patch.deletes if args.reverse else patch.creates
    deletes = patch.creates if args.reverse else patch.deletes
    if creates and path.exists() and path.stat().st_size > 0:
        print(f"{relative}: file to be created already exists")
        return False
    original = Text() if creates or not path.exists() else read_text(path)
    result, outcomes = apply_hunks(original, hunks, fuzz=args.fuzz)
    failed = [outcome.number - 1 for outcome in outcomes if not outcome.applied]
    for outcome in outcomes:
        if not outcome.applied or outcome.offset or outcome.fuzz:
            print(outcome.describe())
    if failed:
        print(f"{len(failed)} out of {len(hunks)} hunk{'s' if len(hunks) != 1 else ''} FAILED -- saving rejects "
              f"to file {relative}.rej")
    if args.dry_run:
        return not failed
    if failed:
        _write_rejects(path.with_name(path.name + ".rej"), patch, failed)
    if deletes and not failed and not result.lines:
        if path.exists():
            os.remove(path)
    else:
        write_text(path, result)
    return not failed


def command_apply(args: argparse.Namespace) -> int:
    try:
        text = Path(args.patch).read_text() if args.patch != "-" else sys.stdin.read()
    except FileNotFoundError:
        raise UsageError(f"{args.patch}: no such file") from None
    try:
        patches = parse_patch(text)
    except PatchSyntaxError as error:
        raise UsageError(str(error)) from None
    if not patches:
        raise UsageError("only garbage was found in the patch input")
    root = Path(args.directory)
    ok = True
    for patch in patches:
        ok = _apply_file(patch, root, args) and ok
    return 0 if ok else 1


def command_merge(args: argparse.Namespace) -> int:
    mine, base, theirs = _read(args.mine), _read(args.base), _read(args.theirs)
    labels = list(args.label or [])
    defaults = [args.mine, args.base, args.theirs]
    labels += defaults[len(labels):]
    result = merge(base, mine, theirs, labels=(labels[0], labels[1], labels[2]), show_base=args.diff3)
    if args.output:
        write_text(args.output, result.text)
    else:
        sys.stdout.write(join_lines(result.text))
    if result.conflicts:
        print(f"patchkit: {result.conflicts} conflict{'s' if result.conflicts != 1 else ''}", file=sys.stderr)
    return 1 if result.conflicts else 0


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="patchkit", description="diff, patch and merge text files")
    commands = parser.add_subparsers(dest="command", required=True)
    diff = commands.add_parser("diff", help="write the unified diff of two files")
    diff.add_argument("old")
    diff.add_argument("new")
    diff.add_argument("-U", "--unified", type=_non_negative, default=3, help="lines of context (default 3)")
    diff.add_argument("--label-old")
    diff.add_argument("--label-new")
    diff.set_defaults(handler=command_diff)
    apply = commands.add_parser("apply", help="apply a unified diff")
    apply.add_argument("patch", help="the patch file, or - for standard input")
    apply.add_argument("-d", "--directory", default=".", help="apply under this folder")
    apply.add_argument("-p", "--strip", type=_non_negative, default=1, help="path components to strip (default 1)")
    apply.add_argument("-F", "--fuzz", type=_non_negative, default=0, help="context lines that may be ignored")
    apply.add_argument("-R", "--reverse", action="store_true", help="undo the patch")
    apply.add_argument("--dry-run", action="store_true", help="report only; change no file")
    apply.set_defaults(handler=command_apply)
    merge_ = commands.add_parser("merge", help="three-way merge")
    merge_.add_argument("mine")
    merge_.add_argument("base")
    merge_.add_argument("theirs")
    merge_.add_argument("-o", "--output")
    merge_.add_argument("--diff3", action="store_true", help="show the base text inside conflicts")
    merge_.add_argument("-L", "--label", action="append", help="labels of mine, base and theirs, in order")
    merge_.set_defaults(handler=command_merge)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except UsageError as error:
        print(f"patchkit: {error}", file=sys.stderr)
        return 2
