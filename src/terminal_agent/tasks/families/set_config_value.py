"""Family ``set-config-value``: change one setting in configuration files, nothing else.

easy: one file, one ``KEY = value`` line.
medium: several ``.conf`` files in subdirectories, with traps that must stay as they are: a
commented-out ``# KEY = ...``, a longer key ending in ``_KEY``, and a ``.conf.bak`` backup.
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

SETTINGS = (
    "max_connections", "timeout_s", "log_level", "cache_size", "worker_count", "retry_limit", "buffer_kb",
    "pool_size", "batch_size", "listen_port", "keepalive_s", "queue_depth", "flush_interval", "max_body_kb",
)
OTHER = ("name", "data_dir", "user", "compress", "region", "mode", "threads", "backlog")


def _value(rng: random.Random, key: str, avoid: str = "") -> str:
    """A value for ``key`` other than ``avoid`` (so the no-op never already has the new value)."""
    while True:
        value = rng.choice(["debug", "info", "warning", "error"]) if key == "log_level" else str(rng.randrange(1, 5000))
        if value != avoid:
            return value


def _config(rng: random.Random, key: str, medium: bool, new: str) -> str:
    """One file that sets ``key`` to anything but ``new``."""
    lines = [f"# settings of {rng.choice(['api', 'db', 'edge', 'jobs'])}"]
    others = rng.sample(OTHER, 4)
    position = rng.randrange(len(others) + 1)
    entries = [f"{name} = {rng.choice(['on', 'off', 'eu-1', '/var/lib/x', str(rng.randrange(99))])}" for name in others]
    entries.insert(position, f"{key} = {_value(rng, key, avoid=new)}")
    if medium:
        entries.insert(rng.randrange(len(entries) + 1), f"# {key} = {_value(rng, key)}")
        entries.insert(rng.randrange(len(entries) + 1), f"backup_{key} = {_value(rng, key)}")
    return "\n".join(lines + entries) + "\n"


def _apply(text: str, key: str, new: str) -> str:
    return re.sub(rf"^{re.escape(key)} = .*$", f"{key} = {new}", text, flags=re.MULTILINE)


TESTS = SHA256_HELPER + '''

def test_old_values_are_gone():
    for path, old_line in OLD_LINES.items():
        assert old_line not in Path(path).read_text().splitlines(), path


def test_setting_is_changed_everywhere():
    for path, expected in EXPECTED.items():
        lines = Path(path).read_text().splitlines()
        assert SETTING_LINE in lines, path


def test_files_are_otherwise_unchanged():
    for path, expected in EXPECTED.items():
        assert Path(path).read_text() == expected, path


def test_guard_other_files_untouched():
    for path, digest in UNTOUCHED.items():
        assert sha256_of(path) == digest, path
'''


class SetConfigValue(TaskFamily):
    name = "set-config-value"
    summary = "Set one key to a new value in configuration files, leaving every other byte unchanged."
    keys = SETTINGS
    key_meaning = "the setting changed"

    def build(self, key: str, difficulty: Difficulty, rng: random.Random) -> InstanceParts:
        medium = difficulty == "medium"
        new = _value(rng, key)
        names = (["config/app.conf", "config/db/db.conf", "config/edge/edge.conf"] if medium else ["config/app.conf"])
        files: dict[str, str] = {}
        expected: dict[str, str] = {}
        old_lines: dict[str, str] = {}
        for name in names:
            text = _config(rng, key, medium, new)
            files[name] = text
            expected[f"/app/{name}"] = _apply(text, key, new)
            old_lines[f"/app/{name}"] = next(line for line in text.splitlines() if line.startswith(f"{key} = "))
        untouched = {"config/notes.txt": f"remember: {key} was tuned in March\n"}
        if medium:
            untouched["config/app.conf.bak"] = _config(rng, key, False, new)
        files.update(untouched)
        if medium:
            instruction = (
                f"Set '{key}' to {new} in every file ending in .conf under /app/config (subdirectories too). "
                f"The setting is a line of the form '{key} = VALUE'. Change only those lines: comments, other keys "
                "and files that do not end in .conf must stay exactly as they are."
            )
            solution = (
                "#!/bin/bash\n"
                f"find /app/config -type f -name '*.conf' -exec sed -i 's/^{key} = .*$/{key} = {new}/' {{}} +\n"
            )
        else:
            instruction = f"In /app/config/app.conf, change the value of {key} to {new}. Do not change anything else."
            solution = f"#!/bin/bash\nsed -i 's/^{key} = .*$/{key} = {new}/' /app/config/app.conf\n"
        tests = test_module(
            {
                "SETTING_LINE": f"{key} = {new}",
                "EXPECTED": expected,
                "OLD_LINES": old_lines,
                "UNTOUCHED": {f"/app/{n}": sha256_text(t) for n, t in untouched.items()},
            },
            TESTS,
        )
        return InstanceParts(
            title=f"Set {key} to {new}",
            instruction=instruction,
            category="config-editing",
            test_source=tests,
            test_weights={
                "test_old_values_are_gone": 0.5,
                "test_setting_is_changed_everywhere": 2.0,
                "test_files_are_otherwise_unchanged": 1.5,
            },
            guards=["test_guard_other_files_untouched"],
            outputs=list(expected),
            solution=solution,
            files=files,
            tags=["sed", "config"],
            parameters={"files": len(names), "new_value": new},
        )
