from colfmt.widths import column_widths, is_number


def render(rows):
    """Text columns left-aligned, number columns right-aligned, two spaces apart."""
    widths = column_widths(rows)
    out = []
    for row in rows:
        cells = [str(c).rjust(w) if is_number(str(c)) else str(c).ljust(w) for c, w in zip(row, widths)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"
