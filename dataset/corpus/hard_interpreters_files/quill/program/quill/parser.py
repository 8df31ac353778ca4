"""The parser: tokens to a :class:`~quill.nodes.Program`.

Statements are parsed by recursive descent; expressions by precedence climbing over
:data:`BINARY_PRECEDENCE` (higher binds tighter). The table is the one docs/LANGUAGE.md documents.
"""

from quill import nodes
from quill.errors import QuillSyntaxError
from quill.tokens import EOF_KIND, KEYWORD, NAME, NUMBER, OP, STRING

BINARY_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "==": 4, "!=": 4,
    "<": 5, "<=": 5, ">": 5, ">=": 5,
    "+": 6, "-": 6,
    "*": 7, "/": 7, "//": 7, "%": 7,
    "**": 9,
}
NOT_PRECEDENCE = 3
"""``not`` applies to a whole comparison: ``not a == b`` is ``not (a == b)``."""
NEGATION_PRECEDENCE = 8
"""Unary minus binds tighter than ``*`` but looser than ``**``: ``-2 ** 2`` is ``-(2 ** 2)``."""
RIGHT_ASSOCIATIVE = frozenset({"**"})
LOGICAL = frozenset({"and", "or"})
ASSIGNMENT_OPERATORS = ("=", "+=", "-=")


class Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.position = 0

    # -- cursor ------------------------------------------------------------------------------------
    @property
    def current(self):
        return self.tokens[self.position]

    def advance(self):
        token = self.current
        if token.kind != EOF_KIND:
            self.position += 1
        return token

    def error(self, message, token=None):
        token = token or self.current
        return QuillSyntaxError(message, token.line, token.column)

    def expect_op(self, text):
        if not self.current.is_op(text):
            raise self.error(f"expected {text!r}, found {describe(self.current)}")
        return self.advance()

    def expect_name(self, what):
        if self.current.kind != NAME:
            raise self.error(f"expected {what}, found {describe(self.current)}")
        return self.advance().value

    # -- statements --------------------------------------------------------------------------------
    def program(self):
        statements = []
        while self.current.kind != EOF_KIND:
            statements.append(self.statement())
        return nodes.Program(statements, line=1)

    def statement(self):
        token = self.current
        if token.is_keyword("let"):
            return self.let_statement()
        if token.is_keyword("fn") and self.tokens[self.position + 1].kind == NAME:
            return self.function_definition()
        if token.is_keyword("return"):
            self.advance()
            value = None if self.current.is_op(";") else self.expression()
            self.expect_op(";")
            return nodes.Return(value, line=token.line)
        if token.is_keyword("if"):
            return self.if_statement()
        if token.is_keyword("while"):
            self.advance()
            condition = self.expression()
            return nodes.While(condition, self.block(), line=token.line)
        if token.is_keyword("for"):
            self.advance()
            name = self.expect_name("a loop variable")
            if not self.current.is_keyword("in"):
                raise self.error(f"expected 'in', found {describe(self.current)}")
            self.advance()
            iterable = self.expression()
            return nodes.For(name, iterable, self.block(), line=token.line)
        if token.is_keyword("break", "continue"):
            self.advance()
            self.expect_op(";")
            return nodes.Break(line=token.line) if token.value == "break" else nodes.Continue(line=token.line)
        return self.expression_or_assignment()

    def let_statement(self):
        token = self.advance()
        name = self.expect_name("a variable name after 'let'")
        self.expect_op("=")
        value = self.expression()
        self.expect_op(";")
        return nodes.Let(name, value, line=token.line)

    def function_definition(self):
        token = self.advance()
        name = self.advance().value
        params = self.parameters()
        return nodes.FunctionDef(name, params, self.block(), line=token.line)

    def parameters(self):
        self.expect_op("(")
        params = []
        while not self.current.is_op(")"):
            name = self.expect_name("a parameter name")
            if name in params:
                raise self.error(f"parameter {name!r} repeated")
            params.append(name)
            if not self.current.is_op(")"):
                self.expect_op(",")
        self.expect_op(")")
        return params

    def if_statement(self):
        token = self.advance()
        condition = self.expression()
        then_body = self.block()
        else_body = None
        if self.current.is_keyword("else"):
            self.advance()
            if self.current.is_keyword("if"):
                else_body = [self.if_statement()]
            else:
                else_body = self.block()
        return nodes.If(condition, then_body, else_body, line=token.line)

    def block(self):
        self.expect_op("{")
        statements = []
        while not self.current.is_op("}"):
            if self.current.kind == EOF_KIND:
                raise self.error("unclosed block: expected '}'")
            statements.append(self.statement())
        self.advance()
        return statements

    def expression_or_assignment(self):
        token = self.current
        expression = self.expression()
        if self.current.kind == OP and self.current.value in ASSIGNMENT_OPERATORS:
            operator = self.advance().value
            if not isinstance(expression, (nodes.Name, nodes.Index)):
                raise self.error("can only assign to a name or an index", token)
            value = self.expression()
            self.expect_op(";")
            return nodes.Assign(expression, operator, value, line=token.line)
        self.expect_op(";")
        return nodes.ExpressionStatement(expression, line=token.line)

    # -- expressions -------------------------------------------------------------------------------
    def expression(self, min_precedence=1):
        left = self.unary()
        while True:
            operator = self.binary_operator()
            if operator is None or BINARY_PRECEDENCE[operator] < min_precedence:
                return left
            token = self.advance()
            precedence = BINARY_PRECEDENCE[operator]
            next_min = precedence if operator in RIGHT_ASSOCIATIVE else precedence + 1
            right = self.expression(next_min)
            kind = nodes.Logical if operator in LOGICAL else nodes.Binary
            left = kind(operator, left, right, line=token.line)

    def binary_operator(self):
        token = self.current
        if token.kind == OP and token.value in BINARY_PRECEDENCE:
            return token.value
        if token.kind == KEYWORD and token.value in LOGICAL:
            return token.value
        return None

    def unary(self):
        token = self.current
        if token.is_op("-"):
            self.advance()
            return nodes.Unary("-", self.expression(NEGATION_PRECEDENCE), line=token.line)
        if token.is_keyword("not"):
            self.advance()
            return nodes.Unary("not", self.expression(NOT_PRECEDENCE), line=token.line)
        return self.postfix()

    def postfix(self):
        expression = self.primary()
        while True:
            token = self.current
            if token.is_op("("):
                self.advance()
                arguments = []
                while not self.current.is_op(")"):
                    arguments.append(self.expression())
                    if not self.current.is_op(")"):
                        self.expect_op(",")
                self.advance()
                expression = nodes.Call(expression, arguments, line=token.line)
            elif token.is_op("["):
                self.advance()
                index = self.expression()
                self.expect_op("]")
                expression = nodes.Index(expression, index, line=token.line)
            else:
                return expression

    def primary(self):
        token = self.current
        if token.kind == NUMBER:
            self.advance()
            return nodes.Number(token.value, line=token.line)
        if token.kind == STRING:
            self.advance()
            return nodes.String(token.value, line=token.line)
        if token.kind == NAME:
            self.advance()
            return nodes.Name(token.value, line=token.line)
        if token.is_keyword("true", "false"):
            self.advance()
            return nodes.Boolean(token.value == "true", line=token.line)
        if token.is_keyword("nil"):
            self.advance()
            return nodes.Nil(line=token.line)
        if token.is_keyword("fn"):
            return self.lambda_expression()
        if token.is_op("("):
            self.advance()
            inner = self.expression()
            self.expect_op(")")
            return inner
        if token.is_op("["):
            return self.list_literal()
        if token.is_op("{"):
            return self.map_literal()
        raise self.error(f"expected an expression, found {describe(token)}")

    def lambda_expression(self):
        token = self.advance()
        params = self.parameters()
        if self.current.is_op("=>"):
            arrow = self.advance()
            return nodes.Lambda(params, [nodes.Return(self.expression(), line=arrow.line)], line=token.line)
        return nodes.Lambda(params, self.block(), line=token.line)

    def list_literal(self):
        token = self.advance()
        items = []
        while not self.current.is_op("]"):
            items.append(self.expression())
            if not self.current.is_op("]"):
                self.expect_op(",")
        self.advance()
        return nodes.ListLiteral(items, line=token.line)

    def map_literal(self):
        token = self.advance()
        pairs = []
        while not self.current.is_op("}"):
            key = self.expression()
            self.expect_op(":")
            pairs.append((key, self.expression()))
            if not self.current.is_op("}"):
                self.expect_op(",")
        self.advance()
        return nodes.MapLiteral(pairs, line=token.line)


def describe(token):
    if token.kind == EOF_KIND:
        return "end of input"
    if token.kind == STRING:
        return "a string"
    if token.kind == NUMBER:
        return f"number {token.value}"
    return repr(token.value)


def parse(tokens):
    """The :class:`~quill.nodes.Program` of ``tokens``; raises QuillSyntaxError."""
    return Parser(tokens).program()


def parse_expression(tokens):
    """One expression (the whole input): used by the REPL and ``quill -e`` for a bare expression."""
    parser = Parser(tokens)
    expression = parser.expression()
    if parser.current.kind != EOF_KIND:
        raise parser.error(f"unexpected {describe(parser.current)} after the expression")
    return expression
