"""Scopes: a chain of :class:`Environment` from the innermost block out to the globals."""

from quill.errors import QuillRuntimeError


class Environment:
    """The variables of one scope and the scope around it (``parent``; None for the globals)."""

    def __init__(self, parent=None):
        self.parent = parent
        self.values = {}

    def define(self, name, value):
        """Bind ``name`` in this scope (``let``, parameters, loop variables); shadows an outer binding."""
        self.values[name] = value

    def lookup(self, name, line=None):
        scope = self.find(name)
        if scope is None:
            raise QuillRuntimeError(f"undefined variable {name!r}", line)
        return scope.values[name]

    def assign(self, name, value, line=None):
        """Change the nearest existing binding of ``name``; assigning an unbound name is an error."""
        scope = self.find(name)
        if scope is None:
            raise QuillRuntimeError(f"assignment to undefined variable {name!r} (declare it with let)", line)
        scope.values[name] = value

    def find(self, name):
        scope = self
        while scope is not None:
            if name in scope.values:
                return scope
            scope = scope.parent
        return None

    def depth(self):
        scope, depth = self, 0
        while scope.parent is not None:
            scope, depth = scope.parent, depth + 1
        return depth

    def names(self):
        """Every name visible from here, innermost binding first."""
        seen = []
        scope = self
        while scope is not None:
            seen.extend(name for name in scope.values if name not in seen)
            scope = scope.parent
        return seen
