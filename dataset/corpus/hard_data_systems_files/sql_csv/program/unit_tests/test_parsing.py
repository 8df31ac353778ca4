import unittest

from csvql import ast
from csvql.errors import ParseError, TokenizeError
from csvql.parser import parse
from csvql.tokens import tokenize


class TokenizeTest(unittest.TestCase):
    def test_kinds(self):
        tokens = tokenize("SELECT a, 'it''s', 3.5 FROM t WHERE x != 2 -- note")
        self.assertEqual([t.kind for t in tokens],
                         ["KEYWORD", "IDENT", "SYMBOL", "STRING", "SYMBOL", "NUMBER", "KEYWORD", "IDENT",
                          "KEYWORD", "IDENT", "SYMBOL", "NUMBER", "END"])
        self.assertEqual(tokens[3].value, "it's")
        self.assertEqual(tokens[10].text, "<>")

    def test_unterminated_string(self):
        with self.assertRaises(TokenizeError):
            tokenize("SELECT 'abc")


class ParseTest(unittest.TestCase):
    def test_full_query(self):
        query = parse("SELECT DISTINCT e.name AS who, COUNT(*) FROM emp e LEFT JOIN dept d ON e.dept = d.dept "
                      "WHERE e.salary > 10 GROUP BY e.name ORDER BY 2 DESC, who LIMIT 5 OFFSET 1")
        self.assertTrue(query.distinct)
        self.assertEqual(query.items[0].alias, "who")
        self.assertEqual(query.table, ast.TableRef("emp", "e"))
        self.assertEqual(query.joins[0].kind, "LEFT")
        self.assertEqual(len(query.group_by), 1)
        self.assertTrue(query.order_by[0].descending)
        self.assertEqual((query.limit, query.offset), (5, 1))

    def test_precedence(self):
        query = parse("SELECT a FROM t WHERE a = 1 OR b = 2 AND NOT c = 3")
        where = query.where
        self.assertEqual(where.op, "OR")
        self.assertEqual(where.right.op, "AND")
        self.assertIsInstance(where.right.right, ast.Unary)

    def test_in_between_like_is(self):
        query = parse("SELECT a FROM t WHERE a IN (1, 2) AND b NOT BETWEEN 1 AND 5 AND c LIKE 'x%' "
                      "AND d IS NOT NULL")
        rendered = ast.render(query.where)
        self.assertIn("a IN (1, 2)", rendered)
        self.assertIn("b NOT BETWEEN 1 AND 5", rendered)
        self.assertIn("d IS NOT NULL", rendered)

    def test_errors_name_the_problem(self):
        with self.assertRaises(ParseError) as caught:
            parse("SELECT FROM t")
        self.assertIn("expected an expression", str(caught.exception))
        with self.assertRaises(ParseError):
            parse("SELECT a FROM t LIMIT x")


if __name__ == "__main__":
    unittest.main()
