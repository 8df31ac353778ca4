import unittest

from stencil import nodes
from stencil.errors import TemplateSyntaxError
from stencil.expressions import parse_expression
from stencil.lexer import OUTPUT, TAG, TEXT, tokenize
from stencil.parser import parse_template


class LexerTest(unittest.TestCase):
    def test_kinds_and_lines(self):
        tokens = tokenize("a {{ x }}\n{% if y %}b{# note #}{% endif %}")
        self.assertEqual([(t.kind, t.value, t.line) for t in tokens], [
            (TEXT, "a ", 1), (OUTPUT, "x", 1), (TEXT, "\n", 1), (TAG, "if y", 2), (TEXT, "b", 2), (TAG, "endif", 2)])

    def test_whitespace_control(self):
        self.assertEqual([t.value for t in tokenize("a  {%- if x -%}  b")], ["a", "if x", "b"])

    def test_unclosed(self):
        with self.assertRaises(TemplateSyntaxError):
            tokenize("{{ x ")


class ExpressionTest(unittest.TestCase):
    def test_precedence(self):
        tree = parse_expression("a + b * 2 == 7 and not c")
        self.assertIsInstance(tree, nodes.BinOp)
        self.assertEqual(tree.operator, "and")
        self.assertEqual(tree.left.left.right.operator, "*")

    def test_filters_bind_tightly(self):
        tree = parse_expression("name | upper ~ '!'")
        self.assertEqual((tree.operator, type(tree.left).__name__), ("~", "Filter"))

    def test_postfix(self):
        tree = parse_expression("user.tags[0] | default('x')")
        self.assertEqual(type(tree.value).__name__, "Item")
        self.assertEqual(tree.args, [nodes.Const("x")])

    def test_errors(self):
        for text in ("a +", "(a", "a b", "f(1,"):
            with self.assertRaises(TemplateSyntaxError, msg=text):
                parse_expression(text)


class TemplateParserTest(unittest.TestCase):
    def test_blocks_and_extends(self):
        tree = parse_template('{% extends "base.html" %}{% block a %}x{% endblock a %}')
        self.assertEqual(tree.extends, nodes.Const("base.html"))
        self.assertEqual(list(tree.blocks), ["a"])

    def test_for_else(self):
        tree = parse_template("{% for k, v in d %}{{ k }}{% else %}none{% endfor %}")
        loop = tree.body[0]
        self.assertEqual((loop.targets, loop.otherwise), (["k", "v"], [nodes.Text("none")]))

    def test_structure_errors(self):
        for source in ("{% if x %}", "{% bogus %}", "{% block a %}{% endblock b %}", "{% for x of y %}{% endfor %}"):
            with self.assertRaises(TemplateSyntaxError, msg=source):
                parse_template(source, "t.html")


if __name__ == "__main__":
    unittest.main()
