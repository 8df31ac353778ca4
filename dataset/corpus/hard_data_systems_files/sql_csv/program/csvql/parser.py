"""Recursive-descent parser: tokens -> ast.Select.

    query    := SELECT [DISTINCT] item {, item} FROM table {join} [WHERE expr] [GROUP BY expr {, expr}]
                [HAVING expr] [ORDER BY expr [ASC|DESC] {, ...}] [LIMIT n [OFFSET m]]
    join     := [INNER | LEFT [OUTER]] JOIN table ON expr
    table    := name [[AS] alias]

Operator precedence, loosest first: OR, AND, NOT, comparisons (= <> < <= > >= IS IN LIKE BETWEEN), || + -,
* / %, unary minus.
"""

from . import ast
from .errors import ParseError
from .tokens import tokenize

COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")


class Parser:
    def __init__(self, text):
        self.tokens = tokenize(text)
        self.pos = 0

    # -- token helpers ---------------------------------------------------------------------------------------
    @property
    def current(self):
        return self.tokens[self.pos]

    def peek(self, offset=1):
        index = min(self.pos + offset, len(self.tokens) - 1)
        return self.tokens[index]

    def advance(self):
        token = self.tokens[self.pos]
        if token.kind != "END":
            self.pos += 1
        return token

    def at_keyword(self, *words):
        return self.current.kind == "KEYWORD" and self.current.text in words

    def at_symbol(self, *symbols):
        return self.current.kind == "SYMBOL" and self.current.text in symbols

    def accept_keyword(self, word):
        if self.at_keyword(word):
            return self.advance()
        return None

    def expect_keyword(self, word):
        if not self.at_keyword(word):
            raise ParseError(self._found(), word)
        return self.advance()

    def accept_symbol(self, symbol):
        if self.at_symbol(symbol):
            return self.advance()
        return None

    def expect_symbol(self, symbol):
        if not self.at_symbol(symbol):
            raise ParseError(self._found(), f"'{symbol}'")
        return self.advance()

    def expect_identifier(self, what):
        if self.current.kind != "IDENT":
            raise ParseError(self._found(), what)
        return self.advance().value

    def _found(self):
        return None if self.current.kind == "END" else self.current

    # -- statements ------------------------------------------------------------------------------------------
    def parse_query(self):
        self.expect_keyword("SELECT")
        distinct = bool(self.accept_keyword("DISTINCT"))
        items = [self.parse_select_item()]
        while self.accept_symbol(","):
            items.append(self.parse_select_item())
        self.expect_keyword("FROM")
        table = self.parse_table_ref()
        joins = []
        while self.at_keyword("JOIN", "INNER", "LEFT"):
            joins.append(self.parse_join())
        where = None
        if self.accept_keyword("WHERE"):
            where = self.parse_expr()
        group_by = []
        if self.accept_keyword("GROUP"):
            self.expect_keyword("BY")
            group_by = [self.parse_expr()]
            while self.accept_symbol(","):
                group_by.append(self.parse_expr())
        having = None
        if self.accept_keyword("HAVING"):
            having = self.parse_expr()
        order_by = []
        if self.accept_keyword("ORDER"):
            self.expect_keyword("BY")
            order_by = [self.parse_order_item()]
            while self.accept_symbol(","):
                order_by.append(self.parse_order_item())
        limit, offset = None, 0
        if self.accept_keyword("LIMIT"):
            limit = self.parse_count("LIMIT")
            if self.accept_keyword("OFFSET"):
                offset = self.parse_count("OFFSET")
        self.accept_symbol(";")
        if self.current.kind != "END":
            raise ParseError(self.current, "end of query")
        return ast.Select(items, table, joins, where, group_by, order_by, limit, offset, distinct, having)

    def parse_count(self, clause):
        token = self.current
        if token.kind != "NUMBER" or not isinstance(token.value, int):
            raise ParseError(self._found(), f"a whole number after {clause}")
        self.advance()
        return token.value

    def parse_select_item(self):
        if self.at_symbol("*"):
            self.advance()
            return ast.SelectItem(ast.Star())
        if self.current.kind == "IDENT" and self.peek().text == "." and self.peek(2).text == "*":
            table = self.advance().value
            self.advance()
            self.advance()
            return ast.SelectItem(ast.Star(table))
        expr = self.parse_expr()
        alias = None
        if self.accept_keyword("AS"):
            alias = self.expect_identifier("a column alias")
        elif self.current.kind == "IDENT":
            alias = self.advance().value
        return ast.SelectItem(expr, alias)

    def parse_table_ref(self):
        name = self.expect_identifier("a table name")
        alias = None
        if self.accept_keyword("AS"):
            alias = self.expect_identifier("a table alias")
        elif self.current.kind == "IDENT":
            alias = self.advance().value
        return ast.TableRef(name, alias)

    def parse_join(self):
        kind = "INNER"
        if self.accept_keyword("LEFT"):
            kind = "LEFT"
            self.accept_keyword("OUTER")
        else:
            self.accept_keyword("INNER")
        self.expect_keyword("JOIN")
        table = self.parse_table_ref()
        self.expect_keyword("ON")
        return ast.Join(kind, table, self.parse_expr())

    def parse_order_item(self):
        expr = self.parse_expr()
        descending = False
        if self.accept_keyword("DESC"):
            descending = True
        else:
            self.accept_keyword("ASC")
        return ast.OrderItem(expr, descending)

    # -- expressions -----------------------------------------------------------------------------------------
    def parse_expr(self):
        return self.parse_or()

    def parse_or(self):
        left = self.parse_and()
        while self.accept_keyword("OR"):
            left = ast.Binary("OR", left, self.parse_and())
        return left

    def parse_and(self):
        left = self.parse_not()
        while self.accept_keyword("AND"):
            left = ast.Binary("AND", left, self.parse_not())
        return left

    def parse_not(self):
        if self.accept_keyword("NOT"):
            return ast.Unary("NOT", self.parse_not())
        return self.parse_comparison()

    def parse_comparison(self):
        left = self.parse_additive()
        while True:
            if self.current.kind == "SYMBOL" and self.current.text in COMPARISONS:
                op = self.advance().text
                left = ast.Binary(op, left, self.parse_additive())
            elif self.accept_keyword("IS"):
                negated = bool(self.accept_keyword("NOT"))
                self.expect_keyword("NULL")
                left = ast.IsNull(left, negated)
            elif self.at_keyword("NOT") and self.peek().text in ("IN", "LIKE", "BETWEEN"):
                self.advance()
                left = self._parse_negatable(left, True)
            elif self.at_keyword("IN", "LIKE", "BETWEEN"):
                left = self._parse_negatable(left, False)
            else:
                return left

    def _parse_negatable(self, left, negated):
        if self.accept_keyword("IN"):
            self.expect_symbol("(")
            items = [self.parse_expr()]
            while self.accept_symbol(","):
                items.append(self.parse_expr())
            self.expect_symbol(")")
            return ast.InList(left, tuple(items), negated)
        if self.accept_keyword("LIKE"):
            pattern = self.parse_additive()
            node = ast.Binary("LIKE", left, pattern)
            return ast.Unary("NOT", node) if negated else node
        self.expect_keyword("BETWEEN")
        low = self.parse_additive()
        self.expect_keyword("AND")
        high = self.parse_additive()
        return ast.Between(left, low, high, negated)

    def parse_additive(self):
        left = self.parse_multiplicative()
        while self.at_symbol("+", "-", "||"):
            op = self.advance().text
            left = ast.Binary(op, left, self.parse_multiplicative())
        return left

    def parse_multiplicative(self):
        left = self.parse_unary()
        while self.at_symbol("*", "/", "%"):
            op = self.advance().text
            left = ast.Binary(op, left, self.parse_unary())
        return left

    def parse_unary(self):
        if self.accept_symbol("-"):
            return ast.Unary("-", self.parse_unary())
        if self.accept_symbol("+"):
            return self.parse_unary()
        return self.parse_primary()

    def parse_primary(self):
        token = self.current
        if token.kind == "NUMBER" or token.kind == "STRING":
            self.advance()
            return ast.Literal(token.value)
        if self.accept_keyword("NULL"):
            return ast.Literal(None)
        if self.accept_keyword("TRUE"):
            return ast.Literal(True)
        if self.accept_keyword("FALSE"):
            return ast.Literal(False)
        if self.accept_symbol("("):
            expr = self.parse_expr()
            self.expect_symbol(")")
            return expr
        if token.kind == "IDENT":
            self.advance()
            if self.accept_symbol("("):
                return self.parse_call(token.value.upper())
            if self.accept_symbol("."):
                return ast.Column(self.expect_identifier("a column name"), token.value)
            return ast.Column(token.value)
        raise ParseError(self._found(), "an expression")

    def parse_call(self, name):
        if self.accept_symbol("*"):
            self.expect_symbol(")")
            return ast.Call(name, (), star=True)
        distinct = bool(self.accept_keyword("DISTINCT"))
        args = []
        if not self.at_symbol(")"):
            args.append(self.parse_expr())
            while self.accept_symbol(","):
                args.append(self.parse_expr())
        self.expect_symbol(")")
        return ast.Call(name, tuple(args), distinct=distinct)


def parse(text):
    """The ast.Select of the query ``text``."""
    return Parser(text).parse_query()
