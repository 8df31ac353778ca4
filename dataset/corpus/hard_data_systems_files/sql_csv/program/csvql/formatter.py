"""Output of a Result: CSV (default), or an aligned text table.

In both, NULL is an empty field, TRUE and FALSE are 1 and 0, and a float has at most 6 decimals without
trailing zeros (values.format_number).
"""

import csv
import io

from .values import to_text


def cell(value):
    if value is None:
        return ""
    return to_text(value)


def to_csv(result, header=True):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow([cell(value) for value in row])
    return buffer.getvalue()


def to_table(result):
    cells = [list(result.columns)] + [[cell(value) for value in row] for row in result.rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(result.columns))]
    lines = []
    for number, line in enumerate(cells):
        lines.append(" | ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip())
        if number == 0:
            lines.append("-+-".join("-" * width for width in widths))
    footer = f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})"
    return "\n".join(lines + [footer]) + "\n"
