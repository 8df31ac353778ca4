"""Fixed-width text tables."""

__version__ = "1.4.1"

from tinyfmt.table import render  # noqa: E402,F401
