"""The expression language inside ``{{ }}`` and tags.

Loosest first: ``a if c else b``; ``or``; ``and``; ``not``; comparisons (``== != < <= > >= in``, ``not in``);
``+ - ~`` (``~`` joins as strings); ``* / // %``; unary ``-``; then postfix ``.name``, ``[key]``, ``(args)``
and filters ``| name(args)``. Literals: numbers, strings, ``true``, ``false``, ``none``, lists ``[a, b]``.
Calls take positional arguments and then keyword arguments (``f(1, size=2)``).
"""

import re

from stencil import nodes
from stencil.errors import TemplateSyntaxError

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<number>\d+\.\d+|\d+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|//|[-+*/%~<>()\[\].,|=:])
""", re.VERBOSE)
ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def lex(text, name=None, line=None):
    tokens = []
    position = 0
    while position < len(text):
        match = TOKEN.match(text, position)
        if not match:
            raise TemplateSyntaxError(f"unexpected character {text[position]!r} in expression", name, line)
        position = match.end()
        kind = match.lastgroup
        if kind == "ws":
            continue
        value = match.group()
        if kind == "number":
            value = float(value) if "." in value else int(value)
        elif kind == "string":
            value = unescape(value[1:-1])
        tokens.append((kind, value))
    tokens.append(("end", None))
    return tokens


def unescape(body):
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), "\\" + m.group(1)), body)


class ExpressionParser:
    """Parses expressions from a token list; the tag parser shares the cursor to read tag syntax."""

    def __init__(self, text, name=None, line=None):
        self.tokens = lex(text, name, line)
        self.position = 0
        self.name = name
        self.line = line

    # -- cursor ------------------------------------------------------------------------------------
    @property
    def current(self):
        return self.tokens[self.position]

    def advance(self):
        token = self.tokens[self.position]
        if token[0] != "end":
            self.position += 1
        return token

    def at_op(self, *values):
        return self.current[0] == "op" and self.current[1] in values

    def at_name(self, *values):
        return self.current[0] == "name" and self.current[1] in values

    def error(self, message):
        return TemplateSyntaxError(message, self.name, self.line)

    def expect_op(self, value):
        if not self.at_op(value):
            raise self.error(f"expected {value!r}, found {self.describe()}")
        return self.advance()

    def expect_name(self, what="a name"):
        if self.current[0] != "name":
            raise self.error(f"expected {what}, found {self.describe()}")
        return self.advance()[1]

    def expect_end(self):
        if self.current[0] != "end":
            raise self.error(f"unexpected {self.describe()}")

    def describe(self):
        kind, value = self.current
        return "end of expression" if kind == "end" else repr(value)

    # -- grammar -----------------------------------------------------------------------------------
    def expression(self):
        value = self.or_expression()
        if self.at_name("if"):
            self.advance()
            condition = self.or_expression()
            otherwise = nodes.Const(None)
            if self.at_name("else"):
                self.advance()
                otherwise = self.expression()
            return nodes.Conditional(condition, value, otherwise)
        return value

    def or_expression(self):
        left = self.and_expression()
        while self.at_name("or"):
            self.advance()
            left = nodes.BinOp("or", left, self.and_expression())
        return left

    def and_expression(self):
        left = self.not_expression()
        while self.at_name("and"):
            self.advance()
            left = nodes.BinOp("and", left, self.not_expression())
        return left

    def not_expression(self):
        if self.at_name("not"):
            self.advance()
            return nodes.UnaryOp("not", self.not_expression())
        return self.comparison()

    def comparison(self):
        left = self.additive()
        while True:
            if self.current[0] == "op" and self.current[1] in COMPARISONS:
                operator = self.advance()[1]
            elif self.at_name("in"):
                self.advance()
                operator = "in"
            elif self.at_name("not") and self.tokens[self.position + 1] == ("name", "in"):
                self.advance()
                self.advance()
                operator = "not in"
            else:
                return left
            left = nodes.BinOp(operator, left, self.additive())

    def additive(self):
        left = self.multiplicative()
        while self.at_op("+", "-", "~"):
            operator = self.advance()[1]
            left = nodes.BinOp(operator, left, self.multiplicative())
        return left

    def multiplicative(self):
        left = self.unary()
        while self.at_op("*", "/", "//", "%"):
            operator = self.advance()[1]
            left = nodes.BinOp(operator, left, self.unary())
        return left

    def unary(self):
        if self.at_op("-"):
            self.advance()
            return nodes.UnaryOp("-", self.unary())
        return self.postfix()

    def postfix(self):
        value = self.primary()
        while True:
            if self.at_op("."):
                self.advance()
                value = nodes.Attribute(value, self.expect_name("an attribute name"))
            elif self.at_op("["):
                self.advance()
                key = self.expression()
                self.expect_op("]")
                value = nodes.Item(value, key)
            elif self.at_op("("):
                args, kwargs = self.call_arguments()
                value = nodes.Call(value, args, kwargs)
            elif self.at_op("|"):
                self.advance()
                name = self.expect_name("a filter name")
                args = []
                if self.at_op("("):
                    args, kwargs = self.call_arguments()
                    if kwargs:
                        raise self.error("filters take positional arguments only")
                value = nodes.Filter(value, name, args, self.line or 0)
            else:
                return value

    def call_arguments(self):
        self.expect_op("(")
        args, kwargs = [], []
        while not self.at_op(")"):
            if self.current[0] == "name" and self.tokens[self.position + 1] == ("op", "="):
                keyword = self.advance()[1]
                self.advance()
                if any(keyword == seen for seen, _ in kwargs):
                    raise self.error(f"keyword argument {keyword!r} repeated")
                kwargs.append((keyword, self.expression()))
            elif kwargs:
                raise self.error("a positional argument after a keyword argument")
            else:
                args.append(self.expression())
            if not self.at_op(")"):
                self.expect_op(",")
        self.advance()
        return args, kwargs

    def primary(self):
        kind, value = self.current
        if kind in ("number", "string"):
            self.advance()
            return nodes.Const(value)
        if kind == "name":
            self.advance()
            if value in ("true", "false", "none", "True", "False", "None"):
                return nodes.Const({"true": True, "false": False, "none": None}[value.lower()])
            return nodes.Name(value)
        if self.at_op("("):
            self.advance()
            inner = self.expression()
            self.expect_op(")")
            return inner
        if self.at_op("["):
            self.advance()
            items = []
            while not self.at_op("]"):
                items.append(self.expression())
                if not self.at_op("]"):
                    self.expect_op(",")
            self.advance()
            return nodes.ListExpr(items)
        raise self.error(f"expected an expression, found {self.describe()}")


def parse_expression(text, name=None, line=None):
    parser = ExpressionParser(text, name, line)
    expression = parser.expression()
    parser.expect_end()
    return expression
