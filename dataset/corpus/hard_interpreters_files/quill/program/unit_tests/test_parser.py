import unittest

from quill import nodes
from quill.errors import QuillSyntaxError
from quill.lexer import tokenize
from quill.parser import parse, parse_expression


def tree(source):
    return nodes.dump(parse_expression(tokenize(source)))


class ExpressionTest(unittest.TestCase):
    def test_product_binds_tighter_than_sum(self):
        self.assertEqual(tree("1 + 2 * 3"), "(binary + (number 1) (binary * (number 2) (number 3)))")

    def test_subtraction_is_left_associative(self):
        self.assertEqual(tree("8 - 4 - 2"), "(binary - (binary - (number 8) (number 4)) (number 2))")

    def test_comparison_below_arithmetic(self):
        self.assertEqual(tree("a + 1 < b"), "(binary < (binary + (name 'a') (number 1)) (name 'b'))")

    def test_logical_operators(self):
        self.assertEqual(tree("a or b and c"), "(logical or (name 'a') (logical and (name 'b') (name 'c')))")

    def test_calls_and_indexing(self):
        self.assertEqual(tree("f(x)[0]"), "(index (call (name 'f') [(name 'x')]) (number 0))")

    def test_arrow_lambda(self):
        self.assertEqual(tree("fn(x) => x"), "(lambda ['x'] [(return (name 'x'))])")

    def test_literals(self):
        self.assertEqual(tree('[1, {"a": true}]'), "[(list_literal [(number 1) (map_literal [((string 'a') (boolean True))])])]"[1:-1])


class StatementTest(unittest.TestCase):
    def test_if_else_chain(self):
        program = parse(tokenize("if a { x; } else if b { y; } else { z; }"))
        statement = program.statements[0]
        self.assertIsInstance(statement, nodes.If)
        self.assertIsInstance(statement.else_body[0], nodes.If)

    def test_function_definition(self):
        program = parse(tokenize("fn add(a, b) { return a + b; }"))
        self.assertEqual(program.statements[0].params, ["a", "b"])

    def test_compound_assignment(self):
        statement = parse(tokenize("xs[0] += 2;")).statements[0]
        self.assertEqual((type(statement.target).__name__, statement.operator), ("Index", "+="))

    def test_missing_semicolon(self):
        with self.assertRaises(QuillSyntaxError) as caught:
            parse(tokenize("let a = 1\nlet b = 2;"))
        self.assertEqual(caught.exception.line, 2)

    def test_bad_assignment_target(self):
        with self.assertRaises(QuillSyntaxError):
            parse(tokenize("f() = 3;"))

    def test_repeated_parameter(self):
        with self.assertRaises(QuillSyntaxError):
            parse(tokenize("fn f(a, a) { }"))


if __name__ == "__main__":
    unittest.main()
