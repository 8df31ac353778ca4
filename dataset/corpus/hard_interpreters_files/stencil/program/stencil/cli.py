"""``python3 -m stencil TEMPLATE [--dir DIR] [--data FILE.json] [--var NAME=VALUE ...] [--no-autoescape]``.

Renders TEMPLATE (a name under DIR, default the current directory) with the variables of the JSON object in
FILE and the ``--var`` strings, and prints the result as it is. ``--show-code`` prints the generated Python
instead. Errors print ``stencil: NAME:LINE: message`` and exit with status 1.
"""

import argparse
import json
import sys

from stencil.environment import Environment
from stencil.errors import TemplateError
from stencil.loaders import FileSystemLoader


def build_parser():
    parser = argparse.ArgumentParser(prog="stencil", description="Render a template.")
    parser.add_argument("template", help="template name, relative to --dir")
    parser.add_argument("--dir", default=".", help="template directory (default: .)")
    parser.add_argument("--data", help="a JSON file holding an object of variables")
    parser.add_argument("--var", action="append", default=[], help="NAME=VALUE, a string variable")
    parser.add_argument("--no-autoescape", action="store_true", help="do not HTML-escape output")
    parser.add_argument("--show-code", action="store_true", help="print the compiled Python")
    return parser


def main(argv, stdout=None, stderr=None):
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    options = build_parser().parse_args(argv)
    variables = {}
    if options.data:
        try:
            with open(options.data, encoding="utf-8") as handle:
                variables = json.load(handle)
        except (OSError, json.JSONDecodeError) as error:
            stderr.write(f"stencil: cannot read {options.data}: {error}\n")
            return 1
        if not isinstance(variables, dict):
            stderr.write(f"stencil: {options.data} must hold a JSON object\n")
            return 1
    for assignment in options.var:
        name, equals, value = assignment.partition("=")
        if not equals or not name:
            stderr.write(f"stencil: --var needs NAME=VALUE, got {assignment!r}\n")
            return 1
        variables[name] = value
    environment = Environment(FileSystemLoader(options.dir), autoescape=not options.no_autoescape)
    try:
        template = environment.get_template(options.template)
        if options.show_code:
            stdout.write(template.code)
            return 0
        stdout.write(template.render(variables))
    except TemplateError as error:
        stderr.write(f"stencil: {error.describe()}\n")
        return 1
    return 0
