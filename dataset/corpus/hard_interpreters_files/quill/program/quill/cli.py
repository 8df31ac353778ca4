"""The command line.

    python3 -m quill PROGRAM.ql [ARG ...]   run a program (its arguments are the list ``args``)
    python3 -m quill -e 'CODE'              run CODE; a bare expression prints its value
    python3 -m quill --tokens PROGRAM.ql    print the tokens, one a line
    python3 -m quill --ast PROGRAM.ql       print the syntax tree, one statement a line
    python3 -m quill                        the interactive loop (reads standard input)

Exit status: 0 on success, 1 on a runtime error, 2 on a syntax error or a bad command line.
"""

import argparse
import sys

from quill import __version__
from quill.errors import QuillError, QuillSyntaxError
from quill.interpreter import Interpreter
from quill.lexer import tokenize
from quill.nodes import dump
from quill.parser import parse
from quill.repl import evaluate_input, run_repl


def build_parser():
    parser = argparse.ArgumentParser(prog="quill", description="Run Quill programs.")
    parser.add_argument("program", nargs="?", help="a .ql file (omit for the interactive loop)")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="arguments for the program")
    parser.add_argument("-e", "--eval", dest="code", help="run this code instead of a file")
    parser.add_argument("--tokens", action="store_true", help="print the tokens instead of running")
    parser.add_argument("--ast", action="store_true", help="print the syntax tree instead of running")
    parser.add_argument("--version", action="version", version=f"quill {__version__}")
    return parser


def read_program(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as error:
        raise SystemExit(f"quill: cannot read {path}: {error.strerror}") from None


def main(argv, stdin=None, stdout=None, stderr=None):
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    options = build_parser().parse_args(argv)
    if options.code is not None and options.program is not None:
        options.arguments.insert(0, options.program)
        options.program = None
    if options.code is None and options.program is None:
        if options.tokens or options.ast:
            stderr.write("quill: --tokens and --ast need a program\n")
            return 2
        return run_repl(stdin, stdout, interactive=stdin.isatty())
    source = options.code if options.code is not None else read_program(options.program)
    try:
        if options.tokens:
            for token in tokenize(source):
                stdout.write(f"{token.line}:{token.column} {token}\n")
            return 0
        if options.ast:
            for statement in parse(tokenize(source)).statements:
                stdout.write(dump(statement) + "\n")
            return 0
        if options.code is not None:
            interpreter = Interpreter(out=stdout, argv=options.arguments)
            shown = evaluate_input(interpreter, source)
            if shown:
                stdout.write(shown + "\n")
            return 0
        Interpreter(out=stdout, argv=options.arguments).run(parse(tokenize(source)))
        return 0
    except QuillSyntaxError as error:
        stdout.flush()
        stderr.write(error.describe() + "\n")
        return 2
    except QuillError as error:
        stdout.flush()
        stderr.write(error.describe() + "\n")
        return 1
    except RecursionError:
        stdout.flush()
        stderr.write("runtime error: the program nests too deeply\n")
        return 1
