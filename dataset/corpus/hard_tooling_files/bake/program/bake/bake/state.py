"""The state file of ``--hash`` mode (``.bake-state.json`` beside the Bakefile).

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
