"""Family ``copy-named-file`` (held out whole, easy band): copy one named file to a new name in another folder.

easy only: ``/app/inbox`` holds four monthly files of one kind; the instruction names one of them and the name of
its copy in ``/app/outbox``; ``cp`` solves it. The original must stay (a guard). One of the other months is the
largest file, so copying "the biggest input" earns nothing. No training family copies a single file: the train
families rename *every* file of an extension, archive or chmod sets of files.
"""

from __future__ import annotations

import random

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

KINDS = ("invoice", "minutes", "roster", "receipt", "timesheet", "itinerary", "manifest", "payslip")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october")
ITEMS = ("paper", "toner", "coffee", "cables", "chairs", "lamps", "badges", "folders", "tape", "keys", "mugs")

TESTS = SHA256_HELPER + '''

def _copy_lines():
    return Path(TARGET).read_text().splitlines()


def test_copy_starts_with_the_source_title():
    lines = _copy_lines()
    assert lines and lines[0] == FIRST_LINE


def test_copy_has_the_source_lines():
    assert sorted(_copy_lines()) == sorted(SOURCE_LINES)


def test_copy_is_byte_identical():
    assert sha256_of(TARGET) == SOURCE_SHA256


def test_guard_inbox_unchanged():
    for path, digest in INBOX_HASHES.items():
        assert sha256_of(path) == digest, path
'''


def _document(rng: random.Random, kind: str, month: str, rows: int) -> str:
    lines = [f"{kind.upper()} - {month.capitalize()} 2026"]
    lines += [f"{rng.choice(ITEMS)}: {rng.randrange(1, 40)} x {rng.randrange(2, 90)}.{rng.randrange(100):02d}"
              for _ in range(rows)]
    return "\n".join(lines) + "\n"


class CopyNamedFile(TaskFamily):
    name = "copy-named-file"
    summary = "Copy one named file of /app/inbox to a given name in /app/outbox, keeping the original (easy band)."
    keys = KINDS
    key_meaning = "the kind of document copied"
    held_out_family = True
    difficulties = ("easy",)

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        start = rng.randrange(len(MONTHS) - 3)
        months = list(MONTHS[start:start + 4])
        month = rng.choice(months)
        rows = {name: rng.randrange(4, 12) for name in months}
        rows[rng.choice([name for name in months if name != month])] = 16  # a decoy is the largest file
        files = {f"inbox/{key}-2026-{MONTHS.index(name) + 1:02d}.txt": _document(rng, key, name, rows[name])
                 for name in months}
        files["outbox/README"] = "Copies for the accountant go here.\n"
        source = f"inbox/{key}-2026-{MONTHS.index(month) + 1:02d}.txt"
        target_name = f"{key}_{month}{rng.choice(['', '_final', '_copy', '_2026'])}.txt"
        target = f"/app/outbox/{target_name}"
        text = files[source]
        return InstanceParts(
            title=f"Copy the {month} {key}",
            instruction=f"Copy /app/{source} to {target}. Keep the original file where it is.",
            category="file-operations",
            test_source=test_module(
                {"TARGET": target, "FIRST_LINE": text.splitlines()[0], "SOURCE_LINES": text.splitlines(),
                 "SOURCE_SHA256": sha256_text(text),
                 "INBOX_HASHES": {f"/app/{n}": sha256_text(t) for n, t in files.items() if n.startswith("inbox/")}},
                TESTS),
            test_weights={"test_copy_starts_with_the_source_title": 0.5, "test_copy_has_the_source_lines": 1.0,
                          "test_copy_is_byte_identical": 1.5},
            guards=["test_guard_inbox_unchanged"],
            outputs=[target],
            solution=f"#!/bin/bash\ncp /app/{source} {target}\n",
            files=files,
            tags=["cp", "easy-band"],
            parameters={"source": source, "target": target},
        )
