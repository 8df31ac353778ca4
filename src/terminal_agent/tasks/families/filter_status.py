"""Family ``filter-status``: pick the access-log lines with one HTTP status.

easy: copy the matching lines, in order (``awk '$9 == CODE'``).
medium: the distinct client addresses that got that status, sorted; some response sizes equal
the status code, so matching the number anywhere in the line is wrong.
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

STATUSES = ("200", "201", "204", "301", "302", "304", "400", "401", "403", "404", "409", "429", "500", "502", "503", "504")
METHODS = ("GET", "GET", "GET", "POST", "PUT", "DELETE")
PATHS = ("/", "/login", "/api/items", "/api/items/7", "/static/app.js", "/health", "/search?q=x", "/admin")


def _access_log(rng: random.Random, status: str, count: int, medium: bool) -> list[str]:
    clients = [f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}" for _ in range(12)]
    lines = []
    for index in range(count):
        code = status if rng.random() < 0.25 else rng.choice(STATUSES)
        size = int(status) if medium and rng.random() < 0.15 else rng.randrange(0, 50_000)
        stamp = f"[12/Mar/2026:{index % 24:02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d} +0000]"
        request = f'"{rng.choice(METHODS)} {rng.choice(PATHS)} HTTP/1.1"'
        lines.append(f"{rng.choice(clients)} - - {stamp} {request} {code} {size}")
    return lines


TESTS = SHA256_HELPER + '''

def _output():
    return Path(OUTPUT).read_text().splitlines()


def test_output_has_lines():
    assert Path(OUTPUT).is_file() and _output(), "the output is missing or empty"


def test_every_expected_line_is_there():
    got = _output()
    missing = [line for line in EXPECTED if line not in got]
    assert not missing, f"{len(missing)} expected line(s) missing, e.g. {missing[:2]}"


def test_nothing_else_and_in_order():
    assert _output() == EXPECTED


def test_guard_log_unchanged():
    assert sha256_of("/app/access.log") == LOG_SHA256
'''


class FilterStatus(TaskFamily):
    name = "filter-status"
    summary = "Select the access-log requests answered with one HTTP status (lines, or distinct clients)."
    keys = STATUSES
    key_meaning = "the HTTP status selected"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        lines = _access_log(rng, key, rng.randrange(60, 160), medium)
        log = "\n".join(lines) + "\n"
        matching = [line for line in lines if line.split()[8] == key]
        if medium:
            output = "/app/clients.txt"
            expected = sorted({line.split()[0] for line in matching})
            instruction = (
                f"/app/access.log is a web server log (common log format). Write to {output} the distinct client "
                f"IP addresses of the requests answered with status {key}, one per line, sorted in byte order "
                "(as `LC_ALL=C sort` does), with no duplicates."
            )
            solution = (
                "#!/bin/bash\n"
                f"awk '$9 == \"{key}\" {{print $1}}' /app/access.log | LC_ALL=C sort -u > {output}\n"
            )
        else:
            output = "/app/matches.log"
            expected = matching
            instruction = (
                f"Copy every line of /app/access.log whose HTTP status code is {key} into {output}, "
                "keeping their original order and leaving the lines unchanged."
            )
            solution = f"#!/bin/bash\nawk '$9 == \"{key}\"' /app/access.log > {output}\n"
        tests = test_module({"OUTPUT": output, "EXPECTED": expected, "LOG_SHA256": sha256_text(log)}, TESTS)
        return InstanceParts(
            title=f"Requests with status {key}",
            instruction=instruction,
            category="text-processing",
            test_source=tests,
            test_weights={
                "test_output_has_lines": 0.5,
                "test_every_expected_line_is_there": 1.5,
                "test_nothing_else_and_in_order": 1.5,
            },
            guards=["test_guard_log_unchanged"],
            outputs=[output],
            solution=solution,
            files={"access.log": log},
            tags=["awk", "logs"],
            parameters={"lines": len(lines), "expected": len(expected)},
        )
