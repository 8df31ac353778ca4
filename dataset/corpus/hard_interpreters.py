"""Terminal-Bench-2-hard tasks on language tools (issue 36): each ships a codebase of 1,000+ lines in which
several modules must change, graded by hidden black-box tests on programs the agent never sees.

- ``quill-interpreter-bugs``: Quill, a scripting language (lexer, parser, tree-walking interpreter, stdlib, REPL
  and CLI). String escapes are decoded by chained replacements and a literal ending in ``\\\\`` never closes,
  ``repr`` does not escape backslashes, ``%`` sits at the additive level, ``**`` is left-associative and unary
  minus binds tighter than ``**``, calls run in the caller's scope (dynamic scoping), every turn of a ``for``
  loop shares one binding, and ``return`` inside a loop only leaves the loop: lexer.py, values.py, parser.py and
  interpreter.py change.

The programs live as ordinary files under ``hard_interpreters_files/<task>/``: ``app/`` is what the task ships (to
``/app``), ``fixed/`` the files the reference solution puts in place (shipped to ``/solution/fixed``),
``fixtures/`` the hidden tests' inputs and expected outputs, ``hidden_tests.py`` the weighted tests (run after the
corpus prelude, never shown to the agent).
"""

from __future__ import annotations

from pathlib import Path

from _spec import Spec
from terminal_agent.tasks.model import NegativeSolution

FILES = Path(__file__).resolve().parent / "hard_interpreters_files"
LIMITS = {"agent_timeout_s": 5400.0, "test_timeout_s": 600.0}


def _files_under(folder: Path, prefix: str = "") -> dict[str, str]:
    """The text of every file below ``folder``, keyed by ``prefix`` + its path relative to ``folder``."""
    if not folder.is_dir():
        return {}
    return {prefix + path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts}


class _TaskFolder:
    """One task's folder: shipped tree, reference files, fixtures and hidden tests."""

    def __init__(self, name: str):
        root = FILES / name
        self.app = _files_under(root / "app")
        self.fixed = _files_under(root / "fixed", "fixed/")
        self.fixtures = _files_under(root / "fixtures")
        self.tests = (root / "hidden_tests.py").read_text(encoding="utf-8")


def _overlay(*paths: str) -> str:
    """A script that copies the reference versions of ``paths`` (relative to /app) into place."""
    return "\n".join(f"cp /solution/fixed/{path} /app/{path}" for path in paths) + "\n"


# --------------------------------------------------------------------------------------------------------------
# 1. quill-interpreter-bugs

_QUILL = _TaskFolder("quill")
_QUILL_FIXED = ("quill/lexer.py", "quill/values.py", "quill/parser.py", "quill/interpreter.py")

_QUILL_INSTRUCTION = r"""
Quill is a small scripting language; its interpreter is the Python package in /app/quill (lexer, parser,
tree-walking interpreter, builtins, a REPL and the `python3 -m quill` command line), and /app/docs/LANGUAGE.md is
the language reference. Users filed these reports against the current version:

- "String literals with backslashes are broken. `print("C:\\new");` prints a line break instead of
  `C:\new`, `"a\\b"` is rejected as a syntax error, and a string that ends in an escaped backslash swallows
  the rest of the line."
- "`repr()` of a string that holds a backslash gives text that does not read back as the same string, and lists
  of such strings print the same way."
- "Arithmetic disagrees with the precedence table in the reference: `-2 ** 2` gives 4, `2 ** 3 ** 2` gives 64,
  `1 + 7 % 4` gives 0."
- "Closures do not work: a counter made by a factory function fails with `undefined variable`, and a function
  sometimes reads a local variable of whoever called it instead of the variable where it was defined."
- "Functions created in a `for` loop all see the value of the last turn."
- "`return` inside a `while` or `for` loop does not leave the function: examples/primes.ql lists 4, 9 and 15
  as primes."

Make Quill behave as docs/LANGUAGE.md describes, for every program, not only these examples. Keep the package's
structure and public API (`quill.lexer.tokenize`, `quill.parser.parse` giving `quill.nodes` trees,
`quill.interpreter.Interpreter`, the command line and its exit statuses). Do not change docs/LANGUAGE.md or the
unit tests under /app/tests; they must still pass (`cd /app && python3 -m unittest discover -s tests -t .`).
"""

_QUILL_SOLUTION = "cd /app\n" + _overlay(*_QUILL_FIXED) + """python3 -m unittest discover -s tests -t .
python3 -m quill examples/primes.ql
"""

_QUILL_NEGATIVES = [
    NegativeSolution(
        name="strings-only",
        why="the lexer's escapes and repr fixed; precedence, scoping and return-from-loop left broken",
        max_score=0.3,
        script=_overlay("quill/lexer.py", "quill/values.py"),
    ),
    NegativeSolution(
        name="front-end-only",
        why="lexer, repr and precedence fixed; the interpreter's scoping and loop control left broken",
        max_score=0.5,
        script=_overlay("quill/lexer.py", "quill/values.py", "quill/parser.py"),
    ),
    NegativeSolution(
        name="interpreter-only",
        why="scoping and return fixed; escapes, repr and precedence left broken",
        max_score=0.45,
        script=_overlay("quill/interpreter.py"),
    ),
    NegativeSolution(
        name="closure-by-global-lookup",
        why="calls given the global scope as parent (closures over locals still break), nothing else fixed",
        max_score=0.1,
        script="""cd /app
sed -i 's/scope = Environment(self.environment)/scope = Environment(self.globals)/' quill/interpreter.py
""",
    ),
]

QUILL_TASK = Spec(
    task_id="quill-interpreter-bugs",
    title="Fix string escapes, precedence, closures and loop control in the Quill interpreter",
    difficulty="hard",
    category="debugging",
    tags=["python", "interpreter", "parser", "closures", "multi-file", "language-tools"],
    instruction=_QUILL_INSTRUCTION,
    files=_QUILL.app,
    tests=_QUILL.tests,
    weights={
        "test_escapes_in_string_literals": 0.15,
        "test_repr_reads_back_as_the_same_string": 0.1,
        "test_operator_precedence_and_associativity": 0.2,
        "test_functions_see_their_defining_scope": 0.2,
        "test_each_loop_turn_has_its_own_variable": 0.1,
        "test_return_from_inside_loops": 0.1,
        "test_sample_program": 0.15,
    },
    guards=["test_guard_shipped_tests_and_docs_unchanged_and_passing", "test_guard_the_interpreter_is_still_the_quill_package"],
    solution=_QUILL_SOLUTION,
    solution_files=_QUILL.fixed,
    test_files=_QUILL.fixtures,
    negative_solutions=_QUILL_NEGATIVES,
    limits=LIMITS,
)

TASKS = [QUILL_TASK]
