"""colfmt: column formatting."""

__version__ = "2.1.0"

from colfmt.render import render  # noqa: E402,F401
from colfmt.widths import column_widths  # noqa: E402,F401
