"""Quill: a small scripting language with a tree-walking interpreter.

    from quill import run_source
    run_source('print("hello");')

The pieces: :mod:`quill.lexer` turns text into tokens, :mod:`quill.parser` turns tokens into the nodes of
:mod:`quill.nodes`, :mod:`quill.interpreter` evaluates them in :mod:`quill.environment` scopes with the builtins
of :mod:`quill.stdlib`. ``python3 -m quill`` is the command line (:mod:`quill.cli`).
"""

from quill.errors import QuillError, QuillRuntimeError, QuillSyntaxError
from quill.interpreter import Interpreter
from quill.lexer import tokenize
from quill.parser import parse

__version__ = "0.9.2"


def run_source(source, out=None):
    """Run a whole program; what it prints goes to ``out`` (a file object, stdout by default)."""
    interpreter = Interpreter(out=out)
    return interpreter.run(parse(tokenize(source)))


__all__ = ["Interpreter", "QuillError", "QuillRuntimeError", "QuillSyntaxError", "parse", "run_source", "tokenize"]
