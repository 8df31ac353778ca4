"""Family ``count-file-lines`` (held out whole, easy band): write the number of lines of one named file.

easy only: ``/app/data`` holds the named file and three others of different lengths; ``wc -l < FILE > OUT`` solves
it. No training family asks for a file's size: the train families count *matching* lines of logs
(``count-matches``), total columns or sum fields. The first number of the answer is read, so ``wc -l FILE`` (which
appends the file name) earns the count but not the "only the number" part.
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

FILES = (
    "guests.txt", "inventory.lst", "todo.md", "playlist.m3u", "readings.dat", "words.txt", "urls.list", "names.csv",
)
WORDS = (
    "amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel",
    "lagoon", "meadow", "nickel", "orchid", "pepper", "quartz", "raven", "saffron", "tundra", "umber", "violet",
)

TESTS = SHA256_HELPER + '''
import re


def _answer():
    return Path("/app/line_count.txt").read_text()


def test_first_number_is_the_line_count():
    found = re.match(r"\\s*(\\d+)", _answer())
    assert found and int(found.group(1)) == EXPECTED, "the first number is not the file's line count"


def test_answer_is_only_the_line_count():
    assert _answer().strip() == str(EXPECTED)


def test_count_is_at_most_one_off():
    found = re.match(r"\\s*(\\d+)", _answer())
    assert found and abs(int(found.group(1)) - EXPECTED) <= 1


def test_guard_data_unchanged():
    for path, digest in DATA_HASHES.items():
        assert sha256_of(path) == digest, path
'''


def _lines(rng: random.Random, count: int) -> str:
    return "".join(f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(WORDS)}\n" for _ in range(count))


class CountFileLines(TaskFamily):
    name = "count-file-lines"
    summary = "Write the number of lines of one named file to /app/line_count.txt (easy band)."
    keys = FILES
    key_meaning = "the file counted"
    held_out_family = True
    difficulties = ("easy",)

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        others = rng.sample([name for name in FILES if name != key], 3)
        counts = rng.sample(range(12, 90, 4), 4)  # distinct and at least 4 apart: "one off" never hits another file
        files = {f"data/{name}": _lines(rng, count) for name, count in zip([key, *others], counts)}
        expected = counts[0]
        return InstanceParts(
            title=f"Count the lines of {key}",
            instruction=f"Write the number of lines in the file /app/data/{key} to /app/line_count.txt "
                        "(just the number).",
            category="file-operations",
            test_source=test_module(
                {"EXPECTED": expected, "DATA_HASHES": {f"/app/{n}": sha256_text(t) for n, t in files.items()}}, TESTS),
            test_weights={"test_first_number_is_the_line_count": 1.5, "test_answer_is_only_the_line_count": 1.5,
                          "test_count_is_at_most_one_off": 0.5},
            guards=["test_guard_data_unchanged"],
            outputs=["/app/line_count.txt"],
            solution=f"#!/bin/bash\nwc -l < /app/data/{key} > /app/line_count.txt\n",
            files=files,
            tags=["wc", "easy-band"],
            parameters={"expected": expected, "other_files": others},
        )
