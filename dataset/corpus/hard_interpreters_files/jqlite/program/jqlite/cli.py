"""The command line: ``python3 -m jqlite [options] FILTER [FILE ...]``.

Options: ``-r`` strings printed raw, ``-c`` one line per output, ``-n`` run once with null as input, ``-s`` read
all inputs into one array, ``-S`` sort object keys, ``--arg NAME VALUE`` bind ``$NAME`` to the string VALUE,
``--argjson NAME JSON`` bind ``$NAME`` to the parsed JSON value.

Exit status: 0 success, 2 usage or input error, 3 the filter does not compile, 5 the filter failed at run time.
"""

import argparse
import json
import re
import sys

from jqlite.errors import JqliteError, UsageError
from jqlite.evaluator import Evaluator
from jqlite.inputs import read_inputs
from jqlite.output import render
from jqlite.parser import compile_filter

VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser():
    parser = _Parser(prog="jqlite", description="Query JSON with a jq-like filter.")
    parser.add_argument("filter", help="the filter, e.g. '.items[] | .name'")
    parser.add_argument("files", nargs="*", help="JSON files (standard input when none)")
    parser.add_argument("-r", "--raw-output", action="store_true", help="print strings without quotes")
    parser.add_argument("-c", "--compact-output", action="store_true", help="one line per output")
    parser.add_argument("-n", "--null-input", action="store_true", help="use null as the single input")
    parser.add_argument("-s", "--slurp", action="store_true", help="read all inputs into one array")
    parser.add_argument("-S", "--sort-keys", action="store_true", help="print object keys sorted")
    parser.add_argument("--arg", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="bind $NAME to the string VALUE")
    parser.add_argument("--argjson", nargs=2, action="append", default=[], metavar=("NAME", "JSON"),
                        help="bind $NAME to the JSON value")
    return parser


def variables_of(options):
    """{name: value} from --arg and --argjson, in order (a later binding of a name wins)."""
    variables = {}
    for name, text in options.arg:
        variables[checked_name(name, "--arg")] = text
    for name, text in options.argjson:
        try:
            variables[checked_name(name, "--argjson")] = json.loads(text)
        except json.JSONDecodeError as error:
            raise UsageError(f"--argjson {name}: invalid JSON ({error.msg}): {text}") from None
    return variables


def checked_name(name, option):
    if not VARIABLE_NAME.match(name):
        raise UsageError(f"{option}: {name!r} is not a valid variable name")
    return name


def main(argv, stdin=None, stdout=None, stderr=None):
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        options = build_parser().parse_args(argv)
        variables = variables_of(options)
        program = compile_filter(options.filter, variables=sorted(variables))
        inputs = [None] if options.null_input else read_inputs(options.files, stdin)
        if options.slurp and not options.null_input:
            inputs = [inputs]
        evaluator = Evaluator(variables)
        for value in inputs:
            for output in evaluator.outputs(program, value):
                stdout.write(render(output, options.raw_output, options.compact_output, options.sort_keys) + "\n")
    except JqliteError as error:
        stdout.flush()
        stderr.write(f"jqlite: error: {error.message}\n")
        return error.exit_status
    except RecursionError:
        stdout.flush()
        stderr.write("jqlite: error: the filter or the input nests too deeply\n")
        return 5
    return 0
