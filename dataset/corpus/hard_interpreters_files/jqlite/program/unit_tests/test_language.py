import unittest

from jqlite import run_filter
from jqlite.errors import FilterRuntimeError, FilterSyntaxError
from jqlite.lexer import tokenize
from jqlite.tokens import FIELD, NUMBER, OP, STRING

DOC = {"store": {"name": "corner", "open": True},
       "items": [{"id": 1, "name": "pen", "price": 1.5, "tags": ["office"]},
                 {"id": 2, "name": "ink", "price": 7, "tags": []},
                 {"id": 3, "name": "pad", "price": 3, "tags": ["office", "paper"]}]}


class LexerTest(unittest.TestCase):
    def test_fields_and_operators(self):
        tokens = tokenize('.items[] | .name, "x" // 1.5')
        self.assertEqual([(t.kind, t.value) for t in tokens[:-1]], [
            (FIELD, "items"), (OP, "["), (OP, "]"), (OP, "|"), (FIELD, "name"), (OP, ","), (STRING, "x"),
            (OP, "//"), (NUMBER, 1.5)])

    def test_bad_character(self):
        with self.assertRaises(FilterSyntaxError):
            tokenize(".a @ .b")


class PathTest(unittest.TestCase):
    def test_fields(self):
        self.assertEqual(run_filter(".store.name", DOC), ["corner"])
        self.assertEqual(run_filter(".missing.deeper", DOC), [None])
        self.assertEqual(run_filter('."store"', DOC), [DOC["store"]])

    def test_index_and_iterate(self):
        self.assertEqual(run_filter(".items[0].id, .items[-1].id, .items[9]", DOC), [1, 3, None])
        self.assertEqual(run_filter("[.items[].name]", DOC), [["pen", "ink", "pad"]])

    def test_positive_slices(self):
        self.assertEqual(run_filter("[.items[1:][].id], [.items[:1][].id]", DOC), [[2, 3], [1]])
        self.assertEqual(run_filter('"abcdef"[2:4]', None), ["cd"])

    def test_recurse(self):
        self.assertEqual(run_filter('[.. | select(type == "number")]', [1, [2, {"a": 3}]]), [[1, 2, 3]])

    def test_optional(self):
        self.assertEqual(run_filter("[.[] | .a?]", [{"a": 1}, 5, None]), [[1, None]])

    def test_type_errors(self):
        with self.assertRaises(FilterRuntimeError):
            run_filter(".a", [1])


class OperatorTest(unittest.TestCase):
    def test_arithmetic(self):
        self.assertEqual(run_filter("1 + 2 * 3, 7 % 3, 10 / 4, 1.5 + 1.5", None), [7, 1, 2.5, 3])

    def test_addition_of_other_types(self):
        self.assertEqual(run_filter('"a" + "b", [1] + [2], {"a": 1} + {"b": 2}, null + 1', None),
                         ["ab", [1, 2], {"a": 1, "b": 2}, 1])

    def test_comparison_order(self):
        self.assertEqual(run_filter('[null, false, 0, "", [], {}] | sort', None), [[None, False, 0, "", [], {}]])
        self.assertEqual(run_filter("1 < 2, \"a\" > \"b\", [1] == [1]", None), [True, False, True])

    def test_cartesian_products(self):
        self.assertEqual(run_filter("(1, 2) + (10, 20)", None), [11, 12, 21, 22])

    def test_alternative_for_missing_values(self):
        self.assertEqual(run_filter('.nothing // "default"', {}), ["default"])
        self.assertEqual(run_filter('.a // "default"', {"a": "set"}), ["set"])

    def test_logic(self):
        self.assertEqual(run_filter("true and null, false or 1, (1 | not)", None), [False, True, False])

    def test_conditionals(self):
        source = 'if . > 2 then "big" elif . > 1 then "mid" else "small" end'
        self.assertEqual([run_filter(source, n)[0] for n in (1, 2, 3)], ["small", "mid", "big"])

    def test_object_construction(self):
        self.assertEqual(run_filter('{id, label: .name, (.name): 1}', {"id": 4, "name": "k"}),
                         [{"id": 4, "label": "k", "k": 1}])

    def test_syntax_errors(self):
        for text in (".a |", "[1, 2", "if . then 1", "nosuch(1)", "1 < 2 < 3"):
            with self.assertRaises(FilterSyntaxError, msg=text):
                run_filter(text, None)


if __name__ == "__main__":
    unittest.main()
