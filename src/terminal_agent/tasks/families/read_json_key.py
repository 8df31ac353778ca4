"""Family ``read-json-key`` (held out whole, easy band): write the value of one key of a small JSON file.

easy only: ``/app/book.json`` is one flat object of seven fields of a library record; the instruction names a key and the answer
is its value alone (no quotes). One ``grep`` piped to ``sed`` (or a ``python3 -c`` line) solves it. The first line may keep
JSON quotes for part of the credit. No training family looks one value up: ``sum-json-field`` adds a field over
many records, ``config-migrate`` rewrites whole files.
"""

from __future__ import annotations

import json
import random

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

KEYS = ("author", "publisher", "year", "volumes", "isbn", "language", "edition", "genre", "translator", "shelf")
NUMERIC = {"year": (1950, 2025), "volumes": (2, 9), "edition": (2, 12)}
TEXT = {
    "author": ("Ines Okafor", "Tomas Lindqvist", "Mara Quint", "Yusuf Delacroix", "Hana Petrova"),
    "publisher": ("Northwind Press", "Gull & Finch", "Lantern House", "Kettle Books", "Obsidian Row"),
    "isbn": ("978-0-306-40615-7", "978-1-86197-876-9", "978-3-16-148410-0", "978-0-19-852663-6", "978-1-4028-9462-6"),
    "language": ("Portuguese", "Finnish", "Korean", "Swahili", "Icelandic"),
    "genre": ("travel memoir", "hard science fiction", "cookbook", "field guide", "graphic novel"),
    "translator": ("Ada Brenner", "Luis Ortega", "Mei Tanaka", "Oskar Holm", "Rita Sousa"),
    "shelf": ("B-14", "C-07", "A-22", "D-03", "E-19"),
}

TESTS = SHA256_HELPER + '''

def _answer():
    return Path("/app/value.txt").read_text()


def test_first_line_holds_the_value():
    lines = _answer().splitlines()
    assert lines and lines[0].strip().rstrip(",").strip('"') == VALUE


def test_answer_is_the_value_alone():
    assert _answer().strip() == VALUE


def test_answer_holds_no_other_field():
    text = _answer()
    assert VALUE in text and not [other for other in OTHER_VALUES if other in text]


def test_guard_json_unchanged():
    assert sha256_of("/app/book.json") == JSON_SHA256
'''


def _value(rng: random.Random, key: str) -> str | int:
    if key in NUMERIC:
        return rng.randrange(*NUMERIC[key])
    return rng.choice(TEXT[key])


class ReadJsonKey(TaskFamily):
    name = "read-json-key"
    summary = "Write the value of one key of /app/book.json to /app/value.txt (easy band)."
    keys = KEYS
    key_meaning = "the key read"
    held_out_family = True
    difficulties = ("easy",)

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        while True:
            chosen = [key, *rng.sample([name for name in KEYS if name != key], 6)]
            rng.shuffle(chosen)
            settings = {name: _value(rng, name) for name in chosen}
            shown = {name: str(value) for name, value in settings.items()}
            value = shown[key]
            others = [text for name, text in shown.items() if name != key]
            if not any(value in other or other in value for other in others):
                break
        text = json.dumps(settings, indent=2) + "\n"
        return InstanceParts(
            title=f"Read the {key} from book.json",
            instruction=f'What is the value of "{key}" in /app/book.json? Write only the value (without quotes) '
                        "to /app/value.txt.",
            category="data-processing",
            test_source=test_module({"VALUE": value, "OTHER_VALUES": others, "JSON_SHA256": sha256_text(text)}, TESTS),
            test_weights={"test_first_line_holds_the_value": 1.0, "test_answer_is_the_value_alone": 1.5,
                          "test_answer_holds_no_other_field": 0.5},
            guards=["test_guard_json_unchanged"],
            outputs=["/app/value.txt"],
            solution=f"#!/bin/bash\ngrep '\"{key}\"' /app/book.json | sed -E 's/^[^:]*: \"?([^\",]*)\"?,?$/\\1/' "
                     "> /app/value.txt\n",
            files={"book.json": text},
            tags=["json", "easy-band"],
            parameters={"value": value},
        )
