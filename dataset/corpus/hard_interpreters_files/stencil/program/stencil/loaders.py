"""Where templates come from: a directory, or a dict (tests, the command line's inline templates)."""

import os

from stencil.errors import TemplateNotFound


class FileSystemLoader:
    """Templates are files under ``root``; names use ``/`` and may not leave the root."""

    def __init__(self, root, encoding="utf-8"):
        self.root = os.path.abspath(root)
        self.encoding = encoding

    def path_of(self, name):
        parts = [part for part in name.split("/") if part not in ("", ".")]
        if any(part == ".." for part in parts):
            raise TemplateNotFound(f"template name {name!r} leaves the template directory")
        return os.path.join(self.root, *parts)

    def load(self, name):
        """(source, modification time) of the template ``name``."""
        path = self.path_of(name)
        try:
            with open(path, encoding=self.encoding) as handle:
                return handle.read(), os.path.getmtime(path)
        except FileNotFoundError:
            raise TemplateNotFound(f"template {name!r} not found in {self.root}") from None
        except IsADirectoryError:
            raise TemplateNotFound(f"template {name!r} is a directory") from None


class DictLoader:
    def __init__(self, templates):
        self.templates = dict(templates)

    def load(self, name):
        if name not in self.templates:
            raise TemplateNotFound(f"template {name!r} not found")
        return self.templates[name], 0
