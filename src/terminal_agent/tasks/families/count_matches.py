"""Family ``count-matches``: count the log lines that mention a word.

easy: one log, the word always in lower case; ``grep -c WORD`` solves it.
medium: several logs, the word in mixed case, plus near misses (``WORDs``, ``pre_WORD``) that
must not count: whole words, case-insensitive, over all files.
"""

from __future__ import annotations

import random
import re

from terminal_agent.tasks.families.base import (
    SHA256_HELPER,
    Difficulty,
    InstanceParts,
    TaskFamily,
    sha256_text,
    test_module,
)

WORDS = (
    "timeout", "refused", "retry", "denied", "overflow", "deadlock", "checksum", "evicted",
    "throttled", "corrupt", "stale", "orphaned", "rollback", "handshake", "quota", "latency",
)
COMPONENTS = ("api", "db", "cache", "auth", "worker", "scheduler", "gateway")
LEVELS = ("INFO", "WARN", "ERROR", "DEBUG")
FILLER = (
    "request served", "connection opened", "job finished", "config reloaded", "user logged in",
    "health check ok", "queue drained", "snapshot written", "session closed", "index rebuilt",
)


def _log_lines(rng: random.Random, word: str, count: int, medium: bool) -> list[str]:
    lines = []
    for index in range(count):
        stamp = f"2026-03-{1 + index % 28:02d}T{index % 24:02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z"
        head = f"{stamp} {rng.choice(LEVELS)} {rng.choice(COMPONENTS)}:"
        roll = rng.random()
        if roll < 0.3:
            shown = rng.choice([word, word.upper(), word.capitalize()]) if medium else word
            message = f"{rng.choice(FILLER)} after {shown} (attempt {rng.randrange(1, 9)})"
        elif medium and roll < 0.45:
            message = f"{rng.choice(FILLER)}; {rng.choice([word + 's', 'pre_' + word, word + '_count'])}={rng.randrange(100)}"
        else:
            message = rng.choice(FILLER)
        lines.append(f"{head} {message}")
    return lines


TESTS = SHA256_HELPER + '''

def _answer():
    return Path("/app/answer.txt").read_text().strip()


def test_answer_is_a_number():
    assert _answer().isdigit(), "answer.txt must hold one non-negative integer"


def test_count_is_close():
    assert abs(int(_answer()) - EXPECTED) <= max(1, EXPECTED // 10), "more than 10% off"


def test_count_is_right():
    assert int(_answer()) == EXPECTED


def test_guard_logs_unchanged():
    for path, digest in LOG_HASHES.items():
        assert sha256_of(path) == digest, path
'''


class CountMatches(TaskFamily):
    name = "count-matches"
    summary = "Count the lines of a log (or several logs) that mention a word."
    keys = WORDS
    key_meaning = "the word counted"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        names = [f"logs/{name}.log" for name in rng.sample(COMPONENTS, 3)] if medium else ["logs/app.log"]
        files = {name: "\n".join(_log_lines(rng, key, rng.randrange(40, 120), medium)) + "\n" for name in names}
        pattern = re.compile(rf"\b{re.escape(key)}\b", re.IGNORECASE) if medium else re.compile(re.escape(key))
        expected = sum(1 for text in files.values() for line in text.splitlines() if pattern.search(line))
        if medium:
            instruction = (
                f"Count the lines in all the files /app/logs/*.log that contain the word '{key}' as a whole word, "
                f"in any letter case ('{key.upper()}' counts, '{key}s' or 'pre_{key}' do not). "
                "Write only the total number to /app/answer.txt."
            )
            solution = f"#!/bin/bash\ncat /app/logs/*.log | grep -ciw '{key}' > /app/answer.txt\n"
        else:
            instruction = (
                f"How many lines of /app/logs/app.log contain the text '{key}'? "
                "Write only the number to /app/answer.txt."
            )
            solution = f"#!/bin/bash\ngrep -c '{key}' /app/logs/app.log > /app/answer.txt\n"
        tests = test_module(
            {"EXPECTED": expected, "LOG_HASHES": {f"/app/{n}": sha256_text(t) for n, t in files.items()}}, TESTS
        )
        return InstanceParts(
            title=f"Count lines mentioning '{key}'",
            instruction=instruction,
            category="text-processing",
            test_source=tests,
            test_weights={"test_answer_is_a_number": 0.5, "test_count_is_close": 1.5, "test_count_is_right": 2.0},
            guards=["test_guard_logs_unchanged"],
            outputs=["/app/answer.txt"],
            solution=solution,
            files=files,
            tags=["grep", "logs"],
            parameters={"files": len(names), "expected": expected},
        )
