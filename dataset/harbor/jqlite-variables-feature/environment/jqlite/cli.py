"""The command line: ``python3 -m jqlite [options] FILTER [FILE ...]``.

Options: ``-r`` strings printed raw, ``-c`` one line per output, ``-n`` run once with null as input, ``-s`` read
all inputs into one array, ``-S`` sort object keys.

Exit status: 0 success, 2 usage or input error, 3 the filter does not compile, 5 the filter failed at run time.
"""

import argparse
import sys

from jqlite.errors import JqliteError, UsageError
from jqlite.evaluator import Evaluator
from jqlite.inputs import read_inputs
from jqlite.output import render
from jqlite.parser import compile_filter


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
    return parser


def main(argv, stdin=None, stdout=None, stderr=None):
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        options = build_parser().parse_args(argv)
        program = compile_filter(options.filter)
        inputs = [None] if options.null_input else read_inputs(options.files, stdin)
        if options.slurp and not options.null_input:
            inputs = [inputs]
        evaluator = Evaluator()
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
