"""Terminal-Bench-2-hard tasks on language tools (issue 36): each ships a codebase of 1,000+ lines in which
several modules must change, graded by hidden black-box tests on programs the agent never sees.

- ``quill-interpreter-bugs``: Quill, a scripting language (lexer, parser, tree-walking interpreter, stdlib, REPL
  and CLI). String escapes are decoded by chained replacements and a literal ending in ``\\\\`` never closes,
  ``repr`` does not escape backslashes, ``%`` sits at the additive level, ``**`` is left-associative and unary
  minus binds tighter than ``**``, calls run in the caller's scope (dynamic scoping), every turn of a ``for``
  loop shares one binding, and ``return`` inside a loop only leaves the loop: lexer.py, values.py, parser.py and
  interpreter.py change.
- ``vm16-assembler-and-frames``: vm16, a stack machine toolchain (assembler, object format, runner, disassembler)
  around one instruction table. Pass 2 of the assembler re-picks the short ``push`` form for forward references
  that pass 1 laid out long, ``.string`` is sized from its literal text (escapes, UTF-8), and ``ret`` neither
  resumes the caller's frame nor drops the arguments: assembler.py, directives.py and vm.py change.
- ``jqlite-variables-feature``: jqlite, a jq-like JSON query tool (lexer, parser, lazy evaluator, builtins,
  output, CLI). ``//`` uses Python truth instead of jq's and negative slice bounds are clamped before they are
  counted from the end; the feature (``TERM as $name | BODY``, ``{$name}``, ``--arg``/``--argjson``, unbound
  variables as compile errors) needs the tokens, lexer, nodes, parser, evaluator (an environment threaded through
  it and every builtin) and CLI.
- ``stencil-macros-feature``: stencil, a template engine compiling templates to Python (lexer, expression and
  tag parsers, code generator, runtime, filters, loaders, inheritance, CLI). ``super()`` jumps to the base
  template's block (skipping the middle of a 3+ level chain) and ``join`` marks unescaped items safe; the
  feature (``{% macro %}`` with defaults, keyword arguments in calls, ``{% import ... as ... %}``) needs nodes,
  expressions, parser, compiler and runtime.

The programs live as ordinary files under ``hard_interpreters_files/<task>/``: ``program/`` is the working program,
``planted_bugs.toml`` the edits that plant its bugs and remove its missing features (the task ships the planted
program to ``/app``, and the planted files as ``program/`` has them to ``/solution/fixed``, see _planted_bugs.py),
``fixtures/`` the hidden tests' inputs and expected outputs, ``hidden_tests.py`` the weighted tests (run after the
corpus prelude, never shown to the agent).
"""

from __future__ import annotations

from pathlib import Path

from _planted_bugs import PlantedCodebase
from _spec import Spec
from terminal_agent.tasks.model import NegativeSolution

FILES = Path(__file__).resolve().parent / "hard_interpreters_files"
LIMITS = {"agent_timeout_s": 5400.0, "test_timeout_s": 600.0}


def _overlay(*paths: str) -> str:
    """A script that copies the reference versions of ``paths`` (relative to /app) into place."""
    return "\n".join(f"cp /solution/fixed/{path} /app/{path}" for path in paths) + "\n"


# --------------------------------------------------------------------------------------------------------------
# 1. quill-interpreter-bugs

_QUILL = PlantedCodebase(FILES / "quill")
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
unit tests under /app/unit_tests; they must still pass (`cd /app && python3 -m unittest discover -s unit_tests -t .`).
"""

_QUILL_SOLUTION = "cd /app\n" + _overlay(*_QUILL_FIXED) + """python3 -m unittest discover -s unit_tests -t .
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
    held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
    title="Fix string escapes, precedence, closures and loop control in the Quill interpreter",
    difficulty="hard",
    category="debugging",
    tags=["python", "interpreter", "parser", "closures", "multi-file", "language-tools"],
    instruction=_QUILL_INSTRUCTION,
    files=_QUILL.shipped,
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


# --------------------------------------------------------------------------------------------------------------
# 2. vm16-assembler-and-frames

_VM16 = PlantedCodebase(FILES / "vm16")
_VM16_FIXED = ("vm16/assembler.py", "vm16/directives.py", "vm16/vm.py")

_VM16_INSTRUCTION = r"""
/app holds vm16, a toolchain for a small stack machine: an assembler (`python3 -m vm16.asm`), a runner
(`python3 -m vm16.run`), a disassembler (`python3 -m vm16.disasm`) and `python3 -m vm16 program.s` that
assembles and runs in one step. All of them read one instruction table, vm16/isa.py; /app/docs/ISA.md describes
the machine, the object file and the assembly language.

Programs that should work do not:

- A program that pushes the address of a string or a word defined further down prints garbage or the wrong
  number, though the same program with the data moved to the top works.
- Strings and words placed after a `.string` that holds escapes (`\n`, `\"`, `\\`, `\xHH`) or non-ASCII text
  come out shifted: the labels after it no longer point at their data.
- Recursive functions that keep values in locals across a call (a recursive Fibonacci, a power function)
  crash with `stack underflow` or return wrong results, and a program that uses the result of a call inside an
  expression (`push 10`, `push 3`, `push 4`, `call add, 2`, `sub`) computes with stale values: the machine
  leaves things on the stack that docs/ISA.md says a `ret` removes.

Fix the toolchain so that it assembles and runs every program the way docs/ISA.md describes: labels name the
address of what follows them wherever they are defined, `push` takes its short form exactly as documented,
and calls, frames and returns behave as documented for any depth of nesting. The instruction set is fixed:
do not change vm16/isa.py, docs/ISA.md or the unit tests under /app/unit_tests, and keep the four commands and the
object format as they are (object files made by a correct assembler must run unchanged). The unit tests must
still pass: `cd /app && python3 -m unittest discover -s unit_tests -t .`.
"""

_VM16_SOLUTION = "cd /app\n" + _overlay(*_VM16_FIXED) + """python3 -m unittest discover -s unit_tests -t .
python3 -m vm16 examples/fact.s
python3 -m vm16 examples/hello.s
"""

_VM16_NEGATIVES = [
    NegativeSolution(
        name="assembler-only",
        why="label layout fixed in the assembler and the string sizes; the machine's call frames left broken",
        max_score=0.45,
        script=_overlay("vm16/assembler.py", "vm16/directives.py"),
    ),
    NegativeSolution(
        name="machine-only",
        why="ret fixed in the machine; both label-layout bugs of the assembler left",
        max_score=0.45,
        script=_overlay("vm16/vm.py"),
    ),
    NegativeSolution(
        name="frame-restore-only",
        why="ret resumes the caller's frame but still leaves the arguments on the stack; the assembler untouched",
        max_score=0.35,
        script="""cd /app
python3 - <<'PY'
from pathlib import Path
path = Path("vm16/vm.py")
text = path.read_text()
text = text.replace("        del self.stack[frame.locals_base:]\\n",
                    "        del self.stack[frame.locals_base:]\\n        self.frame = self.frames[-1] if self.frames else None\\n")
path.write_text(text)
PY
""",
    ),
    NegativeSolution(
        name="push-always-long",
        why="push never takes the short form (object code no longer as documented); strings and frames left broken",
        max_score=0.2,
        script="""cd /app
python3 - <<'PY'
from pathlib import Path
path = Path("vm16/assembler.py")
text = path.read_text()
text = text.replace('if statement.name == "push" and -128 <= values[0] <= 127:', 'if False:')
text = text.replace('        if -128 <= value <= 127:\\n            return isa.BY_MNEMONIC["push8"]\\n', '')
path.write_text(text)
PY
""",
    ),
]

VM16_TASK = Spec(
    task_id="vm16-assembler-and-frames",
    held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
    title="Fix label layout in the vm16 assembler and call frames in its virtual machine",
    difficulty="hard",
    category="debugging",
    tags=["python", "assembler", "virtual-machine", "multi-file", "language-tools"],
    instruction=_VM16_INSTRUCTION,
    files=_VM16.shipped,
    tests=_VM16.tests,
    weights={
        "test_forward_references_to_nearby_labels": 0.15,
        "test_labels_after_escaped_and_unicode_strings": 0.15,
        "test_symbol_table_of_a_mixed_program": 0.1,
        "test_recursive_functions_with_locals": 0.2,
        "test_arguments_are_dropped_on_return": 0.1,
        "test_reference_object_files_run": 0.1,
        "test_sample_programs": 0.2,
    },
    guards=["test_guard_shipped_tests_docs_and_table_unchanged_and_passing", "test_guard_the_tools_share_the_instruction_table"],
    solution=_VM16_SOLUTION,
    solution_files=_VM16.fixed,
    test_files=_VM16.fixtures,
    negative_solutions=_VM16_NEGATIVES,
    limits=LIMITS,
)


# --------------------------------------------------------------------------------------------------------------
# 3. jqlite-variables-feature

_JQ = PlantedCodebase(FILES / "jqlite")
_JQ_FIXED = tuple(path.removeprefix("fixed/") for path in sorted(_JQ.fixed))

_JQ_INSTRUCTION = r"""
/app holds jqlite, a jq-like JSON query tool written in Python (`python3 -m jqlite FILTER [FILE ...]`; the
language is described in /app/docs/MANUAL.md). Two bug reports and one feature request are open.

Bugs:

1. `a // b` is documented to fall back to `b` only when `a` produces nothing but `false` and `null`, yet
   `{"count": 0} | .count // 5` gives 5; empty strings and empty arrays are replaced as well.
2. Slices with negative bounds are wrong: `[10,20,30,40,50] | .[-2:]` gives the whole array instead of
   `[40,50]`, and `.[:-1]` gives `[]`. Negative bounds count from the end (strings too), as the manual says.

Feature: variables, as in jq.

- `TERM as $name | BODY` runs BODY once for every output of TERM, with `$name` bound to that output. BODY
  extends to the end of the enclosing pipe (or parenthesis) and its input is the input of the whole
  expression, not the bound value: `{"a": 1, "b": 2} | .a as $x | .b + $x` gives 3, and
  `(1, 2) as $v | $v * 10` gives 10 and 20. A binding inside BODY shadows an outer one of the same name for
  its own body only. Variables are visible inside function arguments (`map(. + $x)`, `select(. > $x)`) and
  can be indexed like any value (`$cfg.limits[0]`). `{$name}` is short for `{"name": $name}`.
- `--arg NAME VALUE` binds `$NAME` to the string VALUE; `--argjson NAME JSON` binds it to the parsed JSON
  value. Both may be repeated.
- A `$name` that nothing binds at that place is a compile error (exit status 3, message
  `... $name is not defined`), even in a branch that would never run. An invalid JSON text for `--argjson` is a
  usage error (exit status 2) whose message names `--argjson`.

Keep the existing behaviour, exit statuses and Python API (`jqlite.run_filter`, `jqlite.parser.compile_filter`,
`jqlite.evaluator.Evaluator`, the `jqlite.nodes` tree) working, and keep the unit tests under /app/unit_tests
unchanged and passing (`cd /app && python3 -m unittest discover -s unit_tests -t .`).
"""

_JQ_SOLUTION = "cd /app\n" + _overlay(*_JQ_FIXED) + """python3 -m unittest discover -s unit_tests -t .
python3 -m jqlite -n -c --arg who Ada --argjson n 2 '$n as $k | {who: $who, k: $k, tail: ([1,2,3][-$k:])}'
"""

_JQ_REINJECT_BUGS = """cd /app
python3 - <<'PY'
from pathlib import Path
path = Path("jqlite/evaluator.py")
text = path.read_text()
text = text.replace("                if is_true(output):\\n                    found = True",
                    "                if output:\\n                    found = True")
text = text.replace("    if index < 0:\\n        index += length\\n    return min(max(index, 0), length)",
                    "    index = min(max(index, 0), length)\\n    if index < 0:\\n        index += length\\n    return index")
path.write_text(text)
PY
"""

_JQ_NEGATIVES = [
    NegativeSolution(
        name="bugs-only",
        why="the two evaluator bugs fixed, no variables at all",
        max_score=0.35,
        script="""cd /app
python3 - <<'PY'
from pathlib import Path
path = Path("jqlite/evaluator.py")
text = path.read_text()
text = text.replace("                if output:\\n                    found = True",
                    "                if is_true(output):\\n                    found = True")
text = text.replace("    index = min(max(index, 0), length)\\n    if index < 0:\\n        index += length\\n    return index",
                    "    if index < 0:\\n        index += length\\n    return min(max(index, 0), length)")
path.write_text(text)
PY
""",
    ),
    NegativeSolution(
        name="feature-only",
        why="variables and --arg/--argjson added, the two reported bugs left",
        max_score=0.4,
        script=_overlay(*_JQ_FIXED) + _JQ_REINJECT_BUGS,
    ),
    NegativeSolution(
        name="no-command-line-options",
        why="bugs fixed and `as`/$name in the language, but no --arg/--argjson on the command line",
        max_score=0.56,
        script=_overlay(*(path for path in _JQ_FIXED if path != "jqlite/cli.py")),
    ),
]

JQ_TASK = Spec(
    task_id="jqlite-variables-feature",
    held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
    title="Add variables (as-bindings, --arg, --argjson) to the jqlite query tool and fix two evaluator bugs",
    difficulty="hard",
    category="multi-file",
    tags=["python", "query-language", "parser", "feature", "multi-file", "language-tools"],
    instruction=_JQ_INSTRUCTION,
    files=_JQ.shipped,
    tests=_JQ.tests,
    weights={
        "test_alternative_keeps_false_looking_json_values": 0.15,
        "test_negative_slice_bounds": 0.15,
        "test_as_binds_each_output_of_a_term": 0.15,
        "test_binding_scope_and_shadowing": 0.1,
        "test_arg_and_argjson": 0.15,
        "test_variable_errors": 0.1,
        "test_report_fixture": 0.2,
    },
    guards=["test_guard_shipped_tests_unchanged_and_passing", "test_guard_the_package_keeps_its_layers"],
    solution=_JQ_SOLUTION,
    solution_files=_JQ.fixed,
    test_files=_JQ.fixtures,
    negative_solutions=_JQ_NEGATIVES,
    limits=LIMITS,
)


# --------------------------------------------------------------------------------------------------------------
# 4. stencil-macros-feature

_STENCIL = PlantedCodebase(FILES / "stencil")
_STENCIL_FIXED = tuple(path.removeprefix("fixed/") for path in sorted(_STENCIL.fixed))

_STENCIL_INSTRUCTION = r"""
/app holds stencil, a template engine that compiles templates to Python (`python3 -m stencil TEMPLATE --dir DIR
--data VARS.json`; the template language is described in /app/docs/TEMPLATES.md). Two bugs are reported and one
feature is requested.

Bugs:

1. With three or more levels of `extends`, `{{ super() }}` in the most derived template skips the templates in
   between: for base.html <- section.html <- article.html, `super()` in article.html's `title` block renders
   base.html's title instead of section.html's (which itself calls `super()`).
2. `items | join(", ")` with autoescaping on returns the items unescaped, marked safe: a tag name `<script>`
   comes out as a real tag. join must escape each item (and the separator) unless it is already safe markup.

Feature: macros.

- `{% macro name(a, b="default", c=none) %}...{% endmacro %}` defines a macro; parameters may have default
  values (expressions, evaluated when the macro is called, in the context of the template that defines it);
  a parameter without a default may not follow one with a default.
- Calls are expressions: `{{ name(1, c="x") }}` - positional arguments, then keyword arguments (keyword
  arguments must work in any call). A parameter left out gets its default, or is undefined. Too many
  positional arguments, an unknown keyword or a parameter given twice is a render error naming the macro or
  the parameter; like every error, the command line prints it as `stencil: TEMPLATE: ...` and exits with 1.
  A `{% macro %}` without `{% endmacro %}` is a syntax error that mentions `endmacro`.
- A macro's output is the rendered body; its own `{{ }}` outputs are escaped as usual, and the result is safe
  markup so that it is not escaped a second time where it is output.
- Inside the body, parameters hide variables of the same name; other names are looked up in the render
  context. A macro may call itself or any other macro of its template, whether that one is defined above or
  below it, and macros defined anywhere in a template can be called from anywhere in that template (blocks
  included).
- `{% import "forms.html" as forms %}` makes the macros of forms.html available as `forms.NAME(...)`. Imported
  macros do not see the importing template's variables: they see the globals and what forms.html's own
  top-level `{% set %}` tags define; forms.html's text is not rendered.

Keep the engine's structure (templates are compiled to Python code by stencil/compiler.py), its Python API and
command line, and the unit tests under /app/unit_tests unchanged and passing
(`cd /app && python3 -m unittest discover -s unit_tests -t .`).
"""

_STENCIL_SOLUTION = "cd /app\n" + _overlay(*_STENCIL_FIXED) + """python3 -m unittest discover -s unit_tests -t .
"""

_STENCIL_REINJECT_BUGS = """cd /app
python3 - <<'PY'
from pathlib import Path
runtime = Path("stencil/runtime.py")
text = runtime.read_text()
text = text.replace(
    "        if self.level + 1 >= len(chain):\\n            raise TemplateRuntimeError(f\\"block {self.name!r} has no parent block for super()\\")\\n"
    "        out = []\\n        chain[self.level + 1](self.rt, self.ctx, self.blocks, out, self.level + 1)",
    "        base = len(chain) - 1\\n        if self.level >= base:\\n"
    "            raise TemplateRuntimeError(f\\"block {self.name!r} has no parent block for super()\\")\\n"
    "        out = []\\n        chain[base](self.rt, self.ctx, self.blocks, out, base)")
runtime.write_text(text)
filters = Path("stencil/filters.py")
text = filters.read_text()
text = text.replace(
    "    items = list(value)\\n    if ctx.autoescape:\\n        return Markup(escape(separator).join(escape(item) for item in items))\\n"
    "    return to_text(separator).join(to_text(item) for item in items)",
    "    text = to_text(separator).join(to_text(item) for item in value)\\n    return Markup(text) if ctx.autoescape else text")
filters.write_text(text)
PY
"""

_STENCIL_NEGATIVES = [
    NegativeSolution(
        name="bugs-only",
        why="super() chain and join escaping fixed, no macros or imports",
        max_score=0.3,
        script="""cd /app
python3 - <<'PY'
from pathlib import Path
runtime = Path("stencil/runtime.py")
text = runtime.read_text()
text = text.replace("        base = len(chain) - 1\\n        if self.level >= base:", "        base = self.level + 1\\n        if base >= len(chain):")
runtime.write_text(text)
filters = Path("stencil/filters.py")
text = filters.read_text()
text = text.replace(
    "    text = to_text(separator).join(to_text(item) for item in value)\\n    return Markup(text) if ctx.autoescape else text",
    "    if ctx.autoescape:\\n        return Markup(escape(separator).join(escape(item) for item in value))\\n"
    "    return to_text(separator).join(to_text(item) for item in value)")
filters.write_text(text)
PY
""",
    ),
    NegativeSolution(
        name="feature-only",
        why="macros, calls with keywords and import added; the super() chain and join escaping left broken",
        max_score=0.56,
        script=_overlay(*_STENCIL_FIXED) + _STENCIL_REINJECT_BUGS,
    ),
    NegativeSolution(
        name="join-returns-plain-text",
        why="join no longer marks its result safe, so autoescaping escapes it afterwards: safe items are escaped twice",
        max_score=0.05,
        script="""cd /app
sed -i 's/    return Markup(text) if ctx.autoescape else text/    return text/' stencil/filters.py
""",
    ),
]

STENCIL_TASK = Spec(
    task_id="stencil-macros-feature",
    held_out=True,  # the Python hard tasks are held out together: near-twins of one another (docs/tasks.md)
    title="Add macros and imports to the stencil template engine and fix super() chains and join escaping",
    difficulty="hard",
    category="multi-file",
    tags=["python", "template-engine", "compiler", "feature", "multi-file", "language-tools"],
    instruction=_STENCIL_INSTRUCTION,
    files=_STENCIL.shipped,
    tests=_STENCIL.tests,
    weights={
        "test_super_walks_the_whole_inheritance_chain": 0.15,
        "test_join_escapes_what_it_joins": 0.1,
        "test_macros_with_defaults_and_keywords": 0.2,
        "test_macros_call_each_other_and_recurse": 0.1,
        "test_import_binds_another_templates_macros": 0.15,
        "test_macro_misuse_is_reported": 0.1,
        "test_shop_site": 0.2,
    },
    guards=["test_guard_shipped_tests_unchanged_and_passing", "test_guard_templates_are_still_compiled_to_python"],
    solution=_STENCIL_SOLUTION,
    solution_files=_STENCIL.fixed,
    test_files=_STENCIL.fixtures,
    negative_solutions=_STENCIL_NEGATIVES,
    limits=LIMITS,
)

TASKS = [QUILL_TASK, VM16_TASK, JQ_TASK, STENCIL_TASK]
