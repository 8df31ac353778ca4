"""Errors of stencil, each naming the template and line when known."""


class TemplateError(Exception):
    def __init__(self, message, name=None, line=None):
        self.message = message
        self.name = name
        self.line = line
        super().__init__(self.describe())

    def describe(self):
        where = ""
        if self.name is not None:
            where = f"{self.name}:{self.line}: " if self.line is not None else f"{self.name}: "
        return where + self.message


class TemplateSyntaxError(TemplateError):
    """The template text does not parse."""


class TemplateNotFound(TemplateError):
    """A loader has no template of that name."""


class TemplateRuntimeError(TemplateError):
    """Rendering failed (a bad filter argument, calling something that is not callable, ...)."""
