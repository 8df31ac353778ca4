"""The units, largest first, from the packaged data file chronokit/data/units.json."""

import json
from importlib import resources


def units():
    return json.loads((resources.files("chronokit") / "data" / "units.json").read_text())


def humanize(seconds):
    parts = []
    for unit in units():
        count, seconds = divmod(seconds, unit["seconds"])
        if count:
            parts.append(f"{count}{unit['symbol']}")
    return " ".join(parts) or "0s"
