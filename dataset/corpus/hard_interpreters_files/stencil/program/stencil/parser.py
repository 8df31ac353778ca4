"""The template parser: tokens to a :class:`~stencil.nodes.TemplateNode`.

Tags: ``if``/``elif``/``else``/``endif``, ``for``/``else``/``endfor``, ``set``, ``block``/``endblock``,
``extends``, ``include``, ``macro``/``endmacro`` and ``import ... as ...``.
"""

from stencil import nodes
from stencil.errors import TemplateSyntaxError
from stencil.expressions import ExpressionParser, parse_expression
from stencil.lexer import OUTPUT, TAG, TEXT, tokenize


class TemplateParser:
    def __init__(self, source, name=None):
        self.name = name
        self.tokens = tokenize(source, name)
        self.position = 0
        self.blocks = {}
        self.macros = []
        self.extends = None
        self.depth = 0

    def error(self, message, line):
        return TemplateSyntaxError(message, self.name, line)

    def parse(self):
        body, end, token = self.body(())
        return nodes.TemplateNode(body, self.extends, self.blocks, self.macros)

    def body(self, end_tags):
        """Statements up to one of ``end_tags``; returns (statements, the end tag's name, its token)."""
        statements = []
        while self.position < len(self.tokens):
            token = self.tokens[self.position]
            self.position += 1
            if token.kind == TEXT:
                statements.append(nodes.Text(token.value))
            elif token.kind == OUTPUT:
                statements.append(nodes.Output(parse_expression(token.value, self.name, token.line), token.line))
            elif token.kind == TAG:
                word = token.value.split(None, 1)[0] if token.value else ""
                if word in end_tags:
                    return statements, word, token
                statement = self.tag(word, token)
                if statement is not None:
                    statements.append(statement)
        if end_tags:
            raise self.error(f"missing {{% {end_tags[-1]} %}}", self.tokens[-1].line if self.tokens else 1)
        return statements, None, None

    def tag(self, word, token):
        handler = getattr(self, "tag_" + word, None)
        if handler is None:
            raise self.error(f"unknown tag {word!r}", token.line)
        rest = token.value[len(word):].strip()
        return handler(ExpressionParser(rest, self.name, token.line), token)

    def tag_if(self, expression, token):
        condition = expression.expression()
        expression.expect_end()
        tests, otherwise = [], None
        body, end, end_token = self.body(("elif", "else", "endif"))
        tests.append((condition, body))
        while end == "elif":
            more = ExpressionParser(end_token.value[4:].strip(), self.name, end_token.line)
            condition = more.expression()
            more.expect_end()
            body, end, end_token = self.body(("elif", "else", "endif"))
            tests.append((condition, body))
        if end == "else":
            otherwise, end, end_token = self.body(("endif",))
        return nodes.If(tests, otherwise, token.line)

    def tag_for(self, expression, token):
        targets = [expression.expect_name("a loop variable")]
        while expression.at_op(","):
            expression.advance()
            targets.append(expression.expect_name("a loop variable"))
        if not expression.at_name("in"):
            raise self.error("expected 'in' in a for tag", token.line)
        expression.advance()
        iterable = expression.expression()
        expression.expect_end()
        body, end, _ = self.body(("else", "endfor"))
        otherwise = None
        if end == "else":
            otherwise, _, _ = self.body(("endfor",))
        return nodes.For(targets, iterable, body, otherwise, token.line)

    def tag_set(self, expression, token):
        name = expression.expect_name("a variable name")
        expression.expect_op("=")
        value = expression.expression()
        expression.expect_end()
        return nodes.Set(name, value, token.line)

    def tag_block(self, expression, token):
        name = expression.expect_name("a block name")
        expression.expect_end()
        if name in self.blocks:
            raise self.error(f"block {name!r} defined twice", token.line)
        body, _, end_token = self.body(("endblock",))
        closing = end_token.value.split()[1:]
        if closing and closing != [name]:
            raise self.error(f"endblock {closing[0]!r} closes block {name!r}", end_token.line)
        block = nodes.Block(name, body, token.line)
        self.blocks[name] = block
        return block

    def tag_extends(self, expression, token):
        if self.extends is not None:
            raise self.error("a template extends only one parent", token.line)
        self.extends = expression.expression()
        expression.expect_end()
        return None

    def tag_include(self, expression, token):
        template = expression.expression()
        expression.expect_end()
        return nodes.Include(template, token.line)

    def tag_macro(self, expression, token):
        name = expression.expect_name("a macro name")
        expression.expect_op("(")
        params, defaults = [], []
        while not expression.at_op(")"):
            param = expression.expect_name("a parameter name")
            if param in params:
                raise self.error(f"parameter {param!r} repeated in macro {name!r}", token.line)
            params.append(param)
            if expression.at_op("="):
                expression.advance()
                defaults.append((param, expression.expression()))
            elif defaults:
                raise self.error(f"parameter {param!r} without a default after one with a default", token.line)
            if not expression.at_op(")"):
                expression.expect_op(",")
        expression.advance()
        expression.expect_end()
        body, _, _ = self.body(("endmacro",))
        macro = nodes.Macro(name, params, defaults, body, token.line)
        if any(existing.name == name for existing in self.macros):
            raise self.error(f"macro {name!r} defined twice", token.line)
        self.macros.append(macro)
        return None

    def tag_import(self, expression, token):
        template = expression.expression()
        if not expression.at_name("as"):
            raise self.error("expected 'as' in an import tag", token.line)
        expression.advance()
        alias = expression.expect_name("a name after 'as'")
        expression.expect_end()
        return nodes.Import(template, alias, token.line)


def parse_template(source, name=None):
    return TemplateParser(source, name).parse()
