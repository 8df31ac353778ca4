"""The notes file: a JSON list of strings at $QUICKNOTES_FILE (default ~/.quicknotes.json)."""

import json
import os
from pathlib import Path


def notes_path():
    return Path(os.environ.get("QUICKNOTES_FILE", Path.home() / ".quicknotes.json"))


def load():
    path = notes_path()
    return json.loads(path.read_text()) if path.exists() else []


def save(notes):
    notes_path().write_text(json.dumps(notes, indent=1))
