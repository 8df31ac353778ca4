def column_widths(rows):
    """The widest cell of every column."""
    return [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]


def is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
