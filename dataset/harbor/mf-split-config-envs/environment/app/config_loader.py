"""Where the application's settings come from."""

import json
from pathlib import Path

SETTINGS = Path(__file__).resolve().parent.parent / "settings.json"


def load(env):
    """The full settings of environment ``env`` (KeyError when there is no such environment)."""
    data = json.loads(SETTINGS.read_text())
    return data["environments"][env]
