"""stencil: a small template engine that compiles templates to Python functions.

    from stencil import Environment, FileSystemLoader
    env = Environment(loader=FileSystemLoader("templates"))
    print(env.get_template("page.html").render(title="Hi"))

:mod:`stencil.lexer` splits template text into text, ``{{ output }}``, ``{% tag %}`` and ``{# comment #}``
tokens; :mod:`stencil.parser` (with :mod:`stencil.expressions` for what is inside the delimiters) builds
:mod:`stencil.nodes`; :mod:`stencil.compiler` turns them into Python source; :mod:`stencil.runtime` holds what
that code calls; :mod:`stencil.environment` ties loading, compiling, caching and inheritance together.
"""

from stencil.environment import Environment, Template
from stencil.errors import TemplateError, TemplateNotFound, TemplateRuntimeError, TemplateSyntaxError
from stencil.loaders import DictLoader, FileSystemLoader
from stencil.runtime import Markup, escape

__all__ = ["DictLoader", "Environment", "FileSystemLoader", "Markup", "Template", "TemplateError",
           "TemplateNotFound", "TemplateRuntimeError", "TemplateSyntaxError", "escape"]
