"""The interactive loop: statements run as they are completed; a bare expression prints its value."""

from quill.errors import QuillError
from quill.interpreter import Interpreter
from quill.lexer import tokenize
from quill.nodes import ExpressionStatement
from quill.parser import parse, parse_expression
from quill.tokens import OP

PROMPT = "quill> "
CONTINUATION = "  ...> "


def is_complete(source):
    """Whether the brackets of ``source`` are balanced (so the input can be run)."""
    try:
        tokens = tokenize(source)
    except QuillError as error:
        return "unterminated" not in error.message
    depth = 0
    for token in tokens:
        if token.kind == OP and token.value in "([{":
            depth += 1
        elif token.kind == OP and token.value in ")]}":
            depth -= 1
    return depth <= 0


def evaluate_input(interpreter, source):
    """Run one complete input; the text to show for it ('' when there is nothing to show)."""
    tokens = tokenize(source)
    try:
        expression = parse_expression(tokens)
    except QuillError:
        program = parse(tokens)
        value = interpreter.run(program)
        last = program.statements[-1] if program.statements else None
        if isinstance(last, ExpressionStatement) and value is not None:
            return interpreter_repr(value)
        return ""
    value = interpreter.evaluate_in_globals(expression)
    return "" if value is None else interpreter_repr(value)


def interpreter_repr(value):
    from quill.values import to_repr
    return to_repr(value)


def run_repl(stdin, stdout, interactive):
    """Read inputs from ``stdin`` until EOF; errors are shown and the session goes on. Returns the exit status."""
    interpreter = Interpreter(out=stdout)
    buffer = ""
    failures = 0
    while True:
        if interactive:
            stdout.write(CONTINUATION if buffer else PROMPT)
            stdout.flush()
        line = stdin.readline()
        if not line:
            break
        buffer += line
        if not buffer.strip() or not is_complete(buffer):
            if not buffer.strip():
                buffer = ""
            continue
        source, buffer = buffer, ""
        try:
            shown = evaluate_input(interpreter, source)
        except QuillError as error:
            failures += 1
            stdout.write(error.describe() + "\n")
            continue
        if shown:
            stdout.write(shown + "\n")
    if buffer.strip():
        stdout.write("syntax error: input ended inside an unclosed bracket\n")
        failures += 1
    return 1 if failures and not interactive else 0
