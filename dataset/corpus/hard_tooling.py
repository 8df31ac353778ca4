"""Hard systems-tooling tasks (issue 36): codebases of 1,000+ lines where several modules must change.

- ``hard-patchkit-offsets-merge``: a Python diff/patch/merge toolkit (Myers diff, unified writer and reader, a
  patch applier with offsets and fuzz, a three-way merge, a CLI) whose patches disagree with GNU diff on empty
  ranges, whose applier lands hunks at the wrong place and whose merge misses and invents conflicts.
- ``hard-bake-incremental-order-only``: a make-like build tool in Python (parser, variables, graph, staleness,
  hash state, parallel executor, CLI) whose incremental rebuilds are wrong in three modules, and which must
  gain GNU make's order-only prerequisites across parser, graph, executor and CLI.

Each task's codebase is written correct here and its bugs are planted by exact replacements (``_plant``); the
reference solution undoes them from ``/solution/fixes.json`` and each negative solution undoes a subset, so the
solution and the negatives can never drift from the shipped code.
"""

from __future__ import annotations

import json

from _spec import NegativeSolution, Spec

Bug = tuple[str, str, str, str]
"""A planted bug: (name, path under /app, the correct text, the planted text)."""


def _plant(sources: dict[str, str], bugs: list[Bug]) -> dict[str, str]:
    """``sources`` with every bug planted; each correct text must occur exactly once."""
    files = dict(sources)
    for name, path, correct, planted in bugs:
        if not planted or correct == planted:
            raise ValueError(f"bug {name}: the planted text must be non-empty and differ from the correct one")
        if files[path].count(correct) != 1:
            raise ValueError(f"bug {name}: its correct text occurs {files[path].count(correct)} times in {path}")
        files[path] = files[path].replace(correct, planted)
    return files


def _fixes_json(bugs: list[Bug]) -> str:
    return json.dumps({name: [path, planted, correct] for name, path, correct, planted in bugs}, indent=1)


def _fix_script(names: list[str] | None = None, then: str = "") -> str:
    """A bash script that undoes the named planted bugs (all when ``names`` is None), then runs ``then``."""
    chosen = "None" if names is None else repr(sorted(names))
    return f"""
python3 - <<'FIX'
import json
from pathlib import Path
fixes = json.loads(Path("/solution/fixes.json").read_text())
chosen = {chosen}
for name, (path, planted, correct) in sorted(fixes.items()):
    if chosen is not None and name not in chosen:
        continue
    target = Path("/app") / path
    text = target.read_text()
    assert text.count(planted) == 1, (name, path)
    target.write_text(text.replace(planted, correct))
    print("fixed", name, "in", path)
FIX
{then}
"""

# --------------------------------------------------------------------------------------------------------------
# hard-patchkit-offsets-merge

_PK_SOURCES = {
    'patchkit/README.md': r'''# patchkit

Line diffs, unified patches, a fuzzy patch applier and a three-way merge in plain Python (no dependencies).

    python3 -m patchkit diff OLD NEW [-U N] [--label-old L] [--label-new L]
    python3 -m patchkit apply PATCH [-d DIR] [-p N] [--fuzz N] [-R] [--dry-run]
    python3 -m patchkit merge MINE BASE THEIRS [-o OUT] [--diff3] [-L LABEL]...

Patches are meant to be interchangeable with GNU diff and patch: `patchkit apply` reads what `diff -u`
(any `-U`) writes, and GNU `patch` accepts what `patchkit diff` writes. Run the suite from this folder:

    python3 -m unittest discover -s tests -t .
''',
    'patchkit/patchkit/__init__.py': r'''"""patchkit: line diffs, unified patches, a fuzzy patch applier and a three-way merge, in plain Python.

The modules, lowest first: ``lines`` (text as lines), ``myers`` (the shortest edit script), ``hunks`` (edits
grouped with context), ``format`` (writing unified diffs), ``parse`` (reading them), ``apply`` (applying hunks
with offsets and fuzz), ``merge3`` (three-way merge with conflict markers) and ``cli`` (``python3 -m patchkit``).
"""

__version__ = "0.9.2"
''',
    'patchkit/patchkit/__main__.py': r'''import sys

from patchkit.cli import main

sys.exit(main())
''',
    'patchkit/patchkit/apply.py': r'''"""Applying hunks to a text the way ``patch`` does: at the expected line, else at the nearest line where the
hunk's old lines match (an offset), else with up to ``fuzz`` lines of context ignored at each end."""

from __future__ import annotations

from dataclasses import dataclass

from patchkit.hunks import Hunk
from patchkit.lines import Text


class PatchConflict(Exception):
    """A hunk matched nowhere; ``index`` is its 0-based number within the file patch."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


@dataclass
class HunkResult:
    """How one hunk went: where it landed (1-based line in the result), the offset and fuzz it needed."""

    number: int
    applied: bool
    line: int = 0
    offset: int = 0
    fuzz: int = 0

    def describe(self) -> str:
        """The ``patch``-style report line."""
        if not self.applied:
            return f"Hunk #{self.number} FAILED at {self.line}."
        if self.offset == 0 and self.fuzz == 0:
            return f"Hunk #{self.number} succeeded at {self.line}."
        parts = []
        if self.fuzz:
            parts.append(f"with fuzz {self.fuzz}")
        if self.offset:
            plural = "" if abs(self.offset) == 1 else "s"
            parts.append(f"(offset {self.offset} line{plural})")
        return f"Hunk #{self.number} succeeded at {self.line} " + " ".join(parts) + "."


def _matches_at(lines: list[str], position: int, expected: list[str]) -> bool:
    if position < 0 or position + len(expected) > len(lines):
        return False
    return lines[position:position + len(expected)] == expected


def candidate_positions(expected: int, size: int, limit: int) -> list[int]:
    """Positions to try for a block of ``size`` lines in a file of ``limit`` lines: ``expected`` first, then
    ever further away, the later position before the earlier one at each distance."""
    last = limit - size
    positions = []
    if 0 <= expected <= last:
        positions.append(expected)
    for distance in range(1, max(expected, last - expected, 0) + 1):
        for position in (expected + distance, expected - distance):
            if 0 <= position <= last:
                positions.append(position)
    return positions


def find_position(lines: list[str], expected: int, block: list[str]) -> int | None:
    """The position nearest to ``expected`` where ``block`` matches, or None."""
    if not block:
        return expected if 0 <= expected <= len(lines) else None
    for position in candidate_positions(expected, len(block), len(lines)):
        if _matches_at(lines, position, block):
            return position
    return None


def _trimmed(hunk: Hunk, fuzz: int) -> tuple[int, list[str], list[str]]:
    """The hunk's old and new lines without up to ``fuzz`` context lines at each end, and how many were cut at
    the top."""
    top = min(fuzz, hunk.leading_context())
    bottom = min(fuzz, hunk.trailing_context())
    old, new = hunk.old_lines(), hunk.new_lines()
    return top, old[top:len(old) - bottom], new[top:len(new) - bottom]


def apply_hunks(text: Text, hunks: list[Hunk], fuzz: int = 0) -> tuple[Text, list[HunkResult]]:
    """``text`` with every hunk that fits applied, and a result per hunk (failed ones are left out)."""
    lines = list(text.lines)
    final_newline = text.final_newline
    results: list[HunkResult] = []
    shift = 0  # lines added minus lines removed by the hunks applied so far
    offset = 0  # how far the previous hunk landed from where it was expected
    for number, hunk in enumerate(hunks, start=1):
        hunk.check()
        expected = hunk.old_index + shift + offset
        placed = False
        for level in range(0, fuzz + 1):
            top, old, new = _trimmed(hunk, level)
            if level and not top and len(old) == len(hunk.old_lines()):
                continue  # nothing to ignore at this level: same as the level before
            position = find_position(lines, expected + top, old)
            if position is None:
                continue
            touches_end = position + len(old) == len(lines)
            lines[position:position + len(old)] = new
            if touches_end and (hunk.old_no_newline or hunk.new_no_newline):
                final_newline = not hunk.new_no_newline
            offset = position - top - hunk.old_index - shift
            shift += len(new) - len(old)
            results.append(HunkResult(number, True, line=position - top + 1, offset=offset, fuzz=level))
            placed = True
            break
        if not placed:
            results.append(HunkResult(number, False, line=expected + 1))
    if not lines:
        final_newline = True
    return Text(lines, final_newline), results


def reverse_hunk(hunk: Hunk) -> Hunk:
    """The hunk that undoes ``hunk``."""
    swap = {" ": " ", "-": "+", "+": "-"}
    lines = [(swap[kind], text) for kind, text in hunk.lines]
    # Keep deletions before insertions inside each change run, as diff writes them.
    ordered: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    for item in lines + [(" ", None)]:
        if item[0] == " ":
            ordered.extend(sorted(run, key=lambda pair: pair[0] != "-"))
            run = []
            if item[1] is not None:
                ordered.append(item)
        else:
            run.append(item)
    return Hunk(hunk.new_index, hunk.new_length, hunk.old_index, hunk.old_length, ordered,
                old_no_newline=hunk.new_no_newline, new_no_newline=hunk.old_no_newline)
''',
    'patchkit/patchkit/cli.py': r'''"""``python3 -m patchkit``: the command line.

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
''',
    'patchkit/patchkit/format.py': r'''"""Writing hunks as a unified diff (the format of ``diff -u`` and ``git diff``)."""

from __future__ import annotations

from patchkit.hunks import CONTEXT, DELETE, INSERT, Hunk, build_hunks
from patchkit.lines import Text

NO_NEWLINE_MARKER = "\\ No newline at end of file"


def format_range(index: int, length: int) -> str:
    """One side of a hunk header: ``start,length`` with a 1-based start.

    An empty range is named by the line before it (0 at the top of the file); a length of 1 is left out."""
    start = index + 1
    if length == 0:
        start = index
    if length == 1:
        return f"{start}"
    return f"{start},{length}"


def hunk_header(hunk: Hunk) -> str:
    """The ``@@ -a,b +c,d @@`` line of ``hunk``."""
    return f"@@ -{format_range(hunk.old_index, hunk.old_length)} +{format_range(hunk.new_index, hunk.new_length)} @@"


def format_hunk(hunk: Hunk) -> list[str]:
    """The lines of ``hunk`` (header first), with the no-newline marker after the file's unterminated last line."""
    out = [hunk_header(hunk)]
    last_old = max((n for n, (kind, _) in enumerate(hunk.lines) if kind != INSERT), default=-1)
    last_new = max((n for n, (kind, _) in enumerate(hunk.lines) if kind != DELETE), default=-1)
    for n, (kind, text) in enumerate(hunk.lines):
        if kind not in (CONTEXT, DELETE, INSERT):
            raise ValueError(f"unknown hunk line kind {kind!r}")
        out.append(kind + text)
        if (n == last_old and hunk.old_no_newline) or (n == last_new and hunk.new_no_newline):
            out.append(NO_NEWLINE_MARKER)
    return out


def unified_diff(old: Text, new: Text, old_label: str, new_label: str, context: int = 3) -> str:
    """The unified diff from ``old`` to ``new``, or ``""`` when they are the same."""
    hunks = build_hunks(old, new, context)
    if not hunks:
        return ""
    out = [f"--- {old_label}", f"+++ {new_label}"]
    for hunk in hunks:
        out.extend(format_hunk(hunk))
    return "\n".join(out) + "\n"
''',
    'patchkit/patchkit/hunks.py': r'''"""Changes grouped into hunks with lines of context, the unit of a unified diff."""

from __future__ import annotations

from dataclasses import dataclass, field

from patchkit.lines import Text
from patchkit.myers import opcodes

CONTEXT = " "
DELETE = "-"
INSERT = "+"


@dataclass
class Hunk:
    """A run of changes with the unchanged lines around it.

    ``old_index`` and ``new_index`` are 0-based positions of the hunk's first line in the old and the new file
    (for an empty range: the position where the range sits, i.e. the number of lines before it).
    ``lines`` holds ``(kind, text)`` pairs, ``kind`` one of ``" "``, ``"-"`` and ``"+"``.
    ``old_no_newline`` / ``new_no_newline``: the hunk's last old / new line is the file's last line and has no
    newline at its end."""

    old_index: int
    old_length: int
    new_index: int
    new_length: int
    lines: list[tuple[str, str]] = field(default_factory=list)
    old_no_newline: bool = False
    new_no_newline: bool = False

    def old_lines(self) -> list[str]:
        """The lines this hunk expects to find (context and deletions)."""
        return [text for kind, text in self.lines if kind != INSERT]

    def new_lines(self) -> list[str]:
        """The lines this hunk leaves behind (context and insertions)."""
        return [text for kind, text in self.lines if kind != DELETE]

    def leading_context(self) -> int:
        """How many context lines open the hunk."""
        count = 0
        for kind, _ in self.lines:
            if kind != CONTEXT:
                break
            count += 1
        return count

    def trailing_context(self) -> int:
        """How many context lines close the hunk."""
        count = 0
        for kind, _ in reversed(self.lines):
            if kind != CONTEXT:
                break
            count += 1
        return count

    def check(self) -> None:
        """Raise ValueError when the line counts disagree with the lines."""
        if len(self.old_lines()) != self.old_length or len(self.new_lines()) != self.new_length:
            raise ValueError(f"hunk counts {self.old_length},{self.new_length} do not match its "
                             f"{len(self.old_lines())} old and {len(self.new_lines())} new lines")


def _changes(old: Text, new: Text) -> list[tuple[int, int, int, int]]:
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes(old.tokens(), new.tokens()) if tag != "equal"]


def group_changes(changes: list[tuple[int, int, int, int]], context: int) -> list[list[tuple[int, int, int, int]]]:
    """Changes that are at most ``2 * context`` unchanged lines apart share a hunk."""
    groups: list[list[tuple[int, int, int, int]]] = []
    for change in changes:
        if groups and change[0] - groups[-1][-1][1] <= 2 * context:
            groups[-1].append(change)
        else:
            groups.append([change])
    return groups


def build_hunks(old: Text, new: Text, context: int = 3) -> list[Hunk]:
    """The hunks of a unified diff from ``old`` to ``new`` with ``context`` lines of context."""
    if context < 0:
        raise ValueError("context must be 0 or more lines")
    hunks = []
    for group in group_changes(_changes(old, new), context):
        first, last = group[0], group[-1]
        lead = min(context, first[0])
        trail = min(context, len(old) - last[1])
        old_start, old_end = first[0] - lead, last[1] + trail
        new_start, new_end = first[2] - lead, last[3] + trail
        lines: list[tuple[str, str]] = []
        i = old_start
        for i1, i2, j1, j2 in group:
            lines.extend((CONTEXT, old.lines[k]) for k in range(i, i1))
            lines.extend((DELETE, old.lines[k]) for k in range(i1, i2))
            lines.extend((INSERT, new.lines[k]) for k in range(j1, j2))
            i = i2
        lines.extend((CONTEXT, old.lines[k]) for k in range(i, old_end))
        hunk = Hunk(old_start, old_end - old_start, new_start, new_end - new_start, lines,
                    old_no_newline=not old.final_newline and old_end == len(old) and old_end > old_start,
                    new_no_newline=not new.final_newline and new_end == len(new) and new_end > new_start)
        hunk.check()
        hunks.append(hunk)
    return hunks
''',
    'patchkit/patchkit/lines.py': r'''"""Text as a list of lines, remembering whether the last line ended with a newline."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Text:
    """The lines of a file without their newline characters.

    ``final_newline`` is False when the file's last line has no newline at its end (an empty file has no
    last line and counts as ending with one)."""

    lines: list[str] = field(default_factory=list)
    final_newline: bool = True

    def __len__(self) -> int:
        return len(self.lines)

    def tokens(self) -> list[object]:
        """The lines as comparison tokens: a last line without a newline differs from the same line with one."""
        tokens: list[object] = list(self.lines)
        if tokens and not self.final_newline:
            tokens[-1] = (tokens[-1], "no-newline")
        return tokens


def split_lines(data: str) -> Text:
    """``data`` as a :class:`Text`. Only ``\\n`` ends a line; a ``\\r`` stays part of the line."""
    if data == "":
        return Text([], True)
    parts = data.split("\n")
    if parts[-1] == "":
        parts.pop()
        return Text(parts, True)
    return Text(parts, False)


def join_lines(text: Text) -> str:
    """The inverse of :func:`split_lines`."""
    if not text.lines:
        return ""
    joined = "\n".join(text.lines)
    return joined + "\n" if text.final_newline else joined


def read_text(path: str | Path) -> Text:
    """The file at ``path`` as a :class:`Text` (UTF-8; undecodable bytes are kept through surrogate escapes)."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as handle:
        return split_lines(handle.read())


def write_text(path: str | Path, text: Text) -> None:
    """Write ``text`` to ``path``, creating its parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
        handle.write(join_lines(text))
''',
    'patchkit/patchkit/merge3.py': r'''"""Three-way merge: combine the changes two sides made to a common base, marking the places where they clash.

Each side's changes are the change runs of its diff against the base. Changes of the two sides that overlap form
one region. Two changes overlap when their base ranges share a line, and also when they merely touch: one ends
where the other starts (so two insertions at the same place overlap, and so do edits of adjacent lines, as in
git). A region changed by one side takes that side's text; a region changed by both sides takes their text when
both made the same change, and is a conflict otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from patchkit.lines import Text
from patchkit.myers import opcodes

MINE, THEIRS = 0, 1


@dataclass
class Change:
    """One side's replacement of ``base[start:end]`` by ``lines``."""

    side: int
    start: int
    end: int
    lines: list[str]


@dataclass
class Region:
    """A stretch of the merge result: unchanged base lines, a clean change, or a conflict."""

    base_start: int
    base_end: int
    lines: list[str] = field(default_factory=list)
    conflict: bool = False
    mine: list[str] = field(default_factory=list)
    theirs: list[str] = field(default_factory=list)
    base: list[str] = field(default_factory=list)


def side_changes(base: Text, other: Text, side: int) -> list[Change]:
    """The change runs of ``other`` against ``base``, as changes of ``side``."""
    return [Change(side, i1, i2, other.lines[j1:j2])
            for tag, i1, i2, j1, j2 in opcodes(base.tokens(), other.tokens()) if tag != "equal"]


def _cluster(changes: list[Change]) -> list[list[Change]]:
    """Changes sorted by base position, grouped into overlapping (or touching) clusters."""
    ordered = sorted(changes, key=lambda change: (change.start, change.end, change.side))
    clusters: list[list[Change]] = []
    cluster_end = -1
    for change in ordered:
        if clusters and change.start <= cluster_end:
            clusters[-1].append(change)
            cluster_end = max(cluster_end, change.end)
        else:
            clusters.append([change])
            cluster_end = change.end
    return clusters


def _side_text(base: Text, start: int, end: int, changes: list[Change]) -> list[str]:
    """``base[start:end]`` with ``changes`` (of one side, inside the range) applied."""
    out: list[str] = []
    at = start
    for change in sorted(changes, key=lambda c: (c.start, c.end)):
        out.extend(base.lines[at:change.start])
        out.extend(change.lines)
        at = change.end
    out.extend(base.lines[at:end])
    return out


def merge_regions(base: Text, mine: Text, theirs: Text) -> list[Region]:
    """The merge as regions covering the base in order."""
    changes = side_changes(base, mine, MINE) + side_changes(base, theirs, THEIRS)
    regions: list[Region] = []
    at = 0
    for cluster in _cluster(changes):
        start = min(change.start for change in cluster)
        end = max(change.end for change in cluster)
        if at < start:
            regions.append(Region(at, start, base.lines[at:start]))
        mine_changes = [c for c in cluster if c.side == MINE]
        theirs_changes = [c for c in cluster if c.side == THEIRS]
        mine_text = _side_text(base, start, end, mine_changes)
        theirs_text = _side_text(base, start, end, theirs_changes)
        if not theirs_changes:
            regions.append(Region(start, end, mine_text))
        elif not mine_changes:
            regions.append(Region(start, end, theirs_text))
        elif mine_text == theirs_text:
            regions.append(Region(start, end, mine_text))
        else:
            regions.append(Region(start, end, conflict=True, mine=mine_text, theirs=theirs_text,
                                  base=base.lines[start:end]))
        at = end
    if at < len(base.lines):
        regions.append(Region(at, len(base.lines), base.lines[at:]))
    return regions


@dataclass
class MergeResult:
    """The merged text (with conflict markers) and the number of conflicts."""

    text: Text
    conflicts: int


def merge(base: Text, mine: Text, theirs: Text, labels: tuple[str, str, str] = ("mine", "base", "theirs"),
          show_base: bool = False) -> MergeResult:
    """Merge ``mine`` and ``theirs``, both descended from ``base``.

    A conflict is written as ``<<<<<<< MINE``, mine's lines, (with ``show_base``: ``||||||| BASE`` and the base
    lines), ``=======``, theirs' lines, ``>>>>>>> THEIRS``."""
    out: list[str] = []
    conflicts = 0
    for region in merge_regions(base, mine, theirs):
        if not region.conflict:
            out.extend(region.lines)
            continue
        conflicts += 1
        out.append(f"<<<<<<< {labels[0]}")
        out.extend(region.mine)
        if show_base:
            out.append(f"||||||| {labels[1]}")
            out.extend(region.base)
        out.append("=======")
        out.extend(region.theirs)
        out.append(f">>>>>>> {labels[2]}")
    final_newline = _final_newline(base, mine, theirs)
    return MergeResult(Text(out, final_newline if out else True), conflicts)


def _final_newline(base: Text, mine: Text, theirs: Text) -> bool:
    """The side that changed the final newline wins; when both did, they agree or mine wins."""
    if mine.final_newline != base.final_newline:
        return mine.final_newline
    return theirs.final_newline
''',
    'patchkit/patchkit/myers.py': r'''"""The shortest edit script between two sequences (Myers, "An O(ND) Difference Algorithm", 1986).

:func:`opcodes` turns it into runs in the shape of :mod:`difflib`'s opcodes: ``(tag, i1, i2, j1, j2)`` with
``tag`` one of ``equal``, ``delete``, ``insert`` or ``replace``, covering both sequences in order.
"""

from __future__ import annotations

from typing import Sequence

Move = tuple[str, int, int]
"""One step of an edit script: ``("=", i, j)`` keeps a[i] == b[j], ``("-", i, j)`` deletes a[i] (j is where
b stands), ``("+", i, j)`` inserts b[j] (i is where a stands)."""


def _common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def _common_suffix(a: Sequence[object], b: Sequence[object], prefix: int) -> int:
    n = 0
    limit = min(len(a), len(b)) - prefix
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def _trace(a: Sequence[object], b: Sequence[object]) -> list[dict[int, int]]:
    """The furthest-reaching x of every diagonal k, saved at the start of each round d."""
    n, m = len(a), len(b)
    v: dict[int, int] = {1: 0}
    trace: list[dict[int, int]] = []
    for d in range(n + m + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[k - 1] < v[k + 1]):
                x = v[k + 1]
            else:
                x = v[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[k] = x
            if x >= n and y >= m:
                return trace
    raise AssertionError("the edit graph has no path to its corner")


def _backtrack(trace: list[dict[int, int]], n: int, m: int) -> list[Move]:
    moves: list[Move] = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        if k == -d or (k != d and v.get(k - 1, -1) < v.get(k + 1, -1)):
            prev_k = k + 1
        else:
            prev_k = k - 1
        prev_x = v[prev_k]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            moves.append(("=", x - 1, y - 1))
            x -= 1
            y -= 1
        if d > 0:
            if x == prev_x:
                moves.append(("+", x, y - 1))
            else:
                moves.append(("-", x - 1, y))
        x, y = prev_x, prev_y
    moves.reverse()
    return moves


def edit_script(a: Sequence[object], b: Sequence[object]) -> list[Move]:
    """A shortest list of moves turning ``a`` into ``b`` (deletions before insertions where both fit)."""
    prefix = _common_prefix(a, b)
    suffix = _common_suffix(a, b, prefix)
    middle_a = a[prefix:len(a) - suffix]
    middle_b = b[prefix:len(b) - suffix]
    moves: list[Move] = [("=", i, i) for i in range(prefix)]
    if middle_a or middle_b:
        trace = _trace(middle_a, middle_b)
        for kind, i, j in _backtrack(trace, len(middle_a), len(middle_b)):
            moves.append((kind, i + prefix, j + prefix))
    moves.extend(("=", len(a) - suffix + i, len(b) - suffix + i) for i in range(suffix))
    return moves


def distance(a: Sequence[object], b: Sequence[object]) -> int:
    """The number of deletions plus insertions in a shortest edit script."""
    return sum(1 for kind, _, _ in edit_script(a, b) if kind != "=")


def opcodes(a: Sequence[object], b: Sequence[object]) -> list[tuple[str, int, int, int, int]]:
    """The edit script as runs: equal runs, and between them one change run (delete, insert or replace)."""
    result: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    pending_i, pending_j = 0, 0
    changed = False
    for kind, _, _ in edit_script(a, b):
        if kind == "=":
            if changed:
                result.append((_tag(i - pending_i, j - pending_j), pending_i, i, pending_j, j))
                changed = False
            if result and result[-1][0] == "equal":
                tag, i1, _, j1, _ = result.pop()
                result.append(("equal", i1, i + 1, j1, j + 1))
            else:
                result.append(("equal", i, i + 1, j, j + 1))
            i += 1
            j += 1
            continue
        if not changed:
            pending_i, pending_j = i, j
            changed = True
        if kind == "-":
            i += 1
        else:
            j += 1
    if changed:
        result.append((_tag(i - pending_i, j - pending_j), pending_i, i, pending_j, j))
    return result


def _tag(deleted: int, inserted: int) -> str:
    if deleted and inserted:
        return "replace"
    return "delete" if deleted else "insert"
''',
    'patchkit/patchkit/parse.py': r'''"""Reading unified diffs: one :class:`FilePatch` per ``---``/``+++`` pair, each with its hunks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from patchkit.format import NO_NEWLINE_MARKER
from patchkit.hunks import CONTEXT, DELETE, INSERT, Hunk

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
DEV_NULL = "/dev/null"


class PatchSyntaxError(ValueError):
    """The patch text is not a well-formed unified diff; the message names the line."""

    def __init__(self, line_number: int, message: str):
        super().__init__(f"malformed patch at line {line_number}: {message}")
        self.line_number = line_number


@dataclass
class FilePatch:
    """The changes to one file. ``old_path``/``new_path`` are the header names (``/dev/null`` for none)."""

    old_path: str
    new_path: str
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def creates(self) -> bool:
        return self.old_path == DEV_NULL

    @property
    def deletes(self) -> bool:
        return self.new_path == DEV_NULL


def _header_name(line: str) -> str:
    """The file name of a ``---``/``+++`` line: up to a tab (a timestamp follows it), quotes removed."""
    name = line[4:].split("\t", 1)[0].rstrip("\r")
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]
    return name


def parse_range(start: str, length: str | None) -> tuple[int, int]:
    """A header range as ``(0-based index, length)``; the length defaults to 1.

    An empty range is named by the line before it, so its index is the start itself."""
    count = 1 if length is None else int(length)
    index = int(start) - 1
    if count == 0:
        index = int(start)
    return max(index, 0), count


def _read_hunk(lines: list[str], at: int, header: re.Match[str]) -> tuple[Hunk, int]:
    old_index, old_length = parse_range(header.group(1), header.group(2))
    new_index, new_length = parse_range(header.group(3), header.group(4))
    hunk = Hunk(old_index, old_length, new_index, new_length)
    old_seen = new_seen = 0
    n = at + 1
    while n < len(lines) and (old_seen < old_length or new_seen < new_length):
        line = lines[n]
        if line.startswith("\\"):
            n += 1
            continue
        kind, text = (line[0], line[1:]) if line else (CONTEXT, "")
        if kind not in (CONTEXT, DELETE, INSERT):
            raise PatchSyntaxError(n + 1, f"unexpected line {line!r} inside a hunk")
        if kind != INSERT:
            old_seen += 1
        if kind != DELETE:
            new_seen += 1
        if old_seen > old_length or new_seen > new_length:
            raise PatchSyntaxError(n + 1, "the hunk has more lines than its header says")
        hunk.lines.append((kind, text))
        n += 1
        if n < len(lines) and lines[n] == NO_NEWLINE_MARKER:
            if kind != INSERT:
                hunk.old_no_newline = True
            if kind != DELETE:
                hunk.new_no_newline = True
            n += 1
    if old_seen != old_length or new_seen != new_length:
        raise PatchSyntaxError(at + 1, f"the hunk ends after {old_seen} old and {new_seen} new lines, its header "
                                       f"says {old_length} and {new_length}")
    return hunk, n


def parse_patch(text: str) -> list[FilePatch]:
    """Every file patch in ``text``; lines outside ``---``/``+++``/hunks (``diff`` commands, comments) are skipped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    patches: list[FilePatch] = []
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith("--- ") and n + 1 < len(lines) and lines[n + 1].startswith("+++ "):
            patches.append(FilePatch(_header_name(line), _header_name(lines[n + 1])))
            n += 2
            continue
        header = HUNK_HEADER.match(line)
        if header:
            if not patches:
                raise PatchSyntaxError(n + 1, "a hunk before any '---'/'+++' file header")
            hunk, n = _read_hunk(lines, n, header)
            patches[-1].hunks.append(hunk)
            continue
        n += 1
    for patch in patches:
        if not patch.hunks and not (patch.creates or patch.deletes):
            raise PatchSyntaxError(0, f"the patch of {patch.new_path} has no hunks")
    return patches


def strip_path(name: str, components: int) -> str:
    """``name`` without its first ``components`` slash-separated components (``patch -p``)."""
    if components <= 0:
        return name
    parts = name.split("/")
    if len(parts) <= components:
        raise ValueError(f"cannot strip {components} components from {name!r}")
    return "/".join(parts[components:])
''',
    'patchkit/tests/__init__.py': r'''''',
    'patchkit/tests/test_apply_and_merge.py': r'''import unittest

from patchkit.apply import apply_hunks, candidate_positions, reverse_hunk
from patchkit.format import unified_diff
from patchkit.hunks import build_hunks
from patchkit.lines import Text, join_lines, split_lines
from patchkit.merge3 import merge
from patchkit.parse import parse_patch

OLD = "".join(f"row {n}\n" for n in range(1, 31))


def _text(*lines):
    return Text(list(lines), True)


class ApplyTest(unittest.TestCase):
    def test_exact_application(self):
        new = OLD.replace("row 4\n", "row four\n").replace("row 25\n", "")
        hunks = build_hunks(split_lines(OLD), split_lines(new))
        result, outcomes = apply_hunks(split_lines(OLD), hunks)
        self.assertEqual(join_lines(result), new)
        self.assertTrue(all(o.applied and o.offset == 0 and o.fuzz == 0 for o in outcomes))

    def test_through_the_text_format(self):
        new = OLD.replace("row 12\n", "row 12\nrow 12.5\n")
        patch = parse_patch(unified_diff(split_lines(OLD), split_lines(new), "a/t", "b/t"))[0]
        result, _ = apply_hunks(split_lines(OLD), patch.hunks)
        self.assertEqual(join_lines(result), new)

    def test_reverse_undoes(self):
        new = OLD.replace("row 9\n", "nine\n")
        hunks = build_hunks(split_lines(OLD), split_lines(new))
        result, _ = apply_hunks(split_lines(new), [reverse_hunk(h) for h in hunks])
        self.assertEqual(join_lines(result), OLD)

    def test_a_missing_context_fails(self):
        new = OLD.replace("row 9\n", "nine\n")
        hunks = build_hunks(split_lines(OLD), split_lines(new))
        target = OLD.replace("row 8\n", "row eight\n")
        result, outcomes = apply_hunks(split_lines(target), hunks)
        self.assertFalse(outcomes[0].applied)
        self.assertEqual(join_lines(result), target)

    def test_expected_position_is_tried_first(self):
        self.assertEqual(candidate_positions(3, 2, 10)[0], 3)
        self.assertEqual(sorted(candidate_positions(3, 2, 10)), list(range(0, 9)))


class MergeTest(unittest.TestCase):
    def test_separate_changes_merge_cleanly(self):
        base = _text("a", "b", "c", "d", "e", "f")
        mine = _text("A", "b", "c", "d", "e", "f")
        theirs = _text("a", "b", "c", "d", "e", "F")
        result = merge(base, mine, theirs)
        self.assertEqual(result.conflicts, 0)
        self.assertEqual(result.text.lines, ["A", "b", "c", "d", "e", "F"])

    def test_one_sided_change(self):
        base = _text("a", "b", "c")
        result = merge(base, _text("a", "x", "y", "c"), base)
        self.assertEqual((result.conflicts, result.text.lines), (0, ["a", "x", "y", "c"]))

    def test_clashing_edits_conflict(self):
        base = _text("a", "b", "c")
        result = merge(base, _text("a", "mine", "c"), _text("a", "theirs", "c"), labels=("M", "B", "T"))
        self.assertEqual(result.conflicts, 1)
        self.assertEqual(result.text.lines, ["a", "<<<<<<< M", "mine", "=======", "theirs", ">>>>>>> T", "c"])


if __name__ == "__main__":
    unittest.main()
''',
    'patchkit/tests/test_diff_and_parse.py': r'''import unittest

from patchkit.format import hunk_header, unified_diff
from patchkit.hunks import build_hunks
from patchkit.lines import split_lines
from patchkit.parse import PatchSyntaxError, parse_patch, strip_path

OLD = "".join(f"line {n}\n" for n in range(1, 21))


class DiffTest(unittest.TestCase):
    def test_no_difference_gives_nothing(self):
        self.assertEqual(unified_diff(split_lines(OLD), split_lines(OLD), "a", "b"), "")

    def test_one_changed_line(self):
        new = OLD.replace("line 10\n", "line ten\n")
        text = unified_diff(split_lines(OLD), split_lines(new), "a/f", "b/f")
        self.assertEqual(text, "--- a/f\n+++ b/f\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n"
                               "+line ten\n line 11\n line 12\n line 13\n")

    def test_close_changes_share_a_hunk(self):
        new = OLD.replace("line 5\n", "five\n").replace("line 11\n", "eleven\n")
        self.assertEqual(len(build_hunks(split_lines(OLD), split_lines(new))), 1)
        new = OLD.replace("line 5\n", "five\n").replace("line 13\n", "thirteen\n")
        self.assertEqual(len(build_hunks(split_lines(OLD), split_lines(new))), 2)

    def test_single_line_ranges_leave_out_the_length(self):
        hunks = build_hunks(split_lines("a\n"), split_lines("b\n"))
        self.assertEqual(hunk_header(hunks[0]), "@@ -1 +1 @@")

    def test_no_newline_marker(self):
        text = unified_diff(split_lines("a\nb\n"), split_lines("a\nb"), "x", "y")
        self.assertIn("\n-b\n+b\n", text)
        self.assertTrue(text.endswith("+b\n\\ No newline at end of file\n"))


class ParseTest(unittest.TestCase):
    def test_parses_what_diff_writes(self):
        new = OLD.replace("line 3\n", "").replace("line 17\n", "line 17\nline 17b\n")
        text = unified_diff(split_lines(OLD), split_lines(new), "a/f.txt", "b/f.txt")
        patches = parse_patch("diff -u a/f.txt b/f.txt\n" + text)
        self.assertEqual(len(patches), 1)
        self.assertEqual(patches[0].new_path, "b/f.txt")
        self.assertEqual([h.old_length for h in patches[0].hunks], [6, 6])
        self.assertEqual([h.new_length for h in patches[0].hunks], [5, 7])

    def test_timestamps_after_a_tab_are_dropped(self):
        patch = parse_patch("--- a/x\t2024-01-01 10:00:00\n+++ b/x\t2024-01-02 10:00:00\n@@ -1 +1 @@\n-a\n+b\n")
        self.assertEqual((patch[0].old_path, patch[0].new_path), ("a/x", "b/x"))

    def test_counts_are_checked(self):
        with self.assertRaises(PatchSyntaxError) as caught:
            parse_patch("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n")
        self.assertIn("line 3", str(caught.exception))

    def test_strip_path(self):
        self.assertEqual(strip_path("a/src/x.c", 1), "src/x.c")
        self.assertEqual(strip_path("x.c", 0), "x.c")
        with self.assertRaises(ValueError):
            strip_path("x.c", 1)


if __name__ == "__main__":
    unittest.main()
''',
    'patchkit/tests/test_lines_and_myers.py': r'''import random
import unittest

from patchkit.lines import Text, join_lines, split_lines
from patchkit.myers import distance, edit_script, opcodes


def _lcs_length(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    return table[0][0]


class LinesTest(unittest.TestCase):
    def test_round_trip(self):
        for data in ["", "a\n", "a", "a\nb\n", "a\nb", "\n", "\n\n", "x\r\ny\r\n"]:
            self.assertEqual(join_lines(split_lines(data)), data)

    def test_missing_final_newline_is_a_difference(self):
        self.assertNotEqual(Text(["a"], True).tokens(), Text(["a"], False).tokens())
        self.assertEqual(Text([], True).tokens(), [])


class MyersTest(unittest.TestCase):
    def test_identical_and_empty(self):
        self.assertEqual(distance("abc", "abc"), 0)
        self.assertEqual(distance("", "abc"), 3)
        self.assertEqual(distance("abc", ""), 3)
        self.assertEqual(opcodes([], []), [])

    def test_classic_example(self):
        self.assertEqual(distance("ABCABBA", "CBABAC"), 5)

    def test_scripts_are_shortest_and_rebuild_the_target(self):
        rng = random.Random(5)
        for _ in range(300):
            a = [rng.choice("abcd") for _ in range(rng.randrange(0, 14))]
            b = [rng.choice("abcd") for _ in range(rng.randrange(0, 14))]
            rebuilt = []
            for tag, i1, i2, j1, j2 in opcodes(a, b):
                rebuilt.extend(a[i1:i2] if tag == "equal" else b[j1:j2])
            self.assertEqual(rebuilt, b)
            self.assertEqual(distance(a, b), len(a) + len(b) - 2 * _lcs_length(a, b))

    def test_moves_cover_both_sequences(self):
        moves = edit_script("kitten", "sitting")
        self.assertEqual(sum(1 for kind, _, _ in moves if kind != "+"), 6)
        self.assertEqual(sum(1 for kind, _, _ in moves if kind != "-"), 7)


if __name__ == "__main__":
    unittest.main()
''',
}

_PK_FIXTURES = {
    'patchkit_fixtures/dr.patch': r'''--- a/jobs.ini
+++ b/jobs.ini
@@ -2,3 +2,3 @@
 # owner: ops
-# revision: 1
+# revision: 2
 # contact: ops desk
@@ -37,3 +37,3 @@
 owner = ops
-enabled = yes
+enabled = no
 retries = 3
''',
    'patchkit_fixtures/dr_expected.txt': r'''# site overrides
# --------------
timezone = UTC

# imported below

# job schedule
# owner: ops
# revision: 2
# contact: ops desk

[job 1]
owner = ops
enabled = yes
retries = 3

[job 2]
owner = ops
enabled = yes
retries = 3

[job 3]
owner = ops
enabled = yes
retries = 3

[job 4]
owner = ops
enabled = yes
retries = 3

[job 5]
owner = ops
enabled = yes
retries = 3

[job 6]
owner = ops
enabled = yes
retries = 3

[job 7]
owner = ops
enabled = no
retries = 3

[job 8]
owner = ops
enabled = yes
retries = 3

[job 9]
owner = ops
enabled = yes
retries = 3

[job 10]
owner = ops
enabled = yes
retries = 3

[job 11]
owner = ops
enabled = yes
retries = 3

[job 12]
owner = ops
enabled = yes
retries = 3

''',
    'patchkit_fixtures/dr_target.txt': r'''# site overrides
# --------------
timezone = UTC

# imported below

# job schedule
# owner: ops
# revision: 1
# contact: ops desk

[job 1]
owner = ops
enabled = yes
retries = 3

[job 2]
owner = ops
enabled = yes
retries = 3

[job 3]
owner = ops
enabled = yes
retries = 3

[job 4]
owner = ops
enabled = yes
retries = 3

[job 5]
owner = ops
enabled = yes
retries = 3

[job 6]
owner = ops
enabled = yes
retries = 3

[job 7]
owner = ops
enabled = yes
retries = 3

[job 8]
owner = ops
enabled = yes
retries = 3

[job 9]
owner = ops
enabled = yes
retries = 3

[job 10]
owner = ops
enabled = yes
retries = 3

[job 11]
owner = ops
enabled = yes
retries = 3

[job 12]
owner = ops
enabled = yes
retries = 3

''',
    'patchkit_fixtures/fz.patch': r'''--- a/opts.conf
+++ b/opts.conf
@@ -3,7 +3,7 @@
 option_3 = 9
 option_4 = 12
 option_5 = 15
-option_6 = 18
+option_6 = changed
 option_7 = 21
 option_8 = 24
 option_9 = 27
@@ -28,7 +28,8 @@
 option_28 = 84
 option_29 = 87
 option_30 = 90
-option_31 = 93
+option_31 = changed
+option_31b = new
 option_32 = 96
 option_33 = 99
 option_34 = 102
''',
    'patchkit_fixtures/fz_expected.txt': r'''# local copy
option_1 = 3
option_2 = 6
option_3 = 9
option_4 = 12
option_5 = 15
option_6 = changed
option_7 = 21
option_8 = 24
option_9 = 27
option_10 = 30
option_11 = 33
option_12 = 36
option_13 = 39
option_14 = 42
option_15 = 45
option_16 = 48
option_17 = 51
option_18 = 54
option_19 = 57
option_20 = 60
option_21 = 63
option_22 = 66
option_23 = 69
option_24 = 72
option_25 = 75
option_26 = 78
option_27 = 81
option_28 = 84
option_29 = 1000
option_30 = 90
option_31 = changed
option_31b = new
option_32 = 96
option_33 = 99
option_34 = locally tuned
option_35 = 105
option_36 = 108
option_37 = 111
option_38 = 114
option_39 = 117
option_40 = 120
''',
    'patchkit_fixtures/fz_target.txt': r'''# local copy
option_1 = 3
option_2 = 6
option_3 = 9
option_4 = 12
option_5 = 15
option_6 = 18
option_7 = 21
option_8 = 24
option_9 = 27
option_10 = 30
option_11 = 33
option_12 = 36
option_13 = 39
option_14 = 42
option_15 = 45
option_16 = 48
option_17 = 51
option_18 = 54
option_19 = 57
option_20 = 60
option_21 = 63
option_22 = 66
option_23 = 69
option_24 = 72
option_25 = 75
option_26 = 78
option_27 = 81
option_28 = 84
option_29 = 1000
option_30 = 90
option_31 = 93
option_32 = 96
option_33 = 99
option_34 = locally tuned
option_35 = 105
option_36 = 108
option_37 = 111
option_38 = 114
option_39 = 117
option_40 = 120
''',
    'patchkit_fixtures/off.patch': r'''--- a/service.py
+++ b/service.py
@@ -10,7 +10,7 @@
     """Handle one request."""
     check(request)
     session = open_session()
-    value = compute(request)
+    value = compute(request, strict=True)
     audit(value)
     session.close()
     return value
@@ -40,7 +40,7 @@
 # tail 5
 # tail 6
 # tail 7
-# tail 8
+# tail 8 (reviewed)
 # tail 9
 # tail 10
 # tail 11
''',
    'patchkit_fixtures/off_expected.txt': r'''# service handlers
import logging

log = logging.getLogger(__name__)


def handle_alpha(request):
    """Handle one request."""
    check(request)
    session = open_session()
    value = compute(request, strict=True)
    audit(value)
    session.close()
    return value

def handle_beta(request):
    """Handle one request."""
    check(request)
    session = open_session()
    value = compute(request)
    audit(value)
    session.close()
    return value

def handle_gamma(request):
    """Handle one request."""
    check(request)
    session = open_session()
    value = compute(request)
    audit(value)
    session.close()
    return value

# tail 1
# tail 2
# tail 3
# tail 4
# tail 5
# tail 6
# tail 7
# tail 8 (reviewed)
# tail 9
# tail 10
# tail 11
''',
    'patchkit_fixtures/off_target.txt': r'''# service handlers
import logging

log = logging.getLogger(__name__)


def handle_alpha(request):
    """Handle one request."""
    check(request)
    session = open_session()
    value = compute(request)
    audit(value)
    session.close()
    return value

def handle_beta(request):
    """Handle one request."""
    check(request)
    session = open_session()
    value = compute(request)
    audit(value)
    session.close()
    return value

def handle_gamma(request):
    """Handle one request."""
    check(request)
    session = open_session()
    value = compute(request)
    audit(value)
    session.close()
    return value

# tail 1
# tail 2
# tail 3
# tail 4
# tail 5
# tail 6
# tail 7
# tail 8
# tail 9
# tail 10
# tail 11
''',
    'patchkit_fixtures/u0.patch': r'''--- a/etc/app.cfg
+++ b/etc/app.cfg
@@ -0,0 +1,2 @@
+# generated settings, do not edit by hand
+# version 7
@@ -11,2 +12,0 @@
-alpha_10 = 712
-omicron_11 = 272
@@ -21 +21 @@
-xi_20 = 743
+tau_20 = 999
@@ -30,0 +31,2 @@
+extra_a = 1
+extra_b = 2
@@ -44 +45,0 @@
-pi_43 = 866
@@ -60,0 +62,2 @@
+[trailer]
+end = yes
''',
    'patchkit_fixtures/u0_new.txt': r'''# generated settings, do not edit by hand
# version 7
[section_0]
epsilon_1 = 582
gamma_2 = 261
delta_3 = 507
omicron_4 = 483
nu_5 = 807
eta_6 = 96
[section_1]
pi_8 = 29
nu_9 = 443
theta_12 = 605
delta_13 = 923
[section_2]
lambda_15 = 31
alpha_16 = 26
sigma_17 = 9
nu_18 = 702
eta_19 = 992
tau_20 = 999
[section_3]
alpha_22 = 540
theta_23 = 782
omicron_24 = 961
pi_25 = 566
theta_26 = 353
theta_27 = 693
[section_4]
theta_29 = 779
extra_a = 1
extra_b = 2
omicron_30 = 975
kappa_31 = 948
alpha_32 = 426
sigma_33 = 944
delta_34 = 190
[section_5]
kappa_36 = 123
lambda_37 = 917
rho_38 = 958
xi_39 = 519
eta_40 = 310
kappa_41 = 601
[section_6]
rho_44 = 402
tau_45 = 873
beta_46 = 491
theta_47 = 761
nu_48 = 424
[section_7]
zeta_50 = 375
sigma_51 = 903
mu_52 = 88
omicron_53 = 679
rho_54 = 110
zeta_55 = 533
[section_8]
nu_57 = 379
pi_58 = 750
alpha_59 = 480
[trailer]
end = yes
''',
    'patchkit_fixtures/u0_old.txt': r'''[section_0]
epsilon_1 = 582
gamma_2 = 261
delta_3 = 507
omicron_4 = 483
nu_5 = 807
eta_6 = 96
[section_1]
pi_8 = 29
nu_9 = 443
alpha_10 = 712
omicron_11 = 272
theta_12 = 605
delta_13 = 923
[section_2]
lambda_15 = 31
alpha_16 = 26
sigma_17 = 9
nu_18 = 702
eta_19 = 992
xi_20 = 743
[section_3]
alpha_22 = 540
theta_23 = 782
omicron_24 = 961
pi_25 = 566
theta_26 = 353
theta_27 = 693
[section_4]
theta_29 = 779
omicron_30 = 975
kappa_31 = 948
alpha_32 = 426
sigma_33 = 944
delta_34 = 190
[section_5]
kappa_36 = 123
lambda_37 = 917
rho_38 = 958
xi_39 = 519
eta_40 = 310
kappa_41 = 601
[section_6]
pi_43 = 866
rho_44 = 402
tau_45 = 873
beta_46 = 491
theta_47 = 761
nu_48 = 424
[section_7]
zeta_50 = 375
sigma_51 = 903
mu_52 = 88
omicron_53 = 679
rho_54 = 110
zeta_55 = 533
[section_8]
nu_57 = 379
pi_58 = 750
alpha_59 = 480
''',
    'patchkit_fixtures/u0b.patch': r'''--- a/notes.txt
+++ b/notes.txt
@@ -1,3 +0,0 @@
-line 1
-line 2
-line 3
@@ -13,0 +11 @@
+inserted after line 13
@@ -30 +28,2 @@
-line 30
+line 30 (edited)
+line 31
\ No newline at end of file
''',
    'patchkit_fixtures/u0b_new.txt': r'''line 4
line 5
line 6
line 7
line 8
line 9
line 10
line 11
line 12
line 13
inserted after line 13
line 14
line 15
line 16
line 17
line 18
line 19
line 20
line 21
line 22
line 23
line 24
line 25
line 26
line 27
line 28
line 29
line 30 (edited)
line 31''',
    'patchkit_fixtures/u0b_old.txt': r'''line 1
line 2
line 3
line 4
line 5
line 6
line 7
line 8
line 9
line 10
line 11
line 12
line 13
line 14
line 15
line 16
line 17
line 18
line 19
line 20
line 21
line 22
line 23
line 24
line 25
line 26
line 27
line 28
line 29
line 30
''',
}

_PK_TESTS = r'''
import random
import re
import shutil

FIXTURES = Path(__file__).parent / "patchkit_fixtures"
PROJECT = "/app/patchkit"
HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def pk(*args, cwd=None, input=None):
    env = dict(os.environ, PYTHONPATH=PROJECT)
    return subprocess.run(["python3", "-m", "patchkit", *args], capture_output=True, text=True, input=input,
                          cwd=cwd, env=env, timeout=120)


BATCH = """
import contextlib, io, json, os, sys
from patchkit.cli import main
results = []
for folder, argv in json.load(sys.stdin):
    os.chdir(folder)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    results.append([code, out.getvalue()])
print(json.dumps(results))
"""


def pk_batch(calls):
    """Many CLI calls (folder, argv) in one interpreter, through the CLI's own main()."""
    env = dict(os.environ, PYTHONPATH=PROJECT)
    result = subprocess.run(["python3", "-c", BATCH], input=json.dumps([[str(f), a] for f, a in calls]),
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def _strict_check(patch, old_lines, new_lines):
    """Every hunk's header names exactly the lines its body shows, by the unified-format rules."""
    hunks = 0
    lines = patch.splitlines()
    n = 2
    while n < len(lines):
        m = HEADER.match(lines[n])
        assert m, f"not a hunk header: {lines[n]!r}"
        hunks += 1
        os_, ol, ns, nl = int(m.group(1)), int(m.group(2) or 1), int(m.group(3)), int(m.group(4) or 1)
        body_old, body_new = [], []
        n += 1
        while n < len(lines) and not lines[n].startswith("@@"):
            kind, text = lines[n][:1], lines[n][1:]
            if kind in " -":
                body_old.append(text)
            if kind in " +":
                body_new.append(text)
            n += 1
        assert (len(body_old), len(body_new)) == (ol, nl), lines
        old_at = os_ - 1 if ol else os_
        new_at = ns - 1 if nl else ns
        assert 0 <= old_at <= len(old_lines) and 0 <= new_at <= len(new_lines), (m.group(0), len(old_lines))
        assert old_lines[old_at:old_at + ol] == body_old, (m.group(0), "old side")
        assert new_lines[new_at:new_at + nl] == body_new, (m.group(0), "new side")
        if ol == 0:
            assert os_ == old_at  # an empty range is named by the line before it
    return hunks


def _pairs(seed, count):
    rng = random.Random(seed)
    vocabulary = ["alpha", "beta", "gamma", "delta", "omega", "}", "", "return x", "x += 1"]
    for _ in range(count):
        old = [rng.choice(vocabulary) for _ in range(rng.randrange(0, 40))]
        new = list(old)
        for _ in range(rng.randrange(1, 6)):
            where = rng.randrange(len(new) + 1)
            action = rng.randrange(3)
            if action == 0 and new:
                del new[min(where, len(new) - 1)]
            elif action == 1:
                new[where:where] = [f"added {rng.randrange(99)}" for _ in range(rng.randrange(1, 4))]
            elif new:
                new[min(where, len(new) - 1)] = f"changed {rng.randrange(99)}"
        yield old, new


def _write(path, lines):
    Path(path).write_text("".join(line + "\n" for line in lines))


def test_diff_hunk_headers(tmp_path):
    cases = list(_pairs(3601, 60))
    cases += [([], ["first", "second", "third"]), (["only", "lines"], []), (["x"] * 5, ["top"] + ["x"] * 5),
              (["a", "b", "c"], ["a", "b", "c", "d", "e"])]
    calls = []
    for number, (old, new) in enumerate(cases):
        _write(tmp_path / f"old{number}", old)
        _write(tmp_path / f"new{number}", new)
        calls += [(tmp_path, ["diff", "-U", context, f"old{number}", f"new{number}"]) for context in ("0", "1", "3")]
    checked = 0
    for (code, output), (_, argv) in zip(pk_batch(calls), calls):
        number = int(argv[-1][3:])
        old, new = cases[number]
        assert code == (0 if old == new else 1), (number, argv)
        if old != new:
            checked += _strict_check(output, old, new)
    assert checked > 150
    # Against an empty file: the same bytes as GNU diff writes.
    _write(tmp_path / "empty", [])
    _write(tmp_path / "three", ["one", "two", "three"])
    result = pk("diff", "--label-old", "/dev/null", "--label-new", "b/three", "empty", "three", cwd=tmp_path)
    assert result.stdout == "--- /dev/null\n+++ b/three\n@@ -0,0 +1,3 @@\n+one\n+two\n+three\n"
    result = pk("diff", "--label-old", "a/three", "--label-new", "/dev/null", "three", "empty", cwd=tmp_path)
    assert result.stdout == "--- a/three\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n"


def _apply_fixture(tmp_path, patch, original, target, *args):
    destination = tmp_path / target
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / original, destination)
    return pk("apply", str(FIXTURES / patch), "-d", str(tmp_path), *args, cwd=tmp_path), destination


def test_apply_gnu_zero_context_patches(tmp_path):
    result, path = _apply_fixture(tmp_path, "u0.patch", "u0_old.txt", "etc/app.cfg")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0_new.txt").read_bytes()
    result, path = _apply_fixture(tmp_path, "u0b.patch", "u0b_old.txt", "notes.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0b_new.txt").read_bytes()


def test_reverse_and_round_trip(tmp_path):
    result, path = _apply_fixture(tmp_path, "u0b.patch", "u0b_new.txt", "notes.txt", "-R")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0b_old.txt").read_bytes()
    result, path = _apply_fixture(tmp_path, "u0.patch", "u0_new.txt", "etc/app.cfg", "-R")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "u0_old.txt").read_bytes()
    pairs = list(_pairs(3602, 25))
    diffs = []
    for number, (old, new) in enumerate(pairs):
        work = tmp_path / f"rt{number}"
        (work / "a").mkdir(parents=True)
        _write(work / "a" / "f.txt", old)
        _write(work / "new.txt", new)
        diffs.append((work, ["diff", "-U", str(number % 4), "--label-old", "a/f.txt", "--label-new", "b/f.txt",
                             "a/f.txt", "new.txt"]))
    for (work, _), (_, text) in zip(diffs, pk_batch(diffs)):
        (work / "p.diff").write_text(text)
    applied = pk_batch([(work, ["apply", "p.diff", "-d", "a"]) for work, _ in diffs])
    for number, ((work, _), (code, output)) in enumerate(zip(diffs, applied)):
        assert code == 0, (number, output)
        assert (work / "a" / "f.txt").read_text() == (work / "new.txt").read_text(), number
    back = pk_batch([(work, ["apply", "-R", "p.diff", "-d", "a"]) for work, _ in diffs])
    for number, ((work, _), (code, output)) in enumerate(zip(diffs, back)):
        assert code == 0 and (work / "a" / "f.txt").read_text() == "".join(l + "\n" for l in pairs[number][0])


def test_apply_takes_the_nearest_match(tmp_path):
    result, path = _apply_fixture(tmp_path, "off.patch", "off_target.txt", "service.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "off_expected.txt").read_bytes()
    assert "Hunk #1 succeeded at 8 (offset -2 lines)." in result.stdout
    assert "Hunk #2 succeeded at 38 (offset -2 lines)." in result.stdout


def test_apply_carries_offsets_and_fuzz(tmp_path):
    result, path = _apply_fixture(tmp_path, "dr.patch", "dr_target.txt", "jobs.ini")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == (FIXTURES / "dr_expected.txt").read_bytes()
    assert "Hunk #2 succeeded at 43 (offset 6 lines)." in result.stdout
    result, path = _apply_fixture(tmp_path, "fz.patch", "fz_target.txt", "opts.conf")
    assert result.returncode == 1
    assert "Hunk #2 FAILED" in result.stdout
    rejects = (tmp_path / "opts.conf.rej").read_text()
    assert "+option_31b = new" in rejects and "option_6" not in rejects
    assert "option_6 = changed" in path.read_text() and "option_31b" not in path.read_text()
    (tmp_path / "opts.conf.rej").unlink()
    result, path = _apply_fixture(tmp_path, "fz.patch", "fz_target.txt", "opts.conf", "--fuzz", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Hunk #2 succeeded at 29 with fuzz 2 (offset 1 line)." in result.stdout
    assert path.read_bytes() == (FIXTURES / "fz_expected.txt").read_bytes()


def _merge(tmp_path, base, mine, theirs, *extra):
    for name, lines in (("base", base), ("mine", mine), ("theirs", theirs)):
        _write(tmp_path / name, lines)
    return pk("merge", "mine", "base", "theirs", "-L", "ours", "-L", "common", "-L", "other", *extra, cwd=tmp_path)


def test_merge_same_change_on_both_sides_is_clean(tmp_path):
    base = [f"setting_{n} = {n}" for n in range(1, 16)]
    mine = list(base)
    theirs = list(base)
    for side in (mine, theirs):
        side[4] = "setting_5 = 500"  # the same fix made twice
        side[9:9] = ["# new block", "setting_9b = 9"]
    mine[0] = "setting_1 = one"
    theirs[-1] = "setting_15 = fifteen"
    result = _merge(tmp_path, base, mine, theirs)
    expected = list(mine)
    expected[-1] = "setting_15 = fifteen"
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "".join(line + "\n" for line in expected)


def test_merge_touching_changes_conflict(tmp_path):
    base = ["a", "b", "c", "d", "e", "f", "g"]
    result = _merge(tmp_path, base, base[:3] + ["from mine"] + base[3:], base[:3] + ["from theirs"] + base[3:])
    assert result.returncode == 1
    assert result.stdout == "a\nb\nc\n<<<<<<< ours\nfrom mine\n=======\nfrom theirs\n>>>>>>> other\nd\ne\nf\ng\n"
    mine = ["a", "B", "c", "d", "e", "f", "g"]
    theirs = ["a", "b", "C", "d", "e", "f", "g"]
    result = _merge(tmp_path, base, mine, theirs, "--diff3")
    assert result.returncode == 1
    assert result.stdout == ("a\n<<<<<<< ours\nB\nc\n||||||| common\nb\nc\n=======\nb\nC\n>>>>>>> other\n"
                             "d\ne\nf\ng\n")
    # Changes two lines apart still merge cleanly.
    result = _merge(tmp_path, base, ["a", "B", "c", "d", "e", "f", "g"], ["a", "b", "c", "D", "e", "f", "g"])
    assert result.returncode == 0 and result.stdout == "a\nB\nc\nD\ne\nf\ng\n"


def test_guard_suite_and_fixtures_unchanged():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/patchkit/tests/"):
            assert unchanged(path), path


def test_guard_shipped_suite_passes():
    result = run("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", cwd=PROJECT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_guard_no_rewrite():
    probe = ("import patchkit.cli as c; print(c.unified_diff.__module__, c.apply_hunks.__module__, "
             "c.merge.__module__, c.parse_patch.__module__)")
    result = subprocess.run(["python3", "-c", probe], capture_output=True, text=True, cwd=PROJECT, timeout=60)
    assert result.stdout.split() == ["patchkit.format", "patchkit.apply", "patchkit.merge3", "patchkit.parse"]
    for name in ("myers", "hunks", "format", "parse", "apply", "merge3", "lines", "cli"):
        source = Path(PROJECT, "patchkit", f"{name}.py").read_text()
        for banned in ("import subprocess", "import difflib", "from difflib", "os.system", "os.popen"):
            assert banned not in source, (name, banned)
'''

_PK_BUGS: list[Bug] = [
    ("format-empty-range", "patchkit/patchkit/format.py",
     "    start = index + 1\n    if length == 0:\n        start = index\n    if length == 1:\n",
     "    start = index + 1\n    if length == 1:\n"),
    ("parse-empty-range", "patchkit/patchkit/parse.py",
     '    """A header range as ``(0-based index, length)``; the length defaults to 1.\n\n'
     '    An empty range is named by the line before it, so its index is the start itself."""\n'
     "    count = 1 if length is None else int(length)\n    index = int(start) - 1\n"
     "    if count == 0:\n        index = int(start)\n",
     '    """A header range as ``(0-based index, length)``; the length defaults to 1."""\n'
     "    count = 1 if length is None else int(length)\n    index = int(start) - 1\n"),
    ("apply-search-order", "patchkit/patchkit/apply.py",
     "    for distance in range(1, max(expected, last - expected, 0) + 1):\n"
     "        for position in (expected + distance, expected - distance):\n"
     "            if 0 <= position <= last:\n                positions.append(position)\n",
     "    positions.extend(range(max(expected + 1, 0), last + 1))\n"
     "    positions.extend(range(min(expected - 1, last), -1, -1))\n"),
    ("apply-offset-carry", "patchkit/patchkit/apply.py",
     "        expected = hunk.old_index + shift + offset\n", "        expected = hunk.old_index + shift\n"),
    ("merge-touching", "patchkit/patchkit/merge3.py",
     "if clusters and change.start <= cluster_end:", "if clusters and change.start < cluster_end:"),
    ("merge-identical", "patchkit/patchkit/merge3.py",
     "            regions.append(Region(start, end, theirs_text))\n        elif mine_text == theirs_text:\n"
     "            regions.append(Region(start, end, mine_text))\n",
     "            regions.append(Region(start, end, theirs_text))\n"),
]

_PK_SHORTCUT = r"""
python3 - <<'EDIT'
from pathlib import Path
cli = Path("/app/patchkit/patchkit/cli.py")
text = cli.read_text()
text = text.replace("import argparse\n", "import argparse\nimport subprocess\n", 1)
old = "    text = unified_diff(old, new, args.label_old or args.old, args.label_new or args.new, context=args.unified)\n"
new = ("    labels = [\"--label\", args.label_old or args.old, \"--label\", args.label_new or args.new]\n"
       "    text = subprocess.run([\"diff\", f\"-U{args.unified}\", *labels, args.old, args.new],\n"
       "                          capture_output=True, text=True).stdout\n")
assert old in text
cli.write_text(text.replace(old, new))
EDIT
"""

_PK_INSTRUCTION = """
/app/patchkit is our in-house diff/patch/merge toolkit (pure Python, `python3 -m patchkit diff|apply|merge`, see
its README). It is supposed to be interchangeable with GNU diff and GNU patch, and its merge is supposed to behave
like git's. Three reports came in this week:

1. "Patches made with `diff -U0` (zero lines of context) apply without complaint but put the added lines in the
   wrong place; `apply -R` of such a patch corrupts the file too. And the patches `patchkit diff` writes for a new
   or emptied file, or with `-U 0`, have hunk headers that GNU patch and other tools read differently from what
   we meant."
2. "`patchkit apply` on a file that drifted since the patch was made sometimes changes the wrong copy of a
   repeated block (config sections, identical function bodies), where GNU patch changes the right one. It
   happens both when the right copy is only a couple of lines away from where the hunk says, and in later
   hunks of a file whose first hunk was found a few lines further down."
3. "`patchkit merge` quietly stacks both sides' lines when both sides insert at the same place, and when the two
   sides edit adjacent lines: both cases must be conflicts, as in git. Yet when both sides made the very same
   change it reports a conflict where there is nothing to resolve."

Fix the toolkit so that all of this works: diff output uses the standard unified-format hunk headers (exactly
what GNU diff writes for the same hunks), apply reads them the same way and lands every hunk where GNU patch
would, with the same `Hunk #N succeeded at L (offset K lines).` / `with fuzz F` reports, and merge reports
conflicts exactly in the cases described in `patchkit/merge3.py`'s docstring. Keep the package's structure
and its command-line interface (the CLI must keep using the package's own diff, apply and merge code; no
external diff/patch programs and no difflib). The unit tests in /app/patchkit/tests must keep passing; do not
edit them. Your fix will be checked on other files and patches than the ones in the reports.
"""

_PK_FILES = _plant(_PK_SOURCES, _PK_BUGS)

TASKS = [
    Spec(
        task_id="hard-patchkit-offsets-merge",
        title="Make a diff/patch/merge toolkit agree with GNU diff, GNU patch and git",
        difficulty="hard",
        category="debugging",
        instruction=_PK_INSTRUCTION,
        files=_PK_FILES,
        tests=_PK_TESTS,
        test_files=_PK_FIXTURES,
        weights={
            "test_diff_hunk_headers": 2.0,
            "test_apply_gnu_zero_context_patches": 2.0,
            "test_reverse_and_round_trip": 1.0,
            "test_apply_takes_the_nearest_match": 1.5,
            "test_apply_carries_offsets_and_fuzz": 1.5,
            "test_merge_same_change_on_both_sides_is_clean": 1.5,
            "test_merge_touching_changes_conflict": 1.5,
        },
        guards=["test_guard_suite_and_fixtures_unchanged", "test_guard_shipped_suite_passes", "test_guard_no_rewrite"],
        solution=_fix_script(None, "cd /app/patchkit && python3 -m unittest discover -s tests -t . 2>&1 | tail -1"),
        solution_files={"fixes.json": _fixes_json(_PK_BUGS)},
        negative_solutions=[
            NegativeSolution(name="writer-only", script=_fix_script(["format-empty-range"]), max_score=0.2,
                             why="fixes only the diff writer's empty-range headers"),
            NegativeSolution(name="merge-only", script=_fix_script(["merge-touching", "merge-identical"]),
                             max_score=0.3, why="fixes the merge and nothing of diff/apply"),
            NegativeSolution(name="diff-and-apply-not-merge",
                             script=_fix_script(["format-empty-range", "parse-empty-range", "apply-search-order",
                                                 "apply-offset-carry"]),
                             max_score=0.75, why="leaves both merge bugs"),
            NegativeSolution(name="gnu-diff-shortcut",
                             script=_fix_script([n for n, *_ in _PK_BUGS if n != "format-empty-range"], _PK_SHORTCUT),
                             max_score=0.0, why="shells out to GNU diff instead of fixing the writer"),
        ],
        tags=["python", "diff", "patch", "merge", "multi-file", "gnu-compat"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600},
    ),
]


# --------------------------------------------------------------------------------------------------------------
# hard-bake-incremental-order-only

_BK_SOURCES = {
    'bake/README.md': r'''# bake

A small make-like incremental build tool in plain Python: `python3 -m bake [-j N] [-n] [-k] [--hash] [--explain]
[NAME=value ...] [target ...]` reads `./Bakefile` (make syntax: variables, explicit and pattern rules, `.PHONY`,
automatic variables `$@ $< $^ $? $* $|`). See `bake/parser.py` for the syntax and `bake/staleness.py` for when a
target counts as out of date. The suite: `python3 -m unittest discover -s tests -t .` from this folder.
''',
    'bake/bake/__init__.py': r'''"""bake: a small make-like incremental build tool.

``parser`` reads a Bakefile into rules and variables, ``variables`` expands ``$(NAME)`` references and the
automatic variables, ``graph`` resolves the goals into a dependency graph (explicit and pattern rules),
``filestat`` and ``state`` hold what is known about files (modification times, content hashes, the recorded
signature of each build), ``staleness`` decides what is out of date, ``executor`` runs the recipes (in parallel
with ``-j``) and ``cli`` is ``python3 -m bake``.
"""

__version__ = "1.4.0"
''',
    'bake/bake/__main__.py': r'''import sys

from bake.cli import main

sys.exit(main())
''',
    'bake/bake/cli.py': r'''"""``python3 -m bake [options] [NAME=value ...] [target ...]``.

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
''',
    'bake/bake/errors.py': r'''"""The errors bake reports to its user (each names the Bakefile line or the target concerned)."""


class BakeError(Exception):
    """Any problem bake reports and stops on (exit status 2)."""


class BakefileSyntaxError(BakeError):
    """The Bakefile cannot be read: ``FILE:LINE: message``."""

    def __init__(self, filename: str, line: int, message: str):
        super().__init__(f"{filename}:{line}: {message}")
        self.filename = filename
        self.line = line


class ExpansionError(BakeError):
    """A variable reference cannot be expanded (unterminated, or a variable that refers to itself)."""


class GraphError(BakeError):
    """No rule makes a needed target, or the rules form a cycle."""
''',
    'bake/bake/executor.py': r'''"""Running the recipes of a graph, ``jobs`` at a time, each only after everything it depends on finished."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TextIO

from bake.errors import BakeError
from bake.filestat import FileStat
from bake.graph import Graph, Node
from bake.parser import Bakefile
from bake.staleness import Verdict, hash_verdict, timestamp_verdict
from bake.state import BuildState, recipe_signature
from bake.variables import expand


@dataclass
class Options:
    """How to build."""

    jobs: int = 1
    dry_run: bool = False
    keep_going: bool = False
    use_hash: bool = False
    explain: bool = False


@dataclass
class Outcome:
    """What a build did."""

    ran: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.skipped


class Builder:
    """Builds the nodes of ``graph`` rooted at ``root``, printing commands and errors to ``out``."""

    def __init__(self, bakefile: Bakefile, graph: Graph, root: str, options: Options, out: TextIO = sys.stdout):
        self.bakefile = bakefile
        self.graph = graph
        self.root = root
        self.options = options
        self.out = out
        self.stats = FileStat(root)
        self.state = BuildState(root) if options.use_hash else None
        self.rebuilt: set[str] = set()
        self.outcome = Outcome()
        self._print_lock = threading.Lock()

    def emit(self, text: str) -> None:
        with self._print_lock:
            self.out.write(text)
            self.out.flush()

    def automatic_variables(self, node: Node) -> dict[str, str]:
        newer = [p for p in node.prerequisites
                 if p in self.rebuilt or (self.stats.mtime(p) or 0) > (self.stats.mtime(node.name) or 0)]
        unique = []
        for prerequisite in node.prerequisites:
            if prerequisite not in unique:
                unique.append(prerequisite)
        return {
            "@": node.name,
            "<": node.prerequisites[0] if node.prerequisites else "",
            "^": " ".join(unique),
            "?": " ".join(newer),
            "*": node.stem,
            "|": " ".join(node.order_only),
        }

    def commands(self, node: Node) -> list[str]:
        automatic = self.automatic_variables(node)
        return [expand(line, self.bakefile.variables, automatic, self.root) for line in node.recipe]

    def verdict(self, node: Node, commands: list[str]) -> Verdict:
        if self.state is not None:
            signature = recipe_signature(commands, node.recipe)
            return hash_verdict(node, self.stats, self.state, signature, self.rebuilt, self.options.dry_run)
        return timestamp_verdict(node, self.stats, self.rebuilt)

    def run_commands(self, node: Node, commands: list[str]) -> bool:
        for command in commands:
            silent = ignore = False
            while command[:1] in ("@", "-", "+"):
                silent |= command[0] == "@"
                ignore |= command[0] == "-"
                command = command[1:]
            if not silent or self.options.dry_run:
                self.emit(command + "\n")
            if self.options.dry_run:
                continue
            result = subprocess.run(["/bin/sh", "-c", command], cwd=self.root, capture_output=True, text=True)
            if result.stdout or result.stderr:
                self.emit(result.stdout + result.stderr)
            if result.returncode != 0:
                if ignore:
                    self.emit(f"bake: [{node.name}] Error {result.returncode} (ignored)\n")
                    continue
                self.emit(f"bake: *** [{node.name}] Error {result.returncode}\n")
                return False
        return True

    def build_node(self, node: Node) -> bool:
        """Bring one node up to date; False when its recipe failed."""
        if node.source:
            return True
        commands = self.commands(node)
        verdict = self.verdict(node, commands)
        if not verdict.stale:
            return True
        if self.options.explain:
            self.emit(f"bake: rebuilding '{node.name}' because {verdict.reason}\n")
        if not commands and not node.phony and not self.options.dry_run and not self.stats.exists(node.name):
            raise BakeError(f"no recipe for target '{node.name}' and it does not exist")
        before = self.stats.mtime(node.name)
        ok = self.run_commands(node, commands)
        self.stats.forget(node.name)
        if not ok:
            if not node.phony and self.stats.mtime(node.name) not in (None, before):
                os.remove(os.path.join(self.root, node.name))
                self.emit(f"bake: deleting '{node.name}'\n")
                self.stats.forget(node.name)
            if self.state is not None:
                self.state.drop(node.name)
            return False
        with self._print_lock:
            self.rebuilt.add(node.name)
            if commands:
                self.outcome.ran.append(node.name)
        if self.state is not None and not self.options.dry_run and not node.phony:
            inputs = {p: self.stats.digest(p) for p in node.prerequisites}
            self.state.record(node.name, recipe_signature(commands, node.recipe), inputs)
        return True

    def build(self) -> Outcome:
        """Build every node of the graph; stop scheduling at the first failure unless ``keep_going``."""
        pending = list(self.graph.order)
        done: set[str] = set()
        broken: set[str] = set()
        running: dict[Future[bool], str] = {}
        stop = False
        if self.state is not None:
            # Hash every existing file once, up front and in parallel (most are sources nothing rewrites).
            present = [name for name in self.graph.order if os.path.exists(os.path.join(self.root, name))]
            with ThreadPoolExecutor(max_workers=8) as hasher:
                list(hasher.map(self.stats.digest, present))
        with ThreadPoolExecutor(max_workers=max(1, self.options.jobs)) as pool:
            while pending or running:
                if not stop:
                    for name in list(pending):
                        if len(running) >= max(1, self.options.jobs):
                            break
                        node = self.graph.nodes[name]
                        dependencies = node.dependencies()
                        if any(d in broken for d in dependencies):
                            pending.remove(name)
                            broken.add(name)
                            self.outcome.skipped.append(name)
                            continue
                        if all(d in done for d in dependencies):
                            pending.remove(name)
                            running[pool.submit(self.build_node, node)] = name
                if not running:
                    break  # one pass schedules every ready node: nothing running means nothing can start
                finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in finished:
                    name = running.pop(future)
                    if future.result():
                        done.add(name)
                    else:
                        broken.add(name)
                        self.outcome.failed.append(name)
                        if not self.options.keep_going:
                            stop = True
        self.outcome.skipped += [name for name in pending if name not in self.outcome.skipped]
        if self.state is not None and not self.options.dry_run:
            self.state.save()
        return self.outcome
''',
    'bake/bake/filestat.py': r'''"""What bake knows about files on disk: modification times (read once per run) and content hashes."""

from __future__ import annotations

import hashlib
import os
import threading


class FileStat:
    """Modification times and content digests of files under ``root``, cached for the run.

    ``forget`` drops what is cached about a file (after a recipe rewrote it)."""

    def __init__(self, root: str):
        self.root = root
        self._mtimes: dict[str, float | None] = {}
        self._digests: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def mtime(self, name: str) -> float | None:
        """The file's modification time in nanoseconds, or None when it does not exist."""
        with self._lock:
            if name not in self._mtimes:
                try:
                    self._mtimes[name] = os.stat(self.path(name)).st_mtime_ns
                except FileNotFoundError:
                    self._mtimes[name] = None
            return self._mtimes[name]

    def exists(self, name: str) -> bool:
        return self.mtime(name) is not None

    def digest(self, name: str) -> str | None:
        """The SHA-256 of the file's bytes (of its listing, for a folder), or None when it does not exist."""
        with self._lock:
            if name not in self._digests:
                self._digests[name] = _digest(self.path(name))
            return self._digests[name]

    def forget(self, name: str) -> None:
        with self._lock:
            self._mtimes.pop(name, None)
            self._digests.pop(name, None)


def _digest(path: str) -> str | None:
    if os.path.isdir(path):
        return hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except FileNotFoundError:
        return None
''',
    'bake/bake/graph.py': r'''"""Resolving goals into a dependency graph.

A target is made by the explicit rule(s) naming it (their prerequisites are merged; at most one may have a
recipe), else by the first pattern rule whose target pattern matches it and whose prerequisites all exist or can
be made, else it must be an existing file (a source). Phony targets are never files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from bake.errors import GraphError
from bake.parser import Bakefile, Rule
from bake.variables import pattern_match


@dataclass
class Node:
    """One target of the build."""

    name: str
    prerequisites: list[str] = field(default_factory=list)
    order_only: list[str] = field(default_factory=list)
    recipe: list[str] = field(default_factory=list)
    stem: str = ""
    phony: bool = False
    source: bool = False
    """An existing file no rule makes."""
    rule_line: int = 0

    def dependencies(self) -> list[str]:
        """Everything that must be finished before this node's recipe may run."""
        return self.prerequisites + [name for name in self.order_only if name not in self.prerequisites]


class Graph:
    """The nodes needed for some goals, in an order where every node follows its dependencies."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.order: list[str] = []

    def __contains__(self, name: str) -> bool:
        return name in self.nodes

    def dependents(self, name: str) -> list[str]:
        return [other.name for other in self.nodes.values() if name in other.dependencies()]


def _substitute(names: list[str], stem: str) -> list[str]:
    return [name.replace("%", stem, 1) for name in names]


class _Resolver:
    def __init__(self, bakefile: Bakefile, root: str):
        self.bakefile = bakefile
        self.root = root
        self.explicit: dict[str, list[Rule]] = {}
        for rule in bakefile.explicit_rules():
            for target in rule.targets:
                self.explicit.setdefault(target, []).append(rule)
        self.graph = Graph()
        self.visiting: list[str] = []

    def exists(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.root, name))

    def can_make(self, name: str, depth: int = 0) -> bool:
        if name in self.explicit or self.exists(name) or name in self.bakefile.phony:
            return True
        if depth > 4:
            return False
        return self._pattern_for(name, depth + 1) is not None

    def _pattern_for(self, name: str, depth: int = 0) -> tuple[Rule, str] | None:
        for rule in self.bakefile.pattern_rules():
            if not rule.recipe:
                continue
            for target in rule.targets:
                stem = pattern_match(target, name)
                if stem is None:
                    continue
                needed = _substitute(rule.prerequisites, stem) + _substitute(rule.order_only, stem)
                if all(self.can_make(prerequisite, depth) for prerequisite in needed):
                    return rule, stem
        return None

    def node_for(self, name: str, needed_by: str | None) -> Node:
        phony = name in self.bakefile.phony
        rules = self.explicit.get(name, [])
        if rules:
            with_recipe = [rule for rule in rules if rule.recipe]
            if len(with_recipe) > 1:
                lines = ", ".join(str(rule.line) for rule in with_recipe)
                raise GraphError(f"target '{name}' has recipes in more than one rule (lines {lines})")
            node = Node(name, phony=phony)
            for rule in rules:
                node.prerequisites += [p for p in rule.prerequisites if p not in node.prerequisites]
                node.order_only += [p for p in rule.order_only if p not in node.order_only]
            if with_recipe:
                node.recipe = list(with_recipe[0].recipe)
                node.rule_line = with_recipe[0].line
            elif not phony and not self.exists(name):
                found = self._pattern_for(name)
                if found is not None:
                    rule, stem = found
                    node.prerequisites = _substitute(rule.prerequisites, stem) + node.prerequisites
                    node.order_only += _substitute(rule.order_only, stem)
                    node.recipe, node.stem, node.rule_line = list(rule.recipe), stem, rule.line
            return node
        if not phony:
            found = self._pattern_for(name)
            if found is not None:
                rule, stem = found
                return Node(name, _substitute(rule.prerequisites, stem), _substitute(rule.order_only, stem),
                            list(rule.recipe), stem, rule_line=rule.line)
            if self.exists(name):
                return Node(name, source=True)
        if phony:
            return Node(name, phony=True)
        suffix = f", needed by '{needed_by}'" if needed_by else ""
        raise GraphError(f"no rule to make target '{name}'{suffix}")

    def visit(self, name: str, needed_by: str | None) -> None:
        if name in self.graph.nodes:
            return
        if name in self.visiting:
            cycle = self.visiting[self.visiting.index(name):] + [name]
            raise GraphError("circular dependency: " + " -> ".join(cycle))
        self.visiting.append(name)
        node = self.node_for(name, needed_by)
        for dependency in node.dependencies():
            self.visit(dependency, name)
        self.visiting.pop()
        self.graph.nodes[name] = node
        self.graph.order.append(name)


def build_graph(bakefile: Bakefile, goals: list[str], root: str = ".") -> Graph:
    """The graph of everything ``goals`` need, in dependency order."""
    resolver = _Resolver(bakefile, root)
    for goal in goals:
        resolver.visit(goal, None)
    return resolver.graph
''',
    'bake/bake/parser.py': r'''"""Reading a Bakefile.

The syntax is a subset of make's:

* ``NAME = value`` (recursive), ``NAME := value`` (expanded now), ``NAME += more``, ``NAME ?= value``;
* ``targets : prerequisites | order-only prerequisites`` followed by recipe lines that start with a tab.
  Targets and prerequisites are expanded when the rule line is read. A target with ``%`` makes a pattern rule;
* ``.PHONY: names`` marks targets that are not files; ``.DEFAULT_GOAL := name`` picks the default goal (else the
  first target of the first explicit rule);
* ``#`` starts a comment outside recipes; a backslash at the end of a line continues it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bake.errors import BakefileSyntaxError, ExpansionError
from bake.variables import expand


@dataclass
class Rule:
    """One rule as written. ``recipe`` lines are kept unexpanded (they are expanded when they run)."""

    targets: list[str]
    prerequisites: list[str]
    recipe: list[str] = field(default_factory=list)
    line: int = 0
    order_only: list[str] = field(default_factory=list)
    """Prerequisites after ``|``: built before the target, never a reason to rebuild it."""

    @property
    def is_pattern(self) -> bool:
        return any("%" in target for target in self.targets)


@dataclass
class Bakefile:
    """Everything a Bakefile says."""

    filename: str
    variables: dict[str, str] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    phony: set[str] = field(default_factory=set)
    default_goal: str | None = None

    def explicit_rules(self) -> list[Rule]:
        return [rule for rule in self.rules if not rule.is_pattern]

    def pattern_rules(self) -> list[Rule]:
        return [rule for rule in self.rules if rule.is_pattern]


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Physical lines joined at trailing backslashes, each with the number of its first physical line."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending.append(raw[:-1] if raw.startswith("\t") else raw[:-1].rstrip() + " ")
            continue
        pending.append(raw)
        out.append((start, "".join(pending)))
        pending = []
    if pending:
        out.append((start, "".join(pending)))
    return out


def _strip_comment(line: str) -> str:
    result = []
    i = 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and line[i + 1] == "#":
            result.append("#")
            i += 2
            continue
        if line[i] == "#":
            break
        result.append(line[i])
        i += 1
    return "".join(result)


ASSIGNMENT_OPERATORS = (":=", "+=", "?=", "=")


def _split_assignment(line: str) -> tuple[str, str, str] | None:
    """``(name, operator, value)`` when ``line`` assigns a variable (an ``=`` before any ``:`` rule colon)."""
    for index, char in enumerate(line):
        if char == ":" and line[index:index + 2] != ":=":
            return None
        if char in "=:+?":
            for operator in ASSIGNMENT_OPERATORS:
                if line.startswith(operator, index):
                    name = line[:index].strip()
                    if not name or any(c.isspace() for c in name):
                        return None
                    return name, operator, line[index + len(operator):].strip()
    return None


class _Reader:
    def __init__(self, filename: str, overrides: dict[str, str]):
        self.bakefile = Bakefile(filename)
        self.overrides = overrides
        self.current: Rule | None = None

    def error(self, line: int, message: str) -> BakefileSyntaxError:
        return BakefileSyntaxError(self.bakefile.filename, line, message)

    def expand(self, line: int, text: str) -> str:
        try:
            return expand(text, {**self.bakefile.variables, **self.overrides})
        except ExpansionError as error:
            raise self.error(line, str(error)) from None

    def assign(self, line: int, name: str, operator: str, value: str) -> None:
        variables = self.bakefile.variables
        if name == ".DEFAULT_GOAL":
            self.bakefile.default_goal = self.expand(line, value).strip() or None
            return
        if operator == ":=":
            variables[name] = self.expand(line, value).replace("$", "$$")
        elif operator == "+=":
            variables[name] = (variables[name] + " " + value) if variables.get(name) else value
        elif operator == "?=":
            variables.setdefault(name, value)
        else:
            variables[name] = value

    def rule(self, line: int, text: str) -> None:
        head, colon, tail = text.partition(":")
        if not colon:
            raise self.error(line, f"missing separator in {text.strip()!r} (a rule needs ':', a recipe a tab)")
        if tail.startswith(":"):
            raise self.error(line, "double-colon rules are not supported")
        targets = self.expand(line, head).split()
        if not targets:
            raise self.error(line, "a rule without targets")
        recipe_inline = None
        if ";" in tail:
            tail, recipe_inline = tail.split(";", 1)
        normal, _, order_only = tail.partition("|")
        prerequisites = self.expand(line, normal).split()
        order = self.expand(line, order_only).split()
        if targets == [".PHONY"]:
            self.bakefile.phony.update(prerequisites)
            self.current = None
            return
        pattern = any("%" in target for target in targets)
        if pattern and not all("%" in target for target in targets):
            raise self.error(line, "a rule mixes pattern and explicit targets")
        self.current = Rule(targets, prerequisites, line=line, order_only=order)
        if recipe_inline is not None and recipe_inline.strip():
            self.current.recipe.append(recipe_inline.strip())
        self.bakefile.rules.append(self.current)
        if self.bakefile.default_goal is None and not pattern and not targets[0].startswith("."):
            self.bakefile.default_goal = targets[0]

    def read(self, text: str) -> Bakefile:
        for line, raw in _logical_lines(text):
            if raw.startswith("\t"):
                if self.current is None:
                    if raw.strip() == "":
                        continue
                    raise self.error(line, "recipe line before any rule")
                command = raw[1:]
                if command.strip():
                    self.current.recipe.append(command)
                continue
            content = _strip_comment(raw)
            if not content.strip():
                continue
            assignment = _split_assignment(content)
            if assignment is not None:
                self.assign(line, *assignment)
                self.current = None
                continue
            self.rule(line, content)
        return self.bakefile


def parse(text: str, filename: str = "Bakefile", overrides: dict[str, str] | None = None) -> Bakefile:
    """The Bakefile in ``text``. ``overrides`` (command-line ``NAME=value``) win over its assignments."""
    bakefile = _Reader(filename, dict(overrides or {})).read(text)
    for name, value in (overrides or {}).items():
        bakefile.variables[name] = value
    return bakefile
''',
    'bake/bake/staleness.py': r'''"""Deciding whether a target must be rebuilt.

Timestamp mode (the default): a phony target always runs; a target is out of date when it does not exist, when a
prerequisite is newer than it, or when a prerequisite was rebuilt earlier in this run (whatever time the rebuilt
file carries; under ``-n`` "rebuilt" means "would be rebuilt").

Hash mode (``--hash``): a target is out of date when it does not exist, when nothing is recorded for it, when its
recipe's signature changed, or when a prerequisite's content differs from the content recorded at its last build.
A prerequisite rebuilt to the very same bytes does not make its dependents stale; under ``-n`` a prerequisite that
would be rebuilt counts as changed.

Order-only prerequisites never make a target out of date.
"""

from __future__ import annotations

from dataclasses import dataclass

from bake.filestat import FileStat
from bake.graph import Node
from bake.state import BuildState


@dataclass
class Verdict:
    """Whether to run the recipe, and why (for ``--explain``)."""

    stale: bool
    reason: str


def timestamp_verdict(node: Node, stats: FileStat, rebuilt: set[str]) -> Verdict:
    if node.phony:
        return Verdict(True, "it is phony")
    if node.source:
        return Verdict(False, "it is a source file")
    own = stats.mtime(node.name)
    if own is None:
        return Verdict(True, "it does not exist")
    for prerequisite in node.prerequisites:
        if prerequisite in rebuilt:
            return Verdict(True, f"prerequisite '{prerequisite}' was rebuilt")
        other = stats.mtime(prerequisite)
        if other is None:
            return Verdict(True, f"prerequisite '{prerequisite}' does not exist")
        if other > own:
            return Verdict(True, f"prerequisite '{prerequisite}' is newer")
    return Verdict(False, "it is up to date")


def hash_verdict(node: Node, stats: FileStat, state: BuildState, signature: str, rebuilt: set[str],
                 dry_run: bool) -> Verdict:
    if node.phony:
        return Verdict(True, "it is phony")
    if node.source:
        return Verdict(False, "it is a source file")
    if not stats.exists(node.name):
        return Verdict(True, "it does not exist")
    record = state.get(node.name)
    if record is None:
        return Verdict(True, "no build of it is recorded")
    if record.get("recipe") != signature:
        return Verdict(True, "its recipe changed")
    inputs = record.get("inputs", {})
    for prerequisite in node.prerequisites:
        if dry_run and prerequisite in rebuilt:
            return Verdict(True, f"prerequisite '{prerequisite}' would be rebuilt")
        if prerequisite not in inputs:
            return Verdict(True, f"prerequisite '{prerequisite}' is new")
        if stats.digest(prerequisite) != inputs[prerequisite]:
            return Verdict(True, f"prerequisite '{prerequisite}' changed")
    return Verdict(False, "it is up to date")
''',
    'bake/bake/state.py': r'''"""The state file of ``--hash`` mode (``.bake-state.json`` beside the Bakefile).

For each target built it records the signature of the recipe that built it and the content digest of each of
its prerequisites at that time; the target is up to date while both still match.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading

STATE_FILE = ".bake-state.json"
FORMAT_VERSION = 2


def recipe_signature(commands: list[str], recipe: list[str]) -> str:
    """The digest of what a recipe runs: its lines after expansion (``commands``), so that a changed variable
    changes the signature; ``recipe`` is the text as written."""
    return hashlib.sha256("\n".join(commands).encode()).hexdigest()


class BuildState:
    """The recorded signatures, loaded from and saved to ``root/.bake-state.json``."""

    def __init__(self, root: str):
        self.path = os.path.join(root, STATE_FILE)
        self.records: dict[str, dict[str, object]] = {}
        self._lock = threading.Lock()
        self.load()

    def load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return
        except (json.JSONDecodeError, UnicodeDecodeError):
            return  # a damaged state file only costs a full rebuild
        if isinstance(data, dict) and data.get("version") == FORMAT_VERSION:
            self.records = dict(data.get("targets", {}))

    def save(self) -> None:
        with self._lock:
            data = {"version": FORMAT_VERSION, "targets": self.records}
            temporary = self.path + ".tmp"
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
            os.replace(temporary, self.path)

    def get(self, target: str) -> dict[str, object] | None:
        with self._lock:
            return self.records.get(target)

    def record(self, target: str, signature: str, inputs: dict[str, str | None]) -> None:
        with self._lock:
            self.records[target] = {"recipe": signature, "inputs": dict(inputs)}

    def drop(self, target: str) -> None:
        with self._lock:
            self.records.pop(target, None)
''',
    'bake/bake/variables.py': r'''"""Expanding ``$(NAME)``, ``${NAME}``, ``$X`` (one-character names such as the automatic ``$@ $< $^ $* $?``),
``$$`` (a literal dollar) and the functions ``$(patsubst PATTERN,REPLACEMENT,WORDS)``, ``$(wildcard GLOB...)``,
``$(addprefix P,WORDS)`` and ``$(strip TEXT)``.

Variables assigned with ``=`` are recursive: their value is expanded each time it is used. Assignments with
``:=`` are expanded once, when the line is read.
"""

from __future__ import annotations

import glob
import os
from typing import Mapping

from bake.errors import ExpansionError

MAX_DEPTH = 40


def _find_closing(text: str, start: int, opener: str) -> int:
    closer = ")" if opener == "(" else "}"
    depth = 1
    i = start
    while i < len(text):
        if text[i] == opener:
            depth += 1
        elif text[i] == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ExpansionError(f"unterminated variable reference in {text!r}")


def pattern_match(pattern: str, word: str) -> str | None:
    """The stem when ``word`` matches ``pattern`` (one ``%`` matching any non-empty text), else None.
    A pattern without ``%`` matches only itself (stem "")."""
    if "%" not in pattern:
        return "" if pattern == word else None
    prefix, suffix = pattern.split("%", 1)
    if len(word) < len(prefix) + len(suffix) + 1:
        return None
    if word.startswith(prefix) and word.endswith(suffix):
        return word[len(prefix):len(word) - len(suffix)]
    return None


def patsubst(pattern: str, replacement: str, words: str) -> str:
    out = []
    for word in words.split():
        stem = pattern_match(pattern, word)
        if stem is None:
            out.append(word)
        else:
            out.append(replacement.replace("%", stem, 1) if "%" in replacement else replacement)
    return " ".join(out)


class Expander:
    """Expands text against ``variables`` (name -> unexpanded value) and ``automatic`` (name -> final value)."""

    def __init__(self, variables: Mapping[str, str], automatic: Mapping[str, str] | None = None,
                 root: str = "."):
        self.variables = variables
        self.automatic = dict(automatic or {})
        self.root = root

    def expand(self, text: str) -> str:
        return self._expand(text, ())

    def _lookup(self, name: str, active: tuple[str, ...]) -> str:
        if name in self.automatic:
            return self.automatic[name]
        if name in active:
            raise ExpansionError(f"recursive variable '{name}' references itself (eventually)")
        if len(active) >= MAX_DEPTH:
            raise ExpansionError(f"variable references nest deeper than {MAX_DEPTH} levels at '{name}'")
        value = self.variables.get(name)
        if value is None:
            value = os.environ.get(name, "")
            return value
        return self._expand(value, active + (name,))

    def _function(self, name: str, argument: str, active: tuple[str, ...]) -> str:
        if name == "patsubst":
            parts = argument.split(",", 2)
            if len(parts) != 3:
                raise ExpansionError("patsubst takes three arguments: PATTERN,REPLACEMENT,WORDS")
            pattern, replacement, words = (self._expand(part, active) for part in parts)
            return patsubst(pattern.strip(), replacement.strip(), words)
        if name == "addprefix":
            prefix, _, words = argument.partition(",")
            return " ".join(self._expand(prefix, active).strip() + word
                            for word in self._expand(words, active).split())
        if name == "wildcard":
            found = []
            for pattern in self._expand(argument, active).split():
                matches = sorted(glob.glob(os.path.join(self.root, pattern)))
                found.extend(os.path.relpath(match, self.root) for match in matches)
            return " ".join(found)
        if name == "strip":
            return " ".join(self._expand(argument, active).split())
        raise ExpansionError(f"unknown function '{name}'")

    def _expand(self, text: str, active: tuple[str, ...]) -> str:
        out: list[str] = []
        i = 0
        while i < len(text):
            char = text[i]
            if char != "$":
                out.append(char)
                i += 1
                continue
            if i + 1 >= len(text):
                out.append("$")
                break
            following = text[i + 1]
            if following == "$":
                out.append("$")
                i += 2
            elif following in "({":
                end = _find_closing(text, i + 2, following)
                inner = text[i + 2:end]
                head, space, rest = inner.partition(" ")
                if space and head in ("patsubst", "addprefix", "wildcard", "strip"):
                    out.append(self._function(head, rest, active))
                else:
                    out.append(self._lookup(self._expand(inner, active), active))
                i = end + 1
            else:
                out.append(self._lookup(following, active))
                i += 2
        return "".join(out)


def expand(text: str, variables: Mapping[str, str], automatic: Mapping[str, str] | None = None,
           root: str = ".") -> str:
    """``text`` with every reference expanded."""
    return Expander(variables, automatic, root).expand(text)
''',
    'bake/tests/__init__.py': r'''''',
    'bake/tests/test_graph_and_build.py': r'''import io
import os
import tempfile
import unittest

from bake.errors import GraphError
from bake.executor import Builder, Options
from bake.graph import build_graph
from bake.parser import parse

BAKEFILE = """
OBJS = a.o b.o
app: $(OBJS)
\tcat $^ > $@
%.o: %.src
\tcp $< $@
.PHONY: clean
clean:
\trm -f *.o app
"""


class GraphTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = self.folder.name
        for name in ("a.src", "b.src"):
            with open(os.path.join(self.root, name), "w") as handle:
                handle.write(name + "\n")

    def tearDown(self):
        self.folder.cleanup()

    def test_order_puts_dependencies_first(self):
        graph = build_graph(parse(BAKEFILE), ["app"], self.root)
        self.assertEqual(graph.order, ["a.src", "a.o", "b.src", "b.o", "app"])
        self.assertEqual(graph.nodes["a.o"].stem, "a")
        self.assertTrue(graph.nodes["a.src"].source)

    def test_missing_source(self):
        os.remove(os.path.join(self.root, "b.src"))
        with self.assertRaises(GraphError) as caught:
            build_graph(parse(BAKEFILE), ["app"], self.root)
        self.assertIn("no rule to make target 'b.o', needed by 'app'", str(caught.exception))

    def test_cycle(self):
        with self.assertRaises(GraphError) as caught:
            build_graph(parse("a: b\n\ttouch a\nb: c\n\ttouch b\nc: a\n\ttouch c\n"), ["a"], self.root)
        self.assertIn("circular dependency: a -> b -> c -> a", str(caught.exception))

    def _build(self, *goals, **options):
        out = io.StringIO()
        bakefile = parse(BAKEFILE)
        builder = Builder(bakefile, build_graph(bakefile, list(goals), self.root), self.root, Options(**options), out)
        return builder.build(), out.getvalue()

    def test_full_then_nothing(self):
        outcome, printed = self._build("app")
        self.assertTrue(outcome.ok)
        self.assertEqual(outcome.ran, ["a.o", "b.o", "app"])
        with open(os.path.join(self.root, "app")) as handle:
            self.assertEqual(handle.read(), "a.src\nb.src\n")
        outcome, printed = self._build("app")
        self.assertEqual((outcome.ran, printed), ([], ""))

    def test_parallel_build_gives_the_same_result(self):
        outcome, _ = self._build("app", jobs=4)
        self.assertTrue(outcome.ok)
        self.assertEqual(sorted(outcome.ran), ["a.o", "app", "b.o"])
        self.assertEqual(outcome.ran[-1], "app")

    def test_failed_recipe_stops_and_leaves_no_target(self):
        bakefile = parse("all: x y\nx:\n\techo partial > x; exit 3\ny:\n\ttouch y\n")
        out = io.StringIO()
        builder = Builder(bakefile, build_graph(bakefile, ["all"], self.root), self.root, Options(), out)
        outcome = builder.build()
        self.assertEqual(outcome.failed, ["x"])
        self.assertIn("bake: *** [x] Error 3", out.getvalue())
        self.assertFalse(os.path.exists(os.path.join(self.root, "x")))

    def test_hash_mode_skips_unchanged_content(self):
        self._build("app", use_hash=True)
        os.utime(os.path.join(self.root, "a.src"), (1, 1))
        outcome, _ = self._build("app", use_hash=True)
        self.assertEqual(outcome.ran, [])


if __name__ == "__main__":
    unittest.main()
''',
    'bake/tests/test_parser_and_variables.py': r'''import unittest

from bake.errors import BakefileSyntaxError, ExpansionError
from bake.parser import parse
from bake.variables import expand, patsubst, pattern_match


class VariablesTest(unittest.TestCase):
    def test_references(self):
        variables = {"A": "1", "B": "$(A)2", "C": "${B}3"}
        self.assertEqual(expand("$(C) $$HOME $(MISSING_VARIABLE_X)", variables), "123 $HOME ")

    def test_automatic(self):
        self.assertEqual(expand("$@ <- $< ($^)", {}, {"@": "t", "<": "a", "^": "a b"}), "t <- a (a b)")

    def test_self_reference_is_an_error(self):
        with self.assertRaises(ExpansionError):
            expand("$(A)", {"A": "x $(A)"})

    def test_patterns(self):
        self.assertEqual(pattern_match("%.o", "main.o"), "main")
        self.assertIsNone(pattern_match("%.o", ".o"))
        self.assertEqual(pattern_match("out/%.o", "out/a/b.o"), "a/b")
        self.assertEqual(patsubst("%.c", "%.o", "a.c b.h c.c"), "a.o b.h c.o")
        self.assertEqual(expand("$(patsubst %.c,obj/%.o,$(S))", {"S": "x.c y.c"}), "obj/x.o obj/y.o")


class ParserTest(unittest.TestCase):
    def test_rules_and_variables(self):
        bakefile = parse("CC = gcc\nOBJS := a.o b.o\nOBJS += c.o\n\napp: $(OBJS)\n\t$(CC) -o $@ $^\n\n"
                         "%.o: %.c\n\t$(CC) -c $<\n")
        self.assertEqual(bakefile.default_goal, "app")
        self.assertEqual(bakefile.rules[0].prerequisites, ["a.o", "b.o", "c.o"])
        self.assertEqual(bakefile.rules[0].recipe, ["$(CC) -o $@ $^"])
        self.assertTrue(bakefile.rules[1].is_pattern)

    def test_overrides_win(self):
        bakefile = parse("MODE = debug\nall: ; echo $(MODE)\n", overrides={"MODE": "release"})
        self.assertEqual(bakefile.variables["MODE"], "release")

    def test_conditional_assignment(self):
        bakefile = parse("A ?= 1\nA ?= 2\nB = x\nB ?= y\n")
        self.assertEqual((bakefile.variables["A"], bakefile.variables["B"]), ("1", "x"))

    def test_phony_and_comments(self):
        bakefile = parse("# top\n.PHONY: all clean\nall: app # trailing\n\techo '#not a comment'\n")
        self.assertEqual(bakefile.phony, {"all", "clean"})
        self.assertEqual(bakefile.rules[0].prerequisites, ["app"])
        self.assertEqual(bakefile.rules[0].recipe, ["echo '#not a comment'"])

    def test_continuation_lines(self):
        bakefile = parse("SRCS = a.c \\\n       b.c\nall: $(SRCS)\n")
        self.assertEqual(bakefile.rules[0].prerequisites, ["a.c", "b.c"])

    def test_errors_name_the_line(self):
        with self.assertRaises(BakefileSyntaxError) as caught:
            parse("A = 1\n\n\techo orphan\n")
        self.assertIn("Bakefile:3:", str(caught.exception))
        with self.assertRaises(BakefileSyntaxError) as caught:
            parse("all: x\nthis line has no separator\n")
        self.assertIn("Bakefile:2: missing separator", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
''',
}

_BK_TESTS = r'''
import shutil
import time

PROJECT = "/app/bake"

SIMPLE = """SRCS = a.c b.c
OBJS = $(patsubst %.c,out/%.o,$(SRCS))
FLAGS = -O2

app: $(OBJS)
\t@echo "link $(FLAGS)" >> build.log
\tcat $^ > $@

out/%.o: %.c
\t@mkdir -p out
\tgrep -v '^#' $< > $@
"""


def bake(project, *args):
    env = dict(os.environ, PYTHONPATH=PROJECT)
    return subprocess.run(["python3", "-m", "bake", *args], capture_output=True, text=True, cwd=project, env=env,
                          timeout=120)


def _project(tmp_path, bakefile, sources):
    (tmp_path / "Bakefile").write_text(bakefile)
    for name, text in sources.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _age(project, stamps):
    for name, seconds in stamps.items():
        os.utime(project / name, (seconds, seconds))


def test_dry_run_lists_everything_that_would_run(tmp_path):
    project = _project(tmp_path, SIMPLE, {"a.c": "alpha\n", "b.c": "beta\n"})
    assert bake(project).returncode == 0
    _age(project, {"a.c": 1000, "b.c": 1000, "out/a.o": 2000, "out/b.o": 2000, "app": 3000})
    (project / "a.c").write_text("alpha 2\n")
    _age(project, {"a.c": 2500})
    result = bake(project, "-n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["mkdir -p out", "grep -v '^#' a.c > out/a.o",
                                          'echo "link -O2" >> build.log', "cat out/a.o out/b.o > app"]
    assert (project / "app").read_text() == "alpha\nbeta\n"  # -n changed nothing
    result = bake(project)
    assert (project / "app").read_text() == "alpha 2\nbeta\n"
    assert bake(project).stdout == "bake: 'app' is up to date.\n"


def test_rebuilt_prerequisite_makes_dependents_stale(tmp_path):
    bakefile = ("report: stage/data.txt\n\twc -l < stage/data.txt > report\n\n"
                "stage/data.txt: data.txt\n\tmkdir -p stage && cp -p data.txt stage/data.txt\n")
    project = _project(tmp_path, bakefile, {"data.txt": "1\n2\n"})
    assert bake(project).returncode == 0
    assert (project / "report").read_text().strip() == "2"
    _age(project, {"stage/data.txt": 1000, "report": 3000})
    (project / "data.txt").write_text("1\n2\n3\n4\n5\n")
    _age(project, {"data.txt": 2000})  # newer than the staged copy, older than the report
    result = bake(project)
    assert result.returncode == 0, result.stderr
    assert "cp -p data.txt stage/data.txt" in result.stdout
    assert (project / "report").read_text().strip() == "5"
    assert bake(project).stdout == "bake: 'report' is up to date.\n"


def test_hash_mode_propagates_content_changes(tmp_path):
    project = _project(tmp_path, SIMPLE, {"a.c": "alpha\n", "b.c": "beta\n"})
    first = bake(project, "--hash")
    assert first.returncode == 0, first.stderr
    assert bake(project, "--hash").stdout == "bake: 'app' is up to date.\n"
    (project / "a.c").write_text("alpha, revised\n")
    result = bake(project, "--hash")
    assert result.returncode == 0, result.stderr
    assert "grep -v '^#' a.c > out/a.o" in result.stdout and "cat out/a.o out/b.o > app" in result.stdout
    assert (project / "app").read_text() == "alpha, revised\nbeta\n"
    # A comment-only change rebuilds out/a.o to the same bytes: app is not relinked.
    (project / "a.c").write_text("# note\nalpha, revised\n")
    result = bake(project, "--hash")
    assert result.stdout == "grep -v '^#' a.c > out/a.o\nbake: 'app' is up to date.\n"
    (project / "b.c").write_text("beta, revised\n")
    bake(project, "--hash")
    assert (project / "app").read_text() == "alpha, revised\nbeta, revised\n"
    assert (project / "build.log").read_text().count("link") == 3


def test_hash_mode_recipe_changes(tmp_path):
    project = _project(tmp_path, SIMPLE, {"a.c": "alpha\n", "b.c": "beta\n"})
    assert bake(project, "--hash").returncode == 0
    result = bake(project, "--hash", "FLAGS=-O0")
    assert result.stdout == 'cat out/a.o out/b.o > app\n', result.stdout
    assert bake(project, "--hash", "FLAGS=-O0").stdout == "bake: 'app' is up to date.\n"
    (project / "Bakefile").write_text(SIMPLE.replace("FLAGS = -O2", "FLAGS = -O3"))
    result = bake(project, "--hash")
    assert result.stdout == 'cat out/a.o out/b.o > app\n', result.stdout
    assert (project / "build.log").read_text() == "link -O2\nlink -O0\nlink -O3\n"
    (project / "Bakefile").write_text(SIMPLE.replace("FLAGS = -O2", "FLAGS = -O3") + "# a comment\n")
    assert bake(project, "--hash").stdout == "bake: 'app' is up to date.\n"


ORDER_ONLY = """app: out/a.o out/b.o | out logs
\t@echo "deps=$^ order=$|" > logs/link.txt
\tcat $^ > $@

out/a.o: a.c | out
\tgrep -v '^#' $< > $@

out/b.o: b.c | out
\tgrep -v '^#' $< > $@

out:
\tmkdir -p out

logs:
\tmkdir -p logs
"""


def test_order_only_prerequisites(tmp_path):
    project = _project(tmp_path, ORDER_ONLY, {"a.c": "alpha\n", "b.c": "beta\n"})
    result = bake(project)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines.index("mkdir -p out") < lines.index("grep -v '^#' a.c > out/a.o")
    assert (project / "logs" / "link.txt").read_text() == "deps=out/a.o out/b.o order=out logs\n"
    assert (project / "app").read_text() == "alpha\nbeta\n"
    _age(project, {"a.c": 1000, "b.c": 1000, "out/a.o": 2000, "out/b.o": 2000, "app": 3000})
    (project / "out" / "scratch.tmp").write_text("x")  # the folder is now newer than everything
    (project / "logs" / "other.txt").write_text("x")
    assert bake(project).stdout == "bake: 'app' is up to date.\n"
    shutil.rmtree(project / "logs")
    result = bake(project)
    assert result.stdout == "mkdir -p logs\nbake: 'app' is up to date.\n", result.stdout
    graph = bake(project, "--print-graph").stdout
    assert "app [target]: out/a.o out/b.o | out logs" in graph


PATTERN = """NAMES = one two three four five six
OBJS = $(patsubst %,obj/%.o,$(NAMES))

all.txt: $(OBJS)
\tcat $^ > $@

obj/%.o: src/%.c | obj
\tgrep -v '^#' $< > $@

obj:
\tsleep 1
\tmkdir -p obj
"""


def test_order_only_in_pattern_rules_in_parallel(tmp_path):
    names = ["one", "two", "three", "four", "five", "six"]
    project = _project(tmp_path, PATTERN, {f"src/{n}.c": f"# {n}\n{n} body\n" for n in names})
    result = bake(project, "-j", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "all.txt").read_text() == "".join(f"{n} body\n" for n in names)
    (project / "obj" / "cache.tmp").write_text("x")
    os.utime(project / "obj", (time.time() + 100, time.time() + 100))
    assert bake(project, "-j", "4").stdout == "bake: 'all.txt' is up to date.\n"
    (project / "src" / "four.c").write_text("four body, new\n")
    _age(project, {"src/four.c": time.time() + 200})
    result = bake(project, "-j", "4")
    assert result.stdout == "grep -v '^#' src/four.c > obj/four.o\ncat " + " ".join(
        f"obj/{n}.o" for n in names) + " > all.txt\n", result.stdout


def test_guard_suite_unchanged_and_passing():
    for path in ORIGINAL_SHA256:
        if path.startswith("/app/bake/tests/"):
            assert unchanged(path), path
    result = run("python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".", cwd=PROJECT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_guard_no_rewrite():
    probe = ("import bake.cli as c, bake.executor as e; print(c.parse.__module__, c.build_graph.__module__, "
             "c.Builder.__module__, e.timestamp_verdict.__module__, e.hash_verdict.__module__, e.BuildState.__module__)")
    result = subprocess.run(["python3", "-c", probe], capture_output=True, text=True, cwd=PROJECT, timeout=60)
    assert result.stdout.split() == ["bake.parser", "bake.graph", "bake.executor", "bake.staleness",
                                     "bake.staleness", "bake.state"], result.stderr
'''

_BK_FEATURE: list[Bug] = [
    ("feature-parser-doc", "bake/bake/parser.py",
     "* ``targets : prerequisites | order-only prerequisites`` followed by", "* ``targets : prerequisites`` followed by"),
    ("feature-rule-field", "bake/bake/parser.py",
     '    line: int = 0\n    order_only: list[str] = field(default_factory=list)\n'
     '    """Prerequisites after ``|``: built before the target, never a reason to rebuild it."""\n',
     "    line: int = 0\n"),
    ("feature-rule-split", "bake/bake/parser.py",
     '        normal, _, order_only = tail.partition("|")\n        prerequisites = self.expand(line, normal).split()\n'
     "        order = self.expand(line, order_only).split()\n",
     "        prerequisites = self.expand(line, tail).split()\n"),
    ("feature-rule-create", "bake/bake/parser.py",
     "Rule(targets, prerequisites, line=line, order_only=order)", "Rule(targets, prerequisites, line=line)"),
    ("feature-node-field", "bake/bake/graph.py",
     "    prerequisites: list[str] = field(default_factory=list)\n    order_only: list[str] = field(default_factory=list)\n",
     "    prerequisites: list[str] = field(default_factory=list)\n"),
    ("feature-node-dependencies", "bake/bake/graph.py",
     "        return self.prerequisites + [name for name in self.order_only if name not in self.prerequisites]\n",
     "        return list(self.prerequisites)\n"),
    ("feature-pattern-needed", "bake/bake/graph.py",
     "needed = _substitute(rule.prerequisites, stem) + _substitute(rule.order_only, stem)",
     "needed = _substitute(rule.prerequisites, stem)"),
    ("feature-merge-rules", "bake/bake/graph.py",
     "                node.order_only += [p for p in rule.order_only if p not in node.order_only]\n"
     "            if with_recipe:\n", "            if with_recipe:\n"),
    ("feature-pattern-merge", "bake/bake/graph.py",
     "                    node.order_only += _substitute(rule.order_only, stem)\n"
     "                    node.recipe, node.stem", "                    node.recipe, node.stem"),
    ("feature-pattern-node", "bake/bake/graph.py",
     "return Node(name, _substitute(rule.prerequisites, stem), _substitute(rule.order_only, stem),\n"
     "                            list(rule.recipe), stem, rule_line=rule.line)",
     "return Node(name, _substitute(rule.prerequisites, stem), recipe=list(rule.recipe), stem=stem,\n"
     "                            rule_line=rule.line)"),
    ("feature-automatic", "bake/bake/executor.py",
     '            "*": node.stem,\n            "|": " ".join(node.order_only),\n', '            "*": node.stem,\n'),
    ("feature-print-graph", "bake/bake/cli.py",
     "            if node.order_only:\n                line += f\" | {' '.join(node.order_only)}\"\n"
     "            print(line.rstrip())\n", "            print(line.rstrip())\n"),
    ("feature-staleness-doc", "bake/bake/staleness.py",
     "counts as changed.\n\nOrder-only prerequisites never make a target out of date.\n", "counts as changed.\n"),
    ("feature-readme", "bake/README.md", "$@ $< $^ $? $* $|", "$@ $< $^ $? $*"),
]

_BK_BUGS: list[Bug] = [
    ("stale-rebuilt-prerequisite", "bake/bake/staleness.py",
     "    for prerequisite in node.prerequisites:\n        if prerequisite in rebuilt:\n"
     "            return Verdict(True, f\"prerequisite '{prerequisite}' was rebuilt\")\n        other = ",
     "    for prerequisite in node.prerequisites:\n        other = "),
    ("filestat-forget-digest", "bake/bake/filestat.py",
     "            self._mtimes.pop(name, None)\n            self._digests.pop(name, None)\n",
     "            self._mtimes.pop(name, None)\n"),
    ("state-signature-expanded", "bake/bake/state.py",
     'return hashlib.sha256("\\n".join(commands).encode()).hexdigest()',
     'return hashlib.sha256("\\n".join(recipe).encode()).hexdigest()'),
]

_BK_ALL = _BK_BUGS + _BK_FEATURE
_BK_FILES = _plant(_BK_SOURCES, _BK_ALL)

_BK_ORDER_ONLY_AS_NORMAL = r"""
python3 - <<'EDIT'
from pathlib import Path
parser = Path("/app/bake/bake/parser.py")
text = parser.read_text()
old = "        prerequisites = self.expand(line, tail).split()\n"
assert old in text
parser.write_text(text.replace(old, '        prerequisites = self.expand(line, tail.replace("|", " ")).split()\n'))
EDIT
"""

_BK_INSTRUCTION = """
/app/bake is `bake`, our make-like build tool (pure Python; `python3 -m bake` in a folder with a `Bakefile`; see
/app/bake/README.md and the module docstrings). Teams rely on its incremental rebuilds, and those are wrong:

- After a source changes, `bake -n` does not list everything a real build would run, and a real build can
  leave a dependent target stale: a target must be rebuilt when one of its prerequisites was rebuilt earlier in
  the same run, whatever modification time the rebuilt file ends up with (see `bake/staleness.py`).
- In `--hash` mode, editing a source rebuilds the object but the final program is not relinked, so it keeps the
  old code. Also in `--hash` mode, changing a variable that a recipe uses (in the Bakefile or on the command
  line as `NAME=value`) rebuilds nothing, although the command that made the target is now different. Editing a
  Bakefile in a way that leaves the expanded commands the same must not rebuild anything.

We also need GNU make's order-only prerequisites: in a rule `targets : normal prerequisites | order-only
prerequisites` (explicit and pattern rules alike), the order-only ones are built before the target (also under
`-j`), but never make it out of date (neither in timestamp nor in `--hash` mode), are not part of `$^`, `$<` or
`$?`, and are listed by the automatic variable `$|`. `--print-graph` shows them after ` | `, as in
`app [target]: a.o b.o | out`. Today `bake` fails on such a rule with "no rule to make target '|'".

Fix and extend `bake` in place: keep its package structure and command line (the CLI must keep using the
package's parser, graph, executor, staleness and state modules). The unit tests in /app/bake/tests must keep
passing; do not edit them. Your work will be checked with other Bakefiles than any you write.
"""

TASKS.append(
    Spec(
        task_id="hard-bake-incremental-order-only",
        title="Fix the incremental rebuilds of a make-like build tool and add order-only prerequisites",
        difficulty="hard",
        category="build-repair",
        instruction=_BK_INSTRUCTION,
        files=_BK_FILES,
        tests=_BK_TESTS,
        weights={
            "test_dry_run_lists_everything_that_would_run": 1.5,
            "test_rebuilt_prerequisite_makes_dependents_stale": 1.5,
            "test_hash_mode_propagates_content_changes": 2.0,
            "test_hash_mode_recipe_changes": 1.5,
            "test_order_only_prerequisites": 2.0,
            "test_order_only_in_pattern_rules_in_parallel": 1.5,
        },
        guards=["test_guard_suite_unchanged_and_passing", "test_guard_no_rewrite"],
        solution=_fix_script(None, "cd /app/bake && python3 -m unittest discover -s tests -t . 2>&1 | tail -1"),
        solution_files={"fixes.json": _fixes_json(_BK_ALL)},
        negative_solutions=[
            NegativeSolution(name="hash-mode-only",
                             script=_fix_script(["filestat-forget-digest", "state-signature-expanded"]),
                             max_score=0.35, why="fixes --hash mode only"),
            NegativeSolution(name="bugs-without-feature", script=_fix_script([n for n, *_ in _BK_BUGS]),
                             max_score=0.65, why="fixes the three staleness bugs, adds no order-only prerequisites"),
            NegativeSolution(name="feature-only", script=_fix_script([n for n, *_ in _BK_FEATURE]),
                             max_score=0.35, why="adds order-only prerequisites, leaves the staleness bugs"),
            NegativeSolution(name="order-only-as-normal",
                             script=_fix_script([n for n, *_ in _BK_BUGS], _BK_ORDER_ONLY_AS_NORMAL),
                             max_score=0.65, why="treats order-only prerequisites as normal ones"),
        ],
        tags=["python", "build-system", "make", "incremental", "feature", "multi-file"],
        limits={"agent_timeout_s": 3600, "test_timeout_s": 600},
    )
)
