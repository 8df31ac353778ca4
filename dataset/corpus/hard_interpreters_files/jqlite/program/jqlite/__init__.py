"""jqlite: a small JSON query language in the style of jq.

    python3 -m jqlite '.items[] | select(.qty > 0) | .name' data.json

:mod:`jqlite.lexer` and :mod:`jqlite.parser` compile a filter to the nodes of :mod:`jqlite.nodes`;
:mod:`jqlite.evaluator` runs it over JSON values as a stream of outputs, with the builtins of
:mod:`jqlite.builtins`; :mod:`jqlite.output` prints results and :mod:`jqlite.cli` is the command line.
docs/MANUAL.md is the language manual.
"""

from jqlite.evaluator import Evaluator
from jqlite.parser import compile_filter

__version__ = "0.7.1"


def run_filter(text, value, variables=None):
    """Every output of the filter ``text`` applied to ``value``, as a list."""
    program = compile_filter(text, variables=sorted(variables or {}))
    return list(Evaluator(variables or {}).outputs(program, value))
