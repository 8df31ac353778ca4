"""The parser: tokens to :mod:`jqlite.nodes`, loosest first:

    pipe         alternative-level terms joined by '|' (right-associative)
    comma        ','
    alternative  '//' (right-associative)
    or, and
    comparison   == != < <= > >= (not chained)
    additive     + -
    multiplicative  * / %
    unary        '-' term
    postfix      term followed by .name, [index], [from:to], [], ?

``TERM as $name | BODY`` binds $name to each output of TERM while BODY (the rest of the pipe) runs.
Variables are checked when the filter compiles: a ``$name`` that nothing binds is a syntax error.
"""

from jqlite import nodes
from jqlite.builtins import known_function
from jqlite.errors import FilterSyntaxError
from jqlite.lexer import tokenize
from jqlite.tokens import END, FIELD, IDENT, NUMBER, OP, STRING, VARIABLE

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
RESERVED = frozenset({"then", "elif", "else", "end", "and", "or", "as"})


class Parser:
    def __init__(self, tokens, variables=()):
        self.tokens = tokens
        self.position = 0
        self.scopes = [set(variables)]
        self.defined_functions = []

    # -- cursor ------------------------------------------------------------------------------------
    @property
    def current(self):
        return self.tokens[self.position]

    def peek(self, offset=1):
        return self.tokens[min(self.position + offset, len(self.tokens) - 1)]

    def advance(self):
        token = self.current
        if token.kind != END:
            self.position += 1
        return token

    def error(self, message, token=None):
        token = token or self.current
        return FilterSyntaxError(message, token.position)

    def expect_op(self, text):
        if not self.current.is_op(text):
            raise self.error(f"expected {text!r}, found {describe(self.current)}")
        return self.advance()

    def expect_word(self, word):
        if not self.current.is_word(word):
            raise self.error(f"expected {word!r}, found {describe(self.current)}")
        return self.advance()

    # -- grammar -----------------------------------------------------------------------------------
    def program(self):
        node = self.pipe()
        if self.current.kind != END:
            raise self.error(f"unexpected {describe(self.current)}")
        return node

    def pipe(self):
        left = self.comma()
        if self.current.is_op("|"):
            self.advance()
            return nodes.Pipe(left, self.pipe())
        return left

    def comma(self):
        left = self.alternative()
        while self.current.is_op(","):
            self.advance()
            left = nodes.Comma(left, self.alternative())
        return left

    def alternative(self):
        left = self.logical_or()
        if self.current.is_op("//"):
            self.advance()
            return nodes.Alternative(left, self.alternative())
        return left

    def logical_or(self):
        left = self.logical_and()
        while self.current.is_word("or"):
            self.advance()
            left = nodes.Logical("or", left, self.logical_and())
        return left

    def logical_and(self):
        left = self.comparison()
        while self.current.is_word("and"):
            self.advance()
            left = nodes.Logical("and", left, self.comparison())
        return left

    def comparison(self):
        left = self.additive()
        if self.current.kind == OP and self.current.value in COMPARISONS:
            operator = self.advance().value
            right = self.additive()
            if self.current.kind == OP and self.current.value in COMPARISONS:
                raise self.error("comparisons do not chain; use 'and'")
            return nodes.Binary(operator, left, right)
        return left

    def additive(self):
        left = self.multiplicative()
        while self.current.is_op("+", "-"):
            operator = self.advance().value
            left = nodes.Binary(operator, left, self.multiplicative())
        return left

    def multiplicative(self):
        left = self.unary()
        while self.current.is_op("*", "/", "%"):
            operator = self.advance().value
            left = nodes.Binary(operator, left, self.unary())
        return left

    def unary(self):
        if self.current.is_op("-"):
            self.advance()
            return nodes.Negate(self.unary())
        return self.postfix()

    def postfix(self):
        node = self.term()
        while True:
            token = self.current
            if token.kind == FIELD:
                self.advance()
                node = nodes.Field(node, nodes.Literal(token.value), self.optional_mark())
            elif token.is_op(".") and self.peek().kind == STRING:
                self.advance()
                name = self.advance().value
                node = nodes.Field(node, nodes.Literal(name), self.optional_mark())
            elif token.is_op(".") and self.peek().is_op("["):
                self.advance()
                node = self.bracket_suffix(node)
            elif token.is_op("["):
                node = self.bracket_suffix(node)
            elif token.is_word("as"):
                return self.binding(node)
            else:
                return node

    def binding(self, source):
        self.advance()
        if self.current.kind != VARIABLE:
            raise self.error(f"expected a $variable after 'as', found {describe(self.current)}")
        name = self.advance().value
        self.expect_op("|")
        self.scopes.append({name})
        try:
            body = self.pipe()
        finally:
            self.scopes.pop()
        return nodes.Binding(source, name, body)

    def optional_mark(self):
        if self.current.is_op("?"):
            self.advance()
            return True
        return False

    def bracket_suffix(self, target):
        self.expect_op("[")
        if self.current.is_op("]"):
            self.advance()
            return nodes.Iterate(target, self.optional_mark())
        start = None if self.current.is_op(":") else self.pipe()
        if self.current.is_op(":"):
            self.advance()
            stop = None if self.current.is_op("]") else self.pipe()
            self.expect_op("]")
            if start is None and stop is None:
                raise self.error("a slice needs a start or an end")
            return nodes.Slice(target, start, stop, self.optional_mark())
        self.expect_op("]")
        return nodes.Index(target, start, self.optional_mark())

    def term(self):
        token = self.current
        if token.is_op("."):
            if self.peek().is_op(".") and self.peek().position == token.position + 1:
                self.advance()
                self.advance()
                return nodes.RecurseAll()
            if self.peek().kind == STRING or self.peek().is_op("["):
                return nodes.Identity()  # postfix() takes the ."name" / .[...] that follows
            self.advance()
            return nodes.Identity()
        if token.kind == FIELD:
            return nodes.Identity()  # postfix() reads the field itself
        if token.kind == NUMBER or token.kind == STRING:
            self.advance()
            return nodes.Literal(token.value)
        if token.kind == VARIABLE:
            self.advance()
            if not any(token.value in scope for scope in self.scopes):
                raise self.error(f"${token.value} is not defined", token)
            return nodes.Variable(token.value)
        if token.is_op("("):
            self.advance()
            inner = self.pipe()
            self.expect_op(")")
            return inner
        if token.is_op("["):
            self.advance()
            if self.current.is_op("]"):
                self.advance()
                return nodes.ArrayConstruction(None)
            body = self.pipe()
            self.expect_op("]")
            return nodes.ArrayConstruction(body)
        if token.is_op("{"):
            return self.object_construction()
        if token.kind == IDENT:
            return self.word()
        raise self.error(f"unexpected {describe(token)}")

    def word(self):
        token = self.advance()
        name = token.value
        if name in ("true", "false"):
            return nodes.Literal(name == "true")
        if name == "null":
            return nodes.Literal(None)
        if name == "if":
            return self.conditional()
        if name in RESERVED:
            raise self.error(f"unexpected {name!r}", token)
        arguments = []
        if self.current.is_op("("):
            self.advance()
            arguments.append(self.pipe())
            while self.current.is_op(";"):
                self.advance()
                arguments.append(self.pipe())
            self.expect_op(")")
        if not known_function(name, len(arguments)):
            raise self.error(f"{name}/{len(arguments)} is not defined", token)
        return nodes.FunctionCall(name, arguments)

    def conditional(self):
        branches = []
        condition = self.pipe()
        self.expect_word("then")
        branches.append((condition, self.pipe()))
        while self.current.is_word("elif"):
            self.advance()
            condition = self.pipe()
            self.expect_word("then")
            branches.append((condition, self.pipe()))
        otherwise = nodes.Identity()
        if self.current.is_word("else"):
            self.advance()
            otherwise = self.pipe()
        self.expect_word("end")
        return nodes.Conditional(branches, otherwise)

    def object_construction(self):
        self.expect_op("{")
        entries = []
        while not self.current.is_op("}"):
            entries.append(self.object_entry())
            if not self.current.is_op("}"):
                self.expect_op(",")
        self.advance()
        return nodes.ObjectConstruction(entries)

    def object_entry(self):
        token = self.current
        if token.kind == VARIABLE:
            self.advance()
            if not any(token.value in scope for scope in self.scopes):
                raise self.error(f"${token.value} is not defined", token)
            return nodes.Literal(token.value), nodes.Variable(token.value)
        if token.kind in (IDENT, STRING):
            self.advance()
            key = nodes.Literal(token.value)
            if not self.current.is_op(":"):
                return key, nodes.Field(nodes.Identity(), key)
        elif token.is_op("("):
            self.advance()
            key = self.pipe()
            self.expect_op(")")
        else:
            raise self.error(f"expected an object key, found {describe(token)}")
        self.expect_op(":")
        return key, self.object_value()

    def object_value(self):
        value = self.alternative()
        while self.current.is_op("|"):
            self.advance()
            value = nodes.Pipe(value, self.alternative())
        return value


def describe(token):
    if token.kind == END:
        return "end of filter"
    if token.kind == FIELD:
        return f"'.{token.value}'"
    if token.kind == VARIABLE:
        return f"'${token.value}'"
    return repr(token.value)


def compile_filter(text, variables=()):
    """The node tree of the filter ``text``; ``variables`` are the names bound from outside (``--arg``)."""
    return Parser(tokenize(text), variables).program()
