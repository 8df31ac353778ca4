"""Render rows as a fixed-width table in one of the packaged templates (tinyfmt/templates/NAME.tmpl)."""

from importlib import resources


def load_template(name):
    """A template file holds ``key=value`` lines: ``sep`` (between columns) and ``rule`` (under the header)."""
    text = (resources.files("tinyfmt") / "templates" / f"{name}.tmpl").read_text()
    settings = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        settings[key] = value
    return settings


def render(rows, template="plain"):
    settings = load_template(template)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [settings["sep"].join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    rule = settings["sep"].join(settings["rule"] * w for w in widths) if settings.get("rule") else None
    if rule:
        lines.insert(1, rule)
    return "\n".join(lines) + "\n"
